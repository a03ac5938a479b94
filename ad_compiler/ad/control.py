"""Reverse mode through structured control flow: ``if``, ``for`` and ``while``.

``if`` keeps only its condition: the backward op is an ``if`` on the same
condition whose branches recompute their forward ops and back-propagate through
them, yielding cotangents for the outer values the branches use.

A loop's adjoint needs, per iteration, what the iteration received: the forward
loop is extended to stack its carried values at the start of every iteration
(and a ``while`` to count its iterations); the backward sweep is a reversed
``for`` over the same iterations that reads that tape, recomputes the iteration
and back-propagates through it, carrying the cotangents of the carried values and
accumulating those of the values the body captures. Only the per-iteration inputs
are stored (the adjoint keeps only what it needs); which recomputed values DCE keeps is decided by
the usual passes.
"""
from __future__ import annotations

import numpy as np

from .activity import useful_values, varied_values
from .reverse import STRUCTURAL_VJP, accumulate, backprop_block, merge_into
from ..ir import dims
from ..ir.builder import fit
from ..ir.clone import clone_block
from ..ir.control import INT, build_for, build_if, free_values
from ..ir.core import AType, Block, ListType, Op, Value


def _float(v: Value) -> bool:
    return isinstance(v.type, AType) and v.type.dtype.kind in "fc"


def _zeros(b, v: Value) -> Value:
    if v.type.weak:  # a Python number's cotangent stays a Python float
        return b.const(0.0, hint="d" + (v.hint or "v"))
    return b.emit("zeros_like", v, hint="d" + (v.hint or "v"))


def _as_ct(b, ct, v: Value, like: Value | None = None) -> Value:
    """``ct`` with exactly the type branches and iterations agree on for ``v``'s
    cotangent: ``v``'s own type, a Python float for a Python number. Zeros are made
    like ``like`` (a value in scope of the same type) when ``v`` itself is not."""
    if v.type.dynamic:  # its length may change from one iteration to the next
        raise dims.refused(f"a loop or branch carrying '{v.hint or 'a value'}'", [v.type],
                           b.loc, "may change from one iteration to the next, which the "
                           "adjoint does not follow")
    if ct is None:
        return _zeros(b, like if like is not None else v)
    if not v.type.weak:
        return fit(b, ct, v.type)
    if ct.type.weak:
        return ct if ct.type.dtype.kind == "f" else b.pyfloat(ct)
    return b.pyfloat(fit(b, ct, AType((), ct.type.dtype)))


def _replay(b, block: Block, vmap: dict, seeds: list, targets: list, info=None) -> dict:
    """Recompute ``block`` into ``b`` (with ``vmap`` for its args), then back-propagate
    ``seeds`` (one cotangent or None per yield). Returns the cotangent map; ``info``,
    if given, receives the replayed ops and the map from forward to replayed values."""
    start = len(b.block.ops)
    outs = clone_block(b, block, vmap)
    replayed = Block(ops=b.block.ops[start:])
    if info is not None:
        info.update(ops=list(replayed.ops), vmap=vmap)
    cts: dict = {}
    for out, ct in zip(outs, seeds):
        if ct is not None:
            accumulate(b, cts, out, ct)
    sources = [vmap[id(a)] for a in block.args] + list(targets)
    active = varied_values(replayed, {id(v) for v in sources}) & useful_values(
        replayed, [o for o, ct in zip(outs, seeds) if ct is not None])
    active |= {id(v) for v in sources}
    backprop_block(b, replayed, cts, active)
    return cts


# -- if ---------------------------------------------------------------------------

def _active_lists(op, active) -> list:
    """The lists built by loops that ``op``'s regions read and that need a gradient:
    back-propagating into them reaches ``list_get``'s VJP, which refuses (no cotangent
    of a list is ever silently dropped)."""
    return [v for v in free_values(op) if id(v) in active and isinstance(v.type, ListType)]


