"""Common-subexpression elimination: one op per distinct (primitive, inputs, params).

Adjoint rules often recompute what the forward pass (or another rule) already
computed (``cos %x`` twice, ``ones_like %out`` twice); CSE keeps the first.

Constants are merged only when they also have the same name: ``s = 0.0`` in the
user's code, the zero cotangent ``ds`` of a Python float and the seed ``dout`` of an
output are the same number, but one variable holding all three would make the
generated code read ``out_1 = s`` where ``out`` starts. A Python number is
immutable, so keeping them apart never changes a value, only what the code says.
"""
from __future__ import annotations

import math

import numpy as np

from ..ad.rules import has_effect
from ..ir.core import Function
from .rewrite import copy_op, rewrite


def _key(v):
    if isinstance(v, np.ndarray):
        return ("array", id(v))
    if isinstance(v, (list, tuple)):
        return tuple(_key(x) for x in v)
    if isinstance(v, slice):  # unhashable before Python 3.12
        return ("slice", _key(v.start), _key(v.stop), _key(v.step))
    if isinstance(v, (float, np.floating)):
        if v != v:
            return ("nan", type(v).__name__)
        # 0.0 == -0.0, but 1/x tells them apart: the sign is part of the key
        return (type(v).__name__, float(v), math.copysign(1.0, float(v)))
    return (type(v).__name__, v)


def cse(fn: Function) -> Function:
    seen: dict = {}   # key -> (results, the block that defines them)

    def rule(b, op, inputs):
        if has_effect(op):  # two draws from a generator are two numbers
            return None
        try:
            key = (op.prim, tuple(id(v) for v in inputs),
                   tuple((k, _key(p)) for k, p in op.params.items()),
                   op.results[0].hint if op.prim == "const" else None)
            hash(key)
        except TypeError:
            return None
        hit = seen.get(key)
        if hit is not None and any(hit[1] is blk for blk in b.scope):
            return hit[0]  # defined in a block still open here: in scope
        if len(op.results) != 1:
            return None
        results = copy_op(b, op, inputs)
        seen[key] = (results, b.block)
        return results
    return rewrite(fn, rule)
