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

:func:`sinc_derivative` gives the derivatives of ``np.sinc`` (of every order, exact
at 0), which no NumPy function computes.
"""
from __future__ import annotations

import math

import numpy as np

from .backends import backend_of, is_backend_array, numpy_only


def index_set(x, index, value):
    """``x`` with ``x[index] = value`` (with repeated indices, NumPy's last write wins)."""
    out = _fresh(x, value)
    index, value = _for_backend(out, index, value)
    out[index] = value
    return out


def index_add(acc, index, value):
    """``acc`` with ``acc[index] += value``: NumPy's augmented assignment, which adds
    once per selected position even when an index array repeats it."""
    out = _fresh(acc, value)
    index, value = _for_backend(out, index, value)
    out[index] += value
    return out


def index_sub(acc, index, value):
    """``acc`` with ``acc[index] -= value`` (NumPy's augmented assignment)."""
    out = _fresh(acc, value)
    index, value = _for_backend(out, index, value)
    out[index] -= value
    return out


def scatter_add(acc, index, value):
    """``acc`` with every selected element of ``value`` added (``np.add.at``): a
    position selected k times receives all k contributions."""
    out = _fresh(acc, value)
    if type(out) is np.ndarray:
        np.add.at(out, index, value)
        return out
    return _scatter_add_by_rounds(out, index, value)


def _fresh(x, value):
    """A new array equal to ``x`` that an item assignment of ``value`` may write: NumPy's
    copy, or for an array of another backend (a Dask, CuPy array: backends.py) the
    backend's own, also when only ``value`` is one (a Dask cotangent added into NumPy
    zeros gives a Dask array, never a computed one)."""
    if is_backend_array(x):
        return x.copy()
    out = np.array(x, copy=True)
    return np.asarray(out, like=value) if is_backend_array(value) else out


def _for_backend(out, index, value):
    """``(index, value)`` for an item assignment into ``out``: unchanged for NumPy; for a
    backend array (whose item assignment takes no ``None``) the new axes are dropped
    from the index and from the value, which is broadcast to the selection first."""
    if type(out) is np.ndarray:
        return index, value
    parts = index if type(index) is tuple else (index,)
    if not any(p is None for p in parts):
        return index, value
    stripped = tuple(p for p in parts if p is not None)
    value = np.broadcast_to(value, _selection_shape(out.shape, index))
    return stripped, value.reshape(_selection_shape(out.shape, stripped))


def _scatter_add_by_rounds(out, index, value):
    """``np.add.at(out, index, value)`` for a backend without it: each selected element
    is numbered by the flat position it lands on (NumPy indexing of element numbers, so
    the positions agree with NumPy's by construction); the k-th occurrences of all
    positions form round k, whose positions are unique, so ``flat[ids] += vals`` adds
    each exactly once."""
    shape = out.shape
    ids = np.arange(math.prod(shape)).reshape(shape)[index].reshape(-1)
    vals = np.broadcast_to(value, _selection_shape(shape, index))
    vals = vals.reshape(-1)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    first = np.r_[True, sorted_ids[1:] != sorted_ids[:-1]] if len(ids) else np.zeros(0, bool)
    starts = np.maximum.accumulate(np.where(first, np.arange(len(ids)), 0))
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids)) - starts
    flat = out.reshape(-1)
    for k in range(int(rank.max()) + 1 if len(ids) else 0):
        sel = np.flatnonzero(rank == k)
        flat[ids[sel]] += vals[sel]
    return flat.reshape(shape)


def _selection_shape(shape, index) -> tuple:
    """The shape ``x[index]`` has for an array ``x`` of ``shape``."""
    return np.broadcast_to(np.empty((), dtype=bool), shape)[index].shape


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


def linear_recurrence(a, b, axis, reverse=False):
    """``h`` with ``h[0] = b[0]`` and ``h[k] = a[k] * h[k-1] + b[k]`` along ``axis``
    (``h[n-1] = b[n-1]`` and ``h[k] = a[k] * h[k+1] + b[k]`` when ``reverse``).

    >>> linear_recurrence(np.array([9.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0]), 0)
    array([ 1.,  3., 10.])
    """
    lazy = next((v for v in (a, b) if hasattr(v, "map_blocks")), None)
    if lazy is not None:
        return _linear_recurrence_by_blocks(a, b, axis, reverse, backend_of(lazy))
    if is_backend_array(a) or is_backend_array(b):
        return _linear_recurrence_by_slices(a, b, axis, reverse)
    a, b = np.asarray(a), np.asarray(b)
    h = np.moveaxis(np.array(b, dtype=np.result_type(a.dtype, b.dtype)), axis, 0)
    a = np.moveaxis(a, axis, 0)
    n = h.shape[0]
    steps = range(n - 2, -1, -1) if reverse else range(1, n)
    prev = 1 if reverse else -1
    for k in steps:
        h[k] += a[k] * h[k + prev]
    return np.moveaxis(h, 0, axis)


