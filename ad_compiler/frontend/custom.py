"""Cells with a ``bprop`` method: their calls become one ``bprop_call`` op.

The op's region is the inlined ``construct`` (its arguments stand for the call's
dynamic inputs); reverse mode then uses the Cell's own ``bprop`` instead of
differentiating the region (ad/custom.py). Static arguments are passed to
``construct`` as they are.
"""
from __future__ import annotations

from ..ir.core import Block, Op, Value


def has_bprop(cell) -> bool:
    return callable(getattr(type(cell), "bprop", None))


def _values(tree, out: list) -> None:
    if isinstance(tree, Value):
        out.append(tree)
    elif isinstance(tree, (tuple, list)):
        for t in tree:
            _values(t, out)
    elif isinstance(tree, dict):
        for t in tree.values():
            _values(t, out)


def _replace(tree, mapping: dict):
    if isinstance(tree, Value):
        return mapping.get(id(tree), tree)
    if isinstance(tree, (tuple, list)):
        return type(tree)(_replace(t, mapping) for t in tree)
    if isinstance(tree, dict):
        return {k: _replace(t, mapping) for k, t in tree.items()}
    return tree


def call_with_bprop(lifter, cell, args, kwargs):
    """Lift ``cell(*args, **kwargs)`` as a ``bprop_call`` op; returns its result tree."""
    inputs: list = []
    _values((args, kwargs), inputs)
    region = Block(args=[Value(v.type, v.hint) for v in inputs])
    inner = {id(v): a for v, a in zip(inputs, region.args)}
    with lifter.b.inside(region):
        result = lifter.inline_function(type(cell).construct,
                                        [cell, *_replace(list(args), inner)],
                                        _replace(dict(kwargs), inner),
                                        name=f"{type(cell).__name__}.construct", owner=cell)
    outputs: list = []
    _values(result, outputs)
    region.results = outputs
    results = [Value(o.type, o.hint) for o in outputs]
    lifter.b.add_op(Op("bprop_call", list(inputs), {"cell": cell}, results, [region],
                       lifter.b.loc))
    return _replace(result, {id(o): r for o, r in zip(outputs, results)})
