"""Data movement: tile, repeat, roll, diagonals, triangles, sorting, and the NumPy
functions built from them and from the shape and indexing primitives (flip, rot90,
swapaxes, moveaxis, hstack ..., split ..., pad modes, take_along_axis, sort, trace,
kron).

The primitives here, each with the inverse movement of the cotangent as its VJP:

* ``tile`` / ``repeat`` (a scalar count): copies of ``x``; the VJP reshapes the
  cotangent so each copy has an axis of its own and sums over it;
* ``roll``: a cyclic shift; the VJP rolls back by ``-shift``;
* ``diagonal`` (NumPy's read-only view) and ``diagonal_put`` (a zero array with
  ``v`` on a diagonal): each is the other's adjoint, as slice_axis and pad are;
* ``tril`` / ``triu``: projections, their own adjoints;
* ``argsort``: no derivative; ``sort`` gathers ``x`` by it, so the gradient goes
  through the permutation (``scatter_add`` of the cotangent).

Lowerings that are exact compositions emit no primitive of their own: ``np.flip``
is the basic index ``x[::-1]`` (a view, as NumPy's), ``np.rot90`` that and a
transpose, ``swapaxes``/``moveaxis``/``rollaxis`` a transpose, ``hstack`` ... a
``concat`` of reshapes, ``split`` a list of basic slices (views of ``x``), ``pad``
with mode edge/reflect/symmetric/wrap a gather by NumPy's own index map,
``repeat`` with per-element counts a gather, ``trace`` a sum of ``diagonal``,
``kron`` a broadcast product reshaped.

Invariants: params are canonical (non-negative axes, tuples of Python ints), so
ops print and compare stably; views are declared (``view=True``, or
``"readonly"`` for NumPy's read-only ``diagonal``) so the aliasing model of
frontend/alias.py sees them.
"""
from __future__ import annotations

import ast

import numpy as np

from ..ad.rules import ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType, Value
from ._batch import along, batch_diagonal, batch_diagonal_put, batch_tile, matrix_stack
from ._infer import normalize_axis, view_shape
from .indexing import is_advanced, lower_getitem, lower_take, slot
from .shape import _static_ints, concat_list, reshape_to, transpose_to

F = "movement"


def _literal(src):
    """A param as codegen passes it (literal source) back as a Python value."""
    return ast.literal_eval(str(src))


def _one_or_tuple(v):
    """An int or a sequence of ints as a static param (an int or a tuple)."""
    if isinstance(v, (int, np.integer)):
        return int(v)
    return _static_ints(v, "a shift or axis")


# -- tile ---------------------------------------------------------------------------------

def _tiled_shape(t: AType, reps):
    return (1,) * (len(reps) - t.ndim) + t.shape


def _tile_infer(t: AType, *, reps) -> AType:
    if len(reps) < t.ndim:
        raise ValueError(f"tile: reps {reps} must have at least {t.ndim} entries")
    return AType(tuple(r * d for r, d in zip(reps, _tiled_shape(t, reps))), t.dtype, False)


def _tile_vjp(b, ct, out, x, *, reps):
    """Each copy on an axis of its own (``(r0, d0, r1, d1 ...)``), summed over the copies."""
    shape = _tiled_shape(b.type_of(x), reps)
    split = tuple(n for r, d in zip(reps, shape) for n in (r, d))
    summed = b.sum(b.reshape(ct, shape=split), axis=tuple(range(0, len(split), 2)),
                   keepdims=False)
    return (b.fit(reshape_to(b, summed, b.type_of(x).shape), x),)


primitive(
    "tile", emit="np.tile({0}, {reps})", infer=_tile_infer, family=F, vjp=_tile_vjp,
    jvp=lambda b, t, out, x, *, reps: b.tile(t[0], reps=reps),
    examples=[ex((3,), reps=(2,)), ex((2, 3), reps=(2, 1)), ex((2,), reps=(3, 2)),
              ex((2, 1, 3), reps=(1, 2, 2)), ex(float, reps=(3,))],
    batch=batch_tile,
)


