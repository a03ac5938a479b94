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
  ``.shape`` and the divisor of ``mean`` over a ``?`` axis;
* ``nonzero(m, axis)``: ``np.nonzero(m)[axis]``, an int array of length ``?`` (no
  derivative), for ``np.nonzero``, ``np.where(m)``, ``m.nonzero()`` and
  ``np.flatnonzero``.
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, lowering, method, primitive
from ..ir.core import AType
from .indexing import array_operand
from .shape import reshape_to

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


# -- np.nonzero and its spellings: int arrays of a run-time length -------------------

def _nonzero_infer(m: AType, *, axis) -> AType:
    if m.ndim == 0:
        raise ValueError("np.nonzero of a 0-d value is not supported (NumPy deprecates it)")
    if not 0 <= axis < m.ndim:
        raise ValueError(f"axis {axis} is out of bounds for a {m.ndim}-d mask")
    return AType((None,), np.dtype(np.intp), False)


primitive(
    "nonzero", emit="np.nonzero({0})[{axis}]", infer=_nonzero_infer, nondiff=True, family=F,
    dynamic="native", examples=[ex(np.array([0.0, 1.5, 0.0, -2.0]), axis=0),
                                ex(np.array([[True, False], [True, True]]), axis=1)],
)


@lowering(np.nonzero)
@method("nonzero")
def lower_nonzero(b, a):
    """``np.nonzero(m)``: one int array per axis of ``m``, their length the number of
    non-zero elements (known at run time only)."""
    m = array_operand(b, a)
    return tuple(b.nonzero(m, axis=k, hint="nonzero") for k in range(b.type_of(m).ndim))


@lowering(np.flatnonzero)
def lower_flatnonzero(b, a):
    m = array_operand(b, a)
    if b.type_of(m).ndim != 1:
        m = reshape_to(b, m, (-1,))
    return b.nonzero(m, axis=0, hint="nonzero")
