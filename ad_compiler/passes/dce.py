"""Dead-code elimination: drop ops none of whose results is used.

All ops are pure, structured ones included, so an op is dead when no later op, no
region yield and no function output uses its results. A loop's stacked outputs
(lists) that nothing reads are dropped with the yields that fed them, and then
whatever computed only those. Before/after::

    %a = sin %x          # dead: nothing uses %a
    %b = cos %x
    return %b            ->   %b = cos %x ; return %b
"""
from __future__ import annotations

from ..ad.rules import has_effect
from ..ir.clone import copy_function
from ..ir.core import Block, Function


def dce(fn: Function) -> Function:
    if not _removes(fn.body, set()):
        return fn  # nothing dead: no copy
    if any(op.regions for op in fn.body.ops):
        new, _ = copy_function(fn)  # the sweep changes loops and regions: a copy
    else:  # straight-line code: the sweep only drops ops from the body's list
        new = Function(fn.name, Block(list(fn.args), list(fn.body.ops),
                                      list(fn.body.results)), fn.loc)
    _sweep(new.body, set())
    return new


def _removes(block: Block, live: set) -> bool:
    """Whether :func:`_sweep` would remove anything from ``block`` (it adds the values
    ``block`` uses to ``live``, as the sweep does while it removes nothing)."""
    live.update(id(v) for v in block.results)
    for op in reversed(block.ops):
        if not any(id(r) in live for r in op.results) and not has_effect(op):
            return True
        if op.prim in ("for", "while") and any(
                id(r) not in live for r in op.results[op.params["n_carried"]:]):
            return True
        if any(_removes(region, live) for region in reversed(op.regions)):
            return True
        live.update(id(v) for v in op.inputs)
    return False


def _sweep(block: Block, live: set) -> None:
    """Remove ``block``'s dead ops in place; add the values it uses to ``live``."""
    live.update(id(v) for v in block.results)
    kept = []
    for op in reversed(block.ops):
        if not any(id(r) in live for r in op.results) and not has_effect(op):
            continue
        _drop_unused_lists(op, live)
        for region in reversed(op.regions):
            _sweep(region, live)
        live.update(id(v) for v in op.inputs)
        kept.append(op)
    block.ops = kept[::-1]


def _drop_unused_lists(op, live: set) -> None:
    """Forget the stacked outputs of a loop that nothing reads."""
    if op.prim not in ("for", "while"):
        return
    body = op.regions[-1]
    for j in range(len(op.results) - 1, op.params["n_carried"] - 1, -1):
        if id(op.results[j]) not in live:
            del op.results[j]
            del body.results[j]