def _linear_recurrence_by_blocks(a, b, axis, reverse, backend):
    """:func:`linear_recurrence` for a lazy (Dask) array: NumPy's recurrence on each
    block, the recurrence's axis made one chunk (as Dask's own ``cumprod`` scans
    chunks, this does one task per block, not one per step)."""
    xp = backend.namespace()
    b = xp.asarray(b)
    a = xp.broadcast_to(xp.asarray(a), b.shape)    # the result has b's shape
    b = b.rechunk({axis % b.ndim: -1})
    return xp.map_blocks(linear_recurrence, a.rechunk(b.chunks), b, axis, reverse,
                         dtype=np.result_type(a.dtype, b.dtype))


def _linear_recurrence_by_slices(a, b, axis, reverse):
    """:func:`linear_recurrence` for an array of another backend without blocks (CuPy):
    one slice per step, stacked at the end."""
    dtype = np.result_type(a.dtype, b.dtype)
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0).astype(dtype)
    n = b.shape[0]
    h = [None] * n
    steps = range(n - 1, -1, -1) if reverse else range(n)
    prev = 1 if reverse else -1
    for k in steps:
        first = k == (n - 1 if reverse else 0)
        h[k] = b[k] if first else a[k] * h[k + prev] + b[k]
    return np.moveaxis(np.stack(h), 0, axis) if n else np.moveaxis(b, 0, axis)


def quantile_weights(x, q, axis=None, scale=1, method="linear"):
    """The derivative of ``np.quantile(x, q / scale, axis, method=method)`` by ``x``
    (method 'linear' or 'lower'): an array of shape ``np.shape(q) + x.shape``, one set
    of weights per quantile.

    In each reduced slice a quantile interpolates two order statistics with weights
    ``1 - g`` and ``g`` (``g = 0`` for 'lower'); each weight goes to the elements equal
    to its order statistic, split evenly among them when values tie. Elements of a
    slice holding NaN get 0.

    >>> quantile_weights(np.array([4.0, 1.0, 3.0, 2.0]), 0.5)
    array([0. , 0. , 0.5, 0.5])
    """
    numpy_only("a quantile's weights (a sort)", x)
    x = np.asarray(x)
    qs = np.asarray(q, dtype=np.float64) / scale
    axes = tuple(range(x.ndim)) if axis is None else tuple(
        a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    rest = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, rest + list(axes))
    flat = moved.reshape(moved.shape[:len(rest)] + (-1,))
    ordered = np.sort(flat, axis=-1)
    back = np.argsort(rest + list(axes))
    dtype = np.result_type(x.dtype, np.float16)  # a quantile's dtype: ints give float64
    out = [np.transpose(_slice_weights(flat, ordered, float(p), dtype, method == "lower")
                        .reshape(moved.shape), back) for p in qs.reshape(-1)]
    return np.stack(out).reshape(qs.shape + x.shape) if out else np.zeros(qs.shape + x.shape,
                                                                          dtype)


def _slice_weights(flat, ordered, q, dtype, lower=False):
    """Weights of one quantile ``q`` over the last axis of ``flat`` (sorted: ``ordered``)."""
    n = flat.shape[-1]
    weights = np.zeros(flat.shape, dtype=dtype)
    if not n:
        return weights
    virtual = min(max(n * q + (1 - q) - 1, 0.0), n - 1.0)  # NumPy's virtual index
    lo = int(np.floor(virtual))
    virtual = lo if lower else virtual
    for k, w in ((lo, 1.0 - (virtual - lo)), (min(lo + 1, n - 1), virtual - lo)):
        hits = flat == ordered[..., k:k + 1]
        weights += (w * hits / np.maximum(hits.sum(axis=-1, keepdims=True), 1)).astype(dtype)
    return weights


def nonzero_divisor(scale):
    """``scale`` itself, after NumPy's check in ``np.average`` that no weight sum is 0.

    >>> nonzero_divisor(np.array([2.0, 0.0]))
    Traceback (most recent call last):
    ...
    ZeroDivisionError: Weights sum to zero, can't be normalized
    """
    if hasattr(scale, "map_blocks"):   # a lazy (Dask) array: checked when computed
        return scale.map_blocks(_checked_divisor, dtype=scale.dtype)
    return _checked_divisor(scale)


def _checked_divisor(scale):
    if np.any(scale == 0.0):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    return scale