@lowering(np.tile)
def lower_tile(b, A, reps):
    """``np.tile(A, reps)``; reps is made as long as ``A.ndim`` (leading ones)."""
    x = b.const(A)
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    reps = _static_ints(reps, "np.tile's reps")
    reps = (1,) * (b.type_of(x).ndim - len(reps)) + reps
    return b.tile(x, reps=reps)


# -- repeat ---------------------------------------------------------------------------------

def _repeat_infer(t: AType, *, repeats, axis) -> AType:
    if not 0 <= axis < t.ndim or repeats < 0:
        raise ValueError(f"repeat: {repeats} copies on axis {axis} of shape {t.shape}")
    shape = t.shape[:axis] + (t.shape[axis] * repeats,) + t.shape[axis + 1:]
    return AType(shape, t.dtype, False)


def _repeat_vjp(b, ct, out, x, *, repeats, axis):
    """The ``repeats`` copies of each element on an axis after ``axis``, summed."""
    shape = b.type_of(x).shape
    split = shape[:axis] + (shape[axis], repeats) + shape[axis + 1:]
    return (b.fit(b.sum(b.reshape(ct, shape=split), axis=axis + 1, keepdims=False), x),)


primitive(
    "repeat", emit="np.repeat({0}, {repeats}, axis={axis})", infer=_repeat_infer, family=F,
    vjp=_repeat_vjp,
    jvp=lambda b, t, out, x, **params: b.repeat(t[0], **params),
    examples=[ex((3,), repeats=2, axis=0), ex((2, 3), repeats=3, axis=1),
              ex((2, 3), repeats=1, axis=0), ex((2, 1, 2), repeats=2, axis=1)],
    batch=along("repeat"),
)


def _counts(repeats):
    if isinstance(repeats, Value):
        raise UnsupportedOperationError(
            "np.repeat's counts must be known when compiling",
            hint="compute them from shapes or constants, not from array values")
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iub" or counts.ndim > 1:
        raise TypeError(f"np.repeat: repeats must be ints, got {repeats!r}")
    return counts.astype(np.int64)


@lowering(np.repeat)
@method("repeat")
def lower_repeat(b, a, repeats, axis=None):
    """``np.repeat``: one count for all (``repeat``) or a count per element (a gather)."""
    x = b.const(a)
    if axis is None:
        x, axis = reshape_to(b, x, (-1,)), 0
    (axis,) = normalize_axis(axis, b.type_of(x).ndim)
    counts = _counts(repeats)
    n = b.type_of(x).shape[axis]
    same = counts.size == n and n and (counts == counts.flat[0]).all()
    if counts.size == 1 or same:
        return b.repeat(x, repeats=int(counts.flat[0]), axis=axis)
    if counts.shape != (n,):
        raise ValueError(f"operands could not be broadcast together with shape ({n},) "
                         f"{counts.shape}")
    return lower_take(b, x, np.repeat(np.arange(n), counts), axis=axis)


# -- roll -------------------------------------------------------------------------------------

def _negated(shift):
    return -shift if isinstance(shift, int) else tuple(-s for s in shift)


primitive(
    "roll", emit="np.roll({0}, {shift}, axis={axis})", family=F,
    infer=lambda t, *, shift, axis: AType(t.shape, t.dtype, False),
    vjp=lambda b, ct, out, x, *, shift, axis: (
        b.fit(b.roll(ct, shift=_negated(shift), axis=axis), x),),
    jvp=lambda b, t, out, x, **params: b.roll(t[0], **params),
    examples=[ex((5,), shift=2, axis=None), ex((2, 3), shift=4, axis=None),
              ex((2, 3), shift=(1, -1), axis=(0, 1)), ex((3, 4), shift=(-3,), axis=(1,))],
    batch=along("roll", none="same"),
)


