"""Tensor: a MindSpore-style wrapper over one NumPy array.

Invariants:

- A Tensor holds exactly one ``np.ndarray`` (``_data``); a 0-d Tensor holds a 0-d
  array, never a NumPy scalar. ``asnumpy()`` returns that array itself, no copy.
- Construction follows MindSpore's dtype rules: Python floats (and lists of them)
  become float32, Python ints int64, bools bool; ndarrays, NumPy scalars and
  Tensors keep their dtype. An explicit ``dtype`` casts. The data is copied.
- Every operation that computes (operators, ``np.sin(t)``, ``np.sum(t, axis=1)``,
  indexing, methods) returns a plain :class:`Tensor`, never an ndarray nor a
  subclass such as Parameter. Computation follows NumPy's rules (dtype promotion
  included), so eager code and the generated NumPy code agree.
- ``str(t)`` is NumPy's ``str`` of the array; ``repr(t)`` is MindSpore's
  ``Tensor(shape=[...], dtype=..., value=...)`` text, produced by the same rules
  MindSpore's C++ printer uses (scientific floats of width 15, right-aligned ints,
  ``...`` summaries past 6 entries per axis).

:func:`unwrap` and :func:`wrap` are the boundary the compiler uses: ``unwrap(x)``
gives the ndarray of a Tensor (anything else unchanged) and ``wrap(arr)`` makes a
Tensor around an array without copying or changing its dtype.

>>> t = Tensor([[1.5, 2.0], [3.0, 4.0]])
>>> t.dtype, t.shape
(Float32, (2, 2))
>>> print(t)
[[1.5 2. ]
 [3.  4. ]]
>>> t * 2
Tensor(shape=[2, 2], dtype=Float32, value=
[[ 3.00000000e+00,  4.00000000e+00],
 [ 6.00000000e+00,  8.00000000e+00]])
>>> np.sum(t, axis=1)
Tensor(shape=[2], dtype=Float32, value= [ 3.50000000e+00,  7.00000000e+00])
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from . import dtype as _mstype

__all__ = ["Tensor", "unwrap", "wrap"]


class Tensor:
    """An n-dimensional array with MindSpore's Tensor interface, backed by NumPy.

    Args:
        input_data: a Tensor, ndarray, NumPy scalar, Python number/bool, or a
            (nested) list/tuple of those.
        dtype: an ``ad_compiler.dtype`` (``mstype.float32``), a NumPy dtype, or None
            to infer it as MindSpore does.
    """

    __slots__ = ("_data", "__weakref__")

    def __init__(self, input_data=None, dtype=None):
        self._data = _to_array(input_data, dtype)

    @staticmethod
    def from_numpy(array) -> "Tensor":
        """A Tensor sharing memory with ``array`` (as MindSpore's ``Tensor.from_numpy``)."""
        return wrap(np.asarray(array))

    # ----------------------------------------------------------- attributes
    def asnumpy(self) -> np.ndarray:
        """The underlying ndarray (shared, not copied)."""
        return self._data

    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self) -> _mstype.DType:
        return _mstype.from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def T(self) -> "Tensor":
        return wrap(self._data.T)

    # ----------------------------------------------------------- conversions
    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d Tensor")
        return len(self._data)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d Tensor")
        return (wrap(row) for row in self._data)

    def __bool__(self) -> bool:
        return bool(self._data)

    def __float__(self) -> float:
        return float(self._one_element())

    def __int__(self) -> int:
        return int(self._one_element())

    def _one_element(self):
        # NumPy 2 converts only 0-d arrays; MindSpore converts any one-element Tensor.
        if self._data.size != 1:
            raise TypeError(f"only one-element Tensors convert to Python scalars, "
                            f"got shape {self._data.shape}")
        return self._data.item()

    def __index__(self) -> int:
        return operator.index(self._data)

    def __complex__(self) -> complex:
        return complex(self._data)

    def __format__(self, spec: str) -> str:
        return str(self) if not spec else format(self._data, spec)

    def item(self, *args):
        """The element as a Python number (NumPy's ``ndarray.item``)."""
        return self._data.item(*args)

    def tolist(self):
        return self._data.tolist()

    def astype(self, dtype, copy: bool = True) -> "Tensor":
        return wrap(self._data.astype(_mstype.to_numpy_dtype(dtype), copy=copy))

    def copy(self) -> "Tensor":
        return wrap(self._data.copy())

    # Identity hashing: Tensors key caches and sets of Parameters although ``==``
    # is elementwise, as in MindSpore.
    __hash__ = object.__hash__

    # ----------------------------------------------------------- printing
    def __str__(self) -> str:
        return str(self._data)

    def __repr__(self) -> str:
        shape = "[" + ", ".join(str(n) for n in self._data.shape) + "]"
        sep = "\n" if self._data.ndim > 1 else " "
        return f"Tensor(shape={shape}, dtype={self.dtype}, value={sep}{_format_value(self._data)})"

    # ----------------------------------------------------------- indexing
    def __getitem__(self, index) -> "Tensor":
        return wrap(self._data[_unwrap_index(index)])

    def __setitem__(self, index, value) -> None:
        self._data[_unwrap_index(index)] = unwrap(value)

    # ----------------------------------------------------------- NumPy protocol
    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        arr = self._data
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            if copy is False:
                raise ValueError("converting the Tensor's dtype needs a copy")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if not all(_numpy_can_handle(x) for x in inputs):
            return NotImplemented
        out = kwargs.get("out")
        kwargs = {k: _unwrap_nested(v) for k, v in kwargs.items()}
        result = getattr(ufunc, method)(*(unwrap(x) for x in inputs), **kwargs)
        if out is not None:
            # The ufunc wrote into the arrays behind ``out``: hand back those Tensors.
            return out[0] if len(out) == 1 else out
        return _wrap_nested(result)

    def __array_function__(self, func, types, args, kwargs):
        if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
            return NotImplemented
        result = func(*_unwrap_nested(args), **_unwrap_nested(kwargs))
        return _wrap_nested(result)

    # ----------------------------------------------------------- methods
    def sum(self, axis=None, dtype=None, keepdims=False, initial=None) -> "Tensor":
        kw = {} if initial is None else {"initial": initial}
        return wrap(np.sum(self._data, axis=_axis(axis), dtype=_mstype.to_numpy_dtype(dtype),
                           keepdims=keepdims, **kw))

    def mean(self, axis=None, keep_dims=False, keepdims=None) -> "Tensor":
        # MindSpore spells it ``keep_dims`` here; NumPy's ``keepdims`` works too.
        keep = keep_dims if keepdims is None else keepdims
        return wrap(np.mean(self._data, axis=_axis(axis), keepdims=keep))

    def max(self, axis=None, keepdims=False) -> "Tensor":
        return wrap(np.max(self._data, axis=_axis(axis), keepdims=keepdims))

    def min(self, axis=None, keepdims=False) -> "Tensor":
        return wrap(np.min(self._data, axis=_axis(axis), keepdims=keepdims))

    def argmax(self, axis=None) -> "Tensor":
        return wrap(np.argmax(self._data, axis=axis))

    def argmin(self, axis=None) -> "Tensor":
        return wrap(np.argmin(self._data, axis=axis))

    def abs(self) -> "Tensor":
        return wrap(np.abs(self._data))

    def reshape(self, *shape) -> "Tensor":
        return wrap(self._data.reshape(*_shape_args(shape)))

    view = reshape

    def transpose(self, *axes) -> "Tensor":
        return wrap(self._data.transpose(*_shape_args(axes)))

    def flatten(self) -> "Tensor":
        return wrap(self._data.flatten())

    def ravel(self) -> "Tensor":
        return wrap(self._data.ravel())

    def squeeze(self, axis=None) -> "Tensor":
        return wrap(np.squeeze(self._data, axis=axis))

    def expand_dims(self, axis) -> "Tensor":
        return wrap(np.expand_dims(self._data, axis))

    def all(self, axis=(), keep_dims=False) -> "Tensor":
        return wrap(np.all(self._data, axis=_axis(axis), keepdims=keep_dims))

    def any(self, axis=(), keep_dims=False) -> "Tensor":
        return wrap(np.any(self._data, axis=_axis(axis), keepdims=keep_dims))


