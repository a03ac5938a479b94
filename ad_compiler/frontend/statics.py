"""Which calls may run at compile time, and which work on lift-time containers.

Invariants:

* :func:`is_pure` names callees that are safe to evaluate in Python when every
  argument is static: they neither look at run-time data nor change anything
  (builtins like ``len``/``range``/``int``, NumPy constructors and dtype types,
  ufuncs and ``math`` functions on numbers, ``Tensor``, exception classes, and a
  Cell's own methods listing its Parameters, ``trainable_params()``).
  Their result is static.
* :func:`is_structural` names callees that only rearrange containers (``len``,
  ``tuple``, ``zip`` ...): they are called in Python even when the containers
  hold Values, because they never look inside a leaf.
* Methods that change a container (``list.append``, ``dict.update``) are allowed
  only on containers the lifted code built itself, never on the user's objects;
  reading methods (``dict.items``, ``list.index``) on any.
"""
from __future__ import annotations

import builtins
from types import BuiltinMethodType, MethodWrapperType

import numpy as np

_PURE_BUILTINS = (
    len, range, int, float, bool, complex, str, tuple, list, dict, set, frozenset, abs, min,
    max, sum, round, isinstance, issubclass, divmod, pow, sorted, reversed, enumerate, zip,
    hasattr, getattr, type, slice, repr, any, all, hash, id, callable, ord, chr, super,
)

_PURE_NUMPY = (
    np.array, np.asarray, np.zeros, np.ones, np.eye, np.identity, np.arange, np.full,
    np.linspace, np.empty, np.zeros_like, np.ones_like, np.full_like, np.prod, np.dtype,
    np.shape, np.ndim, np.size, np.result_type, np.promote_types, np.broadcast_shapes,
    np.finfo, np.iinfo, np.can_cast,
    np.unique, np.nonzero, np.flatnonzero, np.argwhere,  # of constants (ops/predicates.py)
)

_STRUCTURAL = (len, tuple, list, dict, zip, enumerate, reversed, isinstance)

#: builtin types whose methods are pure (``'MEAN'.lower()``, ``t.index(3)``)
_IMMUTABLE = (str, bytes, int, float, bool, complex, tuple, frozenset, range, slice)
_MUTABLE = (list, dict, set)
#: methods of list/dict/set that only read: allowed on any container
_READERS = {"keys", "values", "items", "get", "copy", "index", "count", "__getitem__",
            "__contains__", "__len__", "issubset", "issuperset", "union", "intersection",
            "difference"}


def _ids(objs) -> frozenset:
    return frozenset(id(o) for o in objs)


_PURE_IDS = _ids(_PURE_BUILTINS + _PURE_NUMPY)
_STRUCTURAL_IDS = _ids(_STRUCTURAL)


def _tensor_class():
    from ..tensor import Tensor
    return Tensor


def is_pure(obj) -> bool:
    """True if calling ``obj`` on static arguments may happen at compile time."""
    if id(obj) in _PURE_IDS or isinstance(obj, np.ufunc):
        return True
    if isinstance(obj, type):  # exceptions: for a raise in a branch taken at compile time
        return issubclass(obj, (np.generic, BaseException)) or obj is _tensor_class()
    if getattr(obj, "__module__", None) == "math":
        return callable(obj)
    # a NumPy scalar's methods too (np.complex64 and np.float32 are no complex or float)
    return _is_builtin_method_of(obj, (*_IMMUTABLE, np.generic)) or is_cell_reader(obj)


#: Cell methods that list its Parameters or sub-Cells (``self.net.trainable_params()``)
_CELL_READERS = ("trainable_params", "untrainable_params", "parameters_dict", "name_cells")


def is_cell_reader(obj) -> bool:
    name = getattr(obj, "__name__", None)
    if name not in _CELL_READERS:
        return False
    from ..nn.cell import Cell
    return (isinstance(getattr(obj, "__self__", None), Cell)
            and getattr(obj, "__func__", None) is getattr(Cell, name))


def is_structural(obj, own_containers) -> bool:
    """True if ``obj`` may be called in Python on containers that hold Values."""
    if id(obj) in _STRUCTURAL_IDS:
        return True
    if _is_builtin_method_of(obj, _IMMUTABLE):
        return True
    if not _is_builtin_method_of(obj, _MUTABLE):
        return False
    return obj.__name__ in _READERS or id(obj.__self__) in own_containers


def _is_builtin_method_of(obj, types) -> bool:
    owner = getattr(obj, "__self__", None)
    return (isinstance(obj, (BuiltinMethodType, MethodWrapperType))
            and isinstance(owner, types) and owner is not builtins)


def describe(obj) -> str:
    """A short name of a callee for error messages: ``np.mean``, ``MyCell instance``."""
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return f"{type(obj).__name__} instance"
    if module.split(".")[0] == "numpy":
        sub = module.split(".")[1:]
        sub = [] if sub and sub[0].startswith("_") else sub  # numpy._core: public as np.
        return ".".join(["np", *sub, getattr(obj, "__name__", name)])
    if module in ("builtins", ""):
        return name
    return f"{module}.{name}"