def _roll_params(shape, shift, axis):
    """Shifts accumulated per axis (NumPy broadcasts ``shift`` against ``axis``)."""
    shifts, axes = np.broadcast_arrays(np.asarray(_one_or_tuple(shift)),
                                       np.asarray(_one_or_tuple(axis)))
    total: dict[int, int] = {}
    for s, a in zip(shifts.ravel(), axes.ravel()):
        a = _axis(a, len(shape))
        total[a] = total.get(a, 0) + int(s)
    keys = sorted(total)
    return tuple(total[a] for a in keys), tuple(keys)


@lowering(np.roll)
def lower_roll(b, a, shift, axis=None):
    """``np.roll``: canonical shifts per axis (``axis=None``: one shift of the flat array)."""
    x = b.const(a)
    if axis is None:
        return b.roll(x, shift=int(np.sum(_one_or_tuple(shift))), axis=None)
    shift, axis = _roll_params(b.type_of(x).shape, shift, axis)
    return b.roll(x, shift=shift, axis=axis)


# -- flips, rotations and axis permutations (views) ------------------------------------------

def flip_axes(b, x, axes):
    """``x`` reversed along ``axes``: the basic index ``x[:, ::-1]``, a view."""
    nd = b.type_of(x).ndim
    items = [slice(None, None, -1) if i in axes else slice(None) for i in range(nd)]
    while items and items[-1] == slice(None):
        items.pop()
    return b.getitem(x, index=tuple(items), hint="flip") if items else x


@lowering(np.flip)
def lower_flip(b, m, axis=None):
    x = b.const(m)
    return flip_axes(b, x, normalize_axis(axis, b.type_of(x).ndim))


def _flip_on(name, axis):
    """``np.fliplr`` (axis 1) / ``np.flipud`` (axis 0): NumPy checks the rank first."""
    def lower(b, m):
        x = b.const(m)
        if b.type_of(x).ndim <= axis:
            raise ValueError(f"Input must be >= {axis + 1}-d.")
        return flip_axes(b, x, (axis,))
    lower.__name__ = f"lower_{name}"
    return lower


lowering(np.fliplr)(_flip_on("fliplr", 1))
lowering(np.flipud)(_flip_on("flipud", 0))


@lowering(np.rot90)
def lower_rot90(b, m, k=1, axes=(0, 1)):
    """NumPy's own composition: flips and one swap of ``axes`` (a view)."""
    x = b.const(m)
    nd = b.type_of(x).ndim
    axes = _static_ints(axes, "np.rot90's axes")
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    a0, a1 = (normalize_axis(a, nd)[0] for a in axes)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    k = int(k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip_axes(b, x, (a0, a1))
    if k == 1:
        return transpose_to(b, flip_axes(b, x, (a1,)), perm)
    return flip_axes(b, transpose_to(b, x, perm), (a1,))


def _axis(axis, nd):
    return normalize_axis(int(axis), nd)[0]


@lowering(np.swapaxes)
@method("swapaxes")
def lower_swapaxes(b, a, axis1, axis2):
    x = b.const(a)
    nd = b.type_of(x).ndim
    perm = list(range(nd))
    i, j = _axis(axis1, nd), _axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose_to(b, x, perm)


def _axes_list(v, nd):
    items = [v] if isinstance(v, (int, np.integer)) else list(v)
    return [_axis(a, nd) for a in items]


@lowering(np.moveaxis)
def lower_moveaxis(b, a, source, destination):
    x = b.const(a)
    nd = b.type_of(x).ndim
    source, destination = _axes_list(source, nd), _axes_list(destination, nd)
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(nd) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose_to(b, x, order)


@lowering(np.rollaxis)
def lower_rollaxis(b, a, axis, start=0):
    x = b.const(a)
    n = b.type_of(x).ndim
    axis = _axis(axis, n)
    start = int(start) + n if start < 0 else int(start)
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"start arg {start} out of bounds for array of "
                                      f"dimension {n}")
    if axis < start:
        start -= 1
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return transpose_to(b, x, order)


# -- stacking ---------------------------------------------------------------------------------

_AT_LEAST = {1: lambda s: s or (1,),
             2: lambda s: (1, 1) if not s else (1,) + s if len(s) == 1 else s,
             3: lambda s: (1, 1, 1) if not s else (1,) + s + (1,) if len(s) == 1
             else s + (1,) if len(s) == 2 else s}