def vjp_if(b, op, cts, active) -> None:
    seeds = [cts.get(id(r)) for r in op.results]
    targets = [v for v in free_values(op) if id(v) in active and _float(v)]
    lists = _active_lists(op, active)
    if not (targets or lists) or all(s is None for s in seeds):
        return

    def branch(region):
        def emit(b):
            got = _replay(b, region, {}, seeds, targets + lists)
            return [_as_ct(b, got.get(id(t)), t) for t in targets]
        return emit
    with b.at(op.loc):
        new = build_if(b, op.inputs[0], branch(op.regions[0]), branch(op.regions[1]),
                       hints=["d" + (t.hint or "v") for t in targets])
    for t, ct in zip(targets, new):
        accumulate(b, cts, t, ct)


# -- loops ------------------------------------------------------------------------

def _tape(op, region, args) -> list:
    """Extend the forward loop ``op`` to stack ``args`` (its body's per-iteration
    inputs); returns the new list results, in the order of ``args``."""
    region.results.extend(args)
    lists = [Value(ListType(a.type), (a.hint or "v") + "_tape", op) for a in args]
    op.results.extend(lists)
    return lists


def _count_iterations(b, op) -> tuple[Value, Value]:
    """Give a forward ``while`` an iteration counter (its last carried value).

    Returns the counter's final value and the body's counter argument. The op being
    differentiated always lies in the block ``b`` is building (the function body, or
    the region it is being replayed into), so the counter's start goes just before it.
    """
    k = op.params["n_carried"]
    cond, body = op.regions
    cond.args.append(Value(INT, "n_iter"))
    arg = Value(INT, "n_iter")
    body.args.append(arg)
    with b.inside(body):
        body.results.insert(k, b.add(arg, b.const(1), hint="n_iter"))
    start = Op("const", [], {"value": 0}, [Value(INT, "n_iter")], [], op.loc)
    start.results[0].producer = start
    b.block.ops.insert(b.block.ops.index(op), start)
    op.inputs.append(start.results[0])
    count = Value(INT, "n_iter", op)
    op.results.insert(k, count)
    op.params["n_carried"] = k + 1
    return count, arg


def vjp_for(b, op, cts, active) -> None:
    k = op.params["n_carried"]
    (region,) = op.regions
    _loop_vjp(b, op, cts, active, n=op.inputs[0], init=op.inputs[1:1 + k], region=region,
              body_args=region.args[1:], index=region.args[0], k=k,
              reverse=not op.params.get("reverse", False))


def vjp_while(b, op, cts, active) -> None:
    k = op.params["n_carried"]
    cond, body = op.regions
    init = list(op.inputs)
    count, counter = _count_iterations(b, op)
    _loop_vjp(b, op, cts, active, n=count, init=init, region=body,
              body_args=body.args[:k], index=counter, k=k, reverse=True, counter=True)


