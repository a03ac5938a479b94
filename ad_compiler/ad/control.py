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

from . import rules
from .activity import useful_values, varied_values
from .reverse import (STRUCTURAL_VJP, accumulate, add_cotangents, backprop_block, merge_into,
                      zero_cotangent)
from ..ir import dims
from ..ir.builder import fit
from ..ir.clone import clone_block
from ..ir.control import INT, build_for, build_if, free_values
from ..ir.core import AType, Block, ListType, Op, Value
from ..ir.names import adjoint_hint


def _float(v: Value) -> bool:
    """Whether ``v`` has a cotangent: a float array or number, or a list of them (of
    lists of them: the tape of a list cotangent a loop carries)."""
    t = v.type
    while isinstance(t, ListType):
        t = t.elem
    return isinstance(t, AType) and t.dtype.kind in "fc"


def _zeros(b, v: Value) -> Value:
    if v.type.weak:  # a Python number's cotangent stays a Python float
        return b.const(0.0, hint=adjoint_hint(v))
    return zero_cotangent(b, v)


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
    if isinstance(v.type, ListType):
        return ct
    if not v.type.weak:
        return fit(b, ct, v.type)
    if ct.type.weak:
        return ct if ct.type.dtype.kind == "f" else b.pyfloat(ct)
    return b.pyfloat(fit(b, ct, AType((), ct.type.dtype)))


def _unchecked(block: Block) -> None:
    """Mark the recomputed calls that raise where Python raises (``math.sqrt``) as
    recomputations: the forward already made them, an unused copy may be dropped."""
    for op in block.walk():
        prim = rules.PRIMITIVES.get(op.prim)
        if prim is not None and prim.raises:
            op.params = {**op.params, "checked": False}


def _replay(b, block: Block, vmap: dict, seeds: list, targets: list, info=None) -> dict:
    """Recompute ``block`` into ``b`` (with ``vmap`` for its args), then back-propagate
    ``seeds`` (one cotangent or None per yield) to its args and ``targets``. Returns the
    cotangent map (by replayed value); ``info``,
    if given, receives the replayed ops and the map from forward to replayed values."""
    start = len(b.block.ops)
    outs = clone_block(b, block, vmap)
    replayed = Block(ops=b.block.ops[start:])
    _unchecked(replayed)
    if info is not None:
        info.update(ops=list(replayed.ops), vmap=vmap)
    cts: dict = {}
    for out, ct in zip(outs, seeds):
        if ct is not None:
            accumulate(b, cts, out, ct)
    # a target is an outer value, or a value of ``block`` (then its replayed copy)
    sources = [vmap[id(a)] for a in block.args] + [vmap.get(id(t), t) for t in targets]
    active = varied_values(replayed, {id(v) for v in sources}) & useful_values(
        replayed, [o for o, ct in zip(outs, seeds) if ct is not None])
    active |= {id(v) for v in sources}
    backprop_block(b, replayed, cts, active)
    return cts


# -- if ---------------------------------------------------------------------------

def vjp_if(b, op, cts, active) -> None:
    seeds = [cts.get(id(r)) for r in op.results]
    targets = [v for v in free_values(op) if id(v) in active and _float(v)]
    if not targets or all(s is None for s in seeds):
        return

    def branch(region):
        def emit(b):
            got = _replay(b, region, {}, seeds, targets)
            return [_as_ct(b, got.get(id(t)), t) for t in targets]
        return emit
    with b.at(op.loc):
        new = build_if(b, op.inputs[0], branch(op.regions[0]), branch(op.regions[1]),
                       hints=[adjoint_hint(t) for t in targets])
    for t, ct in zip(targets, new):
        accumulate(b, cts, t, ct)


# -- loops ------------------------------------------------------------------------

def _tape(op, region, args) -> list:
    """Extend the forward loop ``op`` to stack ``args`` (values of its body); returns
    the list results, in the order of ``args``. A value the loop stacks already (a
    loop differentiated again) keeps its one list."""
    k = op.params["n_carried"]
    lists = []
    for a in args:
        have = [j for j in range(k, len(region.results)) if region.results[j] is a]
        if not have:
            region.results.append(a)
            op.results.append(Value(ListType(a.type), (a.hint or "v") + "_tape", op))
        lists.append(op.results[have[0] if have else -1])
    return lists


