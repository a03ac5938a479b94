"""Reject the Python the compiler does not handle, before any lowering starts.

Invariant: after :func:`fence` accepts a function's tree, every statement and
expression in it (nested ``def`` and ``lambda`` bodies included) is one the lifter
has a visitor for. What can only be judged with values in hand (a condition
that is an array, a loop that never ends, a call with no lowering) is left to the lifter,
which raises the same kind of error with the same kind of location.

Each rejected construct raises :class:`~ad_compiler.errors.UnsupportedSyntaxError`
at the construct's real line, with a hint of what to write instead.

``print(...)`` is not fenced: the lifter drops it (compiled code has no side
effects), see :mod:`.calls`.
"""
from __future__ import annotations

import gast

from ..errors import UnsupportedSyntaxError
from .nodes import children

#: node type -> (what it is, what to write instead)
_REJECTED = {
    gast.Try: ("'try' statement", "move the try/except outside the compiled function"),
    gast.With: ("'with' statement", "move the 'with' block outside the compiled function"),
    gast.AsyncWith: ("'async with' statement", "compiled functions cannot be asynchronous"),
    gast.AsyncFor: ("'async for' loop", "compiled functions cannot be asynchronous"),
    gast.AsyncFunctionDef: ("'async def'", "compiled functions cannot be asynchronous"),
    gast.Await: ("'await'", "compiled functions cannot be asynchronous"),
    gast.Yield: ("'yield' (a generator)", "return the values (a tuple or list) instead"),
    gast.YieldFrom: ("'yield from' (a generator)", "return the values instead"),
    gast.Global: ("'global' declaration", "pass the value in as an argument and return "
                  "the new value instead of assigning a global"),
    gast.Nonlocal: ("'nonlocal' declaration", "return the new value instead of assigning "
                    "an enclosing variable"),
    gast.Delete: ("'del' statement", "leave the variable alone, or rebind the name"),
    gast.ClassDef: ("class definition", "define the class at module level"),
    gast.Import: ("'import' inside the function", "import at module level"),
    gast.ImportFrom: ("'import' inside the function", "import at module level"),
    gast.ListComp: ("list comprehension", "write a 'for' loop over a Python list or range"),
    gast.SetComp: ("set comprehension", "write a 'for' loop over a Python list or range"),
    gast.DictComp: ("dict comprehension", "write a 'for' loop over a Python list or range"),
    gast.GeneratorExp: ("generator expression", "write a 'for' loop over a Python list "
                        "or range"),
    gast.Match: ("'match' statement", "use 'if'/'elif' on Python values"),
}
if hasattr(gast, "TryStar"):
    _REJECTED[gast.TryStar] = _REJECTED[gast.Try]


#: nodes with no problem and nothing under them but a context (Load, Store, Del)
_LEAVES = frozenset({gast.Name, gast.Constant, gast.Load, gast.Store, gast.Del})


def fence(tree, source) -> None:
    """Raise UnsupportedSyntaxError at the first construct of ``tree`` (in source
    order) the lifter cannot lift. The walk is a loop, not a recursion: a sum of
    thousands of terms is a tree thousands deep."""
    todo = [(tree, False)]
    while todo:
        node, in_raise = todo.pop()
        if getattr(node, "as_def", None) is not None:  # a lambda lifted as a def
            node = node.as_def
        problem = _problem(node, in_raise)
        if problem is not None:
            at, what, hint = problem
            raise UnsupportedSyntaxError(f"unsupported syntax: {what}", source.loc(at),
                                         hint=hint)
        # a raise (with its f-string message) is fine in a branch that is not taken
        in_raise = in_raise or isinstance(node, (gast.Raise, gast.Assert))
        todo.extend((child, in_raise) for child in reversed(children(node))
                    if type(child) not in _LEAVES)


def _problem(node, in_raise: bool):
    """``(node to point at, what it is, what to write instead)`` or None."""
    entry = _REJECTED.get(type(node))
    if entry is not None:
        return (node, *entry)
    if isinstance(node, gast.Attribute) and not isinstance(node.ctx, gast.Load):
        return (node, f"assignment to the attribute '.{node.attr}'",
                "compiled functions cannot change objects; return the new value "
                "instead (Parameters are updated by the optimizer, outside)")
    if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Del):
        return node, "'del' of an item", "build a new container instead"
    if isinstance(node, gast.JoinedStr) and not in_raise:
        return node, "f-string", "format strings outside the compiled function"
    return None
