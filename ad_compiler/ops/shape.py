"""Shape primitives: reshape, broadcast_to, transpose, expand_dims, squeeze."""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, primitive
from ..ir.core import AType

F = "shape"


def _reshape_infer(t: AType, *, shape) -> AType:
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        shape = tuple(t.size // known if s == -1 else s for s in shape)
    if int(np.prod(shape, dtype=np.int64)) != t.size:
        raise ValueError(f"cannot reshape an array of size {t.size} into shape {shape}")
    return AType(shape, t.dtype, False)


primitive(
    "reshape", emit="np.reshape({0}, {shape})", infer=_reshape_infer, family=F,
    vjp=lambda b, ct, out, x, *, shape: (b.reshape(ct, shape=b.type_of(x).shape),),
    jvp=lambda b, t, out, x, *, shape: b.reshape(t[0], shape=shape),
    examples=[ex((2, 3), shape=(3, 2)), ex((6,), shape=(2, -1))],
)

primitive(
    "broadcast_to", emit="np.broadcast_to({0}, {shape})", family=F,
    infer=lambda t, *, shape: AType(tuple(np.broadcast_shapes(t.shape, tuple(shape))),
                                    t.dtype, False),
    vjp=lambda b, ct, out, x, *, shape: (b.fit(ct, x),),
    jvp=lambda b, t, out, x, *, shape: b.broadcast_to(t[0], shape=shape),
    examples=[ex((3,), shape=(2, 3)), ex((2, 1), shape=(2, 4)), ex((), shape=(3,))],
)