def _count_iterations(b, op) -> tuple[Value, Value]:
    """Give a forward ``while`` an iteration counter (a carried value, its position in
    the op's ``counter`` param), unless it has one (a loop differentiated again).

    Returns the counter's final value and the body's counter argument. The op being
    differentiated always lies in the block ``b`` is building (the function body, or
    the region it is being replayed into), so the counter's start goes just before it.
    """
    cond, body = op.regions
    if "counter" in op.params:
        c = op.params["counter"]
        return op.results[c], body.args[c]
    k = op.params["n_carried"]
    cond.args.append(Value(INT, "n_iter"))
    arg = Value(INT, "n_iter")
    body.args.append(arg)
    with b.inside(body), b.at(op.loc):
        body.results.insert(k, b.add(arg, b.const(1), hint="n_iter"))
    start = Op("const", [], {"value": 0}, [Value(INT, "n_iter")], [], op.loc)
    start.results[0].producer = start
    b.block.ops.insert(b.block.ops.index(op), start)
    op.inputs.append(start.results[0])
    count = Value(INT, "n_iter", op)
    op.results.insert(k, count)
    op.params["n_carried"] = k + 1
    op.params["counter"] = k
    return count, arg


def trip_count(op) -> Value | None:
    """The value that counts the iterations of the loop ``op`` (the length of each list
    it stacks), if the IR says: a ``for``'s bound, a ``while``'s counter."""
    if op.prim == "for":
        return op.inputs[0]
    if op.prim == "while" and "counter" in op.params:
        return op.results[op.params["counter"]]
    return None


def vjp_for(b, op, cts, active) -> None:
    (region,) = op.regions
    _loop_vjp(b, op, cts, active, n=op.inputs[0], init=op.inputs[1:], region=region,
              index=region.args[0], reverse=not op.params.get("reverse", False))


def vjp_while(b, op, cts, active) -> None:
    count, counter = _count_iterations(b, op)
    _loop_vjp(b, op, cts, active, n=count, init=list(op.inputs), region=op.regions[1],
              index=counter, reverse=True)


def _loop_vjp(b, op, cts, active, *, n, init, region, index, reverse) -> None:
    """The backward sweep of the loop ``op``: a ``for`` over its iterations, last first.

    It carries the cotangents of the carried values and accumulates those of the
    values the body captures. A list ``ys`` the body reads only as ``ys[i]`` in its
    iteration ``i`` (a tape the backward sweep of another loop reads), with as many
    items as the loop has iterations, gets its cotangent stacked instead: item ``i``
    is the cotangent of what iteration ``i`` read.
    """
    k = op.params["n_carried"]
    body_args = [a for a in region.args if a is not index]
    # the carried slot (in the op's results, its initial values and the body's yields)
    # of each body argument: a for's index comes first; a while's counter, added when
    # the loop was first differentiated, may sit before slots added later (a tangent)
    first = 1 if op.prim == "for" else 0
    slot = [p - first for p, a in enumerate(region.args) if a is not index]
    finals, user_lists = op.results[:k], op.results[k:]
    seeds = [cts.get(id(r)) for r in finals]
    list_seeds = [cts.get(id(r)) for r in user_lists]
    if all(s is None for s in seeds + list_seeds):
        return
    listed = _item_reads(op, region, index, n, active)
    captures = [v for v in free_values(op)
                if id(v) in active and _float(v) and id(v) not in listed]
    reads = [r for group in listed.values() for r in group[1]]
    carried = [j for j, a in enumerate(body_args) if _float(a)]
    n_yields = len(region.results)
    tapes = _tape(op, region, body_args)
    info: dict = {}
    with b.at(op.loc):
        ct_init = [_as_ct(b, seeds[slot[j]], finals[slot[j]]) for j in carried]
        acc_init = [_zeros(b, v) for v in captures]

        def body(b, i, state):
            ct_carried, acc = state[:len(carried)], state[len(carried):]
            vmap = {id(a): b.list_get(t, i, hint=a.hint) for a, t in zip(body_args, tapes)}
            vmap[id(index)] = i
            yield_seeds = [None] * n_yields
            for pos, j in enumerate(carried):
                yield_seeds[slot[j]] = ct_carried[pos]
            for pos, ct in enumerate(list_seeds):
                if ct is not None:
                    hint = adjoint_hint(region.results[k + pos])
                    yield_seeds[k + pos] = b.list_get(ct, i, hint=hint)
            got = _replay(b, Block(args=list(region.args), ops=region.ops,
                                   results=region.results), vmap, yield_seeds,
                          captures + reads, info)
            # a carried value the body overwrites without reading gets zeros: made like
            # the loop's initial value (the forward loop's own argument is out of scope)
            new_ct = [_as_ct(b, got.get(id(vmap[id(body_args[j])])), body_args[j],
                             init[slot[j]]) for j in carried]
            new_acc = [a if got.get(id(c)) is None else _add_into(b, a, got[id(c)], c)
                       for a, c in zip(acc, captures)]
            items = [_item_ct(b, got, vmap, group) for _, group in listed.values()]
            return new_ct + new_acc, items
        # the backward loop counts the user's iterations: it keeps the loop variable's name
        user_index = index.hint if index.hint not in (None, "n_iter", "_") else "i"
        out = build_for(b, n, ct_init + acc_init, body, reverse=reverse, index_hint=user_index,
                        hints=[adjoint_hint(body_args[j]) for j in carried]
                        + [adjoint_hint(c) for c in captures])
    if out:
        _tape_instead_of_recompute(op, region, out[0].producer.regions[0], info)
    for pos, j in enumerate(carried):
        accumulate(b, cts, init[slot[j]], out[pos])
    state = len(carried) + len(captures)
    for c, ct in zip(captures, out[len(carried):state]):
        accumulate(b, cts, c, ct)
    for (lst, _), ct in zip(listed.values(), out[state:]):
        ct.hint = adjoint_hint(lst)
        accumulate(b, cts, lst, ct)


