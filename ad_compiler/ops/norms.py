"""``np.linalg.norm``: every ``ord`` NumPy accepts, as a composition of primitives.

NumPy's own definitions, op for op: vector norms over one axis (``None``/2: the
square root of the sum of squares; 1; ``inf``/``-inf``: the largest/smallest
magnitude; 0: the number of nonzero entries, which has a zero derivative; any
other ``p``: ``sum(|x|**p) ** (1/p)``) and matrix norms over two axes
(``'fro'``; 1/-1 and ``inf``/``-inf``: the extreme column/row sums of
magnitudes; 2/-2 and ``'nuc'``: the largest/smallest/sum of the singular values,
through the ``svdvals`` primitive). The derivative is that of the composition:
like NumPy's functions it does not exist where a norm has a kink (the 2-norm of
a zero vector gives NaN, ``max`` splits between ties as its rule says).
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import lowering
from ._infer import normalize_axis


def _sum(b, x, axis, keepdims=False):
    return b.sum(x, axis=axis, keepdims=keepdims)


def _vector_norm(b, x, ord, axis, keepdims):
    if ord in (None, 2):
        return b.sqrt(_sum(b, b.mul(x, x), axis, keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == np.inf:
        return b.max(b.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return b.min(b.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = b.cast(b.not_equal(x, b.const(0)), dtype=b.type_of(x).dtype)
        return _sum(b, nonzero, axis, keepdims)
    if ord == 1:
        return _sum(b, b.abs(x), axis, keepdims)
    total = _sum(b, b.pow_scalar(b.abs(x), exponent=float(ord)), axis, keepdims)
    return b.pow_scalar(total, exponent=1.0 / float(ord))


def _singular_values(b, x, row, col):
    """The singular values of the matrices in axes (row, col), on the last axis."""
    nd = b.type_of(x).ndim
    rest = [i for i in range(nd) if i not in (row, col)]
    perm = tuple(rest) + (row, col)
    if perm != tuple(range(nd)):
        x = b.transpose(x, axes=perm)
    return b.svdvals(x)


def _matrix_norm(b, x, ord, row, col):
    nd = b.type_of(x).ndim
    if ord in (2, -2, "nuc"):
        s = _singular_values(b, x, row, col)
        last = nd - 2
        reduce = {2: b.max, -2: b.min}.get(ord)
        return reduce(s, axis=last) if reduce else b.sum(s, axis=last)
    if ord in (1, -1):
        sums = _sum(b, b.abs(x), row)
        return (b.max if ord == 1 else b.min)(sums, axis=col - (col > row))
    if ord in (np.inf, -np.inf):
        sums = _sum(b, b.abs(x), col)
        return (b.max if ord == np.inf else b.min)(sums, axis=row - (row > col))
    if ord in (None, "fro", "f"):
        return b.sqrt(_sum(b, b.mul(x, x), (min(row, col), max(row, col))))
    raise ValueError("Invalid norm order for matrices.")


@lowering(np.linalg.norm)
def lower_norm(b, x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm(x, ord=None, axis=None, keepdims=False)`` with NumPy's meaning."""
    x = b.const(x)
    t = b.type_of(x)
    if t.dtype.kind not in "fc":
        x = b.cast(x, dtype=np.dtype(np.float64))
    nd = t.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            out = b.sqrt(_sum(b, b.mul(x, x), None))
            return b.reshape(out, shape=(1,) * nd) if keepdims else out
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return _vector_norm(b, x, ord, normalize_axis(axes, nd)[0], keepdims)
    if len(axes) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    row, col = (normalize_axis(a, nd)[0] for a in axes)
    if row == col:
        raise ValueError("Duplicate axes given.")
    out = _matrix_norm(b, x, ord, row, col)
    if keepdims:
        out = b.reshape(out, shape=tuple(1 if i in (row, col) else d
                                         for i, d in enumerate(t.shape)))
    return out