# --------------------------------------------------------------- operators
# Each operator applies the NumPy ufunc to the arrays and wraps the result.
# Operands NumPy cannot read (None, strings, arbitrary objects) give
# NotImplemented, so ``t == None`` falls back to identity as in Python.

def _numpy_can_handle(x) -> bool:
    if isinstance(x, (Tensor, np.ndarray, np.generic, numbers.Number, list, tuple)):
        return True
    # A foreign array type with its own protocol must get the chance to handle it.
    return not hasattr(type(x), "__array_ufunc__") and hasattr(x, "__array__")


def _binary(ufunc, name: str):
    def forward(self, other):
        if not _numpy_can_handle(other):
            return NotImplemented
        return wrap(ufunc(self._data, unwrap(other)))

    def reflected(self, other):
        if not _numpy_can_handle(other):
            return NotImplemented
        return wrap(ufunc(unwrap(other), self._data))

    forward.__name__, reflected.__name__ = f"__{name}__", f"__r{name}__"
    return forward, reflected


def _unary(ufunc, name: str):
    def op(self):
        return wrap(ufunc(self._data))

    op.__name__ = f"__{name}__"
    return op


_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}
_COMPARE = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
            "eq": np.equal, "ne": np.not_equal}
_UNARY = {"neg": np.negative, "pos": np.positive, "abs": np.absolute, "invert": np.invert}


