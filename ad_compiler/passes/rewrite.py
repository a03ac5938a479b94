"""The one mechanism behind the local passes: rebuild a function op by op.

``rewrite(fn, rule)`` copies ``fn`` into a fresh Function. For every op, with its
inputs already mapped to new values, ``rule(b, op, inputs)`` may return the new
values for the op's results (a replacement) or ``None`` to copy the op as is.
Ops with regions are copied with their regions rewritten by the same rule.

A rule that keeps an op but needs its new results (cse.py) copies it with
``copy_op(b, op, inputs)``: the op as it is, on the new inputs, without inferring
its type again (the inputs have the types of the ones they stand for).

An op without regions whose inputs are unchanged is not copied: the new function
holds the op itself (and the function's arguments are its own), so a pass that
changes a few ops costs little more than a walk. This is sound because passes are
pure: no pass changes the function it is given, and those that change their result
in place (dce.py, licm.py ...) change a copy (``copy_function``).

``b.scope`` lists the new blocks open at the op (the body first, the innermost
region last): a rule that reuses values it saw earlier must only reuse those
defined in an open block (see cse.py).
"""
from __future__ import annotations

from typing import Callable

from ..ir.builder import Builder
from ..ir.core import Block, Function, Op, Value


def rewrite(fn: Function, rule: Callable, name: str | None = None) -> Function:
    body = Block(args=list(fn.args))
    b = Builder(body)
    b.scope = [body]
    _rewrite_block(fn.body, b, {}, rule)
    return Function(name or fn.name, body, fn.loc)


def _rewrite_block(block: Block, b: Builder, vmap: dict, rule: Callable) -> None:
    # vmap: a value -> the value standing for it (Values hash by identity); a value
    # missing from it stands for itself (an argument, or a result of an op kept as it is)
    get = vmap.get
    for op in block.ops:
        inputs = [get(v, v) for v in op.inputs] if vmap else list(op.inputs)
        if op.regions:
            new = _copy(b, op, inputs, vmap, rule)
        else:
            new = rule(b, op, inputs)
            if new is None:
                if inputs == op.inputs:  # kept as it is: its results stand for themselves
                    b.block.ops.append(op)
                    continue
                new = _copy(b, op, inputs, vmap, rule)
        for old, nv in zip(op.results, new, strict=True):
            if nv is not old:
                vmap[old] = nv
    b.block.results = [get(v, v) for v in block.results]


def _unchanged(op: Op, inputs: list) -> bool:
    return inputs == op.inputs  # Values compare by identity


def copy_op(b, op: Op, inputs: list) -> list:
    """A copy of the region-free, one-result ``op`` on ``inputs`` (each of the type of
    the input it replaces), appended to ``b``: what ``b.emit`` would build, without
    inferring the type again; ``op`` itself when ``inputs`` are its own."""
    if _unchanged(op, inputs):
        b.block.ops.append(op)
        return op.results
    new_op = Op(op.prim, list(inputs), dict(op.params), [], [], op.loc)
    new_op.results = [Value(op.result.type, op.result.hint or op.prim, new_op)]
    b.block.ops.append(new_op)
    return new_op.results


def _copy(b, op, inputs, vmap, rule) -> list:
    """A new op for ``op``, whose inputs changed or which has regions."""
    new_op = Op(op.prim, inputs, dict(op.params), [], [], op.loc)
    for region in op.regions:
        nr = Block(args=[Value(a.type, a.hint) for a in region.args])
        vmap.update(zip(region.args, nr.args))
        sub = Builder(nr)
        sub.scope = b.scope + [nr]
        _rewrite_block(region, sub, vmap, rule)
        new_op.regions.append(nr)
    new_op.results = [Value(r.type, r.hint) for r in op.results]
    b.add_op(new_op)
    return new_op.results