def at_least(b, a, nd):
    """``np.atleast_{nd}d(a)`` (nd in 1, 2, 3) by a reshape."""
    x = b.const(a)
    shape = b.type_of(x).shape
    return reshape_to(b, x, _AT_LEAST[nd](shape))


def _stack_along(b, tup, nd, axis):
    if isinstance(tup, Value) or not isinstance(tup, (list, tuple)):
        raise TypeError("arrays to stack must be passed as a list or tuple")
    return concat_list(b, [at_least(b, a, nd) for a in tup], axis)


@lowering(np.hstack)
def lower_hstack(b, tup, *, dtype=None, casting="same_kind"):
    _no_dtype(dtype, "np.hstack")
    arrs = [at_least(b, a, 1) for a in tup]
    return concat_list(b, arrs, 0 if arrs and b.type_of(arrs[0]).ndim == 1 else 1)


@lowering(np.vstack)
def lower_vstack(b, tup, *, dtype=None, casting="same_kind"):
    _no_dtype(dtype, "np.vstack")
    return _stack_along(b, tup, 2, 0)


@lowering(np.dstack)
def lower_dstack(b, tup):
    return _stack_along(b, tup, 3, 2)


@lowering(np.column_stack)
def lower_column_stack(b, tup):
    cols = []
    for a in tup:
        x = b.const(a)
        shape = b.type_of(x).shape
        cols.append(reshape_to(b, x, (max(1, int(np.prod(shape))), 1)) if len(shape) < 2 else x)
    return concat_list(b, cols, 1)


def _no_dtype(dtype, name):
    if dtype is not None:
        raise UnsupportedOperationError(f"{name}(..., dtype=) is not supported",
                                        hint="cast the result with .astype(...)")


# -- splitting (views) ---------------------------------------------------------------------------

def _bounds(n, sections, even):
    """``(start, stop)`` of each part, as np.split / np.array_split cut an axis of length n."""
    if isinstance(sections, (int, np.integer)):
        k = int(sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if even and n % k:
            raise ValueError("array split does not result in an equal division")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        cuts = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    else:
        cuts = [0, *_static_ints(sections, "split indices"), n]
    return list(zip(cuts[:-1], cuts[1:]))


def split_parts(b, x, sections, axis, even):
    """The parts of ``x`` along ``axis``: basic slices, each a view as in NumPy."""
    x = b.const(x)
    if isinstance(sections, Value):
        raise UnsupportedOperationError("split sections must be known when compiling")
    nd = b.type_of(x).ndim
    axis = _axis(axis, nd)
    n = b.type_of(x).shape[axis]
    return [lower_getitem(b, x, (slice(None),) * axis + (slice(lo, hi),))
            for lo, hi in _bounds(n, sections, even)]


@lowering(np.split)
def lower_split(b, ary, indices_or_sections, axis=0):
    return split_parts(b, ary, indices_or_sections, axis, even=True)


@lowering(np.array_split)
def lower_array_split(b, ary, indices_or_sections, axis=0):
    return split_parts(b, ary, indices_or_sections, axis, even=False)


def _split_on(name, min_nd, axis_of):
    def lower(b, ary, indices_or_sections):
        x = b.const(ary)
        nd = b.type_of(x).ndim
        if nd < min_nd:
            raise ValueError(f"{name} only works on arrays of {min_nd} or more dimensions")
        return split_parts(b, x, indices_or_sections, axis_of(nd), even=True)
    lower.__name__ = f"lower_{name}"
    return lower


lowering(np.hsplit)(_split_on("hsplit", 1, lambda nd: 1 if nd > 1 else 0))
lowering(np.vsplit)(_split_on("vsplit", 2, lambda nd: 0))
lowering(np.dsplit)(_split_on("dsplit", 3, lambda nd: 2))


# -- pad ------------------------------------------------------------------------------------------

#: modes whose result is ``x`` read at NumPy's index map (np.pad of an arange)
_INDEX_MODES = ("edge", "reflect", "symmetric", "wrap")


def _pad_width(pad_width, nd):
    width = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (nd, 2))
    return tuple((int(lo), int(hi)) for lo, hi in width)