def _install_operators() -> None:
    for name, ufunc in _BINARY.items():
        fwd, ref = _binary(ufunc, name)
        setattr(Tensor, fwd.__name__, fwd)
        setattr(Tensor, ref.__name__, ref)
    for name, ufunc in _COMPARE.items():
        setattr(Tensor, f"__{name}__", _binary(ufunc, name)[0])
    for name, ufunc in _UNARY.items():
        setattr(Tensor, f"__{name}__", _unary(ufunc, name))


_install_operators()


# --------------------------------------------------------------- wrap / unwrap
def unwrap(x):
    """The ndarray of a Tensor; anything else unchanged."""
    return x._data if isinstance(x, Tensor) else x


def wrap(arr) -> Tensor:
    """A Tensor around ``arr`` with no copy and no dtype change.

    NumPy scalars (and Python numbers) become 0-d arrays; a Tensor is returned as is.
    """
    if isinstance(arr, Tensor):
        return arr
    t = Tensor.__new__(Tensor)
    t._data = arr if type(arr) is np.ndarray else np.asarray(arr)
    return t


def _unwrap_nested(x):
    """``unwrap`` through lists, tuples and dicts (arguments of NumPy functions)."""
    if isinstance(x, Tensor):
        return x._data
    if type(x) in (list, tuple):
        return type(x)(_unwrap_nested(v) for v in x)
    if type(x) is dict:
        return {k: _unwrap_nested(v) for k, v in x.items()}
    return x


def _wrap_nested(x):
    """Arrays and NumPy scalars in a NumPy result become Tensors; other values stay."""
    if isinstance(x, (np.ndarray, np.generic)):
        return wrap(x)
    if isinstance(x, tuple):
        items = [_wrap_nested(v) for v in x]
        # Named tuples (np.linalg results) are rebuilt field by field.
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    if isinstance(x, list):
        return [_wrap_nested(v) for v in x]
    return x


def _unwrap_index(index):
    if isinstance(index, tuple):
        return tuple(unwrap(i) for i in index)
    return unwrap(index)


def _axis(axis):
    """MindSpore writes "all axes" as ``()``; NumPy as None."""
    return None if axis == () else axis


def _shape_args(args: tuple):
    """``reshape(2, 3)`` and ``reshape((2, 3))`` both mean the shape (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return args


# --------------------------------------------------------------- construction
def _to_array(data, dtype) -> np.ndarray:
    """A fresh ndarray for ``Tensor(data, dtype)`` following MindSpore's dtype rules."""
    if data is None:
        raise TypeError("Tensor() needs input_data: a number, list, tuple, ndarray or Tensor")
    if isinstance(data, str):
        raise TypeError(f"Tensor() cannot hold a string: {data!r}")
    np_dtype = _mstype.to_numpy_dtype(dtype)
    arr = np.array(unwrap(data), dtype=np_dtype, copy=True)
    if np_dtype is None and arr.dtype == np.float64 and not _has_typed_leaf(data):
        # Python floats carry no width; MindSpore makes them float32.
        arr = arr.astype(np.float32)
    _mstype.from_numpy_dtype(arr.dtype)   # rejects object/str arrays with a TypeError
    return arr


