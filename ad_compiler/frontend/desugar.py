"""Jumps become flags: ``break``, ``continue`` and ``return`` under data-dependent control.

A jump that happens for sure (in straight-line code, or in a branch whose
condition is static) is a *signal* of the frame (``frame.signal``): the lifter
stops running statements, as Python does. A jump that happens only on some
run-time paths cannot stop the lifter; it is desugared into *flags*: entries of
the frame's environment under names no Python variable can have:

* ``<returned>`` (a bool) and ``<result>`` (the returned value) — set by ``return``;
* ``<break>`` — set by ``break``, carried by the loop, which then stops;
* ``<continue>`` — set by ``continue``, cleared at the start of each iteration.

An absent flag is False. Wherever statements follow a point where a flag may
be set, they run under ``if flag: ... else: <the rest>`` (see ``run_body``),
or, when one branch of an ``if`` jumps for sure and the other does not, the
rest of the block simply becomes the other branch. Flags are merged by ``if``
and carried by loops like any variable, so nesting needs no special case.

This module also holds the syntax facts the control-flow lifting reads:
which names a block reads and assigns, and whether it breaks, returns or
appends to a list. Facts are cached per node for the life of one lift.
"""
from __future__ import annotations

import gast
from .nodes import children

RETURNED, RESULT, BROKE, CONTINUED = "<returned>", "<result>", "<break>", "<continue>"
#: flag names, in the order a guard tests them (a return outranks a break ...)
FLAGS = (RETURNED, BROKE, CONTINUED)
PSEUDO = frozenset((RETURNED, RESULT, BROKE, CONTINUED))
#: the value of a conditional expression, merged by an ``if`` like a variable
VALUE = "<value>"
_HINTS = {RETURNED: "returned", RESULT: "result", BROKE: "broke", CONTINUED: "continued",
          VALUE: "value"}


def hint_of(name: str) -> str:
    """The name IR values carrying variable (or flag) ``name`` get: a flag of
    rewritten syntax (``<loop_broke 0>``, :mod:`.loop_else`) is named by its first word."""
    hint = _HINTS.get(name)
    if hint is None and name.startswith("<"):
        hint = name[1:].split(" ")[0].rstrip(">")
    return hint or name
_SIGNAL_FLAG = {"return": RETURNED, "break": BROKE, "continue": CONTINUED}
_FLAG_SIGNAL = {v: k for k, v in _SIGNAL_FLAG.items()}

_SCOPES = (gast.FunctionDef, gast.Lambda)
_LOOPS = (gast.For, gast.While)


def signal_to_flags(env: dict, signal: str | None, result) -> None:
    """Record a sure jump of a path that ends here as flags in that path's ``env``."""
    if signal is None:
        return
    env[_SIGNAL_FLAG[signal]] = True
    if signal == "return":
        env[RESULT] = result


def sure_signal(env: dict):
    """``(signal, result)`` if a flag in ``env`` is statically True (the flags of a
    jump are then removed from ``env``), else ``(None, None)``; static False
    flags are removed too."""
    for flag in FLAGS:
        if env.get(flag, False) is True:
            result = env.pop(RESULT, None) if flag == RETURNED else None
            for f in FLAGS:
                env.pop(f, None)
            if flag == RETURNED:
                return "return", result
            return _FLAG_SIGNAL[flag], None
    for flag in FLAGS:
        if env.get(flag, None) is False:
            del env[flag]
    return None, None