@lowering(np.pad)
def lower_pad(b, array, pad_width, mode="constant", **kwargs):
    """Zero padding is the ``pad`` primitive; other constants add a constant border;
    edge/reflect/symmetric/wrap read ``x`` at np.pad's own index map, axis by axis."""
    x = b.const(array)
    t = b.type_of(x)
    width = _pad_width(pad_width, t.ndim)
    if mode == "constant":
        return _pad_constant(b, x, width, **kwargs)
    if mode not in _INDEX_MODES or kwargs.get("reflect_type", "even") != "even" \
            or set(kwargs) - {"reflect_type"}:
        raise UnsupportedOperationError(
            f"np.pad(..., mode={mode!r}{', ...' if kwargs else ''}) is not supported",
            hint="supported modes: 'constant', 'edge', 'reflect', 'symmetric', 'wrap' "
                 "(reflect_type='even')")
    out = x
    for axis, (lo, hi) in enumerate(width):
        if lo or hi:
            index = np.pad(np.arange(t.shape[axis]), (lo, hi), mode=mode)
            out = lower_take(b, out, index, axis=axis)
    return b.copy(x) if out is x else out


def _pad_constant(b, x, width, constant_values=0):
    if isinstance(constant_values, Value) or (
            isinstance(constant_values, (list, tuple)) and
            any(isinstance(v, Value) for v in np.ravel(np.asarray(constant_values, object)))):
        raise UnsupportedOperationError("np.pad's constant_values must be known when compiling")
    out = b.pad(x, pad_width=width)
    t = b.type_of(x)
    border = np.pad(np.zeros(t.shape, t.dtype), width, constant_values=constant_values)
    return b.add(out, b.const(border, hint="border")) if border.any() else out


# -- diagonals and triangles ---------------------------------------------------------------------

def _diagonal_infer(t: AType, *, offset, axis1, axis2) -> AType:
    return AType(view_shape(np.diagonal, t, offset=offset, axis1=axis1, axis2=axis2),
                 t.dtype, False)


def _diagonal_put_infer(t: AType, *, shape, offset, axis1, axis2) -> AType:
    if _diagonal_infer(AType(shape, t.dtype, False), offset=offset, axis1=axis1,
                       axis2=axis2).shape != t.shape:
        raise ValueError(f"diagonal_put: {t} is not a diagonal of shape {shape}")
    return AType(tuple(shape), t.dtype, False)


primitive(
    "diagonal", view="readonly", family=F, infer=_diagonal_infer,
    emit="np.diagonal({0}, {offset}, {axis1}, {axis2})",
    vjp=lambda b, ct, out, x, **params: (
        b.fit(b.diagonal_put(ct, shape=b.type_of(x).shape, **params), x),),
    jvp=lambda b, t, out, x, **params: b.diagonal(t[0], **params),
    examples=[ex((3, 3), offset=0, axis1=0, axis2=1), ex((2, 4), offset=1, axis1=0, axis2=1),
              ex((4, 3), offset=-2, axis1=1, axis2=0), ex((2, 3, 3), offset=0, axis1=1, axis2=2)],
    batch=batch_diagonal,
)


def _diagonal_put_emit(srcs, *, shape, offset, axis1, axis2):
    """``np.diag(v, k)`` where it is that (a square matrix), else the run-time helper."""
    shape_, k = _literal(shape), _literal(offset)
    if len(shape_) == 2 and shape_[0] == shape_[1] and (_literal(axis1), _literal(axis2)) == (0, 1):
        return f"np.diag({srcs[0]}, {k})" if k else f"np.diag({srcs[0]})"
    return f"rt.diagonal_put({srcs[0]}, {shape}, {offset}, {axis1}, {axis2})"


def _diagonal_put_impl(v, *, shape, offset, axis1, axis2):
    from .. import runtime
    return runtime.diagonal_put(v, shape, offset, axis1, axis2)


