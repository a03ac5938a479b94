"""One list of tuples for a loop's tape, when its lists are always read together.

A loop's adjoint stacks several values per iteration (the loop's *tape*) and its
backward sweep reads them back with the same index. When every list a loop
stacks is read only by ``list_get`` ops of one block with one index, the
generated code keeps one list instead of several::

    tape.append((x_1, sub, sub_1))          # instead of three appends
    x_3, sub_2, sub_3 = tape[i]             # instead of three reads

(``emit_for``/``emit_while`` and ``EmitContext._op`` consult the plan). Fewer
calls per iteration is what scalar Python loops pay for.

A tape built in the function's body is deleted (``del tape``) right after the
last statement of the body that reads it (``releases``), so a tape lives only
from its forward loop to its backward loop: tapes of loops recomputed in the
backward sweep (``ms.checkpoint``) then live one at a time.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.core import Block, Function


@dataclass
class Tape:
    lists: list                      # the loop's list results, in order
    reads: list = field(default_factory=list)   # list_get ops, in the order of ``lists``


def plan(fn: Function, uses: dict) -> tuple[dict, dict]:
    """``({id(loop op): Tape}, {id(list_get op): Tape})`` for the packable tapes;
    ``uses`` is :func:`value_uses` of ``fn``'s body."""
    loops, readers = {}, {}
    for op in fn.body.walk():
        if op.prim not in ("for", "while"):
            continue
        lists = op.results[op.params["n_carried"]:]
        reads = [_single_read(uses.get(id(v), [])) for v in lists]
        if len(lists) < 2 or any(r is None for r in reads):
            continue
        (blocks, indices) = zip(*[(blk, r.inputs[1]) for r, blk in reads])
        if any(b is not blocks[0] for b in blocks) or any(i is not indices[0] for i in indices):
            continue
        tape = Tape(list(lists), [r for r, _ in reads])
        loops[id(op)] = tape
        readers.update({id(r): tape for r in tape.reads})
    return loops, readers


def releases(fn: Function) -> dict:
    """``{id(op): [lists]}``: the lists built by loops of ``fn``'s body whose last
    reader (at the body's level) is ``op``; not the function's outputs."""
    last: dict = {}
    lists: dict = {}
    for op in fn.body.ops:
        for v in _read_by(op):
            if id(v) in lists:
                last[id(v)] = op
        if op.prim in ("for", "while"):
            lists.update({id(v): v for v in op.results[op.params["n_carried"]:]})
    kept = {id(v) for v in fn.outputs} | {id(v) for v in fn.body.results}
    out: dict = {}
    for key, op in last.items():
        if key not in kept:
            out.setdefault(id(op), []).append(lists[key])
    return out


def _read_by(op) -> list:
    """The values ``op`` reads, inside its regions too."""
    values = list(op.inputs)
    for region in op.regions:
        values += region.results
        for inner in region.ops:
            values += _read_by(inner)
    return values


def _single_read(users):
    """The one ``list_get`` reading a list (with its block), or None."""
    if len(users) != 1:
        return None
    (op, block, position) = users[0]
    return (op, block) if op.prim == "list_get" and position == 0 else None


def value_uses(block: Block, uses=None) -> dict:
    """id(value) -> [(op, block, input position)], including yields (op None)."""
    uses = {} if uses is None else uses
    for v in block.results:
        uses.setdefault(id(v), []).append((_Yield, block, 0))
    for op in block.ops:
        for pos, v in enumerate(op.inputs):
            uses.setdefault(id(v), []).append((op, block, pos))
        for region in op.regions:
            value_uses(region, uses)
    return uses


class _Yield:
    prim = "yield"