def _has_typed_leaf(data) -> bool:
    """Whether ``data`` holds an array, Tensor or NumPy scalar (whose dtype is kept)."""
    if isinstance(data, (np.ndarray, np.generic, Tensor)):
        return True
    if isinstance(data, (list, tuple)):
        return any(_has_typed_leaf(x) for x in data)
    return False


# --------------------------------------------------------------- MindSpore repr
# MindSpore prints at most 6 entries per axis (3 first, "...", 3 last); a 1-D
# Tensor is only summarised past 1000 entries but breaks its line every 12 floats
# or bools (24 ints).
_EDGE = 3
_SUMMARY = 6
_SUMMARY_1D = 1000


def _format_value(arr: np.ndarray) -> str:
    """The ``value=`` part of MindSpore's repr of ``arr``."""
    if arr.size == 0:
        return ""
    if arr.ndim == 0:
        return _scalar_text(arr[()], arr.dtype)
    fmt = _element_formatter(arr)
    return _format_block(arr, 0, arr.ndim, fmt)


def _scalar_text(v, dt: np.dtype) -> str:
    if dt.kind == "b":
        return "True" if v else "False"
    if dt.kind == "f":
        return _nan_text(v) or "%g" % float(v)
    if dt.kind == "c":
        return "(%g,%g)" % (v.real, v.imag)
    return str(int(v))


def _nan_text(v) -> str:
    # C's printf spells a NaN with the sign bit set (0/0 on x86) "-nan".
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"
    return ""


def _float_text(v, width: int, prec: int) -> str:
    nan = _nan_text(v)
    return nan.rjust(width) if nan else "%*.*e" % (width, prec, float(v))


def _element_formatter(arr: np.ndarray):
    kind = arr.dtype.kind
    if kind == "b":
        return lambda v: " True" if v else "False"
    if kind == "f":
        width, prec = (11, 4) if arr.dtype == np.float16 else (15, 8)
        return lambda v: _float_text(v, width, prec)
    if kind == "c":
        return lambda v: "(%g,%g)" % (v.real, v.imag)
    width = max(len(str(int(v))) for v in _shown(arr).ravel())
    return lambda v: str(int(v)).rjust(width)


def _shown(arr: np.ndarray) -> np.ndarray:
    """The entries the summary prints (integers are right-aligned to the widest of them)."""
    keep = []
    for n in arr.shape:
        limit = _SUMMARY_1D if arr.ndim == 1 else _SUMMARY
        keep.append(np.r_[0:_EDGE, n - _EDGE:n] if n > limit else np.arange(n))
    return arr[np.ix_(*keep)]


def _format_block(arr: np.ndarray, depth: int, ndim: int, fmt) -> str:
    if arr.ndim == 1:
        return "[" + _format_row(arr, ndim, fmt) + "]"
    sep = ",\n" + " " * (depth + 1)
    rows = [_format_block(sub, depth + 1, ndim, fmt) for sub in _edges(arr, _SUMMARY)]
    if len(arr) <= _SUMMARY:
        return "[" + sep.join(rows) + "]"
    head, tail = sep.join(rows[:_EDGE]), sep.join(rows[_EDGE:])
    return "[" + head + sep + "...\n" + " " * (depth + 1) + tail + "]"


def _edges(arr: np.ndarray, limit: int):
    return list(arr) if len(arr) <= limit else list(arr[:_EDGE]) + list(arr[-_EDGE:])


def _format_row(row: np.ndarray, ndim: int, fmt) -> str:
    limit = _SUMMARY_1D if ndim == 1 else _SUMMARY
    if len(row) > limit:
        return _join_row(row[:_EDGE], ndim, fmt) + " ... " + _join_row(row[-_EDGE:], ndim, fmt)
    return _join_row(row, ndim, fmt)


def _join_row(values: np.ndarray, ndim: int, fmt) -> str:
    n = len(values)
    every = 24 if values.dtype.kind in "iu" else 12
    parts = []
    for i, v in enumerate(values):
        parts.append(fmt(v) + (", " if i != n - 1 else ""))
        if ndim == 1 and n > _EDGE and (i + 1) % every == 0:
            parts.append("\n ")
    return "".join(parts)
