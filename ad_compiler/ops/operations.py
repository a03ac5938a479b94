"""MindSpore-style ``ops``: functional forms (``ops.exp``) and class forms (``ops.MatMul()``).

Every operation here is defined once, as a *lowering* ``lower(b, *args, **kwargs)``
over the builder interface, and used in two ways:

* compiled code: the functional form is registered as a lowering of itself, and a
  class-form instance exposes ``__ad_lower__`` (found by ``rules.find_lowering``),
  so ``ops.exp(x)`` or ``self.matmul(x, w)`` in a Cell lowers to primitives;
* eager calls: the same lowering runs on an :class:`EagerBuilder`, which executes
  each primitive at once on the unwrapped arrays.

Invariants: eager and compiled results are the same code path; a Tensor among
the inputs gives a Tensor result, ndarrays and Python numbers give plain NumPy
results; static arguments (axes, shapes, flags) keep MindSpore's names and
meanings (``axis=()`` means all axes in the reductions, as in MindSpore).
"""
from __future__ import annotations

import functools

import numpy as np

from .. import tensor as _tensor
from ..ad.rules import find_lowering, register_lowering
from ..errors import UnsupportedOperationError
from ..ir.builder import EagerBuilder
from . import elementwise as _elementwise  # noqa: F401  (registers the primitives)
from . import elementwise_math as _elementwise_math  # noqa: F401
from . import linalg as _linalg, nn_ops as _nn, reduction as _reduction, shape as _shape
from . import quantiles as _quantiles, scans as _scans
from ._infer import normalize_axis
from . import einsum as _einsum

_EAGER = EagerBuilder()  # stateless in eager mode: ops run at once, nothing is recorded


def _unwrap(value, seen: list):
    """``value`` with Tensors replaced by their arrays (inside lists and tuples too)."""
    if isinstance(value, _tensor.Tensor):
        seen.append(True)
        return _tensor.unwrap(value)
    if type(value) in (list, tuple):
        return type(value)(_unwrap(v, seen) for v in value)
    return value


def run_eager(lower, args, kwargs):
    """Run ``lower`` on concrete values; Tensor in, Tensor out."""
    seen: list = []
    args = [_unwrap(a, seen) for a in args]
    kwargs = {k: _unwrap(v, seen) for k, v in kwargs.items()}
    out = lower(_EAGER, *args, **kwargs)
    if not seen:
        return out
    if isinstance(out, tuple) and hasattr(out, "_fields"):  # a named result (ops.svd ...)
        return type(out)(*(_tensor.wrap(v) for v in out))
    if type(out) in (list, tuple):  # ops.split, ops.sort, ops.svd: a Tensor per item
        return type(out)(_tensor.wrap(v) for v in out)
    return _tensor.wrap(out)


def functional(lower, name: str | None = None):
    """The public function of a lowering: eager when called, the lowering when compiled."""
    def op(*args, **kwargs):
        return run_eager(lower, args, kwargs)

    op.__name__ = op.__qualname__ = name or lower.__name__
    op.__doc__ = lower.__doc__
    op.__module__ = __name__
    # help(ops.sum) shows (input, dim=None, ...): the lowering with its builder bound,
    # whose signature inspect computes when asked (not for every op at import)
    op.__wrapped__ = functools.partial(lower, _EAGER)
    register_lowering(op, lower)
    return op


def _same_as(numpy_fn, name):
    """The functional form that lowers exactly as ``numpy_fn`` does."""
    op = functional(find_lowering(numpy_fn), name)
    op.__doc__ = f"``ops.{name}``: computes and differentiates as ``np.{numpy_fn.__name__}``."
    return op


def _prim_lowering(prim: str):
    def lower(b, x):
        return b.emit(prim, b.const(x))
    lower.__name__ = prim
    lower.__doc__ = f"Elementwise ``{prim}``."
    return lower


def _ms_axis(axis):
    """MindSpore writes "every axis" as ``()`` (or None)."""
    return None if axis is None or axis == () or axis == [] else axis


# -- functional forms -------------------------------------------------------------------

