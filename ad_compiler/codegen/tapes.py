"""The lists a loop's tape lives in: one per stacked value, freed after their last reader.

A loop's adjoint stacks values per iteration (the loop's *tape*) and its
backward sweep reads them back by index. Each value gets its own list::

    x_tape.append(x_1)                      # one append per stacked value
    y_tape.append(y_1)
    ...
    x_3 = x_tape[i]
    y_3 = y_tape[i]

rather than one list of tuples: a tuple per iteration is an allocation that the
garbage collector then scans (Python floats in lists are not tracked), so two
appends of floats cost less than one append of a pair (100,000 iterations of a
two-float loop: 1.97x its forward with two lists, 2.35x with a list of pairs).

A tape built in the function's body is deleted (``del tape``) right after the
last statement of the body that reads it (``releases``), so a tape lives only
from its forward loop to its backward loop: tapes of loops recomputed in the
backward sweep (``ms.checkpoint``) then live one at a time.
"""
from __future__ import annotations

from ..ir.core import Function


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