class Syntax:
    """Facts about statements and expressions, cached by node for one lift."""

    def __init__(self):
        self._cache: dict = {}

    def _cached(self, kind, node, compute):
        key = (kind, id(node))
        hit = self._cache.get(key)
        if hit is None or hit[0] is not node:
            hit = (node, compute(node))
            self._cache[key] = hit
        return hit[1]

    def reads(self, nodes) -> frozenset:
        """Names read anywhere in ``nodes`` (nested functions included: they may
        run later)."""
        out: set = set()
        for n in nodes:
            out |= self._cached("reads", n, _reads)
        return frozenset(out)

    def stores(self, nodes) -> list:
        """Names assigned in ``nodes`` (not inside nested functions), in order."""
        out: dict = {}
        for n in nodes:
            out.update(dict.fromkeys(self._cached("stores", n, _stores)))
        return list(out)

    def breaks(self, nodes) -> bool:
        """True if a ``break`` in ``nodes`` belongs to the loop they are the body of."""
        return any(self._cached("breaks", n, _breaks) for n in nodes)

    def returns(self, nodes) -> bool:
        return any(self._cached("returns", n, _returns) for n in nodes)

    def appends(self, nodes) -> list:
        """Names ``n`` of calls ``n.append(...)`` in ``nodes`` (not in nested functions)."""
        out: dict = {}
        for n in nodes:
            out.update(dict.fromkeys(self._cached("appends", n, _appends)))
        return list(out)

    def last_reads(self, stmts) -> dict:
        """Name -> the position of the last statement of ``stmts`` that reads it."""
        last: dict = {}
        for k, n in enumerate(stmts):
            last.update(dict.fromkeys(self._cached("reads", n, _reads), k))
        return last

    def nested_reads(self, fn_node) -> frozenset:
        """Names read inside functions and lambdas defined in ``fn_node``'s body:
        a call may read them at any later point."""
        body = fn_node.body if isinstance(fn_node.body, list) else [fn_node.body]
        return self._cached("nested", fn_node, lambda _: frozenset(_nested_reads(body)))


class ReadAfter:
    """The names read by the statements after position ``k`` of a body (``last`` is
    :meth:`Syntax.last_reads` of the body), or in ``base``: a set that supports ``in``
    and ``|`` only, so moving ``k`` along a body costs nothing per statement."""

    __slots__ = ("base", "last", "k")

    def __init__(self, base, last: dict, k: int):
        self.base, self.last, self.k = base, last, k

    def __contains__(self, name) -> bool:
        return self.last.get(name, -1) > self.k or name in self.base

    def __or__(self, other) -> "ReadAfter":
        return ReadAfter(self.base | other, self.last, self.k)

    __ror__ = __or__


def _walk(node, stop=_SCOPES):
    """``node`` and the nodes under it; ``stop`` nodes are yielded but not entered."""
    todo = [node]
    while todo:  # depth first, in source order
        n = todo.pop()
        yield n
        if not isinstance(n, stop):
            todo.extend(reversed(children(n)))


def _reads(node) -> frozenset:
    out = set()
    for n in _walk(node, stop=()):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            out.add(n.id)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            out.add(n.target.id)
    return frozenset(out)


def _stores(node) -> tuple:
    """Names bound, and names of arrays updated by ``x[i] = v`` (which rebinds ``x``)."""
    out: dict = {}
    for n in _walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            out[n.id] = None
        elif isinstance(n, gast.FunctionDef):
            out[n.name] = None
        elif isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store):
            base = n.value
            while isinstance(base, gast.Subscript):
                base = base.value
            if isinstance(base, gast.Name):
                out[base.id] = None
    return tuple(out)


def _breaks(node) -> bool:
    return any(isinstance(n, gast.Break) for n in _walk(node, stop=_SCOPES + _LOOPS))


def _returns(node) -> bool:
    return any(isinstance(n, gast.Return) for n in _walk(node))


def _appends(node) -> tuple:
    out: dict = {}
    for n in _walk(node):
        if (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
                and n.func.attr == "append" and isinstance(n.func.value, gast.Name)):
            out[n.func.value.id] = None
    return tuple(out)


def _nested_reads(body) -> set:
    out: set = set()
    for stmt in body:
        for n in _walk(stmt, stop=()):
            if isinstance(n, _SCOPES):
                out |= _reads(n)
    return out