exp = _same_as(np.exp, "exp")
log = _same_as(np.log, "log")
sin = _same_as(np.sin, "sin")
cos = _same_as(np.cos, "cos")
tanh = _same_as(np.tanh, "tanh")
sqrt = _same_as(np.sqrt, "sqrt")
square = _same_as(np.square, "square")
abs = _same_as(np.abs, "abs")  # noqa: A001 - MindSpore's name
neg = _same_as(np.negative, "neg")
add = _same_as(np.add, "add")
sub = _same_as(np.subtract, "sub")
mul = _same_as(np.multiply, "mul")
div = _same_as(np.divide, "div")
pow = _same_as(np.power, "pow")  # noqa: A001 - MindSpore's name
matmul = _same_as(np.matmul, "matmul")
maximum = _same_as(np.maximum, "maximum")
minimum = _same_as(np.minimum, "minimum")
where = _same_as(np.where, "where")
sigmoid = functional(_prim_lowering("sigmoid"))
relu = functional(_prim_lowering("relu"))
softmax = functional(_nn.lower_softmax, "softmax")
log_softmax = functional(_nn.lower_log_softmax, "log_softmax")


# elementwise math (ops/elementwise_math.py); MindSpore spells some two ways
tan = _same_as(np.tan, "tan")
asin, arcsin = _same_as(np.arcsin, "asin"), _same_as(np.arcsin, "arcsin")
acos, arccos = _same_as(np.arccos, "acos"), _same_as(np.arccos, "arccos")
atan, arctan = _same_as(np.arctan, "atan"), _same_as(np.arctan, "arctan")
atan2, arctan2 = _same_as(np.arctan2, "atan2"), _same_as(np.arctan2, "arctan2")
sinh = _same_as(np.sinh, "sinh")
cosh = _same_as(np.cosh, "cosh")
asinh, arcsinh = _same_as(np.arcsinh, "asinh"), _same_as(np.arcsinh, "arcsinh")
acosh, arccosh = _same_as(np.arccosh, "acosh"), _same_as(np.arccosh, "arccosh")
atanh, arctanh = _same_as(np.arctanh, "atanh"), _same_as(np.arctanh, "arctanh")
log1p = _same_as(np.log1p, "log1p")
expm1 = _same_as(np.expm1, "expm1")
log2 = _same_as(np.log2, "log2")
log10 = _same_as(np.log10, "log10")
exp2 = _same_as(np.exp2, "exp2")
logaddexp = _same_as(np.logaddexp, "logaddexp")
logaddexp2 = _same_as(np.logaddexp2, "logaddexp2")
hypot = _same_as(np.hypot, "hypot")
reciprocal = _same_as(np.reciprocal, "reciprocal")
sinc = _same_as(np.sinc, "sinc")
deg2rad = _same_as(np.deg2rad, "deg2rad")
rad2deg = _same_as(np.rad2deg, "rad2deg")
absolute = _same_as(np.absolute, "absolute")
sign = _same_as(np.sign, "sign")
floor = _same_as(np.floor, "floor")
ceil = _same_as(np.ceil, "ceil")
trunc = _same_as(np.trunc, "trunc")
fmod = _same_as(np.fmod, "fmod")
remainder = _same_as(np.remainder, "remainder")
float_power = _same_as(np.float_power, "float_power")
fmax = _same_as(np.fmax, "fmax")
fmin = _same_as(np.fmin, "fmin")
copysign = _same_as(np.copysign, "copysign")


@functional
def round(b, input, *, decimals=0):  # noqa: A001 - MindSpore's name
    """``ops.round(input, *, decimals=0)``: half to even, as ``np.round``; no gradient."""
    return _elementwise_math.lower_round(b, input, decimals)


@functional
def nan_to_num(b, input, nan=0.0, posinf=None, neginf=None):
    """``ops.nan_to_num(input, nan=0.0, posinf=None, neginf=None)``, as ``np.nan_to_num``."""
    return _elementwise_math.lower_nan_to_num(b, input, nan=nan, posinf=posinf, neginf=neginf)


@functional
def sum(b, input, dim=None, keepdim=False):  # noqa: A001 - MindSpore's name
    """``ops.sum(input, dim=None, keepdim=False)``: the sum over ``dim`` (all axes for None)."""
    return _reduction.lower_sum(b, input, axis=_ms_axis(dim), keepdims=keepdim)


@functional
def mean(b, x, axis=None, keep_dims=False):
    """``ops.mean(x, axis=None, keep_dims=False)``; ``axis=()`` also means every axis."""
    return _reduction.lower_mean(b, x, axis=_ms_axis(axis), keepdims=keep_dims)


