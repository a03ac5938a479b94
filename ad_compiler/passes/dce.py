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

from ..ad.rules import must_run
from ..ir.clone import copy_function
from ..ir.core import Block, Function


def dce(fn: Function) -> Function:
    new, _ = copy_function(fn)
    _sweep(new.body, set())
    return new


def _sweep(block: Block, live: set) -> None:
    """Remove ``block``'s dead ops in place; add the values it uses to ``live``."""
    live.update(id(v) for v in block.results)
    kept = []
    for op in reversed(block.ops):
        if not any(id(r) in live for r in op.results) and not must_run(op):
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