def _loop_vjp(b, op, cts, active, *, n, init, region, body_args, index, k, reverse,
              counter=False) -> None:
    finals = op.results[:k]
    user_lists = [r for r in op.results[k + counter:] if isinstance(r.type, ListType)]
    user_yields = region.results[k + counter:k + counter + len(user_lists)]
    seeds = [cts.get(id(r)) for r in finals]
    list_seeds = [cts.get(id(r)) for r in user_lists]
    if all(s is None for s in seeds + list_seeds):
        return
    captures = [v for v in free_values(op) if id(v) in active and _float(v)]
    lists = _active_lists(op, active)
    carried = [j for j, a in enumerate(body_args) if _float(a)]
    tapes = _tape(op, region, list(body_args))
    info: dict = {}
    with b.at(op.loc):
        ct_init = [_as_ct(b, seeds[j], finals[j]) for j in carried]
        acc_init = [_zeros(b, v) for v in captures]

        def body(b, i, state):
            ct_carried, acc = state[:len(carried)], state[len(carried):]
            vmap = {id(a): b.list_get(t, i, hint=a.hint) for a, t in zip(body_args, tapes)}
            if index is not None:
                vmap[id(index)] = i
            yield_seeds = [None] * len(region.results)
            for pos, j in enumerate(carried):
                yield_seeds[j] = ct_carried[pos]
            for pos, (lst, ct) in enumerate(zip(user_lists, list_seeds)):
                if ct is not None:
                    yield_seeds[k + counter + pos] = b.list_get(ct, i)
            got = _replay(b, Block(args=list(body_args) + ([index] if index else []),
                                   ops=region.ops, results=region.results), vmap,
                          yield_seeds[:len(region.results) - len(tapes)], captures + lists,
                          info)
            # a carried value the body overwrites without reading gets zeros: made like
            # the loop's initial value (the forward loop's own argument is out of scope)
            new_ct = [_as_ct(b, got.get(id(vmap[id(body_args[j])])), body_args[j], init[j])
                      for j in carried]
            new_acc = [a if got.get(id(c)) is None else _add_into(b, a, got[id(c)], c)
                       for a, c in zip(acc, captures)]
            return new_ct + new_acc, []
        out = build_for(b, n, ct_init + acc_init, body, reverse=reverse,
                        hints=["d" + (body_args[j].hint or "v") for j in carried]
                        + ["d" + (c.hint or "v") for c in captures])
    if out:
        _tape_instead_of_recompute(op, region, out[0].producer.regions[0], info)
    for pos, j in enumerate(carried):
        accumulate(b, cts, init[j], out[pos])
    for c, ct in zip(captures, out[len(carried):]):
        accumulate(b, cts, c, ct)


def _add_into(b, acc, ct, v):
    """``acc + ct`` for an accumulated cotangent of ``v``; a slice's adjoint is added
    into ``acc`` itself (rules.ACCUMULATE_INTO), not into a fresh zero array."""
    merged = merge_into(b, acc, ct)
    return merged if merged is not None else b.add(acc, _as_ct(b, ct, v))


def _tape_instead_of_recompute(fwd_op, fwd_region, bwd_region, info) -> None:
    """Let the forward loop save each value the backward sweep reads from its replay.

    The backward body first recomputes the iteration; every recomputed value that a
    VJP op then uses is instead stacked by the forward loop and read back with
    ``list_get`` (lists hold references: nothing is copied). The recomputation left
    unused is removed by DCE, so the sweep stores only what it needs.
    """
    replayed = {id(o) for o in info["ops"]}
    forward_of = {id(info["vmap"][id(r)]): r for fop in fwd_region.ops for r in fop.results
                  if id(r) in info["vmap"]}
    needed = _used_outside(bwd_region, replayed)
    index = bwd_region.args[0]
    reads = []
    for rop in info["ops"]:
        if rop.prim in ("const", "list_get"):
            continue
        for r in rop.results:
            if id(r) in needed and id(r) in forward_of:
                (tape,) = _tape(fwd_op, fwd_region, [forward_of[id(r)]])
                read = Op("list_get", [tape, index], {}, [Value(r.type, r.hint)], [], rop.loc)
                read.results[0].producer = read
                reads.append(read)
                _substitute(bwd_region, replayed, r, read.results[0])
    bwd_region.ops[:0] = reads


def _used_outside(region: Block, replayed: set) -> set:
    used = {id(v) for v in region.results}
    for op in region.ops:
        if id(op) not in replayed:
            used.update(id(v) for v in op.inputs)
            for inner in op.regions:
                used.update(id(v) for v in free_values(op))
    return used


def _substitute(block: Block, skip: set, old: Value, new: Value) -> None:
    """Use ``new`` for ``old`` in ``block`` (and its regions), except in ops in ``skip``."""
    block.results = [new if v is old else v for v in block.results]
    for op in block.ops:
        if id(op) in skip:
            continue
        op.inputs = [new if v is old else v for v in op.inputs]
        for region in op.regions:
            _substitute(region, skip, old, new)


STRUCTURAL_VJP.update({"if": vjp_if, "for": vjp_for, "while": vjp_while})
