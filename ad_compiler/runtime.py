"""Run-time helpers that generated code calls as ``rt.<name>(...)``.

Codegen writes one expression per op, but NumPy's item assignment is a
statement that mutates its target. These helpers give the functional forms the
indexing primitives (ops/indexing.py) need, each a copy followed by NumPy's own
assignment, so the result equals what the same statement does in NumPy:

>>> import numpy as np
>>> x = np.zeros(4)
>>> index_add(x, [0, 0, 2], 1.0)        # like ``x[[0, 0, 2]] += 1``: repeats add once
array([1., 0., 1., 0.])
>>> scatter_add(x, [0, 0, 2], 1.0)      # ``np.add.at``: repeats accumulate
array([2., 0., 1., 0.])
>>> x                                   # inputs are never written
array([0., 0., 0., 0.])

Invariants:

* no helper writes into its arguments; each returns a new array of the first
  argument's shape and dtype (0-d inputs give 0-d arrays);
* ``index`` is anything NumPy accepts as an index, and ``value`` broadcasts to
  the selection, with NumPy's casting rules for assignment.
"""
from __future__ import annotations

import numpy as np


def index_set(x, index, value):
    """``x`` with ``x[index] = value`` (with repeated indices, NumPy's last write wins)."""
    out = np.array(x, copy=True)
    out[index] = value
    return out


def index_add(acc, index, value):
    """``acc`` with ``acc[index] += value``: NumPy's augmented assignment, which adds
    once per selected position even when an index array repeats it."""
    out = np.array(acc, copy=True)
    out[index] += value
    return out


def index_sub(acc, index, value):
    """``acc`` with ``acc[index] -= value`` (NumPy's augmented assignment)."""
    out = np.array(acc, copy=True)
    out[index] -= value
    return out


def scatter_add(acc, index, value):
    """``acc`` with every selected element of ``value`` added (``np.add.at``): a
    position selected k times receives all k contributions."""
    out = np.array(acc, copy=True)
    np.add.at(out, index, value)
    return out


def winners(shape, index):
    """Which elements of an assignment's selection land in the result.

    ``x[index] = v`` on an array of ``shape`` writes each element of the
    selection; where an index array selects one position several times only one
    write survives. The result (a bool array of the selection's shape) marks the
    survivors, found by performing the same assignment on element numbers, so it
    agrees with NumPy by construction.
    """
    dummy = np.broadcast_to(np.empty((), dtype=bool), shape)
    sel_shape = dummy[index].shape
    order = np.arange(int(np.prod(sel_shape, dtype=np.int64))).reshape(sel_shape)
    ids = np.full(shape, -1, dtype=order.dtype)
    ids[index] = order
    return ids[index] == order


def gap_divide(a, w, sign=0):
    """``F * (a + sign * a^T)`` with ``F[..., i, j] = 1 / (w[j] - w[i])`` off the diagonal.

    The eigenvector adjoints' division by eigenvalue gaps (ops/decompositions.py).
    Where ``w[i]`` and ``w[j]`` coincide (to rounding) the quotient is 0/0, and its
    limit depends on more than these values: the entry is 0 only when its
    numerator is exactly 0 (nothing flows through that pair); otherwise this
    raises :class:`~ad_compiler.errors.GradValueError` rather than guess.
    """
    a = np.asarray(a)
    w = np.asarray(w)
    dtype = np.result_type(a, w)
    num = a + sign * np.swapaxes(a, -1, -2) if sign else a
    gap = w[..., None, :] - w[..., :, None]
    eps = np.finfo(dtype).eps
    scale = np.max(np.abs(w), axis=-1, keepdims=True)[..., None]
    tied = np.abs(gap) <= 16 * w.shape[-1] * eps * scale
    if np.any(tied & (num != 0) & ~np.eye(w.shape[-1], dtype=bool)):
        from .errors import GradValueError
        raise GradValueError(
            "the derivative through the eigenvectors (or singular vectors) cannot be "
            "computed here: two eigenvalues (singular values) are equal, so the vectors "
            "are not determined by the matrix",
            hint="use the eigenvalues (singular values) alone, or a matrix function "
                 "written with them, or break the tie in the input")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(tied, 0, num / np.where(tied, 1, gap))
    return out.astype(dtype, copy=False)


def lstsq(a, b, rcond=None):
    """``np.linalg.lstsq(a, b, rcond)[0]`` for a full-rank ``a``, else
    :class:`~ad_compiler.errors.GradValueError` (no derivative where the rank drops)."""
    x, _, rank, _ = np.linalg.lstsq(a, b, rcond=rcond)
    if rank < min(np.shape(a)):
        from .errors import GradValueError
        raise GradValueError(
            f"np.linalg.lstsq: the matrix has rank {rank} < {min(np.shape(a))}; the "
            "least-squares solution is differentiable only where the matrix has full rank",
            hint="regularise the problem (e.g. solve (a.T @ a + lam * I) x = a.T @ b)")
    return x


def reciprocal_nonzero(s):
    """``1 / s`` for singular values ``s`` (last axis), or
    :class:`~ad_compiler.errors.GradValueError` if one is 0 to rounding."""
    s = np.asarray(s)
    eps = np.finfo(s.dtype if s.dtype.kind == "f" else np.float64).eps
    scale = np.max(np.abs(s), axis=-1, keepdims=True)
    if np.any(np.abs(s) <= s.shape[-1] * eps * scale):
        from .errors import GradValueError
        raise GradValueError(
            "a singular value is 0: the singular vectors of a rank-deficient non-square "
            "matrix have no derivative",
            hint="use the singular values alone, or make the matrix full rank")
    return 1 / s


def diagonal_put(v, shape, offset=0, axis1=0, axis2=1):
    """A zero array of ``shape`` whose diagonal ``np.diagonal(out, offset, axis1, axis2)``
    is ``v`` (the adjoint of np.diagonal, and np.diag of a vector)."""
    v = np.asarray(v)
    out = np.zeros(shape, dtype=v.dtype)
    n = v.shape[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    np.moveaxis(out, (axis1, axis2), (-2, -1))[..., rows, cols] = v
    return out
