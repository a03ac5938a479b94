"""Linear algebra products: ``matmul`` (full ``np.matmul`` semantics), ``tensordot``, and
``np.dot`` / ``np.inner`` / ``np.vdot`` / ``np.outer`` on top of them.

Invariants:

* ``matmul`` accepts what ``np.matmul`` accepts: a 1-D operand is a vector
  (promoted to a matrix, the new axis dropped from the result), leading axes
  broadcast as batch axes; 0-d operands are rejected as NumPy does;
* the VJP works on the promoted, batched forms ``X @ Y`` (each 1-D operand
  reshaped to a matrix, the cotangent reshaped to match) and un-promotes with
  ``fit`` (which also sums broadcast batch axes and casts the dtype);
* ``tensordot``'s ``axes`` param is canonical, two tuples of non-negative axes
  contracted pairwise; its VJP is a ``tensordot`` of the cotangent with the other
  operand, transposed back into the operand's axis order;
* ``np.dot`` / ``x.dot`` / ``np.inner`` / ``np.vdot`` lower to ``mul`` for
  scalars, ``matmul`` where it computes the same (a 1-D operand, or two
  matrices), else ``tensordot`` (N-d ``np.dot``, ``np.inner``); ``np.einsum``
  has its own module (ops/einsum.py).
"""
from __future__ import annotations

import operator

import numpy as np

from ..ad.rules import ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ..ir.builder import fit
from ..ir.core import AType
from ..ir.dims import static_or_minus_one
from ._batch import batch_matmul, tensordot_rule
from ._infer import promote
from .shape import transpose_to

F = "linalg"


def _promoted(xs: tuple, ys: tuple) -> tuple[tuple, tuple]:
    """The shapes of ``x`` and ``y`` once 1-D operands are made matrices (1, n) and (n, 1)."""
    return (xs if len(xs) > 1 else (1,) + xs), (ys if len(ys) > 1 else ys + (1,))


def _matmul_infer(x: AType, y: AType) -> AType:
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError(f"matmul: operands must be at least 1-D, got {x} and {y}")
    xs, ys = _promoted(x.shape, y.shape)
    if xs[-1] != ys[-2]:
        raise ValueError(f"matmul: inner dimensions differ: {x} @ {y}")
    batch = tuple(np.broadcast_shapes(xs[:-2], ys[:-2]))
    shape = batch + xs[-2:-1] * (x.ndim > 1) + ys[-1:] * (y.ndim > 1)
    return AType(shape, promote(x, y).dtype, False)


