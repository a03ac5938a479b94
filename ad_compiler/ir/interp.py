"""A reference interpreter for the IR: the oracle that passes and codegen are tested against.

It runs each op with the primitive's ``impl`` (built from the same template that
codegen emits), so generated code and interpreter agree by construction on
primitives and differ only where codegen or a pass is wrong.

Structured ops register an evaluator in :data:`STRUCTURAL_EVAL`:
``evaluator(op, env, run_block) -> list of result values``.
"""
from __future__ import annotations

from typing import Callable

from ..ad import rules
from .core import Block, Function

STRUCTURAL_EVAL: dict[str, Callable] = {}


def run_block(block: Block, env: dict, args=()) -> list:
    """Evaluate ``block`` with ``args`` bound to its arguments; return its yields."""
    for a, v in zip(block.args, args, strict=True):
        env[id(a)] = v
    for op in block.ops:
        if op.prim in STRUCTURAL_EVAL:
            outs = STRUCTURAL_EVAL[op.prim](op, env, run_block)
        else:
            impl = rules.get(op.prim).impl
            outs = [impl(*(env[id(v)] for v in op.inputs), **op.params)]
        for r, v in zip(op.results, outs, strict=True):
            env[id(r)] = v
    return [env[id(v)] for v in block.results]


def interpret(fn: Function, *args) -> list:
    """Run ``fn`` on concrete values; returns the list of its outputs."""
    return run_block(fn.body, {}, args)
