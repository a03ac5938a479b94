"""Building arrays from others: append, diff, cross, select, gradient, linspace,
atleast_1d/2d/3d, partition, and ``np.r_``/``np.c_``.

Most are lowerings onto existing primitives (slices, concatenation, ``where``,
gathers), so their adjoints are the exact adjoints of the same computation
NumPy does; each follows NumPy's own formula, operation for operation, so the
values are NumPy's to the last bit. ``cross`` is a primitive: its adjoint is
itself (``<ct, a x b> = <a, b x ct> = <b, ct x a>``).

Invariants:

* lowerings convert a Python number where NumPy does (``np.asarray``): it
  becomes a strong float64/int64 array, so dtypes promote as in NumPy;
* params are static: counts (``n``, ``num``, ``kth``), axes and flags must be
  known when compiling, and a located error says so otherwise.
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, lowering, primitive, subscript
from ..errors import UnsupportedOperationError
from ..ir.core import Value
from ._batch import broadcasting
from ._infer import normalize_axis, run_infer, sample
from .elementwise import tangent_sum
from .indexing import _known as known_value, lower_setitem
from .movement import at_least, lower_take_along_axis
from .shape import concat_list, reshape_to, slice_along, transpose_to

F = "building"


def as_array(b, v):
    """``np.asarray(v)``: a Python number becomes a strong 0-d array of its dtype."""
    v = b.const(v)
    t = b.type_of(v)
    return b.cast(v, dtype=t.dtype) if t.weak else v


def _axis(axis, ndim, what="axis"):
    if not isinstance(axis, (int, np.integer)):
        raise UnsupportedOperationError(f"{what} must be an int known when compiling, got "
                                        f"{axis!r}")
    (ax,) = normalize_axis(axis, ndim)
    return ax


def _static_int(n, what):
    if isinstance(n, Value) or not isinstance(n, (int, np.integer)):
        raise UnsupportedOperationError(
            f"{what} must be an int known when compiling, got {n!r}",
            hint="compute it from shapes or constants, not from array values")
    return int(n)


def move_axis(b, x, source, destination):
    """``np.moveaxis(x, source, destination)`` for one axis (no op when it stays)."""
    nd = b.type_of(x).ndim
    order = [i for i in range(nd) if i != source % nd]
    order.insert(destination % nd, source % nd)
    return transpose_to(b, x, tuple(order))


# -- append, diff --------------------------------------------------------------------

@lowering(np.append)
def lower_append(b, arr, values, axis=None):
    """``np.append``: flattened for ``axis=None``, else a concatenation on ``axis``."""
    arr, values = as_array(b, arr), as_array(b, values)
    if axis is None:
        return concat_list(b, [reshape_to(b, arr, (-1,)), reshape_to(b, values, (-1,))], 0)
    return concat_list(b, [arr, values], axis)


def _edge(b, value, like, ax):
    """``prepend=``/``append=`` of np.diff: a scalar is broadcast to one slice of ``like``."""
    v = as_array(b, value)
    if b.type_of(v).ndim == 0:
        shape = list(b.type_of(like).shape)
        shape[ax] = 1
        v = b.broadcast_to(v, shape=tuple(shape))
    return v


@lowering(np.diff)
def lower_diff(b, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """``np.diff``: ``a[1:] - a[:-1]`` on ``axis``, ``n`` times."""
    x = as_array(b, a)
    n = _static_int(n, "np.diff's n")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return x
    nd = b.type_of(x).ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis(axis, nd)
    parts = [x]
    if prepend is not np._NoValue:
        parts.insert(0, _edge(b, prepend, x, ax))
    if append is not np._NoValue:
        parts.append(_edge(b, append, x, ax))
    x = concat_list(b, parts, ax)
    step = b.not_equal if b.type_of(x).dtype == np.bool_ else b.sub
    for _ in range(n):
        length = b.type_of(x).shape[ax]
        if length == 0:
            break
        x = step(slice_along(b, x, ax, 1, length), slice_along(b, x, ax, 0, length - 1))
    return x


# -- cross -----------------------------------------------------------------------------

def _cross(b, x, y):
    return b.emit("cross", x, y)


def _cross_jvp(b, t, out, x, y):
    tx = None if t[0] is None else _cross(b, t[0], y)
    ty = None if t[1] is None else _cross(b, x, t[1])
    return tangent_sum(b, out, tx, ty)


primitive(
    "cross", emit="np.cross({0}, {1})", infer=run_infer("cross"), family=F,
    vjp=lambda b, ct, out, x, y: (b.fit(_cross(b, y, ct), x), b.fit(_cross(b, ct, x), y)),
    jvp=_cross_jvp,
    examples=[ex((3,), (3,)), ex((2, 3), (3,)), ex((4, 1, 3), (2, 3))],
    batch=broadcasting("cross"),
)


def _to_three(b, v):
    """A field of 2-vectors (last axis) padded with a zero third component."""
    nd = b.type_of(v).ndim
    return b.pad(v, pad_width=((0, 0),) * (nd - 1) + ((0, 1),))


@lowering(np.cross)
def lower_cross(b, a, b_, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross`` of 3- (or 2-) vectors along ``axisa``/``axisb``; the result's
    vector axis goes to ``axisc``; two 2-vectors give the z component only."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = as_array(b, a), as_array(b, b_)
    x = move_axis(b, x, _axis(axisa, b.type_of(x).ndim, "axisa"), -1)
    y = move_axis(b, y, _axis(axisb, b.type_of(y).ndim, "axisb"), -1)
    dims = (b.type_of(x).shape[-1], b.type_of(y).shape[-1])
    if any(d not in (2, 3) for d in dims):
        raise ValueError("incompatible dimensions for cross product\n"
                         "(dimension must be 2 or 3)")
    if dims == (2, 2):
        z = _cross(b, _to_three(b, x), _to_three(b, y))
        last = b.type_of(z).ndim - 1
        return b.squeeze(slice_along(b, z, last, 2, 3), axis=(last,))
    x = _to_three(b, x) if dims[0] == 2 else x
    y = _to_three(b, y) if dims[1] == 2 else y
    out = _cross(b, x, y)
    return move_axis(b, out, -1, _axis(axisc, b.type_of(out).ndim, "axisc"))


# -- select -----------------------------------------------------------------------------

@lowering(np.select)
def lower_select(b, condlist, choicelist, default=0):
    """``np.select``: the first choice whose condition holds, as nested ``np.where``
    (the last condition innermost), in NumPy's result dtype and broadcast shape."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    # as NumPy: Python numbers (constants or computed) stay weak for the result type,
    # the rest are arrays
    choices = [b.const(c) if type(c) in (int, float) else
               c if isinstance(c, Value) and b.type_of(c).weak else as_array(b, c)
               for c in [*choicelist, default]]
    dtype = np.result_type(*(_infer_sample(b, c) for c in choices))
    conds = [b.const(c) for c in condlist]
    for i, c in enumerate(conds):
        if b.type_of(c).dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    shape = np.broadcast_shapes(*(b.type_of(v).shape for v in conds + choices))
    out = choices[-1]
    for cond, choice in zip(reversed(conds), reversed(choices[:-1])):
        out = b.where(cond, choice, out)
    if b.type_of(out).shape != shape:
        out = b.broadcast_to(out, shape=tuple(shape))
    return out if b.type_of(out).dtype == dtype else b.cast(out, dtype=dtype)


