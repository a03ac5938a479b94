"""Loop simplification: carried values that do not need to be carried.

* A carried value the body yields unchanged is the same in every iteration: its
  uses (inside and after the loop) read the initial value instead, so LICM and
  folding can treat it as the invariant it is (the cotangent of a running sum).
* A carried value that nothing after the loop reads and that no useful work in
  the body reads is dead: it is dropped with the ops that only computed it (a
  loss accumulated in a loop whose gradient does not need the loss).

Before/after::

    %s, %h = for %n, %s0, %h0              %h = for %n, %h0
      region 0(%i, %s, %h) {       ->        region 0(%i, %h) {
        %s1 = add %s, ...                      ...
        yield %s1, %h1                         yield %h1
    (and %s unused after the loop)
"""
from __future__ import annotations

from ..ir.clone import copy_function
from ..ir.core import Block, Function

_LOOPS = ("for", "while")


def simplify_loops(fn: Function) -> Function:
    if not any(op.prim in _LOOPS for op in fn.body.walk()):
        return fn  # nothing to simplify: no copy
    new, _ = copy_function(fn)
    _visit(new.body, _all_uses(new.body))
    return new


def _visit(block: Block, used: set) -> None:
    for op in block.ops:
        for region in op.regions:
            _visit(region, used)
        if op.prim in _LOOPS:
            _pass_through(op, block)
            _drop_dead(op, used)


def _parts(op):
    """(first carried input index, carried region args per region, body)."""
    body = op.regions[-1]
    offset = 1 if op.prim == "for" else 0
    arg_lists = [r.args[offset:] for r in op.regions]
    return offset, arg_lists, body


def _pass_through(op, outer: Block) -> None:
    k = op.params["n_carried"]
    offset, arg_lists, body = _parts(op)
    for j in reversed(range(k)):
        if body.results[j] is not arg_lists[-1][j]:
            continue
        init = op.inputs[offset + j]
        mapping = {id(args[j]): init for args in arg_lists}
        mapping[id(op.results[j])] = init
        for region in op.regions:
            _substitute(region, mapping)
        _substitute(outer, mapping)
        _remove_carried(op, j)


def _drop_dead(op, used: set) -> None:
    k = op.params["n_carried"]
    offset, arg_lists, body = _parts(op)
    live = {j for j in range(k) if id(op.results[j]) in used}
    while True:
        needed = _needed_in(op, body, arg_lists, live)
        grown = live | {j for j in range(k) if any(id(a[j]) in needed for a in arg_lists)}
        if grown == live:
            break
        live = grown
    if len(live) == k:
        return
    body.ops = [o for o in body.ops if any(id(r) in needed for r in o.results)]
    for j in reversed(range(k)):
        if j not in live:
            _remove_carried(op, j)


def _needed_in(op, body, arg_lists, live) -> set:
    """Values the loop needs for its live carried values, stacked lists and condition."""
    k = op.params["n_carried"]
    roots = [body.results[j] for j in live] + body.results[k:]
    needed = {id(v) for v in roots}
    for region in op.regions[:-1]:  # a while's condition
        needed |= _all_uses(region)
    for inner in reversed(body.ops):
        if any(id(r) in needed for r in inner.results):
            needed.update(id(v) for v in inner.inputs)
            for region in inner.regions:
                needed |= _all_uses(region)
    return needed


def _remove_carried(op, j: int) -> None:
    offset, arg_lists, body = _parts(op)
    del op.inputs[offset + j]
    for region in op.regions:
        del region.args[offset + j]
    del body.results[j]
    del op.results[j]
    op.params["n_carried"] -= 1
    counter = op.params.get("counter")
    if counter is not None and counter >= j:
        if counter == j:
            del op.params["counter"]
        else:
            op.params["counter"] = counter - 1


def _all_uses(block: Block) -> set:
    """Every value used in ``block``, at any depth: op inputs and what regions yield."""
    uses = {id(v) for v in block.results}
    for op in block.walk():
        uses.update(id(v) for v in op.inputs)
        for region in op.regions:
            uses.update(id(v) for v in region.results)
    return uses


def _substitute(block: Block, mapping: dict) -> None:
    block.results = [mapping.get(id(v), v) for v in block.results]
    for op in block.ops:
        op.inputs = [mapping.get(id(v), v) for v in op.inputs]
        for region in op.regions:
            _substitute(region, mapping)