primitive(
    "diagonal_put", family=F, infer=_diagonal_put_infer, emit=_diagonal_put_emit,
    impl=_diagonal_put_impl,
    vjp=lambda b, ct, out, v, *, shape, **params: (b.fit(b.diagonal(ct, **params), v),),
    jvp=lambda b, t, out, v, **params: b.diagonal_put(t[0], **params),
    examples=[ex((3,), shape=(3, 3), offset=0, axis1=0, axis2=1),
              ex((2,), shape=(3, 3), offset=-1, axis1=0, axis2=1),
              ex((2,), shape=(2, 4), offset=2, axis1=0, axis2=1),
              ex((2, 3), shape=(2, 3, 3), offset=0, axis1=1, axis2=2)],
    batch=batch_diagonal_put,
)


@lowering(np.diagonal)
@method("diagonal")
def lower_diagonal(b, a, offset=0, axis1=0, axis2=1):
    """``np.diagonal``: NumPy's read-only view of the diagonal."""
    x = b.const(a)
    nd = b.type_of(x).ndim
    if nd < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    i, j = _axis(axis1, nd), _axis(axis2, nd)
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    return b.diagonal(x, offset=int(offset), axis1=i, axis2=j)


@lowering(np.diag)
def lower_diag(b, v, k=0):
    """``np.diag``: a vector onto a square matrix's k-th diagonal, or a matrix's diagonal."""
    x = b.const(v)
    t = b.type_of(x)
    k = int(k)
    if t.ndim == 1:
        n = t.shape[0] + abs(k)
        return b.diagonal_put(x, shape=(n, n), offset=k, axis1=0, axis2=1)
    if t.ndim == 2:
        return b.diagonal(x, offset=k, axis1=0, axis2=1)
    raise ValueError("Input must be 1- or 2-d.")


