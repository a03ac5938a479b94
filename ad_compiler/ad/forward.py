"""Forward mode: build the Jacobian-vector-product function of an IR function.

``jvp_function(f, wrt)`` returns a new Function (``f`` is untouched)::

    def f_jvp(*f.args, *tangents of the wrt args):
        <each op of f, followed by its JVP rule when an input carries a tangent>
        return (*f.outputs, *tangents of the outputs)

Tangents are propagated with the primitives' JVP rules (``jvp(b, tangents, out,
*inputs, **params)``), so the result is ordinary IR again. Structured ops carry
the tangents alongside the values in one sweep (no tape): an ``if`` yields the
tangents of its results from each branch, a loop carries the tangents of the
carried values that vary and stacks the tangents of its stacked values.
"""
from __future__ import annotations

from typing import Sequence

from . import rules
from ..errors import UnsupportedOperationError
from ..ir.builder import Builder, fit
from ..ir.clone import clone_block
from ..ir.control import free_values
from ..ir.core import Block, Function, ListType, Op, Value
from ..stages import stage


@stage("forward")
def jvp_function(fn: Function, wrt: Sequence[int], name: str | None = None) -> Function:
    body = Block(args=[Value(a.type, a.hint) for a in fn.args])
    tangents = {id(body.args[i]): Value(body.args[i].type, "t" + (body.args[i].hint or ""))
                for i in wrt}
    b = Builder(body)
    vmap = {id(a): n for a, n in zip(fn.args, body.args)}
    _jvp_ops(b, fn.body.ops, vmap, tangents)
    outs = [vmap.get(id(v), v) for v in fn.outputs]
    touts = [_tangent_out(b, tangents.get(id(o)), o) for o in outs]
    body.args.extend(tangents[id(body.args[i])] for i in wrt)
    body.results = outs + touts
    return Function(name or f"{fn.name}_jvp", body, fn.loc)


def _jvp_ops(b, ops, vmap: dict, tangents: dict) -> None:
    """Copy ``ops`` into ``b`` (``vmap``: old value id -> new value), each followed by
    its tangent; ``tangents`` maps new value ids to their tangents."""
    for op in ops:
        if op.regions and _carries_tangent(op, vmap, tangents):
            rule = STRUCTURAL_JVP.get(op.prim)
            if rule is None:
                raise UnsupportedOperationError(
                    f"forward mode (jvp, jacfwd) does not go through {_what(op)}", op.loc,
                    "use vjp or jacrev")
            with b.at(op.loc):
                rule(b, op, vmap, tangents)
            continue
        new_op = _clone_op(b, op, vmap)
        if not op.regions:
            _push_tangent(b, new_op, tangents)


def _what(op) -> str:
    rule = op.params.get("rule")
    return repr(rule) if rule is not None else f"'{op.prim}'"


def _carries_tangent(op, vmap, tangents) -> bool:
    return any(id(vmap.get(id(v), v)) in tangents for v in [*op.inputs, *free_values(op)])


def _clone_op(b, op, vmap):
    clone_block(b, Block(ops=[op], results=[]), vmap)
    return b.block.ops[-1]


def _push_tangent(b, op, tangents: dict) -> None:
    ins = tuple(tangents.get(id(v)) for v in op.inputs)
    if all(t is None for t in ins):
        return
    prim = rules.get(op.prim)
    if prim.nondiff:
        return
    if prim.jvp is None:
        raise UnsupportedOperationError(
            f"forward mode (jvp, jacfwd) needs a jvp rule for '{op.prim}', which has none", op.loc,
            "register one with ad_compiler.primitive(..., jvp=...), or use vjp or jacrev")
    with b.at(op.loc):
        t = prim.jvp(b, ins, op.result, *op.inputs, **op.params)
    if t is not None:
        tangents[id(op.result)] = t


# -- structured ops: values and tangents in one sweep ---------------------------------

def _jvp_if(b, op, vmap, tangents) -> None:
    """An ``if`` whose branches also yield the tangents of its results (zeros in a
    branch where a result does not vary)."""
    cond = vmap.get(id(op.inputs[0]), op.inputs[0])
    built = []
    for region in op.regions:
        block = Block()
        with b.inside(block):
            _jvp_ops(b, region.ops, vmap, tangents)
        built.append((block, [vmap.get(id(v), v) for v in region.results]))
    varying = [k for k in range(len(op.results))
               if any(id(outs[k]) in tangents for _, outs in built)]
    for block, outs in built:
        with b.inside(block):
            block.results = outs + [_tangent_out(b, tangents.get(id(outs[k])), outs[k])
                                    for k in varying]
    results = [Value(r.type, r.hint) for r in op.results]
    tresults = [Value(results[k].type, _tname(results[k])) for k in varying]
    b.add_op(Op("if", [cond], dict(op.params), results + tresults, [blk for blk, _ in built],
                op.loc))
    vmap.update({id(r): nr for r, nr in zip(op.results, results)})
    tangents.update({id(results[k]): t for k, t in zip(varying, tresults)})


