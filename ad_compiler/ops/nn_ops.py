"""Neural-network primitives: the normalisations behind softmax and log_softmax.

A template is one expression over named inputs, so softmax cannot be one
primitive without computing ``exp`` twice. It is lowered instead as::

    m = stop_gradient(max(x, axis, keepdims=True))   # exp(x - m) <= 1: no overflow
    e = exp(x - m)
    out = normalize(e, axis)                          # e / sum(e, axis, keepdims=True)

and ``log_softmax(x) = log_softmax(x - m)`` with a ``log_softmax`` primitive.

Invariants:

* both results are invariant to shifting ``x`` along ``axis``, so holding the
  max constant (``stop_gradient``) changes no derivative and avoids the max's
  tie-splitting adjoint;
* the hand-written VJPs are the short closed forms
  (``out * (ct - sum(ct * out))`` overall for softmax, ``ct - exp(out) * sum(ct)``
  for log_softmax), in registered primitives only.
"""
from __future__ import annotations

from ..ad.rules import ex, primitive
from ._batch import along
from ._infer import as_float, static_axis

F = "nn"


def _sum_kept(b, v, axis):
    return b.sum(v, axis=axis, keepdims=True)


def _normalize_vjp(b, ct, out, x, *, axis):
    # d(x / S) = (dx - out * sum(dx)) / S, whose transpose is (ct - sum(ct * out)) / S
    return (b.div(b.sub(ct, _sum_kept(b, b.mul(ct, out), axis)), _sum_kept(b, x, axis)),)


def _normalize_jvp(b, t, out, x, *, axis):
    return b.div(b.sub(t[0], b.mul(out, _sum_kept(b, t[0], axis))), _sum_kept(b, x, axis))


primitive(
    "normalize", emit="{0} / np.sum({0}, axis={axis}, keepdims=True)", family=F,
    infer=lambda t, *, axis=-1: as_float(t), vjp=_normalize_vjp, jvp=_normalize_jvp,
    domain="positive",  # a sum near zero would make the example ill-conditioned
    examples=[ex((3,), axis=-1), ex((2, 3), axis=1), ex((2, 3), axis=0), ex((2, 3), axis=None)],
    batch=along("normalize", none="same"),
)


primitive(
    "log_softmax", emit="{0} - np.log(np.sum(np.exp({0}), axis={axis}, keepdims=True))",
    family=F, infer=lambda t, *, axis=-1: as_float(t),
    vjp=lambda b, ct, out, x, *, axis: (b.sub(ct, b.mul(b.exp(out), _sum_kept(b, ct, axis))),),
    jvp=lambda b, t, out, x, *, axis: b.sub(t[0], _sum_kept(b, b.mul(t[0], b.exp(out)), axis)),
    examples=[ex((3,), axis=-1), ex((2, 3), axis=1), ex((2, 3), axis=0), ex((2, 3), axis=(0, 1))],
    batch=along("log_softmax", none="same"),
)


def _shifted(b, x, axis):
    """``x`` minus its (constant) max along ``axis``."""
    return b.sub(x, b.stop_gradient(b.max(x, axis=axis, keepdims=True)))


def lower_softmax(b, x, axis=-1):
    """Numerically stable softmax along ``axis`` (int or tuple)."""
    axis = static_axis(axis)
    return b.normalize(b.exp(_shifted(b, b.const(x), axis)), axis=axis)


def lower_log_softmax(b, x, axis=-1):
    """Numerically stable log-softmax along ``axis`` (int or tuple)."""
    axis = static_axis(axis)
    return b.log_softmax(_shifted(b, b.const(x), axis), axis=axis)
