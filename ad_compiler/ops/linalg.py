"""Linear algebra: ``matmul`` with full ``np.matmul`` semantics, and ``np.dot`` on top of it.

Invariants:

* ``matmul`` accepts what ``np.matmul`` accepts: a 1-D operand is a vector
  (promoted to a matrix, the new axis dropped from the result), leading axes
  broadcast as batch axes; 0-d operands are rejected as NumPy does;
* the VJP works on the promoted, batched forms ``X @ Y`` (each 1-D operand
  reshaped to a matrix, the cotangent reshaped to match) and un-promotes with
  ``fit`` (which also sums broadcast batch axes and casts the dtype);
* ``np.dot`` / ``x.dot`` lower to ``mul`` for scalars and ``matmul`` up to 2-D,
  where the two agree; higher ranks are rejected rather than silently wrong.
"""
from __future__ import annotations

import operator

import numpy as np

from ..ad.rules import ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ..ir.builder import fit
from ..ir.core import AType
from ..ir.dims import static_or_minus_one
from ._infer import promote

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


def _matmul_jvp(b, t, out, x, y):
    terms = [b.matmul(t[0], y) if t[0] is not None else None,
             b.matmul(x, t[1]) if t[1] is not None else None]
    terms = [v for v in terms if v is not None]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else b.add(*terms)


primitive(
    "matmul", emit="{0} @ {1}", infer=_matmul_infer, vjp=_matmul_vjp, jvp=_matmul_jvp, family=F,
    dynamic=True,
    examples=[ex((3,), (3,)), ex((2, 3), (3, 4)), ex((2, 3), (3,)), ex((3,), (3, 2)),
              ex((2, 2, 3), (3, 4)), ex((2, 1, 2, 3), (3, 3, 2)), ex((3,), (2, 3, 4)),
              ex((2, 2, 3), (3,))],
    aliases=(np.matmul, operator.matmul),
)


@lowering(np.dot)
@method("dot")
def lower_dot(b, a, b_, out=None):
    """``np.dot``: a product with a scalar, else ``matmul`` (equal up to 2-D operands)."""
    x, y = b.const(a), b.const(b_)
    xt, yt = b.type_of(x), b.type_of(y)
    if out is not None:
        raise UnsupportedOperationError("np.dot(..., out=...) is not supported")
    if xt.ndim == 0 or yt.ndim == 0:
        return b.mul(x, y)
    if xt.ndim > 2 or yt.ndim > 2:
        raise UnsupportedOperationError(
            f"np.dot of {xt} and {yt} is not supported (more than 2 dimensions)",
            hint="use np.matmul / @ (batched) or np.tensordot semantics explicitly")
    return b.matmul(x, y)


@lowering(np.outer)
def lower_outer(b, a, v, out=None):
    """``np.outer``: the flattened ``a`` as a column times the flattened ``v``."""
    if out is not None:
        raise UnsupportedOperationError("np.outer(..., out=...) is not supported")
    a, v = b.const(a), b.const(v)
    col = b.reshape(a, shape=(b.type_of(a).size, 1))
    row = b.reshape(v, shape=(b.type_of(v).size,))
    return b.mul(col, row)
