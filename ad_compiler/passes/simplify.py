"""Algebraic simplification: multiplying by one is free, broadcasting is implicit.

A gradient seeded with ``ones_like(out)`` starts as a tensor of ones that the
VJP rules reshape, broadcast and multiply. This pass tracks values known to be
all ones (``ones_like``, constant 1, and shape ops or casts of such values) and
removes ``mul``/``div`` by them when the other operand already has the result's
type. Before/after::

    %dout = ones_like %out   # f32[]
    %b = broadcast_to %dout {shape=(3,)}
    %dx = mul %b, %cos_x     # f32[3]      ->   %dx is %cos_x

A broadcasting elementwise op (add, mul, ...) does not need an operand
broadcast beforehand: ``mul(broadcast_to(%c, (3,)), %y)`` becomes ``mul(%c, %y)``
whenever NumPy's own broadcasting gives the same result type (VJPs of sums and
means produce such ``broadcast_to``/``reshape`` chains).

A ``copy`` is its input: IR values are never written, so the copies that give
the frontend a new array object (``y.copy()``, ``np.array(y)``) are free;
``fresh_outputs`` adds the copies the function's outputs need, last.

Unused ones and broadcasts are then removed by DCE.
"""
from __future__ import annotations

import numpy as np

from ..ir import dims
from ..ir.core import Function
from .rewrite import copy_op, rewrite

_ONES_PRESERVING = {"broadcast_to", "reshape", "expand_dims", "squeeze", "transpose", "cast"}
_BROADCASTING = {"add", "sub", "mul", "div", "maximum", "minimum", "pow", "where"}


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
        if op.prim == "copy" and inputs[0].type == op.result.type:
            return [inputs[0]]  # values are immutable in the IR: only outputs need copies
        given = inputs
        if op.prim in _BROADCASTING:
            inputs = _implicit_broadcast(op, inputs)
        if op.prim == "mul":
            return _drop_one(op, inputs, ones, (0, 1)) or _copy_if_changed(b, op, given, inputs)
        if op.prim == "div":
            return _drop_one(op, inputs, ones, (1,)) or _copy_if_changed(b, op, given, inputs)
        return _copy_if_changed(b, op, given, inputs)
    return rewrite(fn, rule)


def _broadcast_sources(v):
    """Values ``v`` may be replaced by where NumPy broadcasts anyway, best first:
    the one element a broadcast/reshape chain starts from, then what ``v`` was
    broadcast from (through broadcast_to and leading-1 reshapes)."""
    cur = v
    while cur.producer is not None and cur.producer.prim in ("broadcast_to", "reshape"):
        cur = cur.producer.inputs[0]
        if cur.type.size == 1:
            yield cur
            break
    yield _broadcast_source(v)


def _broadcast_source(v):
    """The value ``v`` was broadcast from (through broadcast_to and leading-1 reshapes)."""
    while v.producer is not None:
        op = v.producer
        src = op.inputs[0] if op.inputs else None
        if op.prim == "broadcast_to":
            v = src
        elif op.prim == "reshape" and (src.type.size == 1 or
                                       _adds_leading_ones(src.type.shape, v.type.shape)):
            v = src
        else:
            break
    return v


def _adds_leading_ones(old, new) -> bool:
    k = len(new) - len(old)
    return k >= 0 and new[k:] == old and all(d == 1 for d in new[:k])


def _implicit_broadcast(op, inputs):
    out = op.result.type.shape
    new = list(inputs)
    for i, v in enumerate(inputs):
        for src in _broadcast_sources(v):
            if src is v or src.type.dtype != v.type.dtype or src.type.weak != v.type.weak:
                continue
            trial = new[:i] + [src] + new[i + 1:]
            if any(t.type.dynamic for t in trial):  # run-time lengths: NumPy decides
                continue
            if tuple(np.broadcast_shapes(*(t.type.shape for t in trial))) == out:
                new = trial
                break
    return new


def _copy_if_changed(b, op, given, inputs):
    """``op`` on ``inputs``; its type is inferred again only where an input was replaced
    (by what it was broadcast from), else the op is copied (or kept, having no inputs)."""
    if not op.inputs:
        return None
    if len(op.results) == 1 and not op.regions and all(
            n is g for n, g in zip(inputs, given)):
        return copy_op(b, op, inputs)
    return _copy_simple(b, op, inputs)


def _copy_simple(b, op, inputs):
    with b.at(op.loc):
        return [b.emit(op.prim, *inputs, hint=op.result.hint, **op.params)]


def _drop_one(op, inputs, ones, positions):
    out_t = op.result.type
    for i in positions:
        other = inputs[1 - i]
        one = inputs[i].type
        if id(inputs[i]) in ones and other.type == out_t and (
                dims.same_shape(other.type, out_t)
                or not one.dynamic and all(d == 1 for d in one.shape)):
            return [other]
    return None
