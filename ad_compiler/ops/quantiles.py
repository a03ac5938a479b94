"""Order statistics: ``np.quantile``, ``np.percentile`` and ``np.median``.

Primitives (``q`` a static Python float in [0, 1]; ``axis``/``keepdims`` as in
reduction.py):

* ``quantile``: ``np.quantile(x, q, axis=..., keepdims=...)``, method 'linear';
* ``median``: ``np.median`` (its own template: NumPy averages the two middle
  values, which can differ from the quantile's interpolation in the last bit);
* ``quantile_weights``: no derivative; ``rt.quantile_weights(x, q, axis)``, the
  weight each element of ``x`` has in its slice's quantile.

A quantile is piecewise linear in ``x``: ``(1 - g) * s[lo] + g * s[hi]`` of the
sorted slice ``s``. Its gradient is the weights: ``1 - g`` to the element at
order statistic ``lo`` and ``g`` to the one at ``hi``, a weight split evenly
among elements that tie with its order statistic (the average over the orders
the ties could be broken in; the weights of a slice sum to 1 as the derivative
along ``x + c`` requires). The weights are constant between ties, so the VJP
``ct * weights`` differentiates again to zero in ``x``.

Lowerings: ``np.quantile``/``np.percentile`` with a sequence of ``q`` stack one
``quantile`` per value (NumPy's first output axis); only ``method='linear'``
(the default) is supported, others are refused with an error naming them.
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, lowering, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType, Value
from ._infer import normalize_axis, static_axis
from .reduction import keep_dims_of

F = "quantile"


def _infer(fn):
    def infer(t: AType, *, q=0.5, axis=None, keepdims=False) -> AType:
        axes = normalize_axis(axis, t.ndim)
        shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape)) if keepdims \
            else tuple(d for i, d in enumerate(t.shape) if i not in axes)
        return AType(shape, fn(np.ones(2, dtype=t.dtype)).dtype, False)
    return infer


def _weights(b, x, q, axis):
    return b.quantile_weights(x, q=q, axis=axis)


def _declare(name, emit, fn, q_fixed=None):
    def q_of(params):
        return q_fixed if q_fixed is not None else params["q"]

    def vjp(b, ct, out, x, *, axis=None, keepdims=False, **q):
        w = _weights(b, x, q_of(q), axis)
        return (b.fit(b.mul(keep_dims_of(b, ct, x, axis, keepdims), w), x),)

    def jvp(b, t, out, x, *, axis=None, keepdims=False, **q):
        w = _weights(b, x, q_of(q), axis)
        return b.sum(b.mul(t[0], w), axis=axis, keepdims=keepdims)

    qs = {} if q_fixed is not None else {"q": 0.3}
    ties = [ex(np.array([1.0, 3.0, 3.0, -2.0]), axis=None, keepdims=False),
            ex(np.array([[2.0, 2.0], [0.5, -1.0]]), axis=1, keepdims=True)]
    primitive(name, emit=emit, family=F, vjp=vjp, jvp=jvp,
              infer=_infer(fn) if q_fixed is None else (
                  lambda t, *, axis=None, keepdims=False: _infer(fn)(t, axis=axis,
                                                                     keepdims=keepdims)),
              examples=[ex((5,), axis=None, keepdims=False, **qs),
                        ex((2, 3), axis=1, keepdims=False, **qs),
                        ex((2, 4), axis=-1, keepdims=True, **qs),
                        ex((3, 2, 2), axis=(0, 2), keepdims=False, **qs),
                        ex((2, 3), axis=0, keepdims=True, **qs),
                        ex(float, axis=None, keepdims=False, **qs),
                        *(ex(e.inputs[0], **e.params, **qs) for e in ties)])


_declare("quantile", "np.quantile({0}, {q}, axis={axis}, keepdims={keepdims})",
         lambda s: np.quantile(s, 0.3))
_declare("median", "np.median({0}, axis={axis}, keepdims={keepdims})", np.median, q_fixed=0.5)

primitive(
    "quantile_weights", emit="rt.quantile_weights({0}, {q}, {axis})", nondiff=True, family=F,
    infer=lambda t, *, q, axis=None: AType(t.shape, np.result_type(t.dtype, np.float16), False),
    examples=[ex((2, 3), q=0.25, axis=1), ex((2, 3, 2), q=0.5, axis=(0, 2))],
)


# -- lowerings -------------------------------------------------------------------------------

def _static_q(b, q, scale):
    """``q`` (a number, a sequence, a constant array) as a float ndarray known when compiling."""
    if isinstance(q, Value):
        op = q.producer
        if op is None or op.prim != "const":
            raise UnsupportedOperationError(
                "the quantile q must be known when compiling, not computed from traced values",
                hint="pass q as a number or a list of numbers")
        q = op.params["value"]
    try:
        qs = np.asarray(q, dtype=np.float64) / scale
    except (TypeError, ValueError):
        raise UnsupportedOperationError(f"the quantile q must be numbers, got {q!r}",
                                        hint="pass q as a number or a list of numbers") from None
    if not np.all((qs >= 0) & (qs <= 1)):
        raise ValueError(f"Quantiles must be in the range [0, 1], got {q!r}"
                         + (" (percentiles divided by 100)" if scale != 1 else ""))
    return qs


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


def _quantiles(b, x, qs, axis, keepdims):
    """One ``quantile`` per element of ``qs``, stacked as NumPy lays them out (q axes first)."""
    if qs.ndim == 0:
        return b.quantile(x, q=float(qs), axis=axis, keepdims=keepdims)
    return b.stack(*(_quantiles(b, x, q, axis, keepdims) for q in qs), axis=0)


def quantile_of(b, a, q, axis=None, keepdims=False, scale=1):
    """``np.quantile(a, q / scale, axis, keepdims)`` with static ``q``."""
    qs = _static_q(b, q, scale)
    return _quantiles(b, b.const(a), qs, static_axis(axis), bool(keepdims))


@lowering(np.quantile)
def lower_quantile(b, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, weights=None, interpolation=None):
    """``np.quantile``: the gradient goes to the (one or two) order statistics it reads."""
    _check("quantile", out, method, weights, interpolation)
    return quantile_of(b, a, q, axis, keepdims)


@lowering(np.percentile)
def lower_percentile(b, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                     keepdims=False, *, weights=None, interpolation=None):
    """``np.percentile(a, q)``: ``np.quantile(a, q / 100)``, as NumPy computes it."""
    _check("percentile", out, method, weights, interpolation)
    return quantile_of(b, a, q, axis, keepdims, scale=100)


@lowering(np.median)
def lower_median(b, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.median``: the gradient goes to the middle element, or half to each of the two."""
    _check("median", out, "linear", None, None)
    return b.median(b.const(a), axis=static_axis(axis), keepdims=bool(keepdims))
