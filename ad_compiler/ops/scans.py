"""Scans: cumsum, cumprod, and the first-order linear recurrence behind their adjoints.

Primitives (``axis`` a non-negative int, the input at least 1-d; the lowerings of
``np.cumsum``/``np.cumprod`` flatten for ``axis=None``):

* ``cumsum``: ``np.cumsum``; VJP the reversed cumulative sum of the cotangent;
* ``cumprod``: ``np.cumprod``; derivatives without any division, so they are
  exact where ``x`` has zeros: ``d y_j / d x_i = prod(x[k] for k <= j, k != i)``,
  which is ``L_i * R_ij`` with ``L`` the exclusive cumulative product and
  ``R_ij = x[i+1] * ... * x[j]``; the VJP's ``sum_j ct_j R_ij`` is a linear
  recurrence run from the end;
* ``recurrence``: ``h[0] = b[0]``, ``h[k] = a[k] * h[k-1] + b[k]`` along ``axis``
  (from the last element backwards when ``reverse``), run by
  ``rt.linear_recurrence``. Its adjoints are recurrences again, so the scans
  differentiate to any order.

Helpers for other families: :func:`flip`, :func:`exclusive_cumprod` and
:func:`others_product` (the product of all other elements along an axis, the
derivative of ``prod`` without dividing by ``x``).
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, lowering, method, primitive
from ..ir.core import AType
from ._batch import along, batch_recurrence
from ._infer import normalize_axis
from .shape import slice_along

F = "scan"


def _scan_infer(fn):
    def infer(t: AType, *, axis) -> AType:
        if t.ndim == 0 or not 0 <= axis < t.ndim:
            raise ValueError(f"{fn.__name__}: axis {axis} of an array of shape {t.shape}")
        return AType(t.shape, fn(np.ones(1, dtype=t.dtype)).dtype, False)
    return infer


def _length(b, v, axis) -> int:
    return b.type_of(v).shape[axis]


def flip(b, v, axis):
    """``v`` reversed along ``axis`` (``v[:, ::-1]``)."""
    return b.getitem(v, index=(slice(None),) * axis + (slice(None, None, -1),))


def shift_right(b, v, axis):
    """``v`` moved one step along ``axis``: a zero enters first, the last element leaves."""
    n = _length(b, v, axis)
    width = tuple((1, 0) if i == axis else (0, 0) for i in range(b.type_of(v).ndim))
    return b.pad(slice_along(b, v, axis, 0, n - 1), pad_width=width)


def _shift_left(b, v, axis):
    """``v`` moved one step back along ``axis``: the first element leaves, a zero enters last."""
    n = _length(b, v, axis)
    width = tuple((0, 1) if i == axis else (0, 0) for i in range(b.type_of(v).ndim))
    return b.pad(slice_along(b, v, axis, 1, n), pad_width=width)


def exclusive_cumprod(b, c, axis):
    """``[1, c[0], ..., c[n-2]]`` along ``axis`` for a cumulative product ``c``."""
    n = _length(b, c, axis)
    ones = b.ones_like(slice_along(b, c, axis, 0, 1))
    return ones if n == 1 else b.concat(ones, slice_along(b, c, axis, 0, n - 1), axis=axis)


def others_product(b, x, axis):
    """``prod(x[k] for k != i)`` at each ``i`` along ``axis``: products only, no division."""
    n = _length(b, x, axis)
    if n <= 1:
        return b.ones_like(x)
    before = exclusive_cumprod(b, b.cumprod(x, axis=axis), axis)
    after = flip(b, exclusive_cumprod(b, b.cumprod(flip(b, x, axis), axis=axis), axis), axis)
    return b.mul(before, after)


# -- recurrence -----------------------------------------------------------------------------

def _recurrence_infer(a: AType, c: AType, *, axis, reverse=False) -> AType:
    if a.shape != c.shape or not 0 <= axis < max(a.ndim, 1) or a.ndim == 0:
        raise ValueError(f"recurrence: inputs {a} and {c} on axis {axis}")
    return AType(c.shape, np.result_type(a.dtype, c.dtype), False)


def _recurrence_vjp(b, ct, out, a, c, *, axis, reverse=False):
    # forward h[k] = a[k] h[k-1] + c[k]: the adjoint g[k] = ct[k] + a[k+1] g[k+1] runs the
    # other way; dc = g and da[k] = g[k] h[k-1] (mirrored for reverse)
    ahead, behind = (shift_right, _shift_left) if reverse else (_shift_left, shift_right)
    g = b.recurrence(ahead(b, a, axis), ct, axis=axis, reverse=not reverse)
    return b.fit(b.mul(g, behind(b, out, axis)), a), b.fit(g, c)


def _recurrence_jvp(b, t, out, a, c, *, axis, reverse=False):
    ta, tc = t
    behind = _shift_left if reverse else shift_right
    terms = [v for v in (None if ta is None else b.mul(ta, behind(b, out, axis)), tc)
             if v is not None]
    if not terms:
        return None
    drive = terms[0] if len(terms) == 1 else b.add(*terms)
    return b.recurrence(a, b.fit(drive, out), axis=axis, reverse=reverse)


primitive(
    "recurrence", emit="rt.linear_recurrence({0}, {1}, {axis}, {reverse})", family=F,
    infer=_recurrence_infer, vjp=_recurrence_vjp, jvp=_recurrence_jvp,
    examples=[ex((4,), (4,), axis=0, reverse=False), ex((4,), (4,), axis=0, reverse=True),
              ex((2, 3), (2, 3), axis=1, reverse=False), ex((3, 2), (3, 2), axis=0, reverse=True),
              ex((1, 2), (1, 2), axis=0, reverse=False)],
    batch=batch_recurrence,
)


# -- cumsum and cumprod -----------------------------------------------------------------------

SCAN_EXAMPLES = (ex((4,), axis=0), ex((2, 3), axis=1), ex((2, 3), axis=0), ex((2, 3, 2), axis=1),
                 ex((1, 3), axis=0))

primitive(
    "cumsum", emit="np.cumsum({0}, axis={axis})", infer=_scan_infer(np.cumsum), family=F,
    vjp=lambda b, ct, out, x, *, axis: (
        b.fit(flip(b, b.cumsum(flip(b, ct, axis), axis=axis), axis), x),),
    jvp=lambda b, t, out, x, *, axis: b.cumsum(b.fit(t[0], out), axis=axis),
    examples=SCAN_EXAMPLES,
    batch=along("cumsum"),
)


def _cumprod_vjp(b, ct, out, x, *, axis):
    before = exclusive_cumprod(b, out, axis)
    if _length(b, x, axis) == 1:
        return (b.fit(b.mul(ct, before), x),)
    later = b.recurrence(_shift_left(b, x, axis), ct, axis=axis, reverse=True)
    return (b.fit(b.mul(before, later), x),)


primitive(
    "cumprod", emit="np.cumprod({0}, axis={axis})", infer=_scan_infer(np.cumprod), family=F,
    vjp=_cumprod_vjp,
    jvp=lambda b, t, out, x, *, axis: b.recurrence(
        x, b.fit(b.mul(t[0], exclusive_cumprod(b, out, axis)), out), axis=axis),
    examples=[*SCAN_EXAMPLES,
              ex(np.array([2.0, 0.0, 3.0, -1.5]), axis=0),              # one zero
              ex(np.array([[0.5, 0.0, 2.0, 0.0, 1.5]]), axis=1)],         # two zeros,
    batch=along("cumprod"),
)


# -- lowerings ------------------------------------------------------------------------------

def _scan(b, prim, a, axis, dtype, out):
    """``np.cumsum``/``np.cumprod``: flattened for ``axis=None``, a 0-d input made 1-d."""
    from .reduction import reduce_input  # reduction builds prod's derivative from scans
    x = reduce_input(b, f"np.{prim}", a, out, dtype)
    t = b.type_of(x)
    if axis is None or t.ndim == 0:
        if axis is not None:
            normalize_axis(axis, 1)  # NumPy accepts 0 and -1 on a 0-d array
        x = x if t.ndim == 1 else b.reshape(x, shape=(-1,))
        axis = 0
    (axis,) = normalize_axis(int(axis), t.ndim if t.ndim else 1)
    return b.emit(prim, x, axis=axis)


@lowering(np.cumsum)
@method("cumsum")
def lower_cumsum(b, a, axis=None, dtype=None, out=None):
    """``np.cumsum`` / ``x.cumsum()``."""
    return _scan(b, "cumsum", a, axis, dtype, out)


@lowering(np.cumprod)
@method("cumprod")
def lower_cumprod(b, a, axis=None, dtype=None, out=None):
    """``np.cumprod`` / ``x.cumprod()``: exact derivatives where ``x`` has zeros."""
    return _scan(b, "cumprod", a, axis, dtype, out)