# -- gradient -------------------------------------------------------------------------------

def _spacings(b, f, axes, varargs):
    """One spacing per axis: a number (or a run-time scalar), or the differences of
    coordinates known when compiling (a number again when they are even), as NumPy."""
    if not varargs:
        return [1.0] * len(axes)
    if len(varargs) == 1 and _ndim(b, varargs[0]) == 0:
        return list(varargs) * len(axes)
    if len(varargs) != len(axes):
        raise TypeError("invalid number of arguments")
    return [v if _ndim(b, v) == 0 else _coordinate_steps(b, v, b.type_of(f).shape[ax])
            for ax, v in zip(axes, varargs)]


def _coordinate_steps(b, coords, length):
    if isinstance(coords, Value):
        coords = known_value(coords)
    if coords is None:
        raise UnsupportedOperationError(
            "np.gradient with coordinates computed in the function is not supported",
            hint="pass coordinates known when compiling, or a scalar spacing")
    distances = np.asanyarray(coords)
    if distances.ndim != 1:
        raise ValueError("distances must be either scalars or 1d")
    if len(distances) != length:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    if np.issubdtype(distances.dtype, np.integer):
        distances = distances.astype(np.float64)
    steps = np.diff(distances)
    return steps[0] if (steps == steps[0]).all() else steps