@functional
def transpose(b, input_x, input_perm):
    """``ops.transpose(x, input_perm)``: the axes of ``x`` permuted."""
    return _shape.transpose_to(b, input_x, tuple(input_perm))


@functional
def reshape(b, input, shape):
    """``ops.reshape(input, shape)``; ``-1`` stands for the remaining size."""
    return _shape.reshape_to(b, input, shape)


@functional
def expand_dims(b, input_x, axis):
    return _shape.lower_expand_dims(b, input_x, axis)


@functional
def squeeze(b, input, axis=None):
    """``ops.squeeze(x, axis=None)``: drop size-1 axes (all of them for None or ``()``)."""
    return _shape.lower_squeeze(b, input, _ms_axis(axis))


@functional
def concat(b, tensors, axis=0):
    return _shape.concat_list(b, tensors, axis)


@functional
def stack(b, tensors, axis=0):
    return _shape.stack_list(b, tensors, axis)


def _lower_stop_gradient(b, value):
    """The value, held constant by the derivative; tuples and lists element by element."""
    if type(value) in (tuple, list):
        return type(value)(_lower_stop_gradient(b, v) for v in value)
    if isinstance(value, (bool, int, float, complex)):
        return value
    return b.stop_gradient(b.const(value))


def stop_gradient(value):
    """``value`` itself; compiled code treats it as a constant of the backward pass."""
    return value


register_lowering(stop_gradient, _lower_stop_gradient)


# -- class forms ---------------------------------------------------------------------------

