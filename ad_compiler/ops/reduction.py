"""Reductions: sum, mean, max, min, prod, std, all, any, and their lowerings (np.sum,
x.sum(), ...), with np.var, np.ptp, np.average and the NaN-ignoring np.nansum,
np.nanmean, np.nanmax, np.nanmin lowered onto them.

Invariants:

* params are ``axis`` (None, int or tuple; normalised by ``_infer.static_axis``)
  and ``keepdims`` (bool), exactly NumPy's meaning (``axis=()`` reduces nothing);
* a VJP puts the reduced axes back with a reshape (``keep_dims_of``), lets
  broadcasting do the rest where it can, and returns a cotangent of ``x``'s type;
* max/min send the gradient to the positions that attain the extremum,
  split evenly among ties (as ``maximum``/``minimum`` do);
* prod's derivatives are products of the other elements (``scans.others_product``),
  never a division by ``x``, so they are exact where ``x`` has zeros;
* a lowering computes with NumPy's own operations in NumPy's order, so its value
  (and dtype) is the one the NumPy function returns.
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType
from ._batch import broadcasting, reducing
from ._infer import as_float, reduced_axes as normalize_axis, result_type, static_axis
from .complex_numbers import conj_if_complex, real_if_complex
from .scans import others_product

F = "reduction"


#: reductions NumPy computes through a count of the reduced items (``np.mean``, and
#: ``np.std``/``np.var`` through it): no axis 0 / -1 of a 0-d array
_COUNTING = ("mean",)


def reduce_infer(name):
    def infer(t: AType, *, axis=None, keepdims=False) -> AType:
        if name in _COUNTING and t.ndim == 0 and axis not in (None, ()):
            raise np.exceptions.AxisError(axis if isinstance(axis, int) else axis[0], 0)
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
    batch=reducing("sum"),
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
    batch=reducing("mean"),
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
              examples=[*REDUCE_EXAMPLES, *ties], batch=reducing(name))


_extremum("max")
_extremum("min")


# -- prod: derivatives from products of the other elements (exact where x has zeros) ---

def _others(b, x, axis):
    """At each element of ``x``, the product of the other elements it is reduced with.

    Several axes are moved last and flattened into one, whose exclusive cumulative
    products from both ends multiply to the product of the others: no division by
    ``x``, so one zero gives the product of the rest at its position and two give 0.
    """
    xt = b.type_of(x)
    axes = normalize_axis(axis, xt.ndim)
    if not axes:
        return b.ones_like(x)
    if len(axes) == 1:
        return others_product(b, x, axes[0])
    kept = [i for i in range(xt.ndim) if i not in axes]
    perm = tuple(kept + list(axes))
    moved = x if perm == tuple(range(xt.ndim)) else b.transpose(x, axes=perm)
    lead = tuple(xt.shape[i] for i in kept)
    flat = b.reshape(moved, shape=lead + (reduced_count(xt, axes),))
    others = b.reshape(others_product(b, flat, len(lead)), shape=b.type_of(moved).shape)
    return others if moved is x else b.transpose(others, axes=tuple(np.argsort(perm).tolist()))


primitive(
    "prod", emit="{0}.prod(axis={axis}, keepdims={keepdims})", array_inputs=True,
    infer=reduce_infer("prod"), family=F,
    vjp=lambda b, ct, out, x, *, axis=None, keepdims=False: (
        b.fit(b.mul(keep_dims_of(b, ct, x, axis, keepdims), _others(b, x, axis)), x),),
    jvp=lambda b, t, out, x, *, axis=None, keepdims=False: b.sum(
        b.mul(t[0], _others(b, x, axis)), axis=axis, keepdims=keepdims),
    examples=[*REDUCE_EXAMPLES, ex((2, 3, 2), axis=(2, 0), keepdims=True),
              ex(np.array([1.5, 0.0, -2.0]), axis=None, keepdims=False),           # one zero
              ex(np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]]), axis=None, keepdims=False),
              ex(np.array([[0.0, 2.0], [0.5, 0.0], [3.0, 1.0]]), axis=(0, 1), keepdims=True),
              ex(np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0]]), axis=1, keepdims=False)],
    batch=reducing("prod"),
)


# -- lowerings ----------------------------------------------------------------------

def reduce_input(b, prim, a, out, dtype):
    """The array a reduction reads (cast to ``dtype`` if given); ``out=`` is refused."""
    if out is not None:
        raise UnsupportedOperationError(f"{prim}(..., out=...) is not supported",
                                        hint="use the returned value instead of out=")
    x = b.const(a)
    if dtype is not None and np.dtype(dtype) != b.type_of(x).dtype:
        x = b.cast(x, dtype=np.dtype(dtype))
    return x


def _reduce(b, prim, a, axis, out, keepdims, keep_dims, dtype=None):
    x = reduce_input(b, prim, a, out, dtype)
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


@lowering(np.prod)
@method("prod")
def lower_prod(b, a, axis=None, dtype=None, out=None, keepdims=False, *, keep_dims=None):
    """``np.prod`` / ``x.prod()``: exact derivatives where ``x`` has zeros."""
    return _reduce(b, "prod", a, axis, out, keepdims, keep_dims, dtype)


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


def _per_std(b, g, out, x, axis, ddof, keepdims):
    """``g / ((n - ddof) * out)``, and 0 where there is no spread (written so no 0/0 is
    run). No spread means equal values (``max == min``), not ``out == 0``: the mean of
    equal values may round, leaving a ``std`` of 1e-17 whose "derivative" would be
    rounding noise divided by rounding noise."""
    flat = b.equal(out, b.const(0))
    same = b.equal(b.max(x, axis=axis, keepdims=keepdims), b.min(x, axis=axis, keepdims=keepdims))
    scaled = b.div(g, b.mul(b.where(flat, b.const(1), out), _degrees(b, x, axis, ddof)))
    return b.where(same, b.const(0), b.where(flat, b.const(0), scaled))


def _conj_deviation(b, x, axis):
    """``conj(x - mean(x))``: the slope of ``|x - mean(x)|`` (of a complex ``x`` too)."""
    return conj_if_complex(b, _deviation(b, x, axis))


def _std_vjp(b, ct, out, x, *, axis=None, ddof=0, keepdims=False):
    # std = |x - mean(x)| / sqrt(n - ddof), a scaled norm: its derivative is
    # (x - mean(x)) / ((n - ddof) std). Where the spread is zero (an axis of length 1,
    # equal values) the norm is at its kink: its smallest subgradient there is 0, which is
    # also what central differences give (sqrt's infinite slope at 0 would make 0 * inf)
    scale = keep_dims_of(b, _per_std(b, ct, out, x, axis, ddof, keepdims), x, axis, keepdims)
    return (b.fit(b.mul(_conj_deviation(b, x, axis), scale), x),)


def _std_jvp(b, t, out, x, *, axis=None, ddof=0, keepdims=False):
    g = real_if_complex(b, b.sum(b.mul(_conj_deviation(b, x, axis), t[0]), axis=axis,
                                 keepdims=keepdims))
    return _per_std(b, g, out, x, axis, ddof, keepdims)


def _std_infer(t, *, axis=None, ddof=0, keepdims=False):
    """The type of a mean; real (of the same precision) for complex values, as NumPy."""
    out = reduce_infer("mean")(t, axis=axis, keepdims=keepdims)
    if out.dtype.kind == "c":
        out = AType(out.shape, np.dtype(np.finfo(out.dtype).dtype), False)
    return out


primitive(
    "std", emit="{0}.std(axis={axis}, ddof={ddof}, keepdims={keepdims})", array_inputs=True,
    infer=_std_infer,
    vjp=_std_vjp, jvp=_std_jvp, family=F,
    examples=[ex((3,), axis=None, ddof=0, keepdims=False),
              ex((2, 3), axis=1, ddof=1, keepdims=True),
              ex((2, 3, 4), axis=(0, 2), ddof=0, keepdims=False),
              ex(float, axis=None, ddof=0, keepdims=False),
              # no spread: identically zero (an axis of length 1) or at its kink (equal values)
              ex(np.array([[1.5], [-2.0]]), axis=1, ddof=0, keepdims=False),
              ex(np.array([0.5, 0.5, 0.5]), axis=None, ddof=0, keepdims=False),
              # equal values whose mean rounds: std is 1e-17, not 0, and still no spread
              ex(np.zeros((3, 3)) + np.array([0.1, 0.7, 1.3]), axis=0, ddof=0, keepdims=True)],
    batch=reducing("std"),
)


@lowering(np.var)
@method("var")
def lower_var(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """``np.var`` as NumPy computes it: sum((x - mean(x))**2) / max(n - ddof, 0)."""
    x = reduce_input(b, "var", a, out, dtype)
    axis = static_axis(axis)
    deviation = _deviation(b, x, axis)
    if b.type_of(deviation).dtype.kind == "c":  # NumPy: re**2 + im**2, a real variance
        square = b.add(b.square(b.real(deviation)), b.square(b.imag(deviation)))
    else:
        square = b.square(deviation)
    squares = b.sum(square, axis=axis, keepdims=bool(keepdims))
    return b.div(squares, _degrees(b, x, axis, ddof))


@lowering(np.std)
@method("std")
def lower_std(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """``np.std``: the ``std`` primitive (its derivative is 0 where the spread is)."""
    x = reduce_input(b, "std", a, out, dtype)
    return b.emit("std", x, axis=static_axis(axis), ddof=ddof, keepdims=bool(keepdims))


for _name in ("all", "any"):
    primitive(_name, dynamic=True, emit=f"{{0}}.{_name}(axis={{axis}}, keepdims={{keepdims}})",
              array_inputs=True, nondiff=True, family=F,
              infer=lambda t, *, axis=None, keepdims=False, _n=_name: reduce_infer(_n)(
                  t, axis=axis, keepdims=keepdims),
              examples=[ex((2, 3), axis=1, keepdims=False)], batch=reducing(_name))


@lowering(np.all)
@method("all")
def lower_all(b, a, axis=None, out=None, keepdims=False):
    return _reduce(b, "all", a, axis, out, keepdims, None)


@lowering(np.any)
@method("any")
def lower_any(b, a, axis=None, out=None, keepdims=False):
    return _reduce(b, "any", a, axis, out, keepdims, None)


# -- ptp, average, and the NaN-ignoring reductions (lowerings) ----------------------------

@lowering(np.ptp)
def lower_ptp(b, a, axis=None, out=None, keepdims=False):
    """``np.ptp``: ``max - min``, as NumPy computes it (ties split as in max and min)."""
    x = reduce_input(b, "ptp", a, out, None)
    axis, keepdims = static_axis(axis), bool(keepdims)
    return b.sub(b.max(x, axis=axis, keepdims=keepdims), b.min(x, axis=axis, keepdims=keepdims))


def _average_weights(b, x, w, axis):
    """``weights`` laid out to broadcast against ``x`` (NumPy's checks and messages)."""
    xt, wt = b.type_of(x), b.type_of(w)
    if wt.shape == xt.shape:
        return w
    if axis is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = tuple(normalize_axis(a, xt.ndim)[0] for a in axes)
    if wt.shape != tuple(xt.shape[a] for a in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         f"axis (weights {wt.shape}, a {xt.shape}, axis {axis}).")
    order = tuple(int(i) for i in np.argsort(axes))
    if order != tuple(range(len(axes))):
        w = b.transpose(w, axes=order)
    shape = tuple(s if i in axes else 1 for i, s in enumerate(xt.shape))
    return w if b.type_of(w).shape == shape else b.reshape(w, shape=shape)


primitive(  # the weight sums of np.average: NumPy raises when one is 0
    "nonzero_divisor", emit="rt.nonzero_divisor({0})", view=True, family=F,
    infer=lambda t: t,
    vjp=lambda b, ct, out, x: (ct,), jvp=lambda b, t, out, x: t[0],
    examples=[ex((3,)), ex(float)],
    batch=broadcasting("nonzero_divisor"),
)


@lowering(np.average)
def lower_average(b, a, axis=None, weights=None, returned=False, *, keepdims=False):
    """``np.average``: ``sum(a * w) / sum(w)`` in NumPy's result dtype, as NumPy computes it.

    The gradient flows to ``a`` and to the weights; weights summing to 0 raise NumPy's
    ``ZeroDivisionError`` (``nonzero_divisor``). ``returned=True`` is not supported.
    """
    if returned:
        raise UnsupportedOperationError("np.average(..., returned=True) is not supported",
                                        hint="compute the sum of the weights separately")
    axis, keepdims = static_axis(axis), bool(keepdims)
    if weights is None:
        return lower_mean(b, a, axis=axis, keepdims=keepdims)
    x, w = b.const(a), b.const(weights)
    xt, wt = b.type_of(x), b.type_of(w)
    w = _average_weights(b, x, w, axis)
    extra = ("f8",) if xt.dtype.kind in "biu" else ()
    dtype = np.result_type(xt.dtype, wt.dtype, *extra)
    x, w = ((v if b.type_of(v).dtype == dtype and not b.type_of(v).weak
             else b.cast(v, dtype=dtype)) for v in (x, w))
    scale = b.nonzero_divisor(b.sum(w, axis=axis, keepdims=keepdims))
    return b.div(b.sum(b.mul(x, w), axis=axis, keepdims=keepdims), scale)



def _nan_input(b, prim, a, out, dtype):
    """The array, and its NaN mask when its dtype can hold NaN (else None)."""
    x = reduce_input(b, prim, a, out, dtype)
    return x, (b.not_equal(x, x) if b.type_of(x).dtype.kind in "fc" else None)


@lowering(np.nansum)
def lower_nansum(b, a, axis=None, dtype=None, out=None, keepdims=False):
    """``np.nansum``: NaN counts as 0 (and gets no gradient)."""
    x, nan = _nan_input(b, "nansum", a, out, dtype)
    if nan is not None:
        x = b.where(nan, b.const(0), x)
    return b.emit("sum", x, axis=static_axis(axis), keepdims=bool(keepdims))


@lowering(np.nanmean)
def lower_nanmean(b, a, axis=None, dtype=None, out=None, keepdims=False):
    """``np.nanmean``: the sum of the non-NaN elements over their count."""
    x, nan = _nan_input(b, "nanmean", a, out, dtype)
    axis, keepdims = static_axis(axis), bool(keepdims)
    if nan is None:
        return b.mean(x, axis=axis, keepdims=keepdims)
    total = b.sum(b.where(nan, b.const(0), x), axis=axis, keepdims=keepdims)
    present = b.cast(b.equal(x, x), dtype=b.type_of(total).dtype)
    return b.div(total, b.sum(present, axis=axis, keepdims=keepdims))


def _lower_nan_extremum(prim, fill):
    def lower(b, a, axis=None, out=None, keepdims=False):
        x, nan = _nan_input(b, f"nan{prim}", a, out, None)
        axis, keepdims = static_axis(axis), bool(keepdims)
        if nan is None:
            return b.emit(prim, x, axis=axis, keepdims=keepdims)
        best = b.emit(prim, b.where(nan, b.const(fill), x), axis=axis, keepdims=keepdims)
        # a slice of NaN only is NaN, as in NumPy (which also warns)
        return b.where(b.all(nan, axis=axis, keepdims=keepdims), b.const(np.nan), best)
    lower.__name__ = f"lower_nan{prim}"
    lower.__doc__ = f"``np.nan{prim}``: the {prim} of the non-NaN elements (NaN get no gradient)."
    return lower


lower_nanmax = lowering(np.nanmax)(_lower_nan_extremum("max", -np.inf))
lower_nanmin = lowering(np.nanmin)(_lower_nan_extremum("min", np.inf))
