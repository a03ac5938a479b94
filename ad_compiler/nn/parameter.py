"""Parameter (a named, trainable Tensor) and ParameterTuple.

Invariants:

- A Parameter is a :class:`~ad_compiler.tensor.Tensor`: it computes like one and
  every computation on it returns a plain Tensor, never a Parameter.
- Its value lives in one place and is replaced, never aliased: ``set_data`` binds a
  fresh array of the Parameter's own shape and dtype, so every holder of the
  Parameter object (Cells, weight lists, compiled gradient functions reading it at
  call time) sees the new value.
- An unnamed Parameter is called ``"Parameter"`` until a Cell names it after the
  attribute it is stored in (see :mod:`ad_compiler.nn.cell`).
- Parameters hash by identity, so they can key dicts and sets.

>>> w = Parameter(np.ones((2, 2), np.float32), name="w")
>>> w
Parameter (name=w, shape=(2, 2), dtype=Float32, requires_grad=True)
>>> w.set_data(Tensor(np.zeros((2, 2), np.float32))) is w
True
>>> float(w.sum())
0.0
"""
from __future__ import annotations

import numpy as np

from .. import dtype as _mstype
from ..tensor import Tensor, _to_array, unwrap

__all__ = ["Parameter", "ParameterTuple", "PARAMETER_NAME_DEFAULT"]

PARAMETER_NAME_DEFAULT = "Parameter"

# MindSpore's implicit-conversion order: data of a later kind may not be written
# into a Parameter of an earlier one (a float into an int Parameter, float64 into float32).
_CONVERSION_RANK = {k: i for i, k in enumerate(
    ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
     "float16", "float32", "float64", "complex64", "complex128"])}


class Parameter(Tensor):
    """A Tensor that a Cell owns and optimises.

    Args:
        default_input: the initial value (Tensor, ndarray, Python number, list).
        name: the Parameter's name; None leaves it ``"Parameter"`` until a Cell
            names it after its attribute.
        requires_grad: whether ``Cell.trainable_params()`` includes it.
        layerwise_parallel, parallel_optimizer: accepted for MindSpore
            compatibility; they have no effect here.
    """

    def __init__(self, default_input, name=None, requires_grad=True,
                 layerwise_parallel=False, parallel_optimizer=True):
        super().__init__(default_input)
        self.name = name
        self.requires_grad = requires_grad
        self.layerwise_parallel = layerwise_parallel
        self.parallel_optimizer = parallel_optimizer

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value) -> None:
        if value is None:
            value = PARAMETER_NAME_DEFAULT
        if not isinstance(value, str):
            raise TypeError(f"Parameter name must be a str, got {type(value).__name__}")
        self._name = value

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"requires_grad must be a bool, got {type(value).__name__}")
        if getattr(self, "_requires_grad", value) != value:
            from .cell import bump_epoch
            bump_epoch()  # code that listed trainable Parameters compiles again
        self._requires_grad = value

    @property
    def data(self) -> "Parameter":
        """The Parameter itself (MindSpore's ``Parameter.data``)."""
        return self

    def set_data(self, data, slice_shape=False) -> "Parameter":
        """Replace the value in place; returns the Parameter.

        ``data`` must have the Parameter's shape (ValueError otherwise). It is cast
        to the Parameter's dtype unless that would lose kind or precision
        (float64 into float32, float into int), which raises TypeError as in
        MindSpore. Python numbers fill the Parameter's dtype directly.
        """
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            return self._assign(self._checked_number(data))
        arr = unwrap(data) if isinstance(data, (Tensor, np.ndarray)) else _to_array(data, None)
        if arr.shape != self.shape and not slice_shape:
            raise ValueError(f"Parameter {self.name}: cannot change the shape from "
                             f"{self.shape} to {arr.shape} with set_data")
        self._check_dtype(arr.dtype)
        return self._assign(arr)

    def _checked_number(self, value) -> np.ndarray:
        if isinstance(value, float) and self._data.dtype.kind in "biu":
            raise TypeError(f"Parameter {self.name} has dtype {self.dtype}; "
                            f"cannot set a float into it")
        return np.full(self.shape, value, dtype=self._data.dtype)

    def _check_dtype(self, incoming: np.dtype) -> None:
        own = self._data.dtype
        if _CONVERSION_RANK.get(incoming.name, 0) > _CONVERSION_RANK.get(own.name, 0):
            raise TypeError(f"Parameter {self.name} has dtype {self.dtype}; set_data got "
                            f"{_mstype.from_numpy_dtype(incoming)}, which would lose precision. "
                            f"cast it first, e.g. data.astype(np.{own.name})")

    def _assign(self, arr: np.ndarray) -> "Parameter":
        # A fresh copy: later changes to the caller's array must not leak in.
        self._data = np.array(arr, dtype=self._data.dtype, copy=True)
        return self

    def clone(self, init="same") -> "Parameter":
        """A new Parameter with a copy of the value, the same name and flags."""
        return Parameter(self._data.copy(), name=self.name, requires_grad=self.requires_grad,
                         layerwise_parallel=self.layerwise_parallel,
                         parallel_optimizer=self.parallel_optimizer)

    def __str__(self) -> str:
        return (f"Parameter (name={self.name}, shape={self.shape}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    __repr__ = __str__

    def __reduce__(self):
        return (_rebuild_parameter, (self._data, self.name, self.requires_grad))


def _rebuild_parameter(data, name, requires_grad) -> Parameter:
    return Parameter(data, name=name, requires_grad=requires_grad)


class ParameterTuple(tuple):
    """A tuple of Parameters, e.g. the weights handed to ``GradOperation``.

    Raises TypeError if an item is not a Parameter, and ValueError if two different
    Parameters share an explicit name (unnamed ones are not checked).
    """

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        _check_parameters(items)
        return super().__new__(cls, items)

    def clone(self, prefix: str, init="same") -> "ParameterTuple":
        """Copies of the Parameters, named ``prefix + '.' + name``."""
        copies = []
        for p in self:
            c = p.clone(init)
            c.name = f"{prefix}.{p.name}"
            copies.append(c)
        return ParameterTuple(copies)


def _check_parameters(items: tuple) -> None:
    names = {}
    for x in items:
        if not isinstance(x, Parameter):
            raise TypeError(f"ParameterTuple holds only Parameters, got {type(x).__name__}")
        other = names.setdefault(x.name, x)
        if other is not x and x.name != PARAMETER_NAME_DEFAULT:
            raise ValueError(f"ParameterTuple: two different Parameters are named "
                             f"'{x.name}'; give each a unique name")