class Primitive:
    """Base of the class-form ops: configured at construction, applied by calling.

    Subclasses define ``__ad_lower__(self, b, *args, **kwargs)``; calling an
    instance runs that same lowering eagerly. Constructing one inside compiled
    code (``ops.ReduceSum(keep_dims=True)(x, 1)``) happens at compile time: the
    configuration is static, the instance is an ordinary Python object there.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        register_lowering(cls, _construct_statically(cls))

    def __call__(self, *args, **kwargs):
        return run_eager(self.__ad_lower__, args, kwargs)

    def __ad_lower__(self, b, *args, **kwargs):
        raise NotImplementedError

    def __repr__(self) -> str:
        config = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"Prim[{type(self).__name__}]" + (f"<{config}>" if config else "")


def _construct_statically(cls):
    def construct(b, *args, **kwargs):
        return cls(*args, **kwargs)
    construct.__name__ = f"construct_{cls.__name__}"
    return construct


def _simple(name: str, fn) -> type:
    """A class form with no configuration that applies the functional form ``fn``."""
    lower = find_lowering(fn)

    def __ad_lower__(self, b, *args, **kwargs):
        return lower(b, *args, **kwargs)

    doc = f"Class form of ``ops.{fn.__name__}``: ``ops.{name}()(*inputs)``."
    return type(name, (Primitive,), {"__ad_lower__": __ad_lower__, "__doc__": doc,
                                     "__module__": __name__})


Add, Sub, Mul, Div = (_simple(n, f) for n, f in (("Add", add), ("Sub", sub), ("Mul", mul),
                                                 ("Div", div)))
Exp, Log, Pow, Sin, Cos, Tanh = (_simple(n, f) for n, f in (
    ("Exp", exp), ("Log", log), ("Pow", pow), ("Sin", sin), ("Cos", cos), ("Tanh", tanh)))
Sigmoid, ReLU, Square, Sqrt, Abs, Neg = (_simple(n, f) for n, f in (
    ("Sigmoid", sigmoid), ("ReLU", relu), ("Square", square), ("Sqrt", sqrt), ("Abs", abs),
    ("Neg", neg)))
Maximum, Minimum = _simple("Maximum", maximum), _simple("Minimum", minimum)


class MatMul(Primitive):
    """``MatMul(transpose_a=False, transpose_b=False)(a, b)``: ``a @ b``, flags transpose first."""

    def __init__(self, transpose_a=False, transpose_b=False):
        self.transpose_a = bool(transpose_a)
        self.transpose_b = bool(transpose_b)

    def __ad_lower__(self, b, x, y):
        x, y = b.const(x), b.const(y)
        if self.transpose_a:
            x = _linalg.swap_last(b, x)
        if self.transpose_b:
            y = _linalg.swap_last(b, y)
        return b.matmul(x, y)


class _Reduce(Primitive):
    _lower = None

    def __init__(self, keep_dims=False):
        self.keep_dims = bool(keep_dims)

    def __ad_lower__(self, b, x, axis=()):
        return type(self)._lower(b, x, axis=_ms_axis(axis), keepdims=self.keep_dims)


class ReduceSum(_Reduce):
    """``ReduceSum(keep_dims=False)(x, axis=())``: the sum over ``axis`` (``()`` = all)."""

    _lower = staticmethod(_reduction.lower_sum)


class ReduceMean(_Reduce):
    """``ReduceMean(keep_dims=False)(x, axis=())``: the mean over ``axis`` (``()`` = all)."""

    _lower = staticmethod(_reduction.lower_mean)


class Transpose(Primitive):
    """``Transpose()(x, perm)``."""

    def __ad_lower__(self, b, x, perm):
        return _shape.transpose_to(b, x, tuple(perm))


class Reshape(Primitive):
    """``Reshape()(x, shape)``."""

    def __ad_lower__(self, b, x, input_shape):
        return _shape.reshape_to(b, x, input_shape)


class ExpandDims(Primitive):
    """``ExpandDims()(x, axis)``."""

    def __ad_lower__(self, b, x, axis):
        return _shape.lower_expand_dims(b, x, axis)


class _AxisOp(Primitive):
    def __init__(self, axis=0):
        self.axis = axis


class Squeeze(_AxisOp):
    """``Squeeze(axis=())(x)``: drop the size-1 ``axis`` (all size-1 axes for ``()``)."""

    def __init__(self, axis=()):
        super().__init__(axis)

    def __ad_lower__(self, b, x):
        return _shape.lower_squeeze(b, x, _ms_axis(self.axis))


class Concat(_AxisOp):
    """``Concat(axis=0)(tensors)``."""

    def __ad_lower__(self, b, tensors):
        return _shape.concat_list(b, tensors, self.axis)


class Stack(_AxisOp):
    """``Stack(axis=0)(tensors)``."""

    def __ad_lower__(self, b, tensors):
        return _shape.stack_list(b, tensors, self.axis)


class Softmax(_AxisOp):
    """``Softmax(axis=-1)(x)``."""

    def __init__(self, axis=-1):
        super().__init__(axis)

    def __ad_lower__(self, b, x):
        return _nn.lower_softmax(b, x, self.axis)


class LogSoftmax(Softmax):
    """``LogSoftmax(axis=-1)(x)``."""

    def __ad_lower__(self, b, x):
        return _nn.lower_log_softmax(b, x, self.axis)


# -- reductions, scans and order statistics ---------------------------------------------------

def _np_dtype(dtype):
    from ..dtype import to_numpy_dtype
    return to_numpy_dtype(dtype)


@functional
def prod(b, input, axis=None, keep_dims=False, dtype=None):
    """``ops.prod(input, axis=None, keep_dims=False, dtype=None)``; ``axis=()`` means every axis."""
    return _reduction.lower_prod(b, input, axis=_ms_axis(axis), keepdims=keep_dims,
                                 dtype=_np_dtype(dtype))


@functional
def cumsum(b, x, axis, dtype=None):
    """``ops.cumsum(x, axis, dtype=None)``: the cumulative sum along ``axis``."""
    return _scans.lower_cumsum(b, x, axis=axis, dtype=_np_dtype(dtype))


@functional
def cumprod(b, input, dim, dtype=None):
    """``ops.cumprod(input, dim, dtype=None)``: the cumulative product along ``dim``."""
    return _scans.lower_cumprod(b, input, axis=dim, dtype=_np_dtype(dtype))


def _refuse_initial_where(name, initial, where):
    if initial is not None or where is not None:
        from ..errors import UnsupportedOperationError
        raise UnsupportedOperationError(f"ops.{name}(..., initial=..., where=...) is not supported",
                                        hint="select the elements first (ops.where) instead")


@functional
def amax(b, input, axis=None, keepdims=False, *, initial=None, where=None):
    """``ops.amax(input, axis=None, keepdims=False)``: the maximum (ties share the gradient)."""
    _refuse_initial_where("amax", initial, where)
    return _reduction.lower_max(b, input, axis=_ms_axis(axis), keepdims=keepdims)


@functional
def amin(b, input, axis=None, keepdims=False, *, initial=None, where=None):
    """``ops.amin(input, axis=None, keepdims=False)``: the minimum (ties share the gradient)."""
    _refuse_initial_where("amin", initial, where)
    return _reduction.lower_min(b, input, axis=_ms_axis(axis), keepdims=keepdims)


@functional
def std(b, input, axis=None, ddof=0, keepdims=False):
    """``ops.std(input, axis=None, ddof=0, keepdims=False)``; ``ddof=True`` is ``ddof=1``."""
    return _reduction.lower_std(b, input, axis=_ms_axis(axis), ddof=int(ddof), keepdims=keepdims)


@functional
def var(b, input, axis=None, ddof=0, keepdims=False):
    """``ops.var(input, axis=None, ddof=0, keepdims=False)``; ``ddof=True`` is ``ddof=1``."""
    return _reduction.lower_var(b, input, axis=_ms_axis(axis), ddof=int(ddof), keepdims=keepdims)


@functional
def nansum(b, input, axis=None, keepdims=False, *, dtype=None):
    """``ops.nansum(input, axis=None, keepdims=False, *, dtype=None)``: NaN counts as 0."""
    return _reduction.lower_nansum(b, input, axis=_ms_axis(axis), keepdims=keepdims,
                                   dtype=_np_dtype(dtype))


@functional
def nanmean(b, input, axis=None, keepdims=False, *, dtype=None):
    """``ops.nanmean(input, axis=None, keepdims=False, *, dtype=None)``: the mean without NaN."""
    return _reduction.lower_nanmean(b, input, axis=_ms_axis(axis), keepdims=keepdims,
                                    dtype=_np_dtype(dtype))


@functional
def quantile(b, input, q, axis=None, keepdims=False):
    """``ops.quantile(input, q, axis=None, keepdims=False)``: linear interpolation, as NumPy."""
    return _quantiles.quantile_of(b, input, q, axis, keepdims)


@functional
def median(b, input, axis=-1, keepdims=False):
    """``ops.median(input, axis=-1, keepdims=False)``: ``(values, indices)`` of the lower
    median along ``axis``; the gradient goes to the median element (split among ties)."""
    return _quantiles.lower_ms_median(b, input, axis, keepdims)


@functional
def logsumexp(b, input, axis, keep_dims=False):
    """``ops.logsumexp(input, axis, keep_dims=False)``: ``log(sum(exp(x - m))) + m`` with
    ``m`` the (constant) maximum, so nothing overflows; its gradient is the softmax."""
    x = b.const(input)
    axis = _ms_axis(axis)
    top = b.stop_gradient(_reduction.lower_max(b, x, axis=axis, keepdims=True))
    total = b.log(_reduction.lower_sum(b, b.exp(b.sub(x, top)), axis=axis, keepdims=keep_dims))
    return b.add(total, _shape.reshape_to(b, top, b.type_of(total).shape))


class ReduceProd(_Reduce):
    """``ReduceProd(keep_dims=False)(x, axis=())``: the product over ``axis`` (``()`` = all)."""

    _lower = staticmethod(_reduction.lower_prod)


class ReduceMax(_Reduce):
    """``ReduceMax(keep_dims=False)(x, axis=())``: the maximum over ``axis`` (``()`` = all)."""

    _lower = staticmethod(_reduction.lower_max)


class ReduceMin(_Reduce):
    """``ReduceMin(keep_dims=False)(x, axis=())``: the minimum over ``axis`` (``()`` = all)."""

    _lower = staticmethod(_reduction.lower_min)


class CumSum(Primitive):
    """``CumSum(exclusive=False, reverse=False)(x, axis)``: the cumulative sum along ``axis``,
    from the end when ``reverse``, each element left out of its own sum when ``exclusive``."""

    def __init__(self, exclusive=False, reverse=False):
        self.exclusive = bool(exclusive)
        self.reverse = bool(reverse)

    def __ad_lower__(self, b, x, axis):
        x = b.const(x)
        (axis,) = normalize_axis(int(axis), max(b.type_of(x).ndim, 1))
        if self.reverse:
            x = _scans.flip(b, x, axis)
        out = _scans.lower_cumsum(b, x, axis=axis)
        if self.exclusive:
            out = _scans.shift_right(b, out, axis)
        return _scans.flip(b, out, axis) if self.reverse else out
# -- data movement (ops/movement.py), MindSpore 2.x signatures ------------------------------------

from . import indexing as _indexing, movement as _movement  # noqa: E402

flip = functional(lambda b, input, dims: _movement.lower_flip(b, input, dims), "flip")
roll = functional(lambda b, input, shifts, dims=None: _movement.lower_roll(b, input, shifts, dims),
                  "roll")
swapaxes = functional(lambda b, input, axis0, axis1: _movement.lower_swapaxes(b, input, axis0,
                                                                               axis1), "swapaxes")
moveaxis = _same_as(np.moveaxis, "moveaxis")
hstack = functional(lambda b, tensors: _movement.lower_hstack(b, tensors), "hstack")
vstack = functional(lambda b, inputs: _movement.lower_vstack(b, inputs), "vstack")
diagonal = functional(lambda b, input, offset=0, dim1=0, dim2=1: _movement.lower_diagonal(
    b, input, offset, dim1, dim2), "diagonal")
tril = functional(lambda b, input, diagonal=0: _movement.lower_tril(b, input, diagonal), "tril")
triu = functional(lambda b, input, diagonal=0: _movement.lower_triu(b, input, diagonal), "triu")
kron = functional(lambda b, input, other: _movement.lower_kron(b, input, other), "kron")


@functional
def tile(b, input, dims):
    """``ops.tile(input, dims)``: ``np.tile``."""
    return _movement.lower_tile(b, input, dims)


@functional
def repeat_elements(b, x, rep, axis=0):
    """``ops.repeat_elements(x, rep, axis=0)``: each element ``rep`` times along ``axis``."""
    return _movement.lower_repeat(b, x, int(rep), axis)


@functional
def split(b, tensor, split_size_or_sections, axis=0):
    """``ops.split``: an int is the size of each part (the last may be smaller), a list
    gives the sizes; a tuple of views of ``tensor``."""
    x = b.const(tensor)
    n = b.type_of(x).shape[_movement._axis(axis, b.type_of(x).ndim)]
    sizes = split_size_or_sections
    if isinstance(sizes, (int, np.integer)):
        if sizes <= 0:
            raise ValueError(f"ops.split: split_size_or_sections must be positive, got {sizes}")
        cuts = list(range(int(sizes), n, int(sizes)))
    else:
        sizes = [int(s) for s in sizes]
        if int(np.sum(sizes)) != n:
            raise ValueError(f"ops.split: the sizes {sizes} do not add up to {n}")
        cuts = np.cumsum(sizes)[:-1].tolist()
    return tuple(_movement.split_parts(b, x, cuts, axis, even=False))


@functional
def diag(b, input):
    """``ops.diag(input)``: a tensor of rank 2k with ``input`` on its diagonal."""
    x = b.const(input)
    shape = b.type_of(x).shape
    if not shape:
        raise ValueError("ops.diag: the rank of input must be at least 1")
    flat = _movement.lower_diag(b, _shape.reshape_to(b, x, (-1,)))
    return _shape.reshape_to(b, flat, shape + shape)


@functional
def trace(b, input):
    """``ops.trace(input)``: the sum of a matrix's diagonal."""
    if b.type_of(b.const(input)).ndim != 2:
        raise ValueError("ops.trace: input must be a 2-D tensor")
    return _movement.lower_trace(b, input)


