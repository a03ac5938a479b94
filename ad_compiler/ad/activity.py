"""Activity analysis: which values need an adjoint.

A value is *varied* when it depends on a differentiated input through
differentiable ops, and *useful* when a seeded output depends on it. Only values
that are both get cotangents, so the adjoint does no work for constants,
shapes, integer bookkeeping or outputs that are not differentiated
(the adjoint computes only what a gradient needs).
"""
from __future__ import annotations

from . import rules
from ..ir.control import free_values
from ..ir.core import Block


def _uses(op):
    """Values ``op`` depends on: its inputs and, for structured ops, its captures."""
    return list(op.inputs) + (free_values(op) if op.regions else [])


def varied_values(block: Block, seeds: set[int]) -> set[int]:
    """Ids of values that depend differentiably on the values in ``seeds``."""
    varied = set(seeds)
    for op in block.ops:
        prim = rules.PRIMITIVES.get(op.prim)
        if prim is not None and prim.nondiff:
            continue
        if any(id(v) in varied for v in _uses(op)):
            varied.update(id(r) for r in op.results)
    return varied


def useful_values(block: Block, outputs) -> set[int]:
    """Ids of values that some value in ``outputs`` depends on."""
    useful = {id(v) for v in outputs}
    for op in reversed(block.ops):
        if any(id(r) in useful for r in op.results):
            useful.update(id(v) for v in _uses(op))
    return useful


def active_values(block: Block, wrt, seeded_outputs) -> set[int]:
    return varied_values(block, {id(v) for v in wrt}) & useful_values(block, seeded_outputs)
