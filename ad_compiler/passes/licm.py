"""Loop-invariant code motion: compute once what every iteration computes the same.

An op in a loop body whose inputs are all defined outside the loop gives the
same value in every iteration (all ops are pure); it moves to just before the
loop, unless it has an effect or may raise (``math.sqrt``: a loop that runs no
iteration must not raise), and before the ops of the loop's own line that set it up
(the zeros its adjoint accumulates into) when it does not read them, so that the
generated code does not interleave lines. Inner loops are treated first, so invariants move out as far as they can.
Adjoints of loops profit most: ``w.T`` in the backward sweep of ``w @ h`` is
computed once instead of once per step. Before/after::

    %h = for %n, %h0                        %wt = transpose %w
      region 0(%i, %h) {                    %h = for %n, %h0
        %wt = transpose %w          ->        region 0(%i, %h) {
        %m = matmul %wt, %h                     %m = matmul %wt, %h
"""
from __future__ import annotations

from ..ad.rules import has_effect, stays_in_loop
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
            moved = _invariants(op.regions[-1])
            k = _setup_start(out, op, moved)
            out[k:k] = moved
        out.append(op)
    block.ops = out


def _setup_start(out: list, loop, moved: list) -> int:
    """Where the ops ``moved`` out of ``loop`` go: before the ops of the loop's own
    line just before it (its setup, such as the zeros its adjoint accumulates into)
    that they do not read, so that generated code writes that line's comment once."""
    needed = {id(v) for op in moved for v in op.inputs}
    line = None if loop.loc is None else (loop.loc.file, loop.loc.line)
    k = len(out)
    while k and line is not None and out[k - 1].loc is not None \
            and (out[k - 1].loc.file, out[k - 1].loc.line) == line \
            and not out[k - 1].regions and not has_effect(out[k - 1]) \
            and not any(id(r) in needed for r in out[k - 1].results):
        k -= 1
    return k


def _invariants(body: Block) -> list:
    """Remove and return the ops of ``body`` that depend on nothing defined inside it."""
    local = {id(a) for a in body.args}
    moved, kept = [], []
    for op in body.ops:
        if op.regions or stays_in_loop(op) or any(id(v) in local for v in op.inputs):
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
