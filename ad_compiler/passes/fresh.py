"""Fresh outputs: every array a generated function returns is new memory.

A result that is an input (``f(x) = x``), a view of one (reshape, transpose),
a constant (a folded seed), a read-only ``broadcast_to`` view, or the same value
returned twice gets a ``copy``. Run last, after the passes that may turn a
result into a constant. Before/after::

    %dx = const {value=array([1., 1.])}
    return %dx                      ->   %dx_1 = copy %dx ; return %dx_1
"""
from __future__ import annotations

from ..ad import rules
from ..ir.builder import Builder
from ..ir.core import Block, Function, Value

#: primitives whose result must never be handed out as is (shared or read-only)
_SHARED = {"const", "broadcast_to"}


def _base(v: Value) -> Value:
    """The value whose memory ``v`` may share (through ``view`` primitives)."""
    while (v.producer is not None and v.producer.prim in rules.PRIMITIVES
           and v.producer.prim not in _SHARED and rules.get(v.producer.prim).aliases(v.producer)):
        v = v.producer.inputs[0]
    return v


def _sources(op, v) -> list:
    """The values a structured op's result ``v`` may be: the branches' yields (the one
    region's, for a ``bprop_call``), or a loop's initial value (no iteration) and its
    body's yield."""
    j = op.results.index(v)
    if op.prim in ("if", "bprop_call"):  # a call with its own rule: its region's yield
        return [r.results[j] for r in op.regions]
    if j >= op.params["n_carried"]:
        return []  # a stacked list: new
    init = op.inputs[j + 1] if op.prim == "for" else op.inputs[j]
    return [init, op.regions[-1].results[j]]


def _shares_memory(v: Value, arg_ids: set, depth: int = 0) -> bool:
    """Whether ``v`` may be an argument, a constant or a read-only view at run time."""
    base = _base(v)
    op = base.producer
    if id(base) in arg_ids or op is None or depth > 8:
        return True  # an argument, or a region argument: conservatively shared
    if op.regions:
        return any(_shares_memory(s, arg_ids, depth + 1) for s in _sources(op, base))
    return op.prim in _SHARED


def fresh_outputs(fn: Function) -> Function:
    # the ops are fn's own (passes are pure, nothing changes them); copies are appended
    new = Function(fn.name, Block(list(fn.args), list(fn.body.ops)), fn.loc)
    new.body.results = fresh_results(Builder(new.body), fn.body.results, new.args)
    return new


def fresh_results(b, results: list, args: list) -> list:
    """``results`` with a copy wherever a result would alias an input, a constant,
    a read-only view, or another result: every array returned to a user is new."""
    arg_ids = {id(a) for a in args}
    seen: set[int] = set()
    fresh = []
    for v in results:
        aliased = id(v) in seen or _shares_memory(v, arg_ids)
        if aliased and not v.type.weak:
            v = b.emit("copy", v, hint=v.hint)
        seen.add(id(v))
        fresh.append(v)
    return fresh
