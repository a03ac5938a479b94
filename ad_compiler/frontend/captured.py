"""Captured state: what lifted code reads from outside its arguments, and from where.

Every object the lifter reads from a global, a closure cell, a default argument,
or an attribute or item of such an object (or of the Cell / bound method's
``self``, the *owner*) is recorded as a :class:`Read`: its parent read and one
step (``.name`` or ``[key]``), up to a root (the owner, passed at call time; a
module's globals dict or a closure cell, held; any other object, held weakly
where it can be). Its *kind* says what the compiled code assumed about it, and
so what is checked before each call (:mod:`ad_compiler.api.state`):

=============  ==================================================================
``array``      an ndarray (``tensor``: a Tensor) read at call time as an input of
               the compiled function; its type, shape and dtype are guarded
``param``      a Parameter (an input read with ``asnumpy()``), by identity
``seq``        a list/tuple holding arrays, lifted item by item: type and length
``dict``       a dict holding arrays: type and keys
``content``    an integer or boolean array (a mask, indices): folded into the code
               (indexing specialises on it), guarded by type, shape, dtype and bytes
``equal``      an immutable value (number, string, None) folded into the code
``snapshot``   a list, tuple, dict or set of other values: compared item by item
               with a copy taken when compiling (objects in it by identity)
``method``     a bound method: its function and its ``self``
``same``       any other object (function, class, Cell, ...): by identity
``type``       an object a property makes anew at each read: by type
``path``       no check: a step towards other reads (covered by a snapshot, or
               a user module, which is not expected to be rebound)
=============  ==================================================================

Not recorded: builtins, modules of libraries (numpy, math, ad_compiler ...) and
what is read from them, globals of library code, and objects the lifted code
built itself. A read on a Cell reached by no recorded path (a Cell from a
container iterated in Python) makes the entry depend on the Cell epoch
(``nn.cell.EPOCH``) instead.
"""
from __future__ import annotations

import inspect
import sys
import types
import weakref

import numpy as np

#: top-level packages whose modules, and the globals of whose functions, are not guarded
LIBRARY_PACKAGES = frozenset({"numpy", "scipy", "math", "builtins", "functools", "operator",
                              "inspect", "typing", "copy", "ad_compiler", "cmath", "random"})

_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), np.generic, np.dtype,
              types.EllipsisType, slice, range)


class Read:
    """One read of captured state: ``parent`` then ``step``, or a root."""

    __slots__ = ("parent", "step", "kind", "expected", "atype", "hint", "__weakref__")

    def __init__(self, parent, step, kind=None, expected=None):
        self.parent = parent      # Read, or None for a root
        self.step = step          # ("attr", name) | ("item", key) | ("iter",) | ("len",)
        #                           or, for a root, ("owner",) | ("held", ref)
        self.kind = kind
        self.expected = expected  # what the check compares with (see the module docstring)
        self.atype = None         # the AType of an array read
        self.hint = None

    def __repr__(self) -> str:
        return f"<read {self.describe()} ({self.kind})>"

    def describe(self) -> str:
        """``self.cfg.n``, ``W``: the read as the user would write it (for messages)."""
        return self.hint or "captured state"


class CapturedState:
    """The reads of one lifted function, for the API layer (no lift-time objects)."""

    def __init__(self, reads, arrays, epoch, seen=()):
        self.reads = reads    # in order: a parent before its children
        self.arrays = arrays  # the array/tensor reads, in the order of their inputs
        self.epoch = epoch    # the Cell epoch this entry depends on, or None
        # the arrays read when compiling (None: not known, for an inlined gradient's)
        self._seen = [None if a is None else weakref.ref(a) for a in seen]

    def seen(self):
        """The captured arrays as they were read when compiling (the same objects),
        or None when one of them is gone."""
        arrays = tuple(None if ref is None else ref() for ref in self._seen)
        return None if any(a is None for a in arrays) else arrays

    def __bool__(self) -> bool:
        return bool(self.reads) or self.epoch is not None


def hold(obj):
    """A zero-argument callable giving ``obj`` back: a weak reference where possible
    (an entry must not keep user objects alive), else a strong one."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return Strong(obj)


class Strong:
    """Holds an object strongly, with the call interface of a weak reference."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __call__(self):
        return self.obj