def _jvp_loop(b, op, vmap, tangents) -> None:
    """A ``for``/``while`` carrying the tangents of its carried values (those that
    vary: found by building the body until the set is stable) and stacking the
    tangents of its stacked values."""
    k = op.params["n_carried"]
    counted = op.prim == "for"
    head = [vmap.get(id(op.inputs[0]), op.inputs[0])] if counted else []
    init = [vmap.get(id(v), v) for v in op.inputs[len(head):]]
    body = op.regions[-1]
    active = [j for j in range(k) if id(init[j]) in tangents]
    while True:
        block, outs, local_t = _loop_body(b, body, vmap, tangents, active, k, counted)
        grown = sorted(set(active) | {j for j in range(k) if id(outs[j]) in local_t})
        if grown == active:
            break
        active = grown
    stacked = [s for s in range(len(outs) - k) if id(outs[k + s]) in local_t]
    with b.inside(block):
        block.results = (outs[:k] + [_tangent_out(b, local_t.get(id(outs[j])), outs[j])
                                     for j in active]
                         + outs[k:] + [_tangent_out(b, local_t[id(outs[k + s])], outs[k + s])
                                       for s in stacked])
    init_t = [tangents[id(init[j])] if id(init[j]) in tangents
              else _tangent_out(b, None, init[j]) for j in active]
    regions = [block]
    if not counted:
        regions.insert(0, _loop_cond(b, op.regions[0], vmap, block.args))
    carried = [Value(r.type, r.hint) for r in op.results[:k]]
    carried_t = [Value(carried[j].type, _tname(carried[j])) for j in active]
    lists = [Value(r.type, r.hint) for r in op.results[k:]]
    lists_t = [Value(lists[s].type, _tname(lists[s])) for s in stacked]
    params = dict(op.params, n_carried=k + len(active))
    b.add_op(Op(op.prim, head + init + init_t, params, carried + carried_t + lists + lists_t,
                regions, op.loc))
    vmap.update({id(r): nr for r, nr in zip(op.results, carried + lists)})
    tangents.update({id(carried[j]): t for j, t in zip(active, carried_t)})
    tangents.update({id(lists[s]): t for s, t in zip(stacked, lists_t)})


def _loop_body(b, body, vmap, tangents, active, k, counted):
    """The body copied with tangent arguments for the ``active`` carried values:
    (block, the values it yields, its tangent map)."""
    block = Block(args=[Value(a.type, a.hint) for a in body.args])
    first = 1 if counted else 0
    targs = [Value(block.args[first + j].type, _tname(block.args[first + j])) for j in active]
    block.args.extend(targs)
    local = dict(vmap)
    local.update({id(a): na for a, na in zip(body.args, block.args)})
    local_t = dict(tangents)
    local_t.update({id(block.args[first + j]): t for j, t in zip(active, targs)})
    with b.inside(block):
        _jvp_ops(b, body.ops, local, local_t)
    return block, [local.get(id(v), v) for v in body.results], local_t


def _loop_cond(b, cond, vmap, body_args) -> Block:
    """A ``while`` condition taking the carried values and their tangents (it reads
    only the values)."""
    block = Block(args=[Value(a.type, a.hint) for a in body_args])
    local = dict(vmap)
    local.update({id(a): na for a, na in zip(cond.args, block.args)})
    with b.inside(block):
        block.results = clone_block(b, cond, local)
    return block


def _tname(v: Value) -> str:
    return "t" + (v.hint or "v")


STRUCTURAL_JVP = {"if": _jvp_if, "for": _jvp_loop, "while": _jvp_loop}


def _tangent_out(b, t, out: Value) -> Value:
    if t is None:
        zeros = "list_zeros" if isinstance(out.type, ListType) else "zeros_like"
        return b.emit(zeros, out, hint="t" + (out.hint or "out"))
    return fit(b, t, out.type) if t.type != out.type else t