def swap_last(b, v):
    """``v`` with its last two axes swapped (the matrix transpose of a batch)."""
    nd = b.type_of(v).ndim
    return b.transpose(v, axes=tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _as(b, v, shape):
    if b.type_of(v).shape == shape:
        return v
    return b.reshape(v, shape=static_or_minus_one(shape) or shape)


def _outer(b, u, v):
    """``u[:, None] * v``: the outer product of two vectors, by broadcasting."""
    ut = b.type_of(u)
    if ut.dynamic:
        return b.mul(b.expand_dims(u, axis=(ut.ndim,)), v)
    return b.mul(b.reshape(u, shape=ut.shape + (1,)), v)


def _matmul_vjp(b, ct, out, x, y):
    xt, yt = b.type_of(x), b.type_of(y)
    if xt.ndim == 1 and yt.ndim == 1:
        return b.fit(b.mul(ct, y), x), b.fit(b.mul(ct, x), y)
    if xt.ndim == 2 and yt.ndim == 1:  # matrix @ vector: no reshapes around the products
        return b.fit(_outer(b, ct, y), x), b.fit(b.matmul(swap_last(b, x), ct), y)
    if xt.ndim == 1 and yt.ndim == 2:
        return b.fit(b.matmul(y, ct), x), b.fit(_outer(b, x, ct), y)
    xs, ys = _promoted(xt.shape, yt.shape)
    xp, yp = _as(b, x, xs), _as(b, y, ys)
    out_shape = b.type_of(out).shape
    batch = out_shape[:len(out_shape) - (xt.ndim > 1) - (yt.ndim > 1)]
    ctp = _as(b, ct, batch + (xs[-2], ys[-1]))
    gx = fit(b, b.matmul(ctp, swap_last(b, yp)), AType(xs, xt.dtype, xt.weak), xp)
    gy = fit(b, b.matmul(swap_last(b, xp), ctp), AType(ys, yt.dtype, yt.weak), yp)
    return _as(b, gx, xt.shape), _as(b, gy, yt.shape)


def bilinear_jvp(name):
    """JVP of a primitive linear in each of its two inputs: ``op(tx, y) + op(x, ty)``."""
    def jvp(b, t, out, x, y, **params):
        terms = [b.emit(name, t[0], y, **params) if t[0] is not None else None,
                 b.emit(name, x, t[1], **params) if t[1] is not None else None]
        terms = [v for v in terms if v is not None]
        if not terms:
            return None
        return terms[0] if len(terms) == 1 else b.add(*terms)
    return jvp


primitive(
    "matmul", emit="{0} @ {1}", infer=_matmul_infer, vjp=_matmul_vjp, jvp=bilinear_jvp("matmul"),
    family=F, dynamic=True,
    examples=[ex((3,), (3,)), ex((2, 3), (3, 4)), ex((2, 3), (3,)), ex((3,), (3, 2)),
              ex((2, 2, 3), (3, 4)), ex((2, 1, 2, 3), (3, 3, 2)), ex((3,), (2, 3, 4)),
              ex((2, 2, 3), (3,))],
    aliases=(np.matmul, operator.matmul),
    batch=batch_matmul,
)


# -- tensordot ---------------------------------------------------------------------------

def tensordot_axes(axes, nx: int, ny: int) -> tuple[tuple, tuple]:
    """``axes`` of ``np.tensordot`` (an int, a pair of ints or of sequences) as two tuples
    of non-negative axes, pairwise contracted."""
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if not 0 <= n <= min(nx, ny):
            raise ValueError(f"tensordot: axes={n} needs operands of at least {n} dimensions")
        return tuple(range(nx - n, nx)), tuple(range(n))
    try:
        ax, ay = axes
    except (TypeError, ValueError):
        raise ValueError(f"tensordot: axes must be an int or a pair, got {axes!r}") from None
    ax = (ax,) if isinstance(ax, (int, np.integer)) else tuple(ax)
    ay = (ay,) if isinstance(ay, (int, np.integer)) else tuple(ay)
    if len(ax) != len(ay):
        raise ValueError(f"tensordot: shape-mismatch for sum: axes {ax} and {ay}")
    return normalize_axes(ax, nx), normalize_axes(ay, ny)


def normalize_axes(axes, nd: int) -> tuple:
    """``axes`` in order, made non-negative, checked in bounds and distinct."""
    out = []
    for a in axes:
        if not -nd <= int(a) < nd:
            raise ValueError(f"tensordot: axis {a} is out of bounds for an array of dimension {nd}")
        out.append(int(a) % nd)
    if len(set(out)) != len(out):
        raise ValueError(f"tensordot: repeated axis in {tuple(axes)}")
    return tuple(out)


def _free(axes, nd):
    return [i for i in range(nd) if i not in axes]


def _tensordot_infer(x: AType, y: AType, *, axes) -> AType:
    ax, ay = axes
    for i, j in zip(ax, ay):
        if x.shape[i] != y.shape[j]:
            raise ValueError(f"tensordot: shape-mismatch for sum: axis {i} of {x} and axis "
                             f"{j} of {y}")
    shape = tuple(x.shape[i] for i in _free(ax, x.ndim)) + tuple(
        y.shape[j] for j in _free(ay, y.ndim))
    dtype = np.dot(np.ones((), x.dtype), np.ones((), y.dtype)).dtype
    return AType(shape, dtype, False)


def _placed(b, g, order):
    """``g`` whose axis ``p`` is operand axis ``order[p]``, put in operand order."""
    return transpose_to(b, g, tuple(int(p) for p in np.argsort(order)))


def _tensordot_vjp(b, ct, out, x, y, *, axes):
    ax, ay = axes
    fx, fy = _free(ax, b.type_of(x).ndim), _free(ay, b.type_of(y).ndim)
    nfx = len(fx)
    gx = b.tensordot(ct, y, axes=(tuple(range(nfx, nfx + len(fy))), tuple(fy)))
    gy = b.tensordot(x, ct, axes=(tuple(fx), tuple(range(nfx))))
    gx = _placed(b, gx, fx + [ax[ay.index(j)] for j in sorted(ay)])
    gy = _placed(b, gy, [ay[ax.index(i)] for i in sorted(ax)] + fy)
    return b.fit(gx, x), b.fit(gy, y)


primitive(
    "tensordot", emit="np.tensordot({0}, {1}, axes={axes})", infer=_tensordot_infer,
    vjp=_tensordot_vjp, jvp=bilinear_jvp("tensordot"), family=F,
    examples=[ex((2, 3, 4), (3, 4, 5), axes=((1, 2), (0, 1))),
              ex((2, 3), (3, 4), axes=((1,), (0,))),
              ex((3,), (2,), axes=((), ())), ex((2, 3, 4), (4, 3), axes=((2, 1), (0, 1))),
              ex((3, 4), (4, 3), axes=((0, 1), (1, 0))), ex(float, (3,), axes=((), ())),
              ex((4, 2, 3), (3, 5, 4), axes=((0, 2), (2, 0)))],
    batch=tensordot_rule,
)


@lowering(np.tensordot)
def lower_tensordot(b, a, b_, axes=2):
    """``np.tensordot(a, b, axes)``: every axes form, canonical ((x axes), (y axes))."""
    x, y = b.const(a), b.const(b_)
    return b.tensordot(x, y, axes=tensordot_axes(axes, b.type_of(x).ndim, b.type_of(y).ndim))


# -- dot, inner, vdot -------------------------------------------------------------------

def _scalar_product(b, x, y):
    """``x * y`` as ``np.dot``/``np.inner`` compute it: a Python number is an array
    there, not a weak scalar (``np.dot(x32, 2.0)`` is float64)."""
    x, y = (b.cast(v, dtype=b.type_of(v).dtype) if b.type_of(v).weak else v for v in (x, y))
    return b.mul(x, y)


def _product(b, a, b_, contract):
    """``a`` times ``b`` if either is a scalar, else ``contract(x, y, x.ndim, y.ndim)``."""
    x, y = b.const(a), b.const(b_)
    nx, ny = b.type_of(x).ndim, b.type_of(y).ndim
    if nx == 0 or ny == 0:
        return _scalar_product(b, x, y)
    return contract(x, y, nx, ny)


@lowering(np.dot)
@method("dot")
def lower_dot(b, a, b_, out=None):
    """``np.dot``: a product with a scalar; ``matmul`` when an operand is 1-D or both are
    2-D (the two agree there); else the sum over the last axis of ``a`` and the
    second-to-last of ``b``, a ``tensordot``."""
    if out is not None:
        raise UnsupportedOperationError("np.dot(..., out=...) is not supported")
    return _product(b, a, b_, lambda x, y, nx, ny: (
        b.matmul(x, y) if nx == 1 or ny == 1 or nx == ny == 2
        else b.tensordot(x, y, axes=((nx - 1,), (ny - 2,)))))


@lowering(np.inner)
def lower_inner(b, a, b_):
    """``np.inner``: a product with a scalar, else the sum over both last axes."""
    return _product(b, a, b_, lambda x, y, nx, ny: (
        b.matmul(x, y) if nx == ny == 1 else b.tensordot(x, y, axes=((nx - 1,), (ny - 1,)))))


@lowering(np.vdot)
def lower_vdot(b, a, b_):
    """``np.vdot``: the dot product of the two flattened arrays, the first conjugated
    when complex (as NumPy does)."""
    x, y = b.const(a), b.const(b_)
    if b.type_of(x).dtype.kind == "c":
        x = b.conj(x)
    xt, yt = b.type_of(x), b.type_of(y)
    if xt.size != yt.size:
        raise ValueError(f"vdot: cannot take the dot product of {xt} and {yt} (sizes differ)")
    flat = [v if b.type_of(v).ndim == 1 else b.reshape(v, shape=(b.type_of(v).size,))
            for v in (x, y)]
    return b.matmul(*flat)


@lowering(np.outer)
def lower_outer(b, a, v, out=None):
    """``np.outer``: the flattened ``a`` as a column times the flattened ``v``."""
    if out is not None:
        raise UnsupportedOperationError("np.outer(..., out=...) is not supported")
    a, v = b.const(a), b.const(v)
    col = b.reshape(a, shape=(b.type_of(a).size, 1))
    row = b.reshape(v, shape=(b.type_of(v).size,))
    return b.mul(col, row)
