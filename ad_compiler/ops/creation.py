"""MindSpore's tensor creation, casting and state ops: ``ops.cast``, ``ops.ones`` ...

Invariants:

- ``cast``, ``ones_like``, ``zeros_like``, ``shape`` and ``argmax`` are lowerings
  (they take values the compiled code computes); ``ones``, ``zeros`` and ``fill``
  take only static arguments, so inside compiled code they run while the
  function is compiled and their result is a constant.
- ``assign`` writes a Parameter: an eager side effect, done outside compiled code
  (between training steps). Its lowering is a refusal: compiled code raises
  with a located error rather than differentiating through a write.
- Results follow MindSpore: ``shape`` is a tuple of ints, ``argmax`` gives int64
  indices, a Tensor input gives a Tensor result.
"""
from __future__ import annotations

import numpy as np

from .. import dtype as _mstype
from ..ad.rules import find_lowering, register_lowering
from ..errors import UnsupportedOperationError
from ..tensor import Tensor, unwrap, wrap
from .operations import functional

__all__ = ["cast", "ones", "zeros", "ones_like", "zeros_like", "fill", "full", "assign",
           "shape", "argmax", "Cast", "Shape", "Assign", "OnesLike", "ZerosLike"]


def _np_dtype(dtype, default=None):
    out = _mstype.to_numpy_dtype(dtype)
    return default if out is None else out


def _lower_cast(b, input, dtype):
    """``ops.cast(input, dtype)``: ``input`` converted to ``dtype`` (float to int truncates)."""
    x = b.const(input)
    target = _np_dtype(dtype)
    if b.type_of(x).dtype == target:
        return x
    return b.cast(x, dtype=target)


cast = functional(_lower_cast, "cast")


@functional
def ones_like(b, input, *, dtype=None):
    """``ops.ones_like(input, *, dtype=None)``: ones of ``input``'s shape (and dtype)."""
    out = find_lowering(np.ones_like)(b, input)
    return out if dtype is None else _lower_cast(b, out, dtype)


@functional
def zeros_like(b, input, *, dtype=None):
    """``ops.zeros_like(input, *, dtype=None)``: zeros of ``input``'s shape (and dtype)."""
    out = find_lowering(np.zeros_like)(b, input)
    return out if dtype is None else _lower_cast(b, out, dtype)


def shape(input_x) -> tuple:
    """``ops.shape(input_x)``: the shape, a tuple of ints (known when code is compiled)."""
    return tuple(np.shape(unwrap(input_x)))


@functional
def argmax(b, input, dim=None, keepdim=False):
    """``ops.argmax(input, dim=None, keepdim=False)``: int64 indices of the maxima."""
    out = find_lowering(np.argmax)(b, input, dim, keepdims=keepdim)
    return b.cast(out, dtype=np.dtype(np.int64))


def _static_shape(size) -> tuple:
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(int(n) for n in unwrap(size))


def ones(shape, dtype=None) -> Tensor:
    """``ops.ones(shape, dtype=None)``: a float32 (or ``dtype``) Tensor of ones."""
    return wrap(np.ones(_static_shape(shape), _np_dtype(dtype, np.float32)))


def zeros(size, dtype=None) -> Tensor:
    """``ops.zeros(size, dtype=None)``: a float32 (or ``dtype``) Tensor of zeros."""
    return wrap(np.zeros(_static_shape(size), _np_dtype(dtype, np.float32)))


def fill(type, shape, value) -> Tensor:  # noqa: A002 - MindSpore's name
    """``ops.fill(type, shape, value)``: a Tensor of ``shape`` filled with ``value``."""
    return wrap(np.full(_static_shape(shape), unwrap(value), _np_dtype(type)))


def full(size, fill_value, *, dtype=None) -> Tensor:
    """``ops.full(size, fill_value, *, dtype=None)``: ``size`` filled with ``fill_value``."""
    value = unwrap(fill_value)
    default = np.float32 if isinstance(value, float) else None
    return wrap(np.full(_static_shape(size), value, _np_dtype(dtype, default)))


def assign(variable, value):
    """``ops.assign(variable, value)``: write ``value`` into the Parameter ``variable``.

    Returns the Parameter. Raises TypeError when ``variable`` is not a Parameter,
    ValueError for a different shape. In compiled code (a Cell's ``construct``
    differentiated by ``grad`` ...) the write is a side effect performed after the
    compiled call, not differentiated (``value`` is behind ``stop_gradient``); later
    reads of the Parameter in the same call see ``value``.
    """
    from ..nn.parameter import Parameter
    if not isinstance(variable, Parameter):
        raise TypeError(f"ops.assign: 'variable' must be a Parameter, got "
                        f"{type(variable).__name__}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = np.full(variable.shape, value, variable.asnumpy().dtype)
    return variable.set_data(value)


def _lower_assign(b, variable, value):
    target = b.const(variable)
    if b.parameter_of(target) is None:
        raise TypeError("ops.assign: 'variable' must be a Parameter (an attribute of a Cell, "
                        "e.g. self.weight)")
    want = b.type_of(target)
    v = b.const(value)
    have = b.type_of(v)
    if have.ndim and tuple(have.shape) != tuple(want.shape):
        raise ValueError(f"ops.assign: the value has shape {tuple(have.shape)}, the Parameter "
                         f"{tuple(want.shape)}")
    if not have.weak:   # as eagerly: set_data refuses a conversion that loses precision
        param = b.parameter_of(target)
        param._check_dtype(have.dtype)
    if have.dtype != want.dtype or have.weak:
        v = b.emit("cast", v, dtype=want.dtype)
    if not have.ndim and want.ndim:
        v = b.emit("broadcast_to", v, shape=tuple(want.shape))
    b.write_parameter(target, v)
    return b.read_parameter(b.parameter_of(target))


# (primitives, note) for docs/primitives.md: a sample array is not a Parameter
_lower_assign.catalog_entry = (("stop_gradient",), "writes a Parameter after the call")
register_lowering(assign, _lower_assign)


register_lowering(shape, lambda b, input_x: tuple(b.type_of(b.const(input_x)).shape))


# -- class forms ------------------------------------------------------------------------
from .operations import Primitive  # noqa: E402


class Cast(Primitive):
    """``Cast()(input_x, type_)``."""

    def __ad_lower__(self, b, x, type_):
        return find_lowering(cast)(b, x, type_)


class Shape(Primitive):
    """``Shape()(input_x)``: the shape tuple."""

    def __ad_lower__(self, b, x):
        return find_lowering(shape)(b, x)


class OnesLike(Primitive):
    """``OnesLike()(input_x)``."""

    def __ad_lower__(self, b, x):
        return find_lowering(ones_like)(b, x)


class ZerosLike(Primitive):
    """``ZerosLike()(input_x)``."""

    def __ad_lower__(self, b, x):
        return find_lowering(zeros_like)(b, x)


class Assign(Primitive):
    """``Assign()(variable, value)``: as :func:`assign`, eagerly and in compiled code."""

    def __init__(self, use_locking=True):
        self.use_locking = use_locking  # MindSpore's argument; no effect here

    def __call__(self, variable, value):
        return assign(variable, value)

    def __ad_lower__(self, b, variable, value):
        return _lower_assign(b, variable, value)

    __ad_lower__.catalog_entry = _lower_assign.catalog_entry
