"""Reductions: sum, mean, max/min, and their lowerings (np.sum, x.sum(), ops.sum ...)."""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, primitive
from ..ir.core import AType
from ._infer import normalize_axis, result_type

F = "reduction"


def reduce_infer(name):
    def infer(t: AType, *, axis=None, keepdims=False) -> AType:
        axes = normalize_axis(axis, t.ndim)
        if keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape))
        else:
            shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
        dtype, _ = result_type(name, AType((), t.dtype, t.weak), axis=None, keepdims=False)
        return AType(shape, dtype, False)
    return infer


def expand_to(b, ct, x, axis, keepdims):
    """Broadcast a reduced cotangent ``ct`` back to the shape of ``x``."""
    xt = b.type_of(x)
    if not keepdims and xt.ndim:
        axes = normalize_axis(axis, xt.ndim)
        kept = tuple(1 if i in axes else d for i, d in enumerate(xt.shape))
        if b.type_of(ct).shape != kept:
            ct = b.reshape(ct, shape=kept)
    if b.type_of(ct).shape != xt.shape:
        ct = b.broadcast_to(ct, shape=xt.shape)
    return ct


primitive(
    "sum", emit="np.sum({0}, axis={axis}, keepdims={keepdims})", infer=reduce_infer("sum"),
    family=F,
    vjp=lambda b, ct, out, x, *, axis=None, keepdims=False: (
        b.fit(expand_to(b, ct, x, axis, keepdims), x),),
    jvp=lambda b, t, out, x, *, axis=None, keepdims=False: b.sum(t[0], axis=axis,
                                                                 keepdims=keepdims),
    examples=[ex((3,), axis=None, keepdims=False), ex((2, 3), axis=1, keepdims=False),
              ex((2, 3), axis=(0,), keepdims=True), ex((2, 3, 4), axis=(0, 2), keepdims=False)],
)
