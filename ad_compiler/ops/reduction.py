"""Reductions: sum, mean, max, min, and their lowerings (np.sum, x.sum(), ...).

Invariants:

* params are ``axis`` (None, int or tuple; normalised by ``_infer.static_axis``)
  and ``keepdims`` (bool), exactly NumPy's meaning (``axis=()`` reduces nothing);
* a VJP puts the reduced axes back with a reshape (``keep_dims_of``), lets
  broadcasting do the rest where it can, and returns a cotangent of ``x``'s type;
* max/min send the gradient to the positions that attain the extremum,
  split evenly among ties (as ``maximum``/``minimum`` do).
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType
from ._infer import as_float, normalize_axis, result_type, static_axis

F = "reduction"


def reduce_infer(name):
    def infer(t: AType, *, axis=None, keepdims=False) -> AType:
        axes = normalize_axis(axis, t.ndim)
        if keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape))
        else:
            shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
        dtype, _ = result_type(name, AType((), t.dtype, t.weak), axis=None, keepdims=False)
        return AType(shape, dtype, False)
    return infer


def keep_dims_of(b, r, x, axis, keepdims):
    """A reduced value ``r`` reshaped to keep the reduced axes of ``x`` as size 1."""
    xt = b.type_of(x)
    if keepdims or not xt.ndim:
        return r
    axes = normalize_axis(axis, xt.ndim)
    kept = tuple(1 if i in axes else d for i, d in enumerate(xt.shape))
    if b.type_of(r).shape == kept and not xt.dynamic:
        return r
    if xt.dynamic:  # a '?' axis kept: put the reduced axes back, lengths unchanged
        return b.expand_dims(r, axis=axes) if axes and b.type_of(r).ndim else r
    return b.reshape(r, shape=kept)


def expand_to(b, ct, x, axis, keepdims):
    """Broadcast a reduced cotangent ``ct`` back to the shape of ``x``."""
    ct = keep_dims_of(b, ct, x, axis, keepdims)
    xt = b.type_of(x)
    if xt.dynamic:  # lengths known at run time (ir/dims.py)
        return b.broadcast_like(ct, x)
    if b.type_of(ct).shape != xt.shape:
        ct = b.broadcast_to(ct, shape=xt.shape)
    return ct


def reduced_count(xt: AType, axis) -> int:
    """How many elements of ``x`` each output element of a reduction combines."""
    return int(np.prod([xt.shape[i] for i in normalize_axis(axis, xt.ndim)], dtype=np.int64))


def run_time_count(b, x, axis):
    """``reduced_count`` as a value when a reduced axis has a run-time length: the
    product of the fixed lengths and of ``dim`` of each ``?`` axis."""
    xt = b.type_of(x)
    axes = normalize_axis(axis, xt.ndim)
    fixed = int(np.prod([xt.shape[i] for i in axes if xt.shape[i] is not None],
                        dtype=np.int64))
    count = None if fixed == 1 else b.const(fixed)
    for i in axes:
        if xt.shape[i] is None:
            n = b.dim(x, axis=i, hint="n")
            count = n if count is None else b.mul(count, n, hint="n")
    return count


REDUCE_EXAMPLES = (ex((3,), axis=None, keepdims=False), ex((2, 3), axis=1, keepdims=False),
                   ex((2, 3), axis=(0,), keepdims=True), ex((2, 3, 4), axis=(0, 2), keepdims=False),
                   ex((2, 3), axis=-1, keepdims=True), ex((2, 3), axis=(), keepdims=False),
                   ex(float, axis=None, keepdims=False))

primitive(
    "sum", emit="{0}.sum(axis={axis}, keepdims={keepdims})", array_inputs=True, infer=reduce_infer("sum"),
    family=F, dynamic=True,
    vjp=lambda b, ct, out, x, *, axis=None, keepdims=False: (
        b.fit(expand_to(b, ct, x, axis, keepdims), x),),
    jvp=lambda b, t, out, x, *, axis=None, keepdims=False: b.sum(t[0], axis=axis,
                                                                 keepdims=keepdims),
    examples=REDUCE_EXAMPLES,
)


def _mean_scale(b, g, x, axis):
    """``g / n``: an int divisor keeps g's dtype and reads as the user's formula."""
    xt = b.type_of(x)
    if any(xt.shape[i] is None for i in normalize_axis(axis, xt.ndim)):
        return b.div(g, run_time_count(b, x, axis))
    return b.div(g, b.const(max(reduced_count(xt, axis), 1)))


primitive(
    "mean", emit="{0}.mean(axis={axis}, keepdims={keepdims})", array_inputs=True, infer=reduce_infer("mean"),
    family=F, dynamic=True,
    vjp=lambda b, ct, out, x, *, axis=None, keepdims=False: (
        b.fit(expand_to(b, _mean_scale(b, ct, x, axis), x, axis, keepdims), x),),
    jvp=lambda b, t, out, x, *, axis=None, keepdims=False: b.mean(t[0], axis=axis,
                                                                  keepdims=keepdims),
    examples=REDUCE_EXAMPLES,
)


def _hit_weights(b, out, x, axis, keepdims):
    """1/k at each of the k positions of ``x`` equal to the reduced extremum ``out``, else 0."""
    hits = b.equal(x, keep_dims_of(b, out, x, axis, keepdims))
    hits = b.cast(hits, dtype=as_float(b.type_of(out)).dtype)
    return b.div(hits, b.sum(hits, axis=axis, keepdims=True))


def _extremum(name):
    def vjp(b, ct, out, x, *, axis=None, keepdims=False):
        # hits * (ct / count): the division runs on the small reduced array. The mask is
        # cast to ct's dtype first: summing, dividing and multiplying in one float dtype
        # beats mixing bool, int64 and float (float32 / int64 would even be float64)
        hits = b.equal(x, keep_dims_of(b, out, x, axis, keepdims))
        ct = keep_dims_of(b, ct, x, axis, keepdims)
        hits = b.cast(hits, dtype=b.type_of(ct).dtype)
        count = b.sum(hits, axis=axis, keepdims=True)
        return (b.fit(b.mul(hits, b.div(ct, count)), x),)

    def jvp(b, t, out, x, *, axis=None, keepdims=False):
        w = _hit_weights(b, out, x, axis, keepdims)
        return b.sum(b.mul(t[0], w), axis=axis, keepdims=keepdims)

    ties = [ex(np.array([1.0, 3.0, 3.0, -2.0]), axis=None, keepdims=False),
            ex(np.array([[1.0, 1.0], [2.0, -1.0]]), axis=1, keepdims=True)]
    primitive(name, emit=f"{{0}}.{name}(axis={{axis}}, keepdims={{keepdims}})", array_inputs=True,
              infer=reduce_infer(name), vjp=vjp, jvp=jvp, family=F, dynamic=True,
              examples=[*REDUCE_EXAMPLES, *ties])


_extremum("max")
_extremum("min")


# -- lowerings ----------------------------------------------------------------------

def _reduce_input(b, prim, a, out, dtype):
    """The array a reduction reads (cast to ``dtype`` if given); ``out=`` is refused."""
    if out is not None:
        raise UnsupportedOperationError(f"{prim}(..., out=...) is not supported",
                                        hint="use the returned value instead of out=")
    x = b.const(a)
    if dtype is not None and np.dtype(dtype) != b.type_of(x).dtype:
        x = b.cast(x, dtype=np.dtype(dtype))
    return x


def _reduce(b, prim, a, axis, out, keepdims, keep_dims, dtype=None):
    x = _reduce_input(b, prim, a, out, dtype)
    keepdims = keepdims if keep_dims is None else keep_dims
    return b.emit(prim, x, axis=static_axis(axis), keepdims=bool(keepdims))


@lowering(np.sum)
@method("sum")
def lower_sum(b, a, axis=None, dtype=None, out=None, keepdims=False, *, keep_dims=None):
    """``np.sum`` / ``x.sum()``; ``keep_dims`` is the Tensor spelling of ``keepdims``."""
    return _reduce(b, "sum", a, axis, out, keepdims, keep_dims, dtype)


@lowering(np.mean)
@method("mean")
def lower_mean(b, a, axis=None, dtype=None, out=None, keepdims=False, *, keep_dims=None):
    return _reduce(b, "mean", a, axis, out, keepdims, keep_dims, dtype)


@lowering(np.max, np.amax)
@method("max")
def lower_max(b, a, axis=None, out=None, keepdims=False, *, keep_dims=None):
    return _reduce(b, "max", a, axis, out, keepdims, keep_dims)


@lowering(np.min, np.amin)
@method("min")
def lower_min(b, a, axis=None, out=None, keepdims=False, *, keep_dims=None):
    return _reduce(b, "min", a, axis, out, keepdims, keep_dims)


# -- variance, standard deviation, truth reductions -----------------------------------

def _deviation(b, x, axis):
    """``x - mean(x)`` over ``axis`` (the mean kept as size-1 axes)."""
    return b.sub(x, b.mean(x, axis=axis, keepdims=True))


def _degrees(b, x, axis, ddof):
    """NumPy's divisor of a variance: ``max(n - ddof, 0)`` (``n`` a value when a
    reduced axis has a run-time length)."""
    xt = b.type_of(x)
    if any(xt.shape[i] is None for i in normalize_axis(axis, xt.ndim)):
        n = run_time_count(b, x, axis)
        return n if not ddof else b.maximum(b.sub(n, b.const(ddof)), b.const(0))
    return b.const(max(reduced_count(xt, axis) - ddof, 0))


def _per_std(b, g, out, x, axis, ddof):
    """``g / ((n - ddof) * out)``, and 0 where ``out`` is 0 (written so no 0/0 is run)."""
    zero = b.equal(out, b.const(0))
    scaled = b.div(g, b.mul(b.where(zero, b.const(1), out), _degrees(b, x, axis, ddof)))
    return b.where(zero, b.const(0), scaled)


def _std_vjp(b, ct, out, x, *, axis=None, ddof=0, keepdims=False):
    # std = |x - mean(x)| / sqrt(n - ddof), a scaled norm: its derivative is
    # (x - mean(x)) / ((n - ddof) std). Where the spread is zero (an axis of length 1,
    # equal values) the norm is at its kink: its smallest subgradient there is 0, which is
    # also what central differences give (sqrt's infinite slope at 0 would make 0 * inf)
    scale = keep_dims_of(b, _per_std(b, ct, out, x, axis, ddof), x, axis, keepdims)
    return (b.fit(b.mul(_deviation(b, x, axis), scale), x),)


def _std_jvp(b, t, out, x, *, axis=None, ddof=0, keepdims=False):
    g = b.sum(b.mul(_deviation(b, x, axis), t[0]), axis=axis, keepdims=keepdims)
    return _per_std(b, g, out, x, axis, ddof)


primitive(
    "std", emit="{0}.std(axis={axis}, ddof={ddof}, keepdims={keepdims})", array_inputs=True,
    infer=lambda t, *, axis=None, ddof=0, keepdims=False: reduce_infer("mean")(
        t, axis=axis, keepdims=keepdims),
    vjp=_std_vjp, jvp=_std_jvp, family=F,
    examples=[ex((3,), axis=None, ddof=0, keepdims=False),
              ex((2, 3), axis=1, ddof=1, keepdims=True),
              ex((2, 3, 4), axis=(0, 2), ddof=0, keepdims=False),
              ex(float, axis=None, ddof=0, keepdims=False),
              # no spread: identically zero (an axis of length 1) or at its kink (equal values)
              ex(np.array([[1.5], [-2.0]]), axis=1, ddof=0, keepdims=False),
              ex(np.array([0.5, 0.5, 0.5]), axis=None, ddof=0, keepdims=False)],
)


@lowering(np.var)
@method("var")
def lower_var(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """``np.var`` as NumPy computes it: sum((x - mean(x))**2) / max(n - ddof, 0)."""
    x = _reduce_input(b, "var", a, out, dtype)
    axis = static_axis(axis)
    squares = b.sum(b.square(_deviation(b, x, axis)), axis=axis, keepdims=bool(keepdims))
    return b.div(squares, _degrees(b, x, axis, ddof))


@lowering(np.std)
@method("std")
def lower_std(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """``np.std``: the ``std`` primitive (its derivative is 0 where the spread is)."""
    x = _reduce_input(b, "std", a, out, dtype)
    return b.emit("std", x, axis=static_axis(axis), ddof=ddof, keepdims=bool(keepdims))


for _name in ("all", "any"):
    primitive(_name, dynamic=True, emit=f"{{0}}.{_name}(axis={{axis}}, keepdims={{keepdims}})",
              array_inputs=True, nondiff=True, family=F,
              infer=lambda t, *, axis=None, keepdims=False, _n=_name: reduce_infer(_n)(
                  t, axis=axis, keepdims=keepdims),
              examples=[ex((2, 3), axis=1, keepdims=False)])


@lowering(np.all)
@method("all")
def lower_all(b, a, axis=None, out=None, keepdims=False):
    return _reduce(b, "all", a, axis, out, keepdims, None)


@lowering(np.any)
@method("any")
def lower_any(b, a, axis=None, out=None, keepdims=False):
    return _reduce(b, "any", a, axis, out, keepdims, None)
