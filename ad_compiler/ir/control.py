"""Structured control flow: the ``if``, ``for`` and ``while`` ops.

Regions capture outer values implicitly (as Python scopes do) and end by
yielding values to their op::

    %r = if %cond {                         # regions take no arguments
      region 0() { ...; yield %a }          # then
      region 1() { ...; yield %b }          # else: same types as then
    }
    %h, %ys = for %n, %h0 {n_carried=1}     # i = 0 .. n-1 (reverse=True: n-1 .. 0)
      region 0(%i: int, %h: f32[3]) { ...; yield %h_next, %y }
    %s = while %s0 {n_carried=1}
      region 0(%s) { ...; yield %keep_going }   # condition
      region 1(%s) { ...; yield %s_next }       # body

A loop body yields its ``n_carried`` next carried values, then any number of
*stacked* values: each is collected per iteration into a list, returned after
the final carried values as a ``list<T>`` result (the values a loop appends to a
list; the values the adjoint of a loop saves for its backward sweep). Item ``i``
of the list is the value of iteration ``i`` (of the ``i``-th iteration run, for a
``while``), also when a ``for`` runs ``reverse``: its lists are reversed after
the loop. A ``while`` differentiated once counts its iterations in a carried
value, whose position the param ``counter`` gives.

Build them with :func:`build_if`, :func:`build_for`, :func:`build_while`, which
take Python callbacks that emit the region bodies through the same builder.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import IRError
from . import interp, verifier
from .core import AType, Block, ListType, Op, Value

INT = AType((), np.dtype(np.int64), True)

verifier.STRUCTURAL.update({"if", "for", "while"})


def _region(b, args, body: Callable) -> Block:
    block = Block(args=list(args))
    with b.inside(block):
        block.results = list(body())
    return block


def _check_same(kind, a, b, loc):
    if [v.type for v in a] != [v.type for v in b]:
        raise IRError(f"{kind}: the two regions yield different types: "
                      f"{[str(v.type) for v in a]} vs {[str(v.type) for v in b]}")


def build_if(b, cond: Value, then_fn: Callable, else_fn: Callable, hints=()) -> list:
    """``if cond`` with regions emitted by ``then_fn(b)`` / ``else_fn(b)``, each returning
    the list of values it yields (same types in both)."""
    then = _region(b, [], lambda: then_fn(b))
    other = _region(b, [], lambda: else_fn(b))
    _check_same("if", then.results, other.results, b.loc)
    results = [Value(v.type, _hint(hints, i, v)) for i, v in enumerate(then.results)]
    b.add_op(Op("if", [cond], {}, results, [then, other], b.loc))
    return results


def build_for(b, n: Value, init: list, body_fn: Callable, *, reverse: bool = False,
              index_hint: str = "i", hints=()) -> list:
    """A counted loop over ``i`` in ``range(n)`` (reversed when ``reverse``).

    ``body_fn(b, i, carried)`` returns ``(next_carried, stacked)``; the op's results
    are the final carried values followed by one list per stacked value.
    """
    i = Value(INT, index_hint)
    args = [Value(v.type, v.hint) for v in init]
    stacked: list = []

    def body():
        nxt, st = body_fn(b, i, args)
        stacked.extend(st)
        return list(nxt) + list(st)
    region = _region(b, [i] + args, body)
    _check_carried("for", init, region.results[:len(init)])
    results = _loop_results(init, stacked, hints)
    b.add_op(Op("for", [n] + list(init), {"n_carried": len(init), "reverse": reverse},
                results, [region], b.loc))
    return results


def build_while(b, init: list, cond_fn: Callable, body_fn: Callable, hints=()) -> list:
    """``while cond_fn(b, carried): carried = body_fn(b, carried)``.

    ``body_fn`` returns ``(next_carried, stacked)`` as in :func:`build_for`.
    """
    cargs = [Value(v.type, v.hint) for v in init]
    cond = _region(b, cargs, lambda: [cond_fn(b, cargs)])
    bargs = [Value(v.type, v.hint) for v in init]
    stacked: list = []

    def body():
        nxt, st = body_fn(b, bargs)
        stacked.extend(st)
        return list(nxt) + list(st)
    region = _region(b, bargs, body)
    _check_carried("while", init, region.results[:len(init)])
    results = _loop_results(init, stacked, hints)
    b.add_op(Op("while", list(init), {"n_carried": len(init)}, results, [cond, region], b.loc))
    return results


def _check_carried(kind, init, nxt):
    for a, v in zip(init, nxt, strict=True):
        if a.type != v.type:
            raise IRError(f"{kind}: loop-carried value {a.hint or '?'} changes type from "
                          f"{a.type} to {v.type} in one iteration")


def _loop_results(init, stacked, hints):
    carried = [Value(v.type, _hint(hints, i, v)) for i, v in enumerate(init)]
    lists = [Value(ListType(v.type), (v.hint or "v") + "_list") for v in stacked]
    return carried + lists


def _hint(hints, i, v):
    return hints[i] if i < len(hints) and hints[i] else v.hint


def free_values(op: Op) -> list:
    """Outer values the regions of ``op`` use (captures), in order of first use."""
    defined: set[int] = set()
    seen: dict[int, Value] = {}
    for region in op.regions:
        _collect_free(region, defined, seen)
    return list(seen.values())


def _collect_free(block: Block, defined: set, seen: dict) -> None:
    defined.update(id(a) for a in block.args)
    for inner in block.ops:
        for v in inner.inputs:
            if id(v) not in defined:
                seen.setdefault(id(v), v)
        for region in inner.regions:
            _collect_free(region, defined, seen)
        defined.update(id(r) for r in inner.results)
    for v in block.results:
        if id(v) not in defined:
            seen.setdefault(id(v), v)


# -- reference semantics (the interpreter) ------------------------------------------

def _eval_if(op, env, run_block):
    branch = op.regions[0] if bool(env[id(op.inputs[0])]) else op.regions[1]
    return run_block(branch, env)


def _run_body(region, env, run_block, args, n_carried, lists):
    out = run_block(region, env, args)
    for lst, v in zip(lists, out[n_carried:]):
        lst.append(v)
    return out[:n_carried]


def _eval_for(op, env, run_block):
    n_carried = op.params["n_carried"]
    n = int(env[id(op.inputs[0])])
    carried = [env[id(v)] for v in op.inputs[1:]]
    lists = [[] for _ in op.results[n_carried:]]
    order = range(n - 1, -1, -1) if op.params.get("reverse") else range(n)
    for i in order:
        carried = _run_body(op.regions[0], env, run_block, [i] + carried, n_carried, lists)
    return carried + [lst[::-1] if op.params.get("reverse") else lst for lst in lists]


def _eval_while(op, env, run_block):
    n_carried = op.params["n_carried"]
    cond, body = op.regions
    carried = [env[id(v)] for v in op.inputs]
    lists = [[] for _ in op.results[n_carried:]]
    while bool(run_block(cond, env, carried)[0]):
        carried = _run_body(body, env, run_block, carried, n_carried, lists)
    return carried + lists


interp.STRUCTURAL_EVAL.update({"if": _eval_if, "for": _eval_for, "while": _eval_while})
