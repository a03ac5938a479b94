"""Dead-code elimination: drop ops none of whose results is used.

All primitives are pure, so an op is dead when no later op, no region yield and
no function output uses its results. Before/after::

    %a = sin %x          # dead: nothing uses %a
    %b = cos %x
    return %b            ->   %b = cos %x ; return %b
"""
from __future__ import annotations

from ..ir.core import Block, Function
from .rewrite import rewrite


def _used_in(block: Block, used: set[int]) -> None:
    used.update(id(v) for v in block.results)
    for op in reversed(block.ops):
        if any(id(r) in used for r in op.results):
            used.update(id(v) for v in op.inputs)
            for region in op.regions:
                _used_in(region, used)


def dce(fn: Function) -> Function:
    used: set[int] = set()
    _used_in(fn.body, used)

    def rule(b, op, inputs):
        if any(id(r) in used for r in op.results):
            return None
        return list(op.results)  # dropped: map results to themselves, never referenced
    return rewrite(fn, rule)