def _item_reads(op, region, index, n, active) -> dict:
    """``{id(ys): (ys, [reads])}`` for the lists captured by the loop ``op`` whose every
    use is a ``list_get(ys, i)`` at the top of its body with its own index ``i``, and
    that have as many items as the loop has iterations."""
    found = {}
    for v in free_values(op):
        if id(v) not in active or not isinstance(v.type, ListType) or not _float(v) \
                or not _same_count(list_length(v), n):
            continue
        reads = [o.result for o in region.ops if o.prim == "list_get" and o.inputs[0] is v
                 and o.inputs[1] is index]
        if reads and len(reads) == _uses_of(op, v):
            found[id(v)] = (v, reads)
    return found


def list_length(v: Value):
    """The length of the list ``v`` when the IR says: a Value (the trip count of the loop
    that stacked it), an int (a list of known length), or None."""
    op = v.producer
    if op is None:
        return None
    if op.prim in ("for", "while"):
        return trip_count(op) if op.results.index(v) >= op.params["n_carried"] else None
    if op.prim == "unstack":
        return op.inputs[0].type.shape[op.params["axis"]]
    if op.prim in ("list_zeros", "list_add_at", "list_add"):
        return list_length(op.inputs[0])
    return None


def _same_count(length, n: Value) -> bool:
    """Whether a list's ``length`` is the trip count ``n`` of a loop."""
    if length is None or length is n:
        return length is n
    return _static_int(length) is not None and _static_int(length) == _static_int(n)


def _static_int(v):
    if isinstance(v, int):
        return v
    op = v.producer
    if op is not None and op.prim == "const" and type(op.params["value"]) is int:
        return op.params["value"]
    return None


def _uses_of(op, v: Value) -> int:
    """How many times the regions of ``op`` use ``v`` (as an input or a yield)."""
    count = 0
    for region in op.regions:
        count += sum(r is v for r in region.results)
        for inner in region.walk():
            count += sum(x is v for x in inner.inputs)
            count += sum(r is v for sub in inner.regions for r in sub.results)
    return count


def _item_ct(b, got, vmap, reads) -> Value:
    """The cotangent of this iteration's item of a list: the sum over its reads."""
    total = None
    for r in reads:
        ct = got.get(id(vmap[id(r)]))
        if ct is not None:
            ct = _as_ct(b, ct, r)
            total = ct if total is None else add_cotangents(b, total, ct)
    return _as_ct(b, total, reads[0], vmap[id(reads[0])])


def _add_into(b, acc, ct, v):
    """``acc + ct`` for an accumulated cotangent of ``v``; a slice's adjoint is added
    into ``acc`` itself (rules.ACCUMULATE_INTO), not into a fresh zero array."""
    merged = merge_into(b, acc, ct)
    return merged if merged is not None else add_cotangents(b, acc, _as_ct(b, ct, v),
                                                             hint=acc.hint)