@functional
def sort(b, input_x, axis=-1, descending=False):
    """``ops.sort(input_x, axis=-1, descending=False)``: ``(values, indices)``; the
    gradient of the values goes back through the permutation."""
    values, order = _movement.sort_with_indices(b, input_x, axis, "stable", bool(descending))
    return values, b.cast(order, dtype=np.dtype(np.int32))


@functional
def gather(b, input_params, input_indices, axis, batch_dims=0):
    """``ops.gather(input_params, input_indices, axis)``: ``np.take`` along ``axis``."""
    if batch_dims:
        raise UnsupportedOperationError("ops.gather(..., batch_dims=) is not supported")
    return _indexing.lower_take(b, input_params, input_indices, axis)


@functional
def gather_elements(b, input, dim, index):
    """``ops.gather_elements(input, dim, index)``: ``input`` read at ``index`` along
    ``dim`` (``index`` may be smaller than ``input`` on the other axes)."""
    x, idx = b.const(input), b.const(index)
    axis = _movement._axis(dim, b.type_of(x).ndim)
    return _movement.along_axis(b, x, idx, axis, sizes=b.type_of(idx).shape)


class Tile(Primitive):
    """``Tile()(input, dims)``."""

    def __ad_lower__(self, b, x, dims):
        return _movement.lower_tile(b, x, dims)