@lowering(np.trace)
@method("trace")
def lower_trace(b, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """``np.trace``: the sum of ``np.diagonal`` over its last axis."""
    if dtype is not None or out is not None:
        raise UnsupportedOperationError("np.trace(..., dtype=/out=) is not supported")
    d = lower_diagonal(b, a, offset, axis1, axis2)
    return b.sum(d, axis=b.type_of(d).ndim - 1, keepdims=False)


def _triangle_infer(t: AType, *, k) -> AType:
    if t.ndim == 0:
        raise ValueError("input array must be at least 1-d")
    return AType(t.shape * 2 if t.ndim == 1 else t.shape, t.dtype, False)


for _name in ("tril", "triu"):
    primitive(
        _name, emit=f"np.{_name}({{0}}, {{k}})", infer=_triangle_infer, family=F,
        vjp=lambda b, ct, out, x, *, k, _n=_name: (b.fit(b.emit(_n, ct, k=k), x),),
        jvp=lambda b, t, out, x, *, k, _n=_name: b.emit(_n, t[0], k=k),
        examples=[ex((3, 3), k=0), ex((2, 4), k=1), ex((4, 3), k=-1), ex((2, 3, 3), k=0),
                  ex((3,), k=0)],
        batch=matrix_stack(_name),
    )
del _name


@lowering(np.tril)
def lower_tril(b, m, k=0):
    return b.tril(b.const(m), k=int(k))


@lowering(np.triu)
def lower_triu(b, m, k=0):
    return b.triu(b.const(m), k=int(k))


# -- gathering along an axis, sorting ---------------------------------------------------------

def along_axis(b, x, indices, axis, sizes=None, hint="along"):
    """``x`` read at ``indices`` along ``axis`` and in place along the other axes
    (np.take_along_axis): a gather with an arange for each other axis.

    ``sizes`` (default ``x``'s shape) gives the length of those aranges.
    """
    x, idx = b.const(x), b.const(indices)
    xt, it = b.type_of(x), b.type_of(idx)
    if it.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if it.ndim != xt.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    sizes = xt.shape if sizes is None else sizes
    dyn = []
    for i in range(xt.ndim):
        if i == axis:
            dyn.append(idx)
            continue
        shape = [1] * xt.ndim
        shape[i] = sizes[i]
        dyn.append(b.const(np.arange(sizes[i]).reshape(shape), hint=f"range{i}"))
    index = tuple(slot(k) for k in range(len(dyn)))
    return b.emit("gather" if is_advanced(b, dyn) else "getitem", x, *dyn, index=index, hint=hint)


@lowering(np.take_along_axis)
def lower_take_along_axis(b, arr, indices, axis=-1):
    x = b.const(arr)
    if axis is None:
        x, axis = reshape_to(b, x, (-1,)), 0
    return along_axis(b, x, indices, _axis(axis, b.type_of(x).ndim))


def _argsort_infer(t: AType, *, axis, kind=None) -> AType:
    return AType(t.shape if axis is not None else (t.size,), np.dtype(np.intp), False)


primitive(
    "argsort", emit=lambda srcs, *, axis, kind: (
        f"np.argsort({srcs[0]}, axis={axis}" + ("" if _literal(kind) is None else f", kind={kind}") + ")"),
    impl=lambda x, *, axis, kind=None: np.argsort(x, axis=axis, kind=kind), infer=_argsort_infer,
    nondiff=True, family=F,
    examples=[ex((4,), axis=0, kind=None), ex((2, 3), axis=1, kind="stable"),
              ex((2, 3), axis=None, kind=None)],
    batch=along("argsort"),
)


def _sort_axis(b, x, axis):
    if axis is None:
        return reshape_to(b, x, (-1,)), 0
    return x, _axis(axis, b.type_of(x).ndim)


def _kind(kind):
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")
    return kind


@lowering(np.argsort)
@method("argsort")
def lower_argsort(b, a, axis=-1, kind=None, order=None, *, stable=None):
    x = b.const(a)
    if order is not None:
        raise UnsupportedOperationError("argsort(..., order=) is not supported")
    kind = "stable" if stable else _kind(kind)
    if axis is not None:
        axis = _axis(axis, b.type_of(x).ndim)
    return b.argsort(x, axis=axis, kind=kind)


def sort_with_indices(b, a, axis=-1, kind=None, descending=False):
    """``(values, indices)`` of ``a`` sorted along ``axis``: the gradient of the values
    flows back through the permutation (a gather, whose adjoint scatters)."""
    x, axis = _sort_axis(b, b.const(a), axis)
    order = b.argsort(x, axis=axis, kind=_kind(kind))
    if descending:
        order = flip_axes(b, order, (axis,))
    return along_axis(b, x, order, axis, hint="sorted"), order


@lowering(np.sort)
def lower_sort(b, a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise UnsupportedOperationError("np.sort(..., order=) is not supported")
    return sort_with_indices(b, a, axis, "stable" if stable else kind)[0]


@method("sort")
def lower_sort_method(b, x, *args, **kwargs):
    """``x.sort()`` sorts ``x`` in place and returns None: refused with a hint."""
    raise UnsupportedOperationError(
        "x.sort() sorts the array in place, which compiled code does not model",
        hint="write x = np.sort(x) (or np.sort(x, axis=...)) for a sorted copy")


lower_sort_method.refused = True  # a located refusal, not listed as supported (catalog.py)


# -- kron -------------------------------------------------------------------------------------

@lowering(np.kron)
def lower_kron(b, a, bb):
    """``np.kron``: ``a`` and ``b`` on interleaved axes, multiplied, axes merged."""
    x, y = b.const(a), b.const(bb)
    sx, sy = b.type_of(x).shape, b.type_of(y).shape
    nd = max(len(sx), len(sy))
    sx, sy = (1,) * (nd - len(sx)) + sx, (1,) * (nd - len(sy)) + sy
    xs = reshape_to(b, x, tuple(n for d in sx for n in (d, 1)))
    ys = reshape_to(b, y, tuple(n for d in sy for n in (1, d)))
    return reshape_to(b, b.mul(xs, ys), tuple(p * q for p, q in zip(sx, sy)))
