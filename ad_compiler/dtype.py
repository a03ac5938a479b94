"""MindSpore-style dtype objects over NumPy dtypes (imported by users as ``mstype``).

Invariants:

- Each dtype is a singleton :class:`DType`; ``str`` and ``repr`` give MindSpore's
  name (``Float32``, ``Int64``, ``Bool`` ...).
- Every ``DType`` maps to exactly one NumPy dtype and back:
  ``from_numpy_dtype(to_numpy_dtype(d)) is d``.
- A ``DType`` compares equal to itself and to the NumPy dtype it stands for
  (``float32 == np.float32``), and hashes like that NumPy dtype.

>>> from ad_compiler import dtype as mstype
>>> mstype.float32, mstype.bool_
(Float32, Bool)
>>> to_numpy_dtype(mstype.int64)
dtype('int64')
>>> from_numpy_dtype(np.dtype('float16'))
Float16
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "DType", "to_numpy_dtype", "from_numpy_dtype", "dtype_to_nptype",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool_", "complex64", "complex128",
    "half", "single", "double", "float_type", "int_type", "uint_type", "number_type",
]


class DType:
    """One element type: a MindSpore name over a NumPy dtype."""

    __slots__ = ("_name", "_np")

    def __init__(self, name: str, np_dtype):
        self._name = name
        self._np = np.dtype(np_dtype)

    @property
    def np_dtype(self) -> np.dtype:
        """The NumPy dtype this type stands for."""
        return self._np

    def __repr__(self) -> str:
        return self._name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        if isinstance(other, DType):
            return self._np == other._np
        # NumPy dtypes and scalar types (np.float32) compare by meaning; anything
        # else (None, strings, Python types) is simply a different thing.
        if isinstance(other, np.dtype) or (isinstance(other, type) and issubclass(other, np.generic)):
            return self._np == np.dtype(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._np)

    def __reduce__(self):
        # Unpickling must give back the module's singleton.
        return (from_numpy_dtype, (self._np,))


_BY_NUMPY: dict[np.dtype, DType] = {}


def _declare(name: str, np_dtype) -> DType:
    d = DType(name, np_dtype)
    _BY_NUMPY[d.np_dtype] = d
    return d


float16 = _declare("Float16", np.float16)
float32 = _declare("Float32", np.float32)
float64 = _declare("Float64", np.float64)
int8 = _declare("Int8", np.int8)
int16 = _declare("Int16", np.int16)
int32 = _declare("Int32", np.int32)
int64 = _declare("Int64", np.int64)
uint8 = _declare("UInt8", np.uint8)
uint16 = _declare("UInt16", np.uint16)
uint32 = _declare("UInt32", np.uint32)
uint64 = _declare("UInt64", np.uint64)
bool_ = _declare("Bool", np.bool_)
complex64 = _declare("Complex64", np.complex64)
complex128 = _declare("Complex128", np.complex128)

# MindSpore's aliases.
half, single, double = float16, float32, float64

float_type = (float16, float32, float64)
int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)
number_type = int_type + uint_type + float_type + (complex64, complex128)


def to_numpy_dtype(d) -> np.dtype | None:
    """The NumPy dtype for ``d``: a :class:`DType`, anything ``np.dtype`` accepts, or None.

    >>> to_numpy_dtype(float32), to_numpy_dtype(np.int32), to_numpy_dtype(None)
    (dtype('float32'), dtype('int32'), None)
    """
    if d is None:
        return None
    if isinstance(d, DType):
        return d.np_dtype
    return np.dtype(d)


def from_numpy_dtype(np_dtype) -> DType:
    """The :class:`DType` singleton for a NumPy dtype (or scalar type).

    Raises TypeError for dtypes MindSpore has no name for (strings, objects ...).
    """
    key = np.dtype(np_dtype)
    try:
        return _BY_NUMPY[key]
    except KeyError:
        raise TypeError(f"dtype {key} has no ad_compiler counterpart; "
                        f"use one of {', '.join(str(d) for d in _BY_NUMPY.values())}") from None


def dtype_to_nptype(d):
    """The NumPy scalar type for ``d`` (``float32`` -> ``np.float32``), as in MindSpore."""
    return to_numpy_dtype(d).type