def current_epoch() -> int:
    """The Cell epoch (``nn.cell.EPOCH``) now."""
    from .resolve import cell_class
    cls = cell_class()
    return 0 if cls is None else sys.modules[cls.__module__].EPOCH


def is_library_module(module) -> bool:
    name = getattr(module, "__name__", "") or ""
    return name.split(".")[0] in LIBRARY_PACKAGES


def is_library_globals(globals_dict) -> bool:
    name = globals_dict.get("__name__", "") or ""
    return name.split(".")[0] in LIBRARY_PACKAGES


class Captures:
    """Records reads while lifting; :meth:`freeze` gives the :class:`CapturedState`."""

    def __init__(self, epoch: int):
        self.reads: list[Read] = []
        self.arrays: list[Read] = []
        self._children: dict = {}
        self._of: dict[int, Read] = {}   # id(object) -> the read that reached it
        self._keep: list = []            # keeps those objects alive while lifting
        self._epoch = epoch
        self.needs_epoch = False
        self.seen: dict[int, np.ndarray] = {}  # id(array read) -> the array read now

    def freeze(self) -> CapturedState:
        """The reads to repeat at call time: those with a check, and their parents."""
        needed: set[int] = set()
        for read in reversed(self.reads):  # children come after their parents
            if id(read) in needed or read.kind not in (None, "path", "computed"):
                needed.add(id(read))
                if read.parent is not None:
                    needed.add(id(read.parent))
        reads = [r for r in self.reads if id(r) in needed]
        return CapturedState(reads, list(self.arrays), self._epoch if self.needs_epoch else None,
                             [self.seen.get(id(r)) for r in self.arrays])

    # -- creating reads ------------------------------------------------------------
    def _add(self, key, parent, step, kind=None, expected=None) -> Read:
        read = self._children.get(key)
        if read is None:
            read = Read(parent, step, kind, expected)
            self._children[key] = read
            self.reads.append(read)
        return read

    def owner(self, obj) -> Read:
        """The root read of the owner (the Cell, or the ``self`` of a bound method)."""
        read = self._add(("owner",), None, ("owner",), "path")
        read.hint = "self"
        self._remember(obj, read)
        return read

    def root(self, obj) -> Read:
        """A root that is a held object: a globals dict or closure cell (strongly, they
        cannot be weakly referenced), any other object through :func:`hold`."""
        ref = Strong(obj) if isinstance(obj, (dict, types.CellType)) else hold(obj)
        return self._add(("root", id(obj)), None, ("held", ref), "path")

    def child(self, parent: Read | None, step, hint: str | None = None) -> Read | None:
        """The read of ``step`` from ``parent`` (None when ``parent`` is None);
        ``hint``: how the user writes it (default: from the parent's)."""
        if parent is None:
            return None
        try:
            key = (id(parent), step)
            hash(key)
        except TypeError:  # an unhashable key: not recorded
            return None
        read = self._add(key, parent, step)
        if read.hint is None:
            base = parent.hint or ""
            read.hint = hint or (f"{base}.{step[1]}" if step[0] == "attr" else f"{base}[{step[1]!r}]")
        return read

    def of(self, obj) -> Read | None:
        """The read that reached ``obj``, if it was reached through a recorded path."""
        return self._of.get(id(obj))

    def attr(self, obj, name: str) -> Read | None:
        """The read of ``obj.name``; a read on a Cell reached by no recorded path makes
        the entry depend on the Cell epoch."""
        parent = self.of(obj)
        if parent is None and _is_cell(obj):
            self.needs_epoch = True
        read = self.child(parent, ("attr", name))
        if read is not None and read.kind is None and _computed(obj, name):
            read.kind = "computed"  # classified by note()
        return read

    def iterated(self, seq, items: list) -> None:
        """``for item in seq`` ran in Python over ``items``: if ``seq`` was reached
        through a recorded path (and is not a container its snapshot covers), its
        items now are compared with these at each call (``("iter",)``: ``list(seq)``)."""
        if type(seq) not in (list, tuple, dict) and self.of(seq) is not None:
            self.note(self.child(self.of(seq), ("iter",), f"list({self.of(seq).hint})"), items)

    def measured(self, obj, n) -> None:
        """``len(obj)`` was ``n`` (``("len",)``: ``len(obj)``), checked at each call."""
        if type(obj) not in (list, tuple, dict) and self.of(obj) is not None:
            self.note(self.child(self.of(obj), ("len",), f"len({self.of(obj).hint})"), n)

    def _remember(self, obj, read: Read) -> None:
        if id(obj) not in self._of:
            self._of[id(obj)] = read
            self._keep.append(obj)

    # -- what a read saw -------------------------------------------------------------
    def note(self, read: Read | None, obj, kind: str | None = None) -> None:
        """Record what ``read`` saw when compiling: ``obj``, of ``kind`` (else classified)."""
        if read is None or read.kind not in (None, "computed"):
            return
        computed = read.kind == "computed"
        if read.parent is not None and read.parent.kind == "snapshot":
            read.kind = "path"  # the parent's snapshot already compares it
        elif kind is not None:
            read.kind, read.expected = kind, _expected(kind, obj)
        else:
            read.kind, read.expected = classify(obj)
        if computed and read.kind == "same":
            # a property makes a new object per read: its type is what the code used,
            # and what is read from it is checked by its own reads
            read.kind, read.expected = "type", hold(type(obj))
        if read.kind in ("same", "type", "method", "path", "snapshot", "param"):
            self._remember(obj, read)
        if read.kind == "snapshot":
            self._remember_items(obj, read)

    def _remember_items(self, obj, read: Read) -> None:
        """The objects in a snapshot are reached through it (``for c in self.layers``)."""
        if isinstance(obj, dict):
            items = obj.items()
        elif isinstance(obj, (list, tuple)):
            items = enumerate(obj)
        else:
            return
        for key, item in items:
            if not isinstance(item, _IMMUTABLE):
                sub = self.child(read, ("item", key))
                if sub is not None:
                    self.note(sub, item)


