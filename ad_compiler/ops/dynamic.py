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

**Under vmap.** A ``?`` of a batched value is the same for every example: it comes
from a mask shared by the batch (a mask that differs between examples is refused
where it selects, and ``nonzero`` of it here: each example would have its own
length, and a batch of arrays of different lengths is no array). The three
``*_like`` primitives take two static params for it: ``keep``, the number of
leading (batch) axes of input 0 kept in front of the target shape, and ``skip``,
the number of leading (batch) axes of ``like`` that are not part of it, so the
target shape is ``a.shape[:keep] + like.shape[skip:]``. A batched ``a`` adds one
to ``keep``, a batched ``like`` one to ``skip``; with ``a`` shared and ``like``
batched the result is the same for every example (shared). ``dim`` of a batched
value is the length of the example's axis, shared.
"""
from __future__ import annotations

import numpy as np

from .. import runtime as rt
from ..ad.rules import ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType
from ..ir.dims import HINT
from ._batch import example_ndim, shift, to_front
from .indexing import array_operand
from .shape import reshape_to

F = "dynamic"


def _like_infer(a: AType, like: AType, *, keep=0, skip=0) -> AType:
    return AType(a.shape[:keep] + like.shape[skip:], a.dtype, False)


def _like_emit(plain: str, general: str):
    """The template of a ``*_like`` primitive: ``plain`` for ``keep = skip = 0`` (the
    code of one example), else ``general`` (a run-time helper taking both)."""
    def emit(srcs, *, keep="0", skip="0"):
        form = plain if {str(keep).strip("()"), str(skip).strip("()")} == {"0"} else general
        return form.format(*srcs, keep=keep, skip=skip)
    return emit


def _kept(keep: int) -> dict:
    """The params of an adjoint back to ``a``'s shape: its ``keep`` leading axes are the
    cotangent's too."""
    return {"keep": keep, "skip": keep} if keep else {}


def _like_batch(name: str):
    """The rule of a ``*_like`` primitive: a batched input gets its batch axis first and
    one more ``keep`` (input 0) or ``skip`` (``like``); the result is batched (first)
    unless only ``like`` is, when every example has the same result."""
    def rule(b, axes, a, like, *, keep=0, skip=0):
        (aa, al) = axes
        out = b.emit(name, to_front(b, a, aa), to_front(b, like, al),
                     keep=keep + (aa is not None), skip=skip + (al is not None))
        return out, 0 if aa is not None else None
    rule.__name__ = f"batch_{name}"
    return rule


primitive(
    "sum_to", emit=_like_emit("rt.sum_to({0}, {1})", "rt.sum_to({0}, {1}, {keep}, {skip})"),
    impl=lambda a, like, keep=0, skip=0: rt.sum_to(a, like, keep, skip),
    infer=_like_infer, family=F, dynamic="native",
    view=True,  # ``ct`` itself when the shapes agree
    vjp=lambda b, ct, out, a, like, keep=0, skip=0: (
        b.broadcast_like(ct, a, **_kept(keep)), None),
    jvp=lambda b, t, out, a, like, **kw: None if t[0] is None else b.sum_to(t[0], like, **kw),
    examples=[ex((2, 3), (3,)), ex((2, 3), (2, 1)), ex((3,), (3,)),
              ex((2, 2, 3), (3,), keep=1), ex((2, 2, 3), (2, 1), keep=1, skip=1)],
    batch=_like_batch("sum_to"),
)

primitive(
    "broadcast_like",
    emit=_like_emit("np.broadcast_to({0}, {1}.shape)", "rt.broadcast_like({0}, {1}, {keep}, "
                                                         "{skip})"),
    impl=lambda a, like, keep=0, skip=0: rt.broadcast_like(a, like, keep, skip),
    infer=_like_infer, family=F, view=True, dynamic="native",
    vjp=lambda b, ct, out, a, like, keep=0, skip=0: (b.sum_to(ct, a, **_kept(keep)), None),
    jvp=lambda b, t, out, a, like, **kw: None if t[0] is None else b.broadcast_like(
        t[0], like, **kw),
    examples=[ex((3,), (2, 3)), ex((2, 1), (2, 3)), ex(float, (3,)),
              ex((2, 3), (2, 3), keep=1), ex((2, 1), (2, 2, 3), keep=1, skip=1)],
    batch=_like_batch("broadcast_like"),
)

primitive(
    "reshape_like",
    emit=_like_emit("{0}.reshape({1}.shape)", "rt.reshape_like({0}, {1}, {keep}, {skip})"),
    impl=lambda a, like, keep=0, skip=0: rt.reshape_like(a, like, keep, skip),
    infer=_like_infer, family=F, view=True, dynamic="native", array_inputs=True,
    vjp=lambda b, ct, out, a, like, **kw: (b.reshape_like(ct, a), None),
    jvp=lambda b, t, out, a, like, **kw: None if t[0] is None else b.reshape_like(
        t[0], like, **kw),
    examples=[ex((2, 3), (6,)), ex((6,), (3, 2)), ex((2, 6), (3, 2), keep=1),
              ex((2, 6), (2, 3, 2), keep=1, skip=1)],
    batch=_like_batch("reshape_like"),
)


def _batch_dim(b, axes, x, *, axis):
    """The length of an axis of each example: the same for all (shared)."""
    n = example_ndim(x, axes[0])
    return b.dim(to_front(b, x, axes[0]), axis=shift(axis, n)), None


def _dim_infer(x: AType, *, axis) -> AType:
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of dimension {x.ndim}")
    return AType((), np.dtype(np.int64), True)


primitive("dim", emit="{0}.shape[{axis}]", infer=_dim_infer, family=F, nondiff=True,
          dynamic="native", array_inputs=True, examples=[ex((2, 3), axis=1)],
          batch=_batch_dim)


# -- np.nonzero and its spellings: int arrays of a run-time length -------------------

def _nonzero_infer(m: AType, *, axis) -> AType:
    if m.ndim == 0:
        raise ValueError("np.nonzero of a 0-d value is not supported (NumPy deprecates it)")
    if not 0 <= axis < m.ndim:
        raise ValueError(f"axis {axis} is out of bounds for a {m.ndim}-d mask")
    return AType((None,), np.dtype(np.intp), False)


def _batch_nonzero(b, axes, m, *, axis):
    """Refused: each example's mask has its own number of non-zero elements."""
    raise UnsupportedOperationError(
        "vmap does not batch np.nonzero (or a boolean mask selection) of a mask that differs "
        "between examples: each example would have its own number of elements, and a batch "
        "of arrays of different lengths is not an array", hint=HINT)


primitive(
    "nonzero", emit="np.nonzero({0})[{axis}]", infer=_nonzero_infer, nondiff=True, family=F,
    batch=_batch_nonzero,
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
