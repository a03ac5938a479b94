"""Names → objects, and objects from outside the function → lift-time values.

A lift-time value is either an IR :class:`~ad_compiler.ir.core.Value` (known only
at run time) or any other Python object (*static*: known at compile time and
folded). Containers (tuple, list, dict) hold either kind.

Invariants:

* Lookup follows Python: the frame's locals, then (for a function defined in the
  lifted code) the enclosing frames, then the closure cells of the Python
  function, then its globals, then builtins. A name the function assigns
  anywhere is local everywhere in it, so reading it before assignment is an
  error and never falls through to a global of the same name.
* Objects from outside the lifted code pass through :func:`lift_object`: a
  Parameter becomes an implicit input (one per Parameter object), a captured
  Tensor or ndarray an input read at call time (one per path it is read
  through), anything else stays static and is guarded (:mod:`.captured`).
"""
from __future__ import annotations

import builtins
import types

import gast
import numpy as np

from ..ir.core import Value
from .captured import is_library_globals, is_library_module
from .nodes import children

class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


MISSING = _Marker("MISSING")  # the name is defined nowhere
UNBOUND = _Marker("UNBOUND")  # a local name with no value yet (Python's UnboundLocalError)


class Scope:
    """One frame's locals, chained to where its free names are found."""

    def __init__(self, local_names: set, parent: "Scope | GlobalScope"):
        self.env: dict = {}
        self.local_names = local_names
        self.parent = parent

    def lookup(self, name: str, lifter):
        if name in self.env:
            return self.env[name]
        if name in self.local_names:
            return UNBOUND
        return self.parent.lookup(name, lifter)

    def bind(self, name: str, value) -> None:
        self.env[name] = value


class GlobalScope:
    """Closure cells, globals and builtins of a Python function.

    Reads of cells and globals are recorded as captured state (:mod:`.captured`),
    except those of library code; builtins are not recorded.
    """

    def __init__(self, fn):
        self.cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        self.globals = fn.__globals__
        self.library = is_library_globals(self.globals)

    def lookup(self, name: str, lifter):
        caps = lifter.captures
        if name in self.cells:
            cell = self.cells[name]
            try:
                obj = cell.cell_contents
            except ValueError:  # an empty cell: assigned later in the enclosing function
                return UNBOUND
            where = None if self.library else caps.child(
                caps.root(cell), ("attr", "cell_contents"), hint=name)
        elif name in self.globals:
            obj = self.globals[name]
            where = None if self.library else caps.child(caps.root(self.globals),
                                                         ("item", name), hint=name)
        else:
            return getattr(builtins, name, MISSING)
        return lift_object(obj, lifter, hint=name, where=where)


# -- objects from outside the lifted code ---------------------------------------

def parameter_class():
    """``ad_compiler.nn.parameter.Parameter``, or None while nn is not available."""
    try:
        from ..nn.parameter import Parameter
    except ImportError:
        return None
    return Parameter


def cell_class():
    """``ad_compiler.nn.cell.Cell``, or None while nn is not available."""
    try:
        from ..nn.cell import Cell
    except ImportError:
        return None
    return Cell


def construct_of(cell):
    """The ``construct`` of a Cell's class (an error naming the Cell if it has none)."""
    from ..nn.cell import construct_of
    return construct_of(cell)


def tensor_class():
    from ..tensor import Tensor
    return Tensor


def is_parameter(obj) -> bool:
    cls = parameter_class()
    return cls is not None and isinstance(obj, cls)


def is_cell(obj) -> bool:
    cls = cell_class()
    return cls is not None and isinstance(obj, cls)


def is_array(obj) -> bool:
    """An ndarray or a Tensor: data that becomes a ``const`` op when it meets Values."""
    return isinstance(obj, (np.ndarray, tensor_class()))


def lift_object(obj, lifter, hint: str | None = None, where=None):
    """The lift-time value of an object read from outside the lifted code.

    ``where`` is the :class:`~.captured.Read` that reached ``obj`` (None if it
    was reached by no recorded path). An array with a ``where`` becomes an input
    read at call time, one without a ``const``. Containers are converted only if
    they hold arrays or Parameters (a ParameterTuple becomes a tuple of Values);
    others keep their identity, and their contents are guarded.
    """
    if isinstance(obj, Value):
        return obj
    caps = lifter.captures
    if is_parameter(obj):
        caps.note(where, obj, "param")
        return lifter.parameter_value(obj)
    if is_array(obj):
        if where is None:
            return lifter.note_foreign(lifter.array_const(obj, hint))
        return lifter.captured_array(obj, where, hint)
    if _is_plain_sequence(obj) and _holds_data(obj):
        caps.note(where, obj, "seq")
        items = [lift_object(item, lifter, hint, caps.child(where, ("item", i)))
                 for i, item in enumerate(obj)]
        return items if isinstance(obj, list) else tuple(items)
    if type(obj) is dict and _holds_data(obj):
        caps.note(where, obj, "dict")
        return {k: lift_object(v, lifter, hint, caps.child(where, ("item", k)))
                for k, v in obj.items()}
    if isinstance(obj, types.ModuleType) and is_library_module(obj):
        return obj
    caps.note(where, obj)
    return obj


def _is_plain_sequence(obj) -> bool:
    # a namedtuple keeps its type and stays static; a ParameterTuple is a tuple
    return isinstance(obj, list) or isinstance(obj, tuple) and not hasattr(obj, "_fields")


def _holds_data(obj) -> bool:
    if is_array(obj) or is_parameter(obj):
        return True
    if type(obj) is dict:
        return any(_holds_data(item) for item in obj.values())
    return _is_plain_sequence(obj) and any(_holds_data(item) for item in obj)


# -- which names a function assigns -------------------------------------------

def local_names(fn_node) -> set:
    """Names bound anywhere in the body of ``fn_node`` (not inside nested functions)."""
    found: set = set()
    args = fn_node.args
    for a in args.posonlyargs + args.args + args.kwonlyargs:
        found.add(a.id)
    for a in (args.vararg, args.kwarg):
        if a is not None:
            found.add(a.id)
    body = fn_node.body if isinstance(fn_node.body, list) else [fn_node.body]
    for stmt in body:
        _collect_stores(stmt, found)
    return found


def _collect_stores(node, found: set) -> None:
    todo = [node]  # a stack, not a recursion: expressions can be thousands deep
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            found.add(node.id)
        if isinstance(node, gast.FunctionDef):
            found.add(node.name)
            todo.extend(node.args.defaults)
            todo.extend(d for d in node.args.kw_defaults if d is not None)
        elif not isinstance(node, gast.Lambda):  # their bodies are their own scopes
            todo.extend(children(node))