def _tape_instead_of_recompute(fwd_op, fwd_region, bwd_region, info) -> None:
    """Let the forward loop save each value the backward sweep reads from its replay,
    unless recomputing it is free or cheaper than the tape.

    The backward body first recomputes the iteration; every recomputed value that a
    VJP op then uses is instead stacked by the forward loop and read back with
    ``list_get`` (lists hold references: nothing is copied), except the values
    :func:`_recomputed` keeps: those that are the same in every iteration (LICM
    then computes them once, before the backward loop) and those that cheap ops
    make from the iteration's inputs and its counter. The recomputation left
    unused is removed by DCE, so the sweep stores only what it needs.
    """
    replayed = {id(o) for o in info["ops"]}
    forward_of = {id(info["vmap"][id(r)]): r for fop in fwd_region.ops for r in fop.results
                  if id(r) in info["vmap"]}
    needed = _used_outside(bwd_region, replayed)
    recomputed = _recomputed(info["ops"], {id(info["vmap"][id(a)]) for a in fwd_region.args})
    index = bwd_region.args[0]
    reads, taped = [], {}
    for rop in info["ops"]:
        if rop.prim in ("const", "list_get"):
            continue
        for r in rop.results:
            if id(r) in needed and id(r) in forward_of and id(r) not in recomputed:
                got = _read_back(fwd_op, fwd_region, forward_of[id(r)], r, index, fwd_op.loc)
                reads.extend(got)
                taped[id(r)] = got[-1].results[0]
    _substitute(bwd_region, replayed, taped)  # once for all: a walk per value is quadratic
    bwd_region.ops[:0] = reads


def _read_back(fwd_op, fwd_region, value, like, index, loc) -> list:
    """The ops that read ``value`` (stacked by the forward loop) in iteration ``index``
    of the backward sweep, as a value of ``like``'s type; the last one gives it.

    A float64 number the forward body converts to a Python float (``float(np.exp(x))``)
    is stacked as that Python float: the forward's NumPy scalar
    is then used once only, and the sweep's arithmetic on it can stay on Python floats
    (passes/pyfloats.py).
    """
    twin = next((op.result for op in fwd_region.ops if op.prim == "pyfloat"
                 and op.inputs[0] is value), None) if like.type == _F64_SCALAR else None
    (tape,) = _tape(fwd_op, fwd_region, [value if twin is None else twin])
    read = _op("list_get", [tape, index], {}, (like if twin is None else twin).type,
               like.hint, loc)
    if twin is None:
        return [read]
    return [read, _op("cast", [read.results[0]], {"dtype": _F64_SCALAR.dtype}, like.type,
                      like.hint, loc)]


_F64_SCALAR = AType((), np.dtype(np.float64))


def _op(prim, inputs, params, type_, hint, loc) -> Op:
    op = Op(prim, inputs, params, [Value(type_, hint)], [], loc)
    op.results[0].producer = op
    return op


#: ops whose result is cheaper to recompute than to stack and read back: arithmetic on
#: Python numbers (a few tens of ns) and basic indexing (a view: ``xs[t]``)
_CHEAP_ON_NUMBERS = frozenset({"add", "sub", "mul", "neg", "square"})
_INVARIANT, _CHEAP = "invariant", "cheap"


def _recomputed(ops, varying: set) -> set:
    """The ids of the results of the replayed ``ops`` the backward sweep recomputes.

    ``varying`` holds the replayed iteration's inputs (its carried values and its
    counter). A value is recomputed when everything it is computed from in the
    iteration is *invariant* (made of values from outside the loop: LICM hoists it)
    or made by cheap ops (``_CHEAP_ON_NUMBERS`` on Python numbers, ``getitem``)
    from the iteration's inputs. Ops with regions or effects are never recomputed.
    """
    state: dict = dict.fromkeys(varying, _CHEAP)
    for op in ops:
        kinds = [state.get(id(v), _INVARIANT) for v in op.inputs]  # else from outside
        if op.regions or rules.has_effect(op) or None in kinds:
            kind = None
        elif all(k == _INVARIANT for k in kinds):
            kind = _INVARIANT
        else:
            kind = _CHEAP if _cheap(op) else None
        state.update((id(r), kind) for r in op.results)
    return {key for key, kind in state.items() if kind is not None}


def _cheap(op) -> bool:
    if op.prim == "getitem":
        return True
    return op.prim in _CHEAP_ON_NUMBERS and all(r.type.weak for r in op.results)
def _used_outside(region: Block, replayed: set) -> set:
    used = {id(v) for v in region.results}
    for op in region.ops:
        if id(op) not in replayed:
            used.update(id(v) for v in op.inputs)
            for inner in op.regions:
                used.update(id(v) for v in free_values(op))
    return used


def _substitute(block: Block, skip: set, new: dict) -> None:
    """Use ``new[id(v)]`` for each value ``v`` it maps in ``block`` (and its regions),
    except in ops in ``skip``."""
    block.results = [new.get(id(v), v) for v in block.results]
    for op in block.ops:
        if id(op) in skip:
            continue
        op.inputs = [new.get(id(v), v) for v in op.inputs]
        for region in op.regions:
            _substitute(region, skip, new)


STRUCTURAL_VJP.update({"if": vjp_if, "for": vjp_for, "while": vjp_while})
