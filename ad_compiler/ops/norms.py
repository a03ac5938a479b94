"""``np.linalg.norm`` (every ``ord`` NumPy accepts), ``vector_norm``, ``matrix_norm``, ``cond``.

NumPy's own definitions, op for op: vector norms over one axis (``None``/2: the
square root of the sum of squares; 1; ``inf``/``-inf``: the largest/smallest
magnitude; 0: the number of nonzero entries, which has a zero derivative; any
other ``p``: ``sum(|x|**p) ** (1/p)``) and matrix norms over two axes
(``'fro'``; 1/-1 and ``inf``/``-inf``: the extreme column/row sums of
magnitudes; 2/-2 and ``'nuc'``: the largest/smallest/sum of the singular values,
through the ``svdvals`` primitive).

The 2-norm (and Frobenius norm) and the general ``p``-norms are the primitive
``norm`` (NumPy's own call): their derivative at a zero vector, where the norm
has a kink, is the subgradient 0, as ``np.abs`` takes ``sign(0) = 0``, rather
than the 0/0 of the formula. Elsewhere a kink follows the rule of the op that
has it (``max``, ``abs``).
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, lowering, primitive
from ..ir.core import AType
from ._batch import batch_norm
from .complex_numbers import conj_if_complex, real_if_complex
from ._infer import normalize_axis
from .reduction import keep_dims_of, reduce_infer

_sum_infer = reduce_infer("sum")


def _norm_infer(t, *, ord=None, axis=None, keepdims=False):
    if ord is not None and not isinstance(axis, int):
        raise ValueError(f"norm: ord={ord!r} needs one axis, got axis={axis!r}")
    out = _sum_infer(t, axis=axis, keepdims=keepdims)
    return AType(out.shape, _real_dtype(out.dtype), False)


def _real_dtype(dtype):
    """The dtype of a norm (a magnitude) of values of ``dtype``: complex64 -> float32."""
    return np.dtype(np.finfo(dtype).dtype) if dtype.kind == "c" else dtype


def _slope(b, x, out, ord, axis, keepdims):
    """The gradient of the norm ``out`` of ``x``, 0 where the norm is 0 (shaped as ``x``):
    ``conj(x) / |x|`` times the real slope of a complex ``x`` (as ``abs``)."""
    kept = keep_dims_of(b, out, x, axis, keepdims)
    den = b.where(b.equal(kept, b.const(0)), b.const(1), kept)
    if ord in (None, 2):
        return b.div(conj_if_complex(b, x), den)
    power = float(ord) - 1.0
    direction = b.conj(b.complex_sign(x)) if b.type_of(x).dtype.kind == "c" else b.sign(x)
    top = b.mul(direction, b.pow_scalar(b.abs(x), exponent=power))
    return b.div(top, b.pow_scalar(den, exponent=power))


def _norm_vjp(b, ct, out, x, *, ord=None, axis=None, keepdims=False):
    ct = keep_dims_of(b, ct, x, axis, keepdims)
    return (b.mul(ct, _slope(b, x, out, ord, axis, keepdims)),)


def _norm_jvp(b, t, out, x, *, ord=None, axis=None, keepdims=False):
    return real_if_complex(b, b.sum(b.mul(t[0], _slope(b, x, out, ord, axis, keepdims)),
                                    axis=axis, keepdims=keepdims))


primitive(
    "norm", emit="np.linalg.norm({0}, {ord}, axis={axis}, keepdims={keepdims})",
    infer=_norm_infer, vjp=_norm_vjp, jvp=_norm_jvp, family="linalg",
    examples=[ex((3,), ord=None, axis=None, keepdims=False),
              ex((2, 3), ord=None, axis=1, keepdims=True),
              ex((2, 3), ord=None, axis=(0, 1), keepdims=False),
              ex((2, 3, 2), ord=None, axis=(2, 0), keepdims=True),
              ex((2, 3), ord=None, axis=None, keepdims=True),
              ex((4,), ord=3.0, axis=0, keepdims=False),
              ex((2, 3), ord=1.5, axis=-1, keepdims=True),
              ex((2, 3), ord=0.5, axis=0, keepdims=False)],
    batch=batch_norm,
)


def _sum(b, x, axis, keepdims=False):
    return b.sum(x, axis=axis, keepdims=keepdims)


def _vector_norm(b, x, ord, axis, keepdims):
    if ord in (None, 2):
        return b.norm(x, ord=None, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == np.inf:
        return b.max(b.abs(x), axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return b.min(b.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = b.cast(b.not_equal(x, b.const(0)), dtype=_real_dtype(b.type_of(x).dtype))
        return _sum(b, nonzero, axis, keepdims)
    if ord == 1:
        return _sum(b, b.abs(x), axis, keepdims)
    return b.norm(x, ord=float(ord), axis=axis, keepdims=keepdims)


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
        return b.norm(x, ord=None, axis=(row, col), keepdims=False)
    raise ValueError("Invalid norm order for matrices.")


def _as_float(b, x):
    x = b.const(x)
    if b.type_of(x).dtype.kind not in "fc":
        x = b.cast(x, dtype=np.dtype(np.float64))
    return x


@lowering(np.linalg.norm)
def lower_norm(b, x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm(x, ord=None, axis=None, keepdims=False)`` with NumPy's meaning."""
    x = _as_float(b, x)
    t = b.type_of(x)
    nd = t.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            return b.norm(x, ord=None, axis=None, keepdims=bool(keepdims))
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return _vector_norm(b, x, ord, normalize_axis(axes, nd)[0], bool(keepdims))
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


@lowering(np.linalg.vector_norm)
def lower_vector_norm(b, x, axis=None, keepdims=False, ord=2):
    """``np.linalg.vector_norm``: the vector norm over ``axis`` (several axes: flattened)."""
    x = _as_float(b, x)
    t = b.type_of(x)
    if axis is None:
        axes = tuple(range(t.ndim))
        x, at = b.reshape(x, shape=(t.size,)), 0
    elif isinstance(axis, tuple):
        axes = tuple(normalize_axis(a, t.ndim)[0] for a in axis)
        rest = tuple(i for i in range(t.ndim) if i not in axes)
        if axes + rest != tuple(range(t.ndim)):
            x = b.transpose(x, axes=axes + rest)
        size = int(np.prod([t.shape[i] for i in axes]))
        x, at = b.reshape(x, shape=(size,) + tuple(t.shape[i] for i in rest)), 0
    else:
        at = normalize_axis(axis, t.ndim)[0]
        axes = (at,)
    out = _vector_norm(b, x, ord, at, False)
    if keepdims:
        out = b.reshape(out, shape=tuple(1 if i in axes else d for i, d in enumerate(t.shape)))
    return out


@lowering(np.linalg.matrix_norm)
def lower_matrix_norm(b, x, keepdims=False, ord="fro"):
    """``np.linalg.matrix_norm``: ``norm`` over the last two axes."""
    return lower_norm(b, x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@lowering(np.linalg.cond)
def lower_cond(b, x, p=None):
    """``np.linalg.cond``: extreme singular values' ratio, or ``norm(x) * norm(inv(x))``."""
    x = _as_float(b, x)
    nd = b.type_of(x).ndim
    if p is None or p in (2, -2):
        s = b.svdvals(x)
        big, small = b.max(s, axis=nd - 2), b.min(s, axis=nd - 2)
        return b.div(small, big) if p == -2 else b.div(big, small)
    return b.mul(lower_norm(b, x, ord=p, axis=(-2, -1)),
                 lower_norm(b, b.inv(x), ord=p, axis=(-2, -1)))
