"""``for ... else`` and ``while ... else``, desugared to a flag before lifting.

The ``else`` clause of a loop runs when the loop ends without ``break``. The
rewrite, in place, on the function's tree (nested ``def`` bodies included)::

    for v in xs:                      <loop_broke 0> = False
        if c: break                   for v in xs:
        ...                   ->          if c:
    else:                                     <loop_broke 0> = True
        tail                                  break
                                          ...
                                      if not <loop_broke 0>:
                                          tail

The flag is a variable no Python code can name (``<loop_broke 0>``, shown as
``loop_broke`` in the IR). The lifter treats it like any variable: a static bool
when the ``break`` is decided at compile time (the ``if`` then keeps only the
branch taken), else a bool the loop carries, and the ``else`` clause becomes a
data-dependent ``if`` (so gradients flow through either path). A loop without a
``break`` of its own (one in a nested loop belongs to that loop) runs its
``else`` clause after it, unconditionally. A ``return`` inside the loop needs
nothing: the statements after the loop do not run, the ``else`` clause included.
"""
from __future__ import annotations

import gast
from .nodes import walk

_BODIES = ("body", "orelse", "finalbody")
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)
_LOOPS = (gast.For, gast.While, gast.AsyncFor)


def desugar_loop_else(tree) -> None:
    """Rewrite, in place, every ``for``/``while`` with an ``else`` clause in ``tree``."""
    counter = [0]
    todo = [tree]
    while todo:  # a stack: nesting can be deep
        node = todo.pop()
        for field in _BODIES:
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], gast.stmt):
                setattr(node, field, _rewrite_list(stmts, counter))
                todo.extend(getattr(node, field))


def _rewrite_list(stmts, counter) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, _LOOPS) and stmt.orelse and not isinstance(stmt, gast.AsyncFor):
            out.extend(_rewrite_loop(stmt, counter))
        else:
            out.append(stmt)
    return out


def _rewrite_loop(loop, counter) -> list:
    tail, loop.orelse = loop.orelse, []
    breaks = _own_breaks(loop.body)
    if not breaks:
        return [loop, *tail]
    flag = f"<loop_broke {counter[0]}>"
    counter[0] += 1
    for holder, field, k in breaks:
        body = getattr(holder, field)
        body[k:k + 1] = [_located(_set(flag, True), body[k]), body[k]]
    start = _located(_set(flag, False), loop)
    test = gast.UnaryOp(op=gast.Not(), operand=_name(flag, gast.Load()))
    guard = _located(gast.If(test=test, body=tail, orelse=[]), tail[0])
    return [start, loop, guard]


def _own_breaks(body) -> list:
    """``(holder, field, index)`` of each ``break`` of the loop whose body is ``body``
    (not those of nested loops or functions), last first (so inserting before one
    keeps the indices of the others)."""
    found = []
    todo = [("body", body, None)]
    while todo:
        field, stmts, holder = todo.pop()
        for k, stmt in enumerate(stmts):
            if isinstance(stmt, gast.Break):
                found.append((holder, field, k))
            elif not isinstance(stmt, _SCOPES + _LOOPS):
                for sub in _BODIES + ("handlers",):
                    inner = getattr(stmt, sub, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], gast.AST):
                        todo.append((sub, inner, stmt))
    found = [(h if h is not None else _Top(body), f, k) for h, f, k in found]
    found.sort(key=lambda t: -t[2])
    return found


class _Top:
    """Holds the loop body itself, so the body's own ``break`` is edited like the others."""

    def __init__(self, body):
        self.body = body


def _set(flag: str, value: bool):
    return gast.Assign(targets=[_name(flag, gast.Store())],
                       value=gast.Constant(value=value, kind=None), type_comment=None)


def _name(ident: str, ctx):
    return gast.Name(id=ident, ctx=ctx, annotation=None, type_comment=None)


def _located(new, where):
    for n in walk(new):
        if "lineno" in n._attributes and getattr(n, "lineno", None) is None:
            gast.copy_location(n, where)
    return new