def median_index(x, axis, keepdims=False):
    """Where the lower median of ``x`` along ``axis`` is (``int64``): the element at sorted
    position ``(n - 1) // 2`` (a stable sort, so among ties the first in order)."""
    numpy_only("the median's position (a stable sort)", x)
    x = np.asarray(x)
    order = np.argsort(x, axis=axis, kind="stable")
    index = np.take(order, [(x.shape[axis] - 1) // 2], axis=axis).astype(np.int64)
    return index if keepdims else np.squeeze(index, axis)

def gap_divide(a, w, sign=0):
    """``F * (a + sign * a^H)`` with ``F[..., i, j] = 1 / (w[j] - w[i])`` off the diagonal
    (``a^H`` the conjugate transpose, ``a^T`` when real).

    The eigenvector adjoints' division by eigenvalue gaps (ops/decompositions.py).
    Where ``w[i]`` and ``w[j]`` coincide (to rounding) the quotient is 0/0, and its
    limit depends on more than these values: the entry is 0 only when its
    numerator is exactly 0 (nothing flows through that pair); otherwise this
    raises :class:`~ad_compiler.errors.GradValueError` rather than guess.
    """
    numpy_only("the check for equal eigenvalues", a, w)
    a = np.asarray(a)
    w = np.asarray(w)
    dtype = np.result_type(a, w)
    num = a + sign * np.swapaxes(a, -1, -2).conj() if sign else a
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
    :class:`~ad_compiler.errors.GradValueError` (no derivative where the rank drops).

    A stack of matrices ``a`` (``vmap``) takes a stack of column blocks ``b`` and is
    solved through one batched SVD, with np.linalg.lstsq's cut-off for each matrix."""
    numpy_only("the rank check of np.linalg.lstsq", a, b)
    if np.ndim(a) > 2:
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        small = np.finfo(s.dtype).eps * max(np.shape(a)[-2:])
        cut = (small if rcond is None or rcond < 0 else rcond) * s[..., :1]
        rank = int(np.min(np.sum(s > cut, axis=-1)))
        x = np.swapaxes(vt, -1, -2).conj() @ ((np.swapaxes(u, -1, -2).conj() @ b) / s[..., None])
    else:
        x, _, rank, _ = np.linalg.lstsq(a, b, rcond=rcond)
    if rank < min(np.shape(a)[-2:]):
        from .errors import GradValueError
        raise GradValueError(
            f"np.linalg.lstsq: the matrix has rank {rank} < {min(np.shape(a)[-2:])}; the "
            "least-squares solution is differentiable only where the matrix has full rank",
            hint="regularise the problem (e.g. solve (a.T @ a + lam * I) x = a.T @ b)")
    return x


def reciprocal_nonzero(s):
    """``1 / s`` for singular values ``s`` (last axis), or
    :class:`~ad_compiler.errors.GradValueError` if one is 0 to rounding."""
    numpy_only("the check for a zero singular value", s)
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
    if is_backend_array(v):
        return _diagonal_by_mask(v, shape, offset, axis1, axis2)
    v = np.asarray(v)
    out = np.zeros(shape, dtype=v.dtype)
    n = v.shape[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    np.moveaxis(out, (axis1, axis2), (-2, -1))[..., rows, cols] = v
    return out


def _diagonal_by_mask(v, shape, offset, axis1, axis2):
    """:func:`diagonal_put` for a backend array, without item assignment: ``v`` padded
    to the rows of the diagonal's matrices, times the (NumPy) mask of the diagonal."""
    rows, cols = shape[axis1], shape[axis2]
    before = max(-offset, 0)
    pad = [(0, 0)] * (v.ndim - 1) + [(before, rows - v.shape[-1] - before)]
    mask = np.eye(rows, cols, k=offset, dtype=v.dtype)
    moved = np.pad(v, pad)[..., :, None] * mask
    return np.moveaxis(moved, (-2, -1), (axis1, axis2))


def sinc_derivative(x, order):
    """The ``order``-th derivative of ``np.sinc`` at ``x``, with ``np.sinc``'s result type.

    With ``u = pi x`` it is ``pi**order`` times the derivative of ``sin(u) / u``:
    its Maclaurin series where ``|u| < 1`` (exact at 0, no cancellation), else
    Leibniz's rule on ``sin(u) * (1 / u)``.

    >>> math.isclose(sinc_derivative(0.0, 2), -math.pi ** 2 / 3)
    True
    """
    x = x if is_backend_array(x) else np.asarray(x)
    u = np.pi * x.astype(np.float64)
    small = np.abs(u) < 1.0
    near = np.zeros_like(u)
    for n in range((order + 1) // 2, (order + 1) // 2 + 14):
        near += (-1.0) ** n * u ** (2 * n - order) / (math.factorial(2 * n - order) * (2 * n + 1))
    far_u = np.where(small, 1.0, u)
    far = np.zeros_like(u)
    for j in range(order + 1):
        k = order - j
        far += (math.comb(order, j) * (-1.0) ** k * math.factorial(k)
                * np.sin(far_u + j * np.pi / 2) / far_u ** (k + 1))
    out = (np.where(small, near, far) * np.pi ** order).astype(np.result_type(x, 1.0))
    return out[()]


def erf(x):
    """``math.erf`` elementwise, with NumPy's result type (float32 stays float32).

    >>> erf(np.array([0.0, 1.0], np.float32))
    array([0.       , 0.8427008], dtype=float32)
    """
    if hasattr(x, "map_blocks"):   # a lazy (Dask) array: block by block
        return x.map_blocks(erf, dtype=np.result_type(x.dtype, 1.0))
    x = np.asarray(x)
    out = np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64))
    return np.asarray(out, dtype=np.float64).astype(np.result_type(x, 1.0))[()]


def cast(x, dtype):
    """``np.asarray(x, dtype=dtype)``, or for an array of another backend its own
    ``x.astype(dtype, copy=False)`` (np.asarray would compute a lazy array)."""
    if is_backend_array(x):
        return x.astype(dtype, copy=False)
    return np.asarray(x, dtype=dtype)


def sum_to(ct, like, keep=0, skip=0):
    """``ct`` summed over the axes along which ``like`` was broadcast to ``ct``'s shape
    (the run-time form of un-broadcasting, for lengths that depend on data). Under
    ``vmap`` the first ``keep`` axes of ``ct`` are kept in front, and the first ``skip``
    axes of ``like`` are not part of the shape (ops/dynamic.py)."""
    shape = np.shape(like)[skip:]
    if np.shape(ct)[keep:] == shape:
        return ct
    lead = np.ndim(ct) - keep - len(shape)
    axes = tuple(range(keep, keep + lead)) + tuple(
        keep + lead + i for i, d in enumerate(shape)
        if d == 1 and np.shape(ct)[keep + lead + i] != 1)
    out = np.sum(ct, axis=axes, keepdims=True) if axes else ct
    return np.reshape(out, np.shape(ct)[:keep] + shape)


def broadcast_like(a, like, keep=0, skip=0):
    """``np.broadcast_to(a, like.shape)`` with the first ``keep`` axes of ``a`` kept in
    front and the first ``skip`` axes of ``like`` left out (``vmap``)."""
    a = a if is_backend_array(a) else np.asarray(a)
    shape = np.shape(like)[skip:]
    ones = (1,) * (len(shape) - (a.ndim - keep))
    return np.broadcast_to(a.reshape(a.shape[:keep] + ones + a.shape[keep:]),
                           a.shape[:keep] + shape)


def reshape_like(a, like, keep=0, skip=0):
    """``a.reshape(like.shape)`` with the first ``keep`` axes of ``a`` kept in front and
    the first ``skip`` axes of ``like`` left out (``vmap``)."""
    return np.reshape(a, np.shape(a)[:keep] + np.shape(like)[skip:])


def list_zeros(items):
    """The zero cotangent of a list: a zero of each item's type (Python floats stay
    Python floats, a list of lists gives lists of zeros)."""
    return [_zero(v) for v in items]


def _zero(v):
    if isinstance(v, list):
        return list_zeros(v)
    return 0.0 if isinstance(v, float) else np.zeros_like(v)


def list_add_at(acc, index, value):
    """A new list: ``acc`` with ``value`` added to its item ``index`` (a new item; the
    others are shared with ``acc``).

    >>> list_add_at([0.0, 0.0], 1, 2.5)
    [0.0, 2.5]
    """
    out = list(acc)
    out[index] = _plus(out[index], value)
    return out


def list_add(x, y):
    """Two list cotangents added item by item (the lists have the same length)."""
    if len(x) != len(y):
        raise ValueError(f"list cotangents of lengths {len(x)} and {len(y)} cannot be added")
    return [_plus(a, b) for a, b in zip(x, y)]


def _plus(a, b):
    return list_add(a, b) if isinstance(a, list) else a + b


# -- constants of a printed module (codegen/module.py) ----------------------------------

def array_from_base64(dtype: str, shape: tuple, data: str):
    """The array of ``dtype`` and ``shape`` whose bytes (C order) ``data`` holds in base64:
    how a printed gradient defines a constant array too large to write as a literal."""
    import base64
    return np.frombuffer(base64.b64decode(data), dtype=np.dtype(dtype)).reshape(shape).copy()


def unpickle(data: str):
    """The object pickled in base64 ``data``: a constant of a printed gradient that has
    no Python literal (neither a number, an array of numbers nor a dtype)."""
    import base64
    import pickle
    return pickle.loads(base64.b64decode(data))  # noqa: S301 - written by codegen/module.py


def registered_function(name: str):
    """The function registered with ``ad_compiler.primitive`` under ``name``: how a
    printed gradient reads one that cannot be imported by its module and name."""
    from .api.extension import USER_FUNCTIONS
    return USER_FUNCTIONS[name]
