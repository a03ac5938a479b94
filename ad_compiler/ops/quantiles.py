"""Order statistics: ``np.quantile``, ``np.percentile`` and ``np.median``.

Primitives (``q`` static: a Python number or a nested tuple of them, as the user
wrote it, so NumPy sees the same ``q`` and gives the same value and dtype (a list
of ``q`` makes a float32 ``x``'s quantiles float64); ``axis``/``keepdims`` as in
reduction.py):

* ``quantile``: ``np.quantile(x, q, axis=..., keepdims=...)``, method 'linear';
* ``percentile``: ``np.percentile`` (``q`` in percent), its own template since
  NumPy divides ``q`` by 100 in the input's dtype;
* ``median``: ``np.median`` (its own template: NumPy averages the two middle
  values, which can differ from the quantile's interpolation in the last bit);
* ``median_low``: MindSpore's median, the element at sorted position ``(n - 1) // 2``
  (``np.quantile(..., method='lower')``), with ``median_index`` (no derivative,
  ``rt.median_index``) saying where it is;
* ``quantile_weights``: no derivative; ``rt.quantile_weights(x, q, axis, scale)``,
  the weight each element of ``x`` has in its slice's quantile ``q / scale``
  (shape ``np.shape(q) + x.shape``).

A quantile is piecewise linear in ``x``: ``(1 - g) * s[lo] + g * s[hi]`` of the
sorted slice ``s``. Its gradient is the weights: ``1 - g`` to the element at
order statistic ``lo`` and ``g`` to the one at ``hi``, a weight split evenly
among elements that tie with its order statistic (the average over the orders
the ties could be broken in; the weights of a slice sum to 1 as the derivative
along ``x + c`` requires). The weights are constant between ties, so the VJP
``ct * weights`` differentiates again to zero in ``x``.

Lowerings: only ``method='linear'`` (the default) is supported, others are
refused with an error naming them; ``q`` must be known when compiling.
"""
from __future__ import annotations

import ast

import numpy as np

from .. import runtime as rt
from ..ad.rules import ex, lowering, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType, Value
from ._batch import along, batch_quantile_weights, quantile_like
from ._infer import normalize_axis, static_axis

F = "quantile"


def _infer(fn):
    def infer(t: AType, *, q=0.5, axis=None, keepdims=False) -> AType:
        axes = normalize_axis(axis, t.ndim)
        shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape)) if keepdims \
            else tuple(d for i, d in enumerate(t.shape) if i not in axes)
        return AType(np.shape(q) + shape, fn(np.ones(2, dtype=t.dtype), q).dtype, False)
    return infer


def _declare(name, emit, fn, scale=1, q_fixed=None, method="linear"):
    """A quantile-like primitive: ``fn(x, q)`` is NumPy's, ``q / scale`` the quantile."""
    def weights(b, x, q, axis):
        return b.quantile_weights(x, q=q, axis=axis, scale=scale, method=method)

    def weighted(b, v, x, q, axis):
        """``v`` times the weights, summed over the axes of ``q`` (one weight set per q)."""
        w = weights(b, x, q, axis)
        prod = b.mul(v, w)
        lead = tuple(range(np.ndim(q)))
        return b.sum(prod, axis=lead, keepdims=False) if lead else prod

    def vjp(b, ct, out, x, *, axis=None, keepdims=False, q=q_fixed):
        xt, lead = b.type_of(x), np.shape(q)
        kept = tuple(1 if i in normalize_axis(axis, xt.ndim) else d
                     for i, d in enumerate(xt.shape))
        ct = ct if b.type_of(ct).shape == lead + kept else b.reshape(ct, shape=lead + kept)
        return (b.fit(weighted(b, ct, x, q, axis), x),)

    def jvp(b, t, out, x, *, axis=None, keepdims=False, q=q_fixed):
        w = weights(b, x, q, axis)
        shift = np.ndim(q)
        axes = tuple(a + shift for a in normalize_axis(axis, b.type_of(x).ndim))
        return b.fit(b.sum(b.mul(t[0], w), axis=axes, keepdims=keepdims), out)

    qs = [{}] if q_fixed is not None else [{"q": 0.3 * scale}, {"q": (0.2 * scale, scale)}]
    shapes = [ex((5,), axis=None, keepdims=False), ex((2, 3), axis=1, keepdims=False),
              ex((2, 4), axis=-1, keepdims=True), ex((3, 2, 2), axis=(0, 2), keepdims=False),
              ex((2, 3), axis=0, keepdims=True), ex(float, axis=None, keepdims=False),
              ex(np.array([1.0, 3.0, 3.0, -2.0]), axis=None, keepdims=False),     # ties
              ex(np.array([[2.0, 2.0], [0.5, -1.0]]), axis=1, keepdims=True)]
    infer = _infer(fn) if q_fixed is None else (
        lambda t, *, axis=None, keepdims=False: _infer(fn)(t, q=q_fixed, axis=axis,
                                                           keepdims=keepdims))
    primitive(name, emit=emit, family=F, vjp=vjp, jvp=jvp, infer=infer,
              examples=[ex(e.inputs[0], **e.params, **q) for q in qs for e in shapes], batch=quantile_like(name))


_declare("quantile", "np.quantile({0}, {q}, axis={axis}, keepdims={keepdims})", np.quantile)
_declare("percentile", "np.percentile({0}, {q}, axis={axis}, keepdims={keepdims})",
         np.percentile, scale=100)
_declare("median", "np.median({0}, axis={axis}, keepdims={keepdims})",
         lambda v, q: np.median(v), q_fixed=0.5)

