"""Loop-invariant code motion: compute once what every iteration computes the same.

An op in a loop body whose inputs are all defined outside the loop gives the
same value in every iteration (all ops are pure); it moves to just before the
loop. Inner loops are treated first, so invariants move out as far as they can.
Adjoints of loops profit most: ``w.T`` in the backward sweep of ``w @ h`` is
computed once instead of once per step. Before/after::

    %h = for %n, %h0                        %wt = transpose %w
      region 0(%i, %h) {                    %h = for %n, %h0
        %wt = transpose %w          ->        region 0(%i, %h) {
        %m = matmul %wt, %h                     %m = matmul %wt, %h
"""
from __future__ import annotations

from ..ad.rules import has_effect
from ..ir.clone import copy_function
from ..ir.core import Block, Function

_LOOPS = ("for", "while")


def licm(fn: Function) -> Function:
    if not any(op.prim in _LOOPS for op in fn.body.walk()):
        return fn  # no loop to hoist out of: no copy
    new, _ = copy_function(fn)
    _hoist_in(new.body)
    return new


def _hoist_in(block: Block) -> None:
    out = []
    for op in block.ops:
        for region in op.regions:
            _hoist_in(region)
        if op.prim in _LOOPS:
            out.extend(_invariants(op.regions[-1]))
        out.append(op)
    block.ops = out


def _invariants(body: Block) -> list:
    """Remove and return the ops of ``body`` that depend on nothing defined inside it."""
    local = {id(a) for a in body.args}
    moved, kept = [], []
    for op in body.ops:
        if op.regions or has_effect(op) or any(id(v) in local for v in op.inputs):
            kept.append(op)
            local.update(id(r) for r in op.results)
            local.update(_defined_inside(op))
        else:
            moved.append(op)
    body.ops = kept
    return moved


def _defined_inside(op) -> set:
    ids = set()
    for region in op.regions:
        ids.update(id(a) for a in region.args)
        for inner in region.walk():
            ids.update(id(r) for r in inner.results)
    return ids