def _computed(obj, name: str) -> bool:
    """Whether ``obj.name`` is computed by a property (or another data descriptor)
    of its class, so that each read may give a new object."""
    attr = inspect.getattr_static(type(obj), name, None)
    return hasattr(type(attr), "__get__") and hasattr(type(attr), "__set__")


def _is_cell(obj) -> bool:
    from .resolve import is_cell
    return is_cell(obj)


def classify(obj):
    """``(kind, expected)`` of a static object (see the module docstring)."""
    if isinstance(obj, _IMMUTABLE):
        return "equal", obj
    if isinstance(obj, (list, tuple, dict, set, frozenset)):
        return "snapshot", snapshot(obj)
    if isinstance(obj, types.ModuleType):
        return "path", None
    if isinstance(obj, types.MethodType):
        return "method", (obj.__func__, hold(obj.__self__))
    return "same", hold(obj)


def _expected(kind: str, obj):
    if kind in ("seq", "dict"):
        return (type(obj), len(obj), tuple(obj) if kind == "dict" else None)
    if kind == "param":
        return obj   # the entry holds its Parameters anyway
    return None


# -- snapshots of containers ----------------------------------------------------------

def snapshot(obj):
    """A copy of ``obj`` that :func:`matches` compares with: containers item by item,
    immutable values by value, other objects by identity (held as :func:`hold` does)."""
    if isinstance(obj, _IMMUTABLE) or isinstance(obj, (set, frozenset)):
        return ("value", type(obj), frozenset(obj) if isinstance(obj, set) else obj)
    if isinstance(obj, (list, tuple)):
        return ("seq", type(obj), tuple(snapshot(item) for item in obj))
    if isinstance(obj, dict):  # OrderedDict too
        return ("dict", type(obj), tuple((k, snapshot(v)) for k, v in obj.items()))
    return ("object", None, hold(obj))


def matches(obj, snap) -> bool:
    """Whether ``obj`` still equals the :func:`snapshot` ``snap``."""
    tag, t, data = snap
    if tag == "object":
        return obj is data()
    if type(obj) is not t:
        return False
    if tag == "value":
        return obj is data or bool(obj == data)
    if len(obj) != len(data):
        return False
    if tag == "seq":
        return all(map(matches, obj, data))
    return (all(a == k for a, (k, _) in zip(obj, data))
            and all(matches(obj[k], s) for k, s in data))