def _ndim(b, v) -> int:
    return b.type_of(v).ndim if isinstance(v, Value) else np.ndim(v)


def _scale(b, factor, dx):
    """``factor / dx`` as NumPy computes it (in Python for a Python number)."""
    return factor / dx if not isinstance(dx, Value) else b.div(b.const(factor), dx)


def _gradient_axis(b, f, ax, dx, edge_order):
    n = b.type_of(f).shape[ax]
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, "
                         "at least (edge_order + 1) elements are required.")

    def at(start, stop):
        return slice_along(b, f, ax, start, stop)

    if isinstance(dx, np.ndarray):
        return _uneven_axis(b, at, ax, n, dx, edge_order)
    twice = 2. * dx if not isinstance(dx, Value) else b.mul(b.const(2.), dx)
    inner = b.div(b.sub(at(2, n), at(0, n - 2)), b.const(twice)) if n > 2 else None
    if edge_order == 1:
        first = b.div(b.sub(at(1, 2), at(0, 1)), b.const(dx))
        last = b.div(b.sub(at(n - 1, n), at(n - 2, n - 1)), b.const(dx))
    else:
        first = _combine(b, [_scale(b, c, dx) for c in (-1.5, 2., -0.5)],
                         [at(0, 1), at(1, 2), at(2, 3)])
        last = _combine(b, [_scale(b, c, dx) for c in (0.5, -2., 1.5)],
                        [at(n - 3, n - 2), at(n - 2, n - 1), at(n - 1, n)])
    return concat_list(b, [p for p in (first, inner, last) if p is not None], ax)


def _combine(b, coefs, parts):
    """``a * f0 + b * f1 + c * f2`` with NumPy's order of operations."""
    terms = [b.mul(b.const(c), p) for c, p in zip(coefs, parts)]
    return b.add(b.add(terms[0], terms[1]), terms[2])


def _uneven_axis(b, at, ax, n, dx, edge_order):
    """np.gradient along ``ax`` with uneven steps ``dx`` (NumPy's formulas)."""
    dx1, dx2 = dx[:-1], dx[1:]
    shape = [1] * b.type_of(at(0, 1)).ndim
    shape[ax] = -1
    inner = _combine(b, [(-dx2 / (dx1 * (dx1 + dx2))).reshape(shape),
                         ((dx2 - dx1) / (dx1 * dx2)).reshape(shape),
                         (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)],
                     [at(0, n - 2), at(1, n - 1), at(2, n)])
    if edge_order == 1:
        first = b.div(b.sub(at(1, 2), at(0, 1)), b.const(dx[0]))
        last = b.div(b.sub(at(n - 1, n), at(n - 2, n - 1)), b.const(dx[-1]))
    else:
        d1, d2 = dx[0], dx[1]
        first = _combine(b, [-(2. * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2),
                             -d1 / (d2 * (d1 + d2))], [at(0, 1), at(1, 2), at(2, 3)])
        d1, d2 = dx[-2], dx[-1]
        last = _combine(b, [d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2),
                            (2. * d2 + d1) / (d2 * (d1 + d2))],
                        [at(n - 3, n - 2), at(n - 2, n - 1), at(n - 1, n)])
    return concat_list(b, [first, inner, last], ax)


@lowering(np.gradient)
def lower_gradient(b, f, *varargs, axis=None, edge_order=1):
    """``np.gradient``: central differences inside, one-sided (first or second order)
    at the edges, with a spacing per axis (a number, a run-time scalar, or coordinates
    known when compiling); one array per axis (a tuple for several)."""
    x = as_array(b, f)
    t = b.type_of(x)
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    axes = tuple(range(t.ndim)) if axis is None else tuple(
        a % t.ndim for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis))
    otype = t.dtype if t.dtype.kind in "fc" else np.dtype(np.float64)
    if t.dtype.kind in "iu":
        x = b.cast(x, dtype=np.dtype(np.float64))
    outs = []
    for ax, dx in zip(axes, _spacings(b, x, axes, varargs)):
        out = _gradient_axis(b, x, ax, dx, edge_order)
        outs.append(out if b.type_of(out).dtype == otype else b.cast(out, dtype=otype))
    return outs[0] if len(outs) == 1 else tuple(outs)


# -- linspace ---------------------------------------------------------------------------