_declare("median_low", "np.quantile({0}, 0.5, axis={axis}, keepdims={keepdims}, method='lower')",
         lambda v, q: np.quantile(v, 0.5, method="lower"), q_fixed=0.5, method="lower")


def _weights_emit(srcs, *, q, axis, scale, method):
    extra = "" if ast.literal_eval(method) == "linear" else f", {method}"  # sources: "('lower')"
    return f"rt.quantile_weights({srcs[0]}, {q}, {axis}, {scale}{extra})"


primitive(
    "quantile_weights", emit=_weights_emit, impl=rt.quantile_weights, nondiff=True, family=F,
    infer=lambda t, *, q, axis=None, scale=1, method="linear": AType(
        np.shape(q) + t.shape, np.result_type(t.dtype, np.float16), False),
    examples=[ex((2, 3), q=0.25, axis=1, scale=1), ex((2, 3, 2), q=(50, 75.0), axis=(0, 2),
                                                    scale=100),
              ex((2, 4), q=0.5, axis=1, scale=1, method="lower")],
    batch=batch_quantile_weights,
)


def _index_infer(t: AType, *, axis, keepdims=False) -> AType:
    (ax,) = normalize_axis(axis, t.ndim)
    shape = tuple(1 if i == ax else d for i, d in enumerate(t.shape)) if keepdims \
        else t.shape[:ax] + t.shape[ax + 1:]
    return AType(shape, np.dtype(np.int64), False)


primitive(
    "median_index", emit="rt.median_index({0}, {axis}, {keepdims})", nondiff=True, family=F,
    infer=_index_infer, examples=[ex((2, 3), axis=1, keepdims=False), ex((4,), axis=0,
                                                                          keepdims=True)],
    batch=along("median_index"),
)


# -- lowerings -------------------------------------------------------------------------------

def _static_q(b, q, scale):
    """``q`` (a number, a sequence, a constant array) as a param known when compiling:
    a Python number or a (nested) tuple of them, as NumPy will read it."""
    if isinstance(q, Value):
        op = q.producer
        if op is None or op.prim != "const":
            raise UnsupportedOperationError(
                "the quantile q must be known when compiling, not computed from traced values",
                hint="pass q as a number or a list of numbers")
        q = op.params["value"]
    try:
        qs = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError):
        raise UnsupportedOperationError(f"the quantile q must be numbers, got {q!r}",
                                        hint="pass q as a number or a list of numbers") from None
    if not np.all((qs >= 0) & (qs <= scale)):
        raise ValueError(f"{'Percentiles' if scale != 1 else 'Quantiles'} must be in the range "
                         f"[0, {scale}], got {q!r}")
    return _as_param(np.asarray(q).tolist() if isinstance(q, np.ndarray) else q)


def _as_param(q):
    """Lists as tuples (hashable, and NumPy reads both as a float64 array)."""
    return tuple(_as_param(v) for v in q) if isinstance(q, (list, tuple)) else q


def _check(fn, out, method, weights, interpolation):
    if out is not None:
        raise UnsupportedOperationError(f"np.{fn}(..., out=...) is not supported",
                                        hint="use the returned value instead of out=")
    if interpolation is not None:
        raise UnsupportedOperationError(f"np.{fn}(..., interpolation=...) is not supported",
                                        hint="omit it: the default method 'linear' is supported")
    if method != "linear":
        raise UnsupportedOperationError(
            f"np.{fn}(..., method={method!r}) has no derivative rule: only method='linear' "
            "(the default) is supported", hint="omit method= to use linear interpolation")
    if weights is not None:
        raise UnsupportedOperationError(f"np.{fn}(..., weights=...) is not supported",
                                        hint="weights need method='inverted_cdf', which has no "
                                             "derivative rule")


def quantile_of(b, a, q, axis=None, keepdims=False, prim="quantile"):
    """``np.quantile(a, q, axis, keepdims)`` (or ``np.percentile``) with static ``q``."""
    q = _static_q(b, q, 100 if prim == "percentile" else 1)
    return b.emit(prim, b.const(a), q=q, axis=static_axis(axis), keepdims=bool(keepdims))


@lowering(np.quantile)
def lower_quantile(b, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, weights=None, interpolation=None):
    """``np.quantile``: the gradient goes to the (one or two) order statistics it reads."""
    _check("quantile", out, method, weights, interpolation)
    return quantile_of(b, a, q, axis, keepdims)


@lowering(np.percentile)
def lower_percentile(b, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                     keepdims=False, *, weights=None, interpolation=None):
    """``np.percentile(a, q)``: the quantile ``q / 100``."""
    _check("percentile", out, method, weights, interpolation)
    return quantile_of(b, a, q, axis, keepdims, "percentile")


@lowering(np.median)
def lower_median(b, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.median``: the gradient goes to the middle element, or half to each of the two."""
    _check("median", out, "linear", None, None)
    return b.median(b.const(a), axis=static_axis(axis), keepdims=bool(keepdims))


def lower_ms_median(b, a, axis=-1, keepdims=False):
    """MindSpore's ``ops.median(input, axis=-1, keepdims=False)``: ``(values, indices)`` of
    the lower median (the element at sorted position ``(n - 1) // 2``) along one axis."""
    x = b.const(a)
    xt = b.type_of(x)
    if xt.ndim == 0:
        x = b.reshape(x, shape=(1,))
    (axis,) = normalize_axis(int(axis), max(xt.ndim, 1))
    values = b.median_low(x, axis=axis, keepdims=bool(keepdims))
    return values, b.median_index(x, axis=axis, keepdims=bool(keepdims))
