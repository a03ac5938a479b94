"""Lift-time values across control flow: trees of leaves, missing names, type unification.

Where two paths meet (the branches of a data-dependent ``if``, the end of a loop
body and the next iteration), each variable's lift-time value is split into its
*leaves* (:func:`flatten`): IR Values and Python numbers can differ between the
paths and become values the structured op yields; any other leaf (a string,
None, a function) must be the same on both paths.

Invariants:

* ``unflatten(flatten(t)) `` rebuilds ``t`` with new containers of the same
  kinds (tuples, namedtuples, lists, dicts); new lists and dicts are passed to
  ``own`` (the lifted code may change them, as it could the originals).
* :func:`unify` is NumPy's: the dtype ``np.result_type`` gives (Python numbers
  weak, as NEP 50 has them), the broadcast shape; weak only if both are.
* :func:`convert` only widens: a cast to the unified dtype, a broadcast to the
  unified shape, or ``float(v)`` for a Python int that meets a Python float.
* An :class:`Undefined` is bound to a name that has no value on some path; it
  raises its located error only if the name is read.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedOperationError
from ..ir.core import AType, ListType, Value
from ..ops._infer import sample
from .iterables import LoopList


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


#: a name not bound at all on one path
ABSENT = _Absent()


class Undefined:
    """The value of a name that some path leaves unassigned."""

    def __init__(self, message: str, hint: str):
        self.message, self.hint = message, hint

    def __repr__(self) -> str:
        return f"<undefined: {self.message}>"


class StaticIndexNeeded(UnsupportedOperationError):
    """A Python int was needed where a run-time value is (a Python list indexed, or
    a slice bounded, with a loop counter): a loop over ``range`` is then unrolled."""


def is_number(v) -> bool:
    return isinstance(v, (bool, int, float, complex, np.generic))


def is_dynamic_leaf(v) -> bool:
    """A leaf that may differ between paths: an array Value, a Python or NumPy number,
    or a static ndarray (which becomes a constant)."""
    return (isinstance(v, Value) and isinstance(v.type, AType)) or is_number(v) \
        or isinstance(v, np.ndarray)


def type_of(v) -> AType:
    return v.type if isinstance(v, Value) else AType.of(v)


class Zero:
    """A placeholder leaf: a zero of ``type``, yielded by a path that never reads it."""

    def __init__(self, type: AType):
        self.type = type


def same_static(x, y) -> bool:
    """True if ``x`` and ``y`` are the same static (compile-time) value."""
    if isinstance(x, (Value, Zero)) or isinstance(y, (Value, Zero)) or type(x) is not type(y):
        return False
    try:
        return bool(x == y)
    except Exception:  # arrays compare elementwise: not the same static value
        return False


# -- trees ------------------------------------------------------------------------

def flatten(tree) -> tuple[list, tuple]:
    """``(leaves, treedef)``: leaves depth first, in order (dicts by insertion)."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, LoopList) and tree.stacked is not None:
        # a list a loop built, of known length: the array of its items is its one leaf
        return ("looplist", tree.length, (_flatten(tree.stacked, leaves),))
    if isinstance(tree, tuple):
        return ("tuple", type(tree), tuple(_flatten(x, leaves) for x in tree))
    if isinstance(tree, list):
        return ("list", None, tuple(_flatten(x, leaves) for x in tree))
    if isinstance(tree, dict):
        return ("dict", tuple(tree), tuple(_flatten(x, leaves) for x in tree.values()))
    leaves.append(tree)
    return ("leaf",)


def unflatten(treedef, leaves, own=lambda c: c):
    """The tree ``treedef`` describes, with ``leaves`` in order."""
    it = iter(leaves)
    out = _unflatten(treedef, it, own)
    rest = list(it)
    assert not rest, "unflatten: too many leaves"
    return out


def _unflatten(d, it, own):
    kind = d[0]
    if kind == "leaf":
        return next(it)
    items = [_unflatten(c, it, own) for c in d[2]]
    if kind == "looplist":
        return LoopList.of_stack(items[0], d[1])
    if kind == "tuple":
        return d[1](*items) if hasattr(d[1], "_fields") else d[1](items)
    if kind == "list":
        return own(items)
    return own(dict(zip(d[1], items)))


def placeholder(tree):
    """``tree`` with each array leaf replaced by a :class:`Zero` of its type."""
    leaves, treedef = flatten(tree)
    return unflatten(treedef, [Zero(type_of(x)) if isinstance(x, Value) else x
                               for x in leaves])


def describe_tree(treedef) -> str:
    """``tuple of 2``, ``list of 3``, ``dict with keys ('a',)``, ``a single value``."""
    kind = treedef[0]
    if kind == "leaf":
        return "a single value"
    if kind == "dict":
        return f"a dict with keys {treedef[1]}"
    if kind == "looplist":
        return f"a list of {treedef[1]} built by a loop"
    return f"a {kind} of {len(treedef[2])}"


# -- types ------------------------------------------------------------------------

def unify(a, b) -> AType | None:
    """The type both ``a`` and ``b`` (ATypes) convert to, or None if there is none."""
    if a == b:
        return a
    if isinstance(a, ListType) or isinstance(b, ListType):
        return None
    if a.dynamic or b.dynamic:  # run-time lengths (ir/dims.py): only the same shape
        return None if a.shape != b.shape else AType(
            a.shape, np.dtype(np.result_type(sample(a), sample(b))), False)
    try:
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        return None
    dtype = np.result_type(sample(a), sample(b))
    weak = a.weak and b.weak and shape == ()
    return AType(shape, np.dtype(dtype), weak)


def convert(b, v, t: AType, hint: str | None = None) -> Value:
    """``v`` (a Value or Python number) as a Value of type ``t`` (which unifies it);
    new ops are named ``hint``."""
    v = b.const(v, hint=hint) if not isinstance(v, Value) else v
    if v.type == t:
        return v
    if t.weak:
        return _to_weak(b, v, t, hint)
    if v.type.weak and t.shape == ():
        v = b.npscalar(v, dtype=t.dtype, hint=hint)  # a NumPy scalar, as Python's paths give
    elif v.type.dtype != t.dtype or v.type.weak:
        v = b.cast(v, dtype=t.dtype, hint=hint)
    if v.type.shape != t.shape:
        v = b.broadcast_to(v, shape=t.shape, hint=hint)
    return v


def _to_weak(b, v: Value, t: AType, hint) -> Value:
    kind = t.dtype.kind
    if kind == "f":
        return b.pyfloat(v, hint=hint)
    out = b.add(v, b.const(t.python_type(0)), hint=hint)  # False + 0 is 0; 0 + 0j complex
    if out.type != t:
        raise TypeError(f"cannot convert {v.type} to a Python {t.python_type.__name__}")
    return out


def zeros(b, t: AType) -> Value:
    """A constant zero of type ``t`` (a placeholder for a path that set nothing)."""
    if t.weak:
        return b.const(t.python_type(0))
    return b.const(np.zeros(t.shape, t.dtype), hint="zeros")


class Mark:
    """Which ops a statement created, to name their results after its targets."""

    def __init__(self, block):
        self.block, self.start = block, len(block.ops)
        self._created: set | None = None
        self._named: set = set()

    def name(self, value, name: str) -> None:
        if isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                self.name(item, f"{name}_{i}")
            return
        if not isinstance(value, Value) or id(value) in self._named:
            return
        if self._created is None:
            self._created = {id(r) for op in self.block.ops[self.start:] for r in op.results}
        if id(value) in self._created:
            value.hint = name
            self._named.add(id(value))