@lowering(np.linspace)
def lower_linspace(b, start, stop, num=50, endpoint=True, retstep=False, dtype=None,
                   axis=0, *, device=None):
    """``np.linspace`` with run-time ends, computed as NumPy does:
    ``arange(num) * ((stop - start) / div) + start``, the last row set to ``stop``."""
    num = _static_int(num, "np.linspace's num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    s, e = b.const(start), b.const(stop)
    dt = np.result_type(*(_infer_sample(b, v) for v in (s, e)), 1.0)
    s, e = (v if b.type_of(v).dtype == dt and not b.type_of(v).weak else b.cast(v, dtype=dt)
            for v in (s, e))
    delta = b.sub(e, s)
    nd = b.type_of(delta).ndim
    y = b.const(np.arange(0, num, dtype=dt).reshape((-1,) + (1,) * nd))
    step = b.div(delta, b.const(div)) if div > 0 else b.const(np.nan)
    y = b.add(b.mul(y, step if div > 0 else delta), s)
    if endpoint and num > 1:
        y = lower_setitem(b, y, (-1, Ellipsis), e)
    if axis != 0:
        y = move_axis(b, y, 0, _axis(axis, nd + 1))
    if dtype is not None and np.dtype(dtype) != dt:
        if np.issubdtype(dtype, np.integer):
            y = b.floor(y)
        y = b.cast(y, dtype=np.dtype(dtype))
    return (y, step) if retstep else y


def _infer_sample(b, v):
    """A one-element value of ``v``'s type (a Python number when weak), for result_type."""
    return sample(b.type_of(v))


# -- atleast_1d / 2d / 3d -------------------------------------------------------------------

def _atleast(n):
    def lower(b, *arys):
        outs = [at_least(b, as_array(b, a), n) for a in arys]
        return outs[0] if len(outs) == 1 else tuple(outs)
    lower.__name__ = f"lower_atleast_{n}d"
    lower.__doc__ = f"``np.atleast_{n}d``: a view with ones added as NumPy places them."
    return lower


lowering(np.atleast_1d)(_atleast(1))
lowering(np.atleast_2d)(_atleast(2))
lowering(np.atleast_3d)(_atleast(3))


# -- partition: the gradient goes through the selected positions ---------------------------

@lowering(np.partition)
def lower_partition(b, a, kth, axis=-1, kind="introselect", order=None):
    """``np.partition(a, kth)``: ``a`` gathered at ``np.argpartition(a, kth)``, which
    is the same arrangement; the gradient of each element goes where it came from."""
    from .predicates import lower_argpartition
    x = as_array(b, a)
    if axis is None:
        x, axis = reshape_to(b, x, (-1,)), 0
    ax = _axis(axis, b.type_of(x).ndim)
    idx = lower_argpartition(b, x, kth, axis=ax, kind=kind, order=order)
    return lower_take_along_axis(b, x, idx, ax)


# -- np.r_ and np.c_ -----------------------------------------------------------------------

def _concat_items(b, items, ndmin):
    """The arrays ``np.r_`` (ndmin 1) / ``np.c_`` (ndmin 2, 1-d as columns) concatenate,
    all cast to the result type of the items (Python numbers weak), as NumPy does."""
    arrays = []
    for item in items if isinstance(items, tuple) else (items,):
        if isinstance(item, str):
            raise UnsupportedOperationError(
                f"np.r_/np.c_ with a directive string ({item!r}) is not supported",
                hint="use np.concatenate / np.stack with axis=")
        arrays.append(b.const(np.r_[item] if isinstance(item, slice) else item))
    dtype = np.result_type(*(_infer_sample(b, x) for x in arrays))
    out = []
    for x in arrays:
        x = x if b.type_of(x).dtype == dtype and not b.type_of(x).weak else b.cast(x, dtype=dtype)
        nd = b.type_of(x).ndim
        if nd < ndmin:
            x = reshape_to(b, x, (-1,) + (1,) * (ndmin - 1) if nd else (1,) * ndmin)
        out.append(x)
    return out


@subscript(np.r_)
def lower_r_(b, index):
    """``np.r_[a, b, 1.0, 0:3]``: 1-d pieces concatenated."""
    return concat_list(b, _concat_items(b, index, 1), 0)


@subscript(np.c_)
def lower_c_(b, index):
    """``np.c_[a, b]``: 1-d pieces as columns, concatenated on the last axis."""
    return concat_list(b, _concat_items(b, index, 2), -1)

