"""Shape primitives: reshape, broadcast_to, transpose, expand_dims, squeeze,
concat, stack, and the slice_axis/pad pair their adjoints need.

Invariants:

* shape params are static and canonical where a lowering can make them so
  (tuples of Python ints, non-negative axes for ``transpose``/``slice_axis``);
* these primitives move values without computing with them: each VJP is the
  inverse movement of the cotangent (a reshape, the inverse permutation, slices
  of a concatenation, a zero padding of a slice), followed by ``b.fit`` where
  the dtype can change;
* lowerings return their input unchanged when the movement is the identity
  (``x.reshape(x.shape)``, ``x.T`` of a vector), so no op is emitted for it.
"""
from __future__ import annotations

import ast

import numpy as np

from ..ad.rules import attribute, ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType
from ._batch import (batch_broadcast_to, batch_expand_dims, batch_pad, batch_reshape,
                     batch_slice_axis, batch_squeeze, batch_transpose, materialized)
from ._infer import normalize_axis, promote, static_axis, view_shape

F = "shape"


def _reshape_infer(t: AType, *, shape) -> AType:
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        shape = tuple(t.size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != t.size:
        raise ValueError(f"cannot reshape an array of size {t.size} into shape {shape}")
    return AType(shape, t.dtype, False)


def reshape_as(b, ct, x):
    """``ct`` reshaped to ``x``'s shape (at run time when it has a '?', ir/dims.py)."""
    if b.type_of(x).dynamic:
        return b.reshape_like(ct, x)
    return b.reshape(ct, shape=b.type_of(x).shape)


primitive(
    "reshape", view=True, dynamic=True, emit="{0}.reshape({shape})", array_inputs=True, infer=_reshape_infer, family=F,
    vjp=lambda b, ct, out, x, *, shape: (reshape_as(b, ct, x),),
    jvp=lambda b, t, out, x, *, shape: b.reshape(t[0], shape=shape),
    examples=[ex((2, 3), shape=(3, 2)), ex((6,), shape=(2, -1)), ex(float, shape=(1, 1))],
    batch=batch_reshape,
)

primitive(
    "broadcast_to", view="readonly", emit="np.broadcast_to({0}, {shape})", family=F,
    infer=lambda t, *, shape: AType(tuple(np.broadcast_shapes(t.shape, tuple(shape))),
                                    t.dtype, False),
    vjp=lambda b, ct, out, x, *, shape: (b.fit(ct, x),),
    jvp=lambda b, t, out, x, *, shape: b.broadcast_to(t[0], shape=shape),
    examples=[ex((3,), shape=(2, 3)), ex((2, 1), shape=(2, 4)), ex((), shape=(3,)),
              ex(float, shape=(2,))],
    batch=batch_broadcast_to,
)


def _transpose_infer(t: AType, *, axes=None) -> AType:
    return AType(view_shape(np.transpose, t, axes=axes), t.dtype, False)


def _expand_dims_infer(t: AType, *, axis) -> AType:
    return AType(view_shape(np.expand_dims, t, axis=axis), t.dtype, False)


def _squeeze_infer(t: AType, *, axis=None) -> AType:
    return AType(view_shape(np.squeeze, t, axis=axis), t.dtype, False)


def _inverse_perm(axes):
    return None if axes is None else tuple(int(i) for i in np.argsort(axes))


def _transpose_source(inputs, *, axes):
    # ``x.T`` is the same view as ``x.transpose((1, 0))`` on a matrix, at a third of the cost
    return f"{inputs[0]}.T" if axes in ("((1, 0))", "(None)") else f"{inputs[0]}.transpose({axes})"


def _swaps_matrix(op) -> bool:
    return (op is not None and op.prim == "transpose" and len(op.inputs[0].type.shape) == 2
            and op.params.get("axes") in (None, (1, 0)))


def _matrix_t(b, v):
    """``v.T`` of a matrix: the input of ``v``'s own transpose when it is one."""
    return v.producer.inputs[0] if _swaps_matrix(v.producer) else b.transpose(v, axes=(1, 0))


def _transpose_vjp(b, ct, out, x, *, axes):
    """The inverse permutation of the cotangent. For a matrix whose cotangent is a
    matrix product ``a @ c`` (``w``'s in ``x @ w.T``, every Dense layer): ``c.T @ a.T``,
    the same value computed row-major, where ``(a @ c).T`` is a column-major view
    that element-wise updates (an optimizer's ``v += g``) walk across rows, many
    times slower. Only the adjoint changes: the primal values stay Python's."""
    product = getattr(ct, "producer", None)
    if (_swaps_matrix(getattr(out, "producer", None)) and product is not None
            and product.prim == "matmul" and all(len(v.type.shape) == 2 for v in product.inputs)):
        a, c = product.inputs
        return (b.matmul(_matrix_t(b, c), _matrix_t(b, a)),)
    return (b.transpose(ct, axes=_inverse_perm(axes)),)


primitive(
    "transpose", view=True, emit=_transpose_source, impl=lambda x, *, axes: x.transpose(axes),
    array_inputs=True, infer=_transpose_infer, family=F, dynamic=True,
    vjp=_transpose_vjp,
    jvp=lambda b, t, out, x, *, axes: b.transpose(t[0], axes=axes),
    examples=[ex((2, 3), axes=(1, 0)), ex((2, 3, 4), axes=(2, 0, 1)), ex((2, 3), axes=None)],
    batch=batch_transpose,
)

primitive(
    "expand_dims", view=True, dynamic=True, emit="np.expand_dims({0}, {axis})", infer=_expand_dims_infer, family=F,
    vjp=lambda b, ct, out, x, *, axis: (reshape_as(b, ct, x),),
    jvp=lambda b, t, out, x, *, axis: b.expand_dims(t[0], axis=axis),
    examples=[ex((3,), axis=0), ex((2, 3), axis=(0, 3)), ex((2, 3), axis=-1)],
    batch=batch_expand_dims,
)

primitive(
    "squeeze", view=True, dynamic=True, emit="np.squeeze({0}, {axis})", infer=_squeeze_infer, family=F,
    vjp=lambda b, ct, out, x, *, axis: (reshape_as(b, ct, x),),
    jvp=lambda b, t, out, x, *, axis: b.squeeze(t[0], axis=axis),
    examples=[ex((1, 3, 1), axis=None), ex((1, 3), axis=0), ex((2, 1), axis=(-1,))],
    batch=batch_squeeze,
)


# -- slicing along one axis and zero padding: each is the other's adjoint -------------

def _slice_infer(t: AType, *, axis, start, stop) -> AType:
    if not 0 <= axis < t.ndim or not 0 <= start <= stop <= t.shape[axis]:
        raise ValueError(f"slice_axis: [{start}:{stop}] on axis {axis} of shape {t.shape}")
    shape = t.shape[:axis] + (stop - start,) + t.shape[axis + 1:]
    return AType(shape, t.dtype, False)


def _slice_emit(srcs, *, axis, start, stop):
    """``x[:, :, 2:5]``: as many ``:`` as ``axis`` (params arrive as literal source)."""
    (x,) = srcs
    axis, start, stop = (ast.literal_eval(str(p)) for p in (axis, start, stop))
    return f"{x}[{':, ' * axis}{start or ''}:{stop}]"


def _slice_impl(x, *, axis, start, stop):
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _slice_vjp(b, ct, out, x, *, axis, start, stop):
    xt = b.type_of(x)
    width = tuple((start, xt.shape[axis] - stop) if i == axis else (0, 0) for i in range(xt.ndim))
    return (b.pad(ct, pad_width=width),)


primitive(
    "slice_axis", view=True, emit=_slice_emit, impl=_slice_impl, infer=_slice_infer, family=F,
    vjp=_slice_vjp,
    jvp=lambda b, t, out, x, **params: b.slice_axis(t[0], **params),
    examples=[ex((4,), axis=0, start=1, stop=3), ex((2, 5), axis=1, start=2, stop=5)],
    batch=batch_slice_axis,
)


def slice_along(b, v, axis, start, stop):
    """``v[..., start:stop]`` on ``axis`` (non-negative); no op for the whole axis."""
    if start == 0 and stop == b.type_of(v).shape[axis]:
        return v
    return b.slice_axis(v, axis=axis, start=start, stop=stop)


def _pad_infer(t: AType, *, pad_width) -> AType:
    if len(pad_width) != t.ndim:
        raise ValueError(f"pad: pad_width {pad_width} does not fit shape {t.shape}")
    shape = tuple(d + lo + hi for d, (lo, hi) in zip(t.shape, pad_width))
    return AType(shape, t.dtype, False)


def _pad_vjp(b, ct, out, x, *, pad_width):
    shape = b.type_of(out).shape
    for axis, (lo, hi) in enumerate(pad_width):
        ct = slice_along(b, ct, axis, lo, shape[axis] - hi)
    return (ct,)


primitive(
    "pad", emit="np.pad({0}, {pad_width})", infer=_pad_infer, family=F,
    vjp=_pad_vjp,
    jvp=lambda b, t, out, x, *, pad_width: b.pad(t[0], pad_width=pad_width),
    examples=[ex((3,), pad_width=((1, 2),)), ex((2, 3), pad_width=((0, 0), (1, 0))),
              ex((2, 2), pad_width=((1, 1), (0, 2)))],
    batch=batch_pad,
)


# -- concat and stack (variadic) -----------------------------------------------------------

def _concat_infer(*types: AType, axis) -> AType:
    nd = types[0].ndim if types else 0
    if nd == 0 or any(t.ndim != nd for t in types):
        raise ValueError("concat needs inputs with the same number (>= 1) of dimensions, got "
                         + ", ".join(str(t) for t in types))
    (ax,) = normalize_axis(axis, nd)
    rest = {t.shape[:ax] + t.shape[ax + 1:] for t in types}
    if len(rest) != 1:
        raise ValueError(f"concat on axis {axis}: other dimensions differ in "
                         + ", ".join(str(t) for t in types))
    shape = list(types[0].shape)
    shape[ax] = sum(t.shape[ax] for t in types)
    return AType(tuple(shape), promote(*types).dtype, False)


def _concat_vjp(b, ct, out, *xs, axis):
    (ax,) = normalize_axis(axis, b.type_of(out).ndim)
    cts, start = [], 0
    for x in xs:
        stop = start + b.type_of(x).shape[ax]
        cts.append(b.fit(slice_along(b, ct, ax, start, stop), x))
        start = stop
    return tuple(cts)


def _variadic_jvp(name):
    """JVP of a primitive linear in each of its inputs (concat, stack): the same op on tangents."""
    def jvp(b, t, out, *xs, axis):
        if all(ti is None for ti in t):
            return None
        parts = [b.zeros(x) if ti is None else ti for ti, x in zip(t, xs)]
        return b.emit(name, *parts, axis=axis)
    return jvp


primitive(
    "concat", family=F, infer=_concat_infer, vjp=_concat_vjp, jvp=_variadic_jvp("concat"),
    emit=lambda srcs, *, axis: f"np.concatenate([{', '.join(srcs)}], axis={axis})",
    impl=lambda *xs, axis: np.concatenate(xs, axis=axis),
    examples=[ex((2,), (3,), axis=0), ex((2, 3), (2, 1), axis=1), ex((2, 3), (2, 2), axis=-1),
              ex((1, 2), (2, 2), (3, 2), axis=0)],
    batch=materialized("concat"),
)


def _stack_infer(*types: AType, axis) -> AType:
    if not types or len({t.shape for t in types}) != 1:
        raise ValueError("stack needs inputs of one shape, got "
                         + ", ".join(str(t) for t in types))
    shape = list(types[0].shape)
    (ax,) = normalize_axis(axis, len(shape) + 1)
    shape.insert(ax, len(types))
    # np.stack makes an array of each item first: a Python number is a float64/int64/bool
    # array there, not a weak scalar (np.stack([np.float32(1), 2.0]) is float64)
    return AType(tuple(shape), np.result_type(*(t.dtype for t in types)), False)


def _stack_vjp(b, ct, out, *xs, axis):
    (ax,) = normalize_axis(axis, b.type_of(out).ndim)
    return tuple(
        b.fit(b.reshape(b.slice_axis(ct, axis=ax, start=i, stop=i + 1),
                        shape=b.type_of(x).shape), x)
        for i, x in enumerate(xs))


primitive(
    "stack", family=F, infer=_stack_infer, vjp=_stack_vjp, jvp=_variadic_jvp("stack"),
    emit=lambda srcs, *, axis: f"np.stack([{', '.join(srcs)}], axis={axis})",
    impl=lambda *xs, axis: np.stack(xs, axis=axis),
    examples=[ex((3,), (3,), axis=0), ex((2, 3), (2, 3), (2, 3), axis=-1),
              ex(float, float, axis=0), ex(np.array(0.5, np.float32), float, axis=0)],
    batch=materialized("stack", lambda n: n + 1),
)


# -- lowerings ----------------------------------------------------------------------------

def _static_ints(values, what):
    try:
        return tuple(int(v) for v in values)
    except TypeError:
        raise UnsupportedOperationError(
            f"{what} must be known when compiling, got {values!r}",
            hint="compute it from shapes (x.shape) or constants, not from array values") from None


def reshape_to(b, x, shape):
    """``x`` reshaped to ``shape`` (``-1`` allowed); no op if it already has that shape."""
    x = b.const(x)
    t = b.type_of(x)
    shape = _static_ints(shape, "a reshape's shape")
    if not t.weak and not t.dynamic and _reshape_infer(t, shape=shape).shape == t.shape:
        return x
    return b.reshape(x, shape=shape)


def _shape_args(shape):
    """``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` both mean shape ``(2, 3)``."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        return tuple(shape[0])
    return shape


def _c_order(order, name):
    if order not in ("C", "A", None):
        raise UnsupportedOperationError(f"{name}(..., order={order!r}) is not supported",
                                        hint="only C order is supported")


@lowering(np.reshape)
def lower_reshape(b, a, shape=None, order="C", *, newshape=None, copy=None):
    _c_order(order, "np.reshape")
    return reshape_to(b, a, _shape_args((shape if newshape is None else newshape,)))


@method("reshape")
def lower_reshape_method(b, x, *shape, order="C"):
    _c_order(order, "reshape")
    return reshape_to(b, x, _shape_args(shape))


@lowering(np.ravel)
@method("ravel")
def lower_ravel(b, a, order="C"):
    _c_order(order, "ravel")
    return reshape_to(b, a, (-1,))


@method("flatten")
def lower_flatten(b, a, order="C"):
    """``x.flatten()``: always a new array (``ravel`` may be a view)."""
    _c_order(order, "flatten")
    return b.copy(reshape_to(b, a, (-1,)))


@lowering(np.broadcast_to)
def lower_broadcast_to(b, array, shape, subok=False):
    x = b.const(array)
    shape = _static_ints((shape,) if isinstance(shape, (int, np.integer)) else shape, "shape")
    return x if b.type_of(x).shape == shape else b.broadcast_to(x, shape=shape)


def transpose_to(b, x, axes):
    """``x`` with its axes permuted (reversed for None); no op for the identity."""
    x = b.const(x)
    nd = b.type_of(x).ndim
    if axes is None:
        perm = tuple(range(nd))[::-1]
    else:
        perm = tuple(a % nd if -nd <= a < nd else a for a in _static_ints(axes, "axes"))
    if perm == tuple(range(nd)):
        return x
    return b.transpose(x, axes=perm)


@lowering(np.transpose)
def lower_transpose(b, a, axes=None):
    return transpose_to(b, a, axes)


@method("transpose")
def lower_transpose_method(b, x, *axes):
    """``x.transpose()``, ``x.transpose(1, 0)`` and ``x.transpose((1, 0))``."""
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
        axes = axes[0]
    return transpose_to(b, x, axes or None)


@attribute("T")
def lower_T(b, x):
    return transpose_to(b, x, None)


@lowering(np.expand_dims)
@method("expand_dims")
def lower_expand_dims(b, a, axis):
    return b.expand_dims(b.const(a), axis=static_axis(axis))


@lowering(np.squeeze)
@method("squeeze")
def lower_squeeze(b, a, axis=None):
    """Squeezing is canonicalised to an explicit axis tuple; no op if nothing is squeezed."""
    x = b.const(a)
    t = b.type_of(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(t.shape) if d == 1)
    else:
        axes = normalize_axis(axis, t.ndim)
    return b.squeeze(x, axis=axes) if axes else x


def concat_list(b, arrays, axis=0):
    """Concatenate a Python list of values (``axis=None`` flattens them first)."""
    values = [b.const(a) for a in arrays]
    if axis is None:
        values, axis = [reshape_to(b, v, (-1,)) for v in values], 0
    if len(values) == 1:  # np.concatenate always makes a new array
        return b.copy(values[0])
    return b.concat(*values, axis=int(axis))


def stack_list(b, arrays, axis=0):
    return b.stack(*(b.const(a) for a in arrays), axis=int(axis))


@lowering(np.concatenate, *((np.concat,) if hasattr(np, "concat") else ()))
def lower_concatenate(b, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None or dtype is not None:
        raise UnsupportedOperationError("np.concatenate(..., out=/dtype=) is not supported")
    return concat_list(b, arrays, axis)


@lowering(np.stack)
def lower_stack(b, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None or dtype is not None:
        raise UnsupportedOperationError("np.stack(..., out=/dtype=) is not supported")
    return stack_list(b, arrays, axis)
