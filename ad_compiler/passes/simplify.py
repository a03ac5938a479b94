"""Algebraic simplification of seeds: multiplying by one is free.

A gradient seeded with ``ones_like(out)`` starts as a tensor of ones that the
VJP rules reshape, broadcast and multiply. This pass tracks values known to be
all ones (``ones_like``, constant 1, and shape ops or casts of such values) and
removes ``mul``/``div`` by them when the other operand already has the result's
type. Before/after::

    %dout = ones_like %out   # f32[]
    %b = broadcast_to %dout {shape=(3,)}
    %dx = mul %b, %cos_x     # f32[3]      ->   %dx is %cos_x

Unused ones are then removed by DCE.
"""
from __future__ import annotations

import numpy as np

from ..ir.core import Function
from .rewrite import rewrite

_ONES_PRESERVING = {"broadcast_to", "reshape", "expand_dims", "squeeze", "transpose", "cast"}


def _is_one_const(op) -> bool:
    if op.prim != "const":
        return False
    v = op.params["value"]
    return isinstance(v, (int, float, np.ndarray, np.generic)) and not isinstance(v, bool) \
        and np.size(v) >= 1 and bool(np.all(np.asarray(v) == 1))


def simplify(fn: Function) -> Function:
    ones: set[int] = set()

    def rule(b, op, inputs):
        if op.prim == "ones_like" or _is_one_const(op) or (
                op.prim in _ONES_PRESERVING and id(inputs[0]) in ones):
            new = _copy_simple(b, op, inputs)
            ones.add(id(new[0]))
            return new
        if op.prim == "mul":
            return _drop_one(op, inputs, ones, (0, 1))
        if op.prim == "div":
            return _drop_one(op, inputs, ones, (1,))
        return None
    return rewrite(fn, rule)


def _copy_simple(b, op, inputs):
    with b.at(op.loc):
        return [b.emit(op.prim, *inputs, hint=op.result.hint, **op.params)]


def _drop_one(op, inputs, ones, positions):
    out_t = op.result.type
    for i in positions:
        other = inputs[1 - i]
        if id(inputs[i]) in ones and other.type == out_t:
            return [other]
    return None