class Sort(Primitive):
    """``Sort(axis=-1, descending=False)(x)``: ``(values, int32 indices)``."""

    def __init__(self, axis=-1, descending=False):
        self.axis, self.descending = int(axis), bool(descending)

    def __ad_lower__(self, b, x):
        return find_lowering(sort)(b, x, self.axis, self.descending)


__all__ = [
    "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "pow", "square", "sqrt", "abs",
    "neg", "add", "sub", "mul", "div", "matmul", "maximum", "minimum", "sum", "mean",
    "transpose", "reshape", "expand_dims", "squeeze", "concat", "stack", "where", "softmax",
    "log_softmax", "stop_gradient",
    "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "atan2", "arctan2", "sinh",
    "cosh", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "log1p", "expm1",
    "log2", "log10", "exp2", "logaddexp", "logaddexp2", "hypot", "reciprocal", "sinc",
    "deg2rad", "rad2deg", "absolute", "sign", "floor", "ceil", "trunc", "round", "fmod",
    "remainder", "float_power", "fmax", "fmin", "copysign", "nan_to_num",
    "Primitive", "MatMul", "Mul", "Add", "Sub", "Div", "Exp", "Log", "Pow", "Sin", "Cos", "Tanh",
    "Sigmoid", "ReLU", "Square", "Sqrt", "Abs", "Neg", "Maximum", "Minimum", "ReduceSum",
    "ReduceMean", "Transpose", "Reshape", "ExpandDims", "Squeeze", "Concat", "Stack", "Softmax",
    "LogSoftmax",
    "prod", "cumsum", "cumprod", "amax", "amin", "std", "var", "nansum", "nanmean", "quantile",
    "logsumexp", "median", "ReduceProd", "ReduceMax", "ReduceMin", "CumSum",
    "tile", "repeat_elements", "flip", "roll", "swapaxes", "moveaxis", "hstack", "vstack",
    "split", "diag", "diagonal", "tril", "triu", "sort", "trace", "kron", "gather",
    "gather_elements", "Tile", "Sort",
]