# -- the lifter's side ------------------------------------------------------------------

class CaptureLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: captured arrays become inputs read at call
    time (inputs are never written: :mod:`.alias` refuses that, as for folded ones)."""

    def captured_array(self, obj, where: Read, hint: str | None = None):
        """The input of the array (ndarray or Tensor) ``obj`` read through ``where``."""
        from ..ir.core import AType
        from ..tensor import unwrap
        value = self._captured_values.get(id(where))
        if value is None:
            arr = np.asarray(unwrap(obj))
            if arr.dtype.kind in "biu":  # masks and indices: the code specialises on them
                where.kind, where.expected = "content", (type(obj), arr.shape, arr.dtype,
                                                         arr.tobytes())
                value = self.note_foreign(self.array_const(arr.copy(), hint))
                self._captured_values[id(where)] = value
                return value
            where.kind = "array" if isinstance(obj, np.ndarray) else "tensor"
            where.expected, where.atype = type(obj), AType.of(arr)
            self.captures.seen[id(where)] = arr
            value = self.captured_input(where, hint)
        return value

    def captured_input(self, where: Read, hint: str | None = None):
        from ..ir.names import sanitize
        value = self.new_arg(where.atype, sanitize(hint or "captured"))
        self._captured_values[id(where)] = value
        self.captures.arrays.append(where)
        return value

    def guard_code(self, fn) -> None:
        """The compiled code is ``fn``'s code: replacing ``fn.__code__`` (a reloader
        does) compiles again."""
        if isinstance(fn, types.FunctionType) and not is_library_globals(fn.__globals__):
            caps = self.captures
            read = caps.child(caps.root(fn), ("attr", "__code__"), f"{fn.__qualname__}.__code__")
            if read is not None and read.kind is None:
                # held strongly: a code object is small, and this saves a call per check
                read.kind, read.expected = "same", Strong(fn.__code__)

    def default_value(self, fn, param: str, value):
        """The lift-time value of ``param``'s default in the Python function ``fn``:
        a mutable default (an array, a list ...) is read at call time or guarded;
        an immutable one is folded (rebinding ``fn.__defaults__`` is not seen)."""
        from .resolve import lift_object
        if (isinstance(value, _IMMUTABLE) or not isinstance(fn, types.FunctionType)
                or is_library_globals(fn.__globals__)):
            return value
        caps = self.captures
        code = fn.__code__
        positional = code.co_varnames[:code.co_argcount]
        if param in positional and fn.__defaults__:
            step = ("attr", "__defaults__"), ("item", positional.index(param) - (
                len(positional) - len(fn.__defaults__)))
        elif fn.__kwdefaults__ and param in fn.__kwdefaults__:
            step = ("attr", "__kwdefaults__"), ("item", param)
        else:
            return value
        hint = f"{fn.__qualname__}() default {param}"
        where = caps.child(caps.child(caps.root(fn), step[0], hint), step[1], hint)
        return lift_object(value, self, param, where)

    def captured_arg_values(self) -> list:
        return [self._captured_values[id(r)] for r in self.captures.arrays]

    def adopt(self, state: CapturedState, owner) -> list:
        """The reads of another compiled function (a gradient inlined here, whose
        owner is ``owner``) as reads of this one: the Values of its captured arrays."""
        caps = self.captures
        mapped: dict[int, Read] = {}
        for read in state.reads:
            if read.parent is not None:
                new = caps.child(mapped[id(read.parent)], read.step, read.hint)
            elif read.step[0] == "owner":
                new = caps.of(owner) or caps.root(owner)
            else:
                new = caps.root(read.step[1]())
            if new.kind is None:
                new.kind, new.expected, new.atype = read.kind, read.expected, read.atype
            mapped[id(read)] = new
        if state.epoch is not None:
            caps.needs_epoch = True
        values = []
        for read in state.arrays:
            new = mapped[id(read)]
            value = self._captured_values.get(id(new))
            values.append(value if value is not None else self.captured_input(new, read.hint))
        return values
