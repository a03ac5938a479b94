"""Shape operations on lengths known only at run time (see ``ir/dims.py``).

A type with a ``?`` dimension cannot be un-broadcast, broadcast or reshaped by a
static ``shape`` param, so these primitives take the shape from a second input
at run time. They are what ``b.fit`` and the VJPs of broadcasting and reshaping
primitives emit when a type is dynamic; each is the other's adjoint:

* ``sum_to(ct, like)``: ``ct`` summed over the axes ``like`` was broadcast along
  (``rt.sum_to``); VJP ``broadcast_like``;
* ``broadcast_like(a, like)``: ``np.broadcast_to(a, like.shape)``; VJP ``sum_to``;
* ``reshape_like(a, like)``: ``a.reshape(like.shape)``; VJP ``reshape_like`` back;
* ``dim(x, axis)``: ``x.shape[axis]``, a Python int (no derivative): ``len``,
  ``.shape`` and the divisor of ``mean`` over a ``?`` axis.
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, primitive
from ..ir.core import AType

F = "dynamic"


def _like_infer(a: AType, like: AType) -> AType:
    return AType(like.shape, a.dtype, False)


primitive(
    "sum_to", emit="rt.sum_to({0}, {1})", infer=_like_infer, family=F, dynamic="native",
    view=True,  # ``ct`` itself when the shapes agree
    vjp=lambda b, ct, out, a, like: (b.broadcast_like(ct, a), None),
    jvp=lambda b, t, out, a, like: None if t[0] is None else b.sum_to(t[0], like),
    examples=[ex((2, 3), (3,)), ex((2, 3), (2, 1)), ex((3,), (3,))],
)

primitive(
    "broadcast_like", emit="np.broadcast_to({0}, {1}.shape)", infer=_like_infer, family=F,
    view=True, dynamic="native",
    vjp=lambda b, ct, out, a, like: (b.sum_to(ct, a), None),
    jvp=lambda b, t, out, a, like: None if t[0] is None else b.broadcast_like(t[0], like),
    examples=[ex((3,), (2, 3)), ex((2, 1), (2, 3)), ex(float, (3,))],
)

primitive(
    "reshape_like", emit="{0}.reshape({1}.shape)", infer=_like_infer, family=F,
    view=True, dynamic="native", array_inputs=True,
    vjp=lambda b, ct, out, a, like: (b.reshape_like(ct, a), None),
    jvp=lambda b, t, out, a, like: None if t[0] is None else b.reshape_like(t[0], like),
    examples=[ex((2, 3), (6,)), ex((6,), (3, 2))],
)


def _dim_infer(x: AType, *, axis) -> AType:
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of dimension {x.ndim}")
    return AType((), np.dtype(np.int64), True)


primitive("dim", emit="{0}.shape[{axis}]", infer=_dim_infer, family=F, nondiff=True,
          dynamic="native", array_inputs=True, examples=[ex((2, 3), axis=1)])