# -- linear algebra: MindSpore's spellings of np.linalg (ops/decompositions.py) ---------------

from . import decompositions as _dec, norms as _norms  # noqa: E402

inverse = _same_as(np.linalg.inv, "inverse")
det = _same_as(np.linalg.det, "det")
slogdet = _same_as(np.linalg.slogdet, "slogdet")
matrix_power = _same_as(np.linalg.matrix_power, "matrix_power")


@functional
def cholesky(b, input_x, upper=False):
    """``ops.cholesky(input_x, upper=False)``: as ``np.linalg.cholesky``."""
    return _dec.lower_cholesky(b, input_x, upper=upper)


@functional
def svd(b, input, full_matrices=False, compute_uv=True):
    """``ops.svd``: ``(s, u, v)`` (``v``, not its transpose), or ``s`` alone."""
    if not compute_uv:
        return _dec.lower_svd(b, input, full_matrices=full_matrices, compute_uv=False)
    u, s, vt = _dec.lower_svd(b, input, full_matrices=full_matrices)
    return s, u, _linalg.swap_last(b, vt)


@functional
def qr(b, input, mode="reduced"):
    """``ops.qr(input, mode='reduced')``: ``(Q, R)``."""
    return _dec.lower_qr(b, input, mode=mode)


@functional
def pinv(b, x, *, atol=None, rtol=None, hermitian=False):
    """``ops.pinv(x)`` with the default tolerances (as ``np.linalg.pinv(x)``)."""
    if atol is not None or rtol is not None:
        from ..errors import UnsupportedOperationError
        raise UnsupportedOperationError("ops.pinv(..., atol=, rtol=) is not supported",
                                        hint="use np.linalg.pinv(x, rcond=...)")
    return _dec.lower_pinv(b, x, hermitian=hermitian)


@functional
def norm(b, A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``ops.norm(A, ord=None, dim=None, keepdim=False)``: as ``np.linalg.norm``."""
    out = _norms.lower_norm(b, A, ord=ord, axis=dim, keepdims=keepdim)
    return out if dtype is None else b.cast(out, dtype=np.dtype(dtype))


__all__ += ["inverse", "det", "slogdet", "matrix_power", "cholesky", "svd", "qr", "pinv",
            "norm"]
# -- products (MindSpore 2.x spellings of np.dot, np.inner, np.outer, np.tensordot, np.einsum) --

dot = _same_as(np.dot, "dot")
inner = _same_as(np.inner, "inner")
outer = _same_as(np.outer, "outer")


@functional
def tensor_dot(b, x1, x2, axes):
    """``ops.tensor_dot(x1, x2, axes)``: ``np.tensordot`` (``axes`` an int, a pair of ints or
    a pair of sequences)."""
    return _linalg.lower_tensordot(b, x1, x2, axes)


@functional
def einsum(b, equation, *operands):
    """``ops.einsum(equation, *operands)``: ``np.einsum`` (sublist form too)."""
    return _einsum.lower_einsum(b, equation, *operands)


def _ranked_matmul(name, x_min, x_max, y_min, y_max):
    def lower(b, x, y):
        x, y = b.const(x), b.const(y)
        xd, yd = b.type_of(x).ndim, b.type_of(y).ndim
        if not (x_min <= xd <= x_max and y_min <= yd <= y_max):
            raise ValueError(f"ops.{name}: operands of {xd} and {yd} dimensions are not "
                             f"supported (want {x_min}..{x_max} and {y_min}..{y_max})")
        return b.matmul(x, y)
    lower.__name__ = name
    lower.__doc__ = f"``ops.{name}``: ``np.matmul`` on operands of the ranks MindSpore allows."
    return lower


bmm = functional(_ranked_matmul("bmm", 3, 64, 2, 64))
mm = functional(_ranked_matmul("mm", 2, 2, 2, 2))


class BatchMatMul(MatMul):
    """``BatchMatMul(transpose_a=False, transpose_b=False)(a, b)``: batched ``a @ b``, the
    flags transposing the last two axes first."""


__all__ += ["dot", "inner", "outer", "tensor_dot", "einsum", "bmm", "mm", "BatchMatMul"]


# -- activations, normalisations, embedding, dropout (ops/normalization.py) -----------------
from . import normalization as _norm  # noqa: E402

relu6 = functional(_norm.lower_relu6, "relu6")
leaky_relu = functional(_norm.lower_leaky_relu, "leaky_relu")
elu = functional(_norm.lower_elu, "elu")
gelu = functional(_norm.lower_gelu, "gelu")
silu = functional(_norm.lower_silu, "silu")
erf = functional(_norm.lower_erf, "erf")
layer_norm = functional(_norm.lower_layer_norm, "layer_norm")
#: nn.LayerNorm's form (registered here: ``import ad_compiler`` does not load nn's layers)
_layer_norm_axes = functional(_norm.lower_layer_norm_axes, "layer_norm_axes")
group_norm = functional(_norm.lower_group_norm, "group_norm")
embedding = functional(_norm.lower_embedding, "embedding")
_batch_norm_value = functional(_norm.lower_batch_norm, "batch_norm")


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1,
               eps=1e-5):
    """``ops.batch_norm``: normalise ``(N, C, ...)`` per channel.

    ``training=True`` uses the batch's statistics and, called eagerly, updates
    ``running_mean``/``running_var`` (Parameters) in place as
    ``running = (1 - momentum) * running + momentum * batch`` (unbiased batch variance)
    when they are Parameters; compiled gradient code does the same after the call (see
    ``normalization.lower_batch_norm``).
    """
    out = _batch_norm_value(input_x, running_mean, running_var, weight, bias, training,
                            momentum, eps)
    from ..nn.normalization import update_moving
    from ..nn.parameter import Parameter
    if training and isinstance(running_mean, Parameter) and isinstance(running_var, Parameter):
        update_moving(input_x, running_mean, running_var, 1.0 - momentum)
    return out


register_lowering(batch_norm, _norm.lower_batch_norm)


dropout = functional(_norm.lower_dropout, "dropout")

__all__ += ["erf", "relu6", "leaky_relu", "elu", "gelu", "silu", "layer_norm", "group_norm",
            "embedding", "batch_norm", "dropout"]
from .operations_building import *  # noqa: E402,F401,F403  (ops.diff, ops.isnan ...)
from .operations_building import __all__ as _building_all  # noqa: E402

__all__ += _building_all

from .operations_conv import *  # noqa: E402,F401,F403  (ops.conv2d, ops.max_pool2d ...)
from .operations_conv import __all__ as _conv_all  # noqa: E402

__all__ += _conv_all

from .operations_fft import *  # noqa: E402,F401,F403  (ops.fft, ops.rfft, ops.fftshift ...)
from .operations_fft import __all__ as _fft_all  # noqa: E402

__all__ += _fft_all
