"""Shift invariance: a stabilising shift whose derivative is exactly zero is held constant.

Softmax, log-softmax and log-sum-exp give the same result when every row of
their input is shifted by the same amount. Stable code subtracts the row's max
first (``s = z - max(z, axis, keepdims=True)``); the max then changes no result,
so its derivative is zero in exact arithmetic, yet a literal adjoint computes
it: ``-sum(ds)`` per row (a number that is zero up to rounding), a compare, a
cast, two reductions, a multiply and a subtract. This pass runs on the *primal*
IR, before reverse mode: it proves that the derivative of every output with
respect to such a value ``m`` is zero, and then reads ``m`` through
``stop_gradient`` (as the softmax lowering does), so no adjoint of ``m`` is
built. The forward values are untouched.

The proof is a tangent propagation. Give ``m`` a tangent ``δ`` (``m``'s shape,
broadcast as NumPy broadcasts ``m``); every value ``v`` then has one of these
tangents, with an exact rational coefficient ``a``:

* ``0``        (``v`` does not move; also the result of every ``nondiff`` op),
* ``a·δ``      (additive: ``v - m`` is ``-δ``; ``max``/``mean`` along an axis where
  ``δ`` is constant keep it, ``sum`` scales it by the length, ``log`` of a
  multiplicative value gives one),
* ``a·v·δ``    (multiplicative: ``exp`` of an additive value; kept by ``sum``,
  ``max``, ``mean`` along constant axes, by products and quotients),
* unknown      (anything else: the proof fails if an unknown tangent reaches an
  output).

Additive tangents that cancel (``s - log(sum(exp(s)))``: ``-δ - (-δ)``), a
multiplicative one divided by its own sum (``e / sum(e)``, the ``normalize``
primitive) and ``log_softmax`` give ``0``. ``m`` is rewritten only when every
output's tangent is ``0``: the derivative through ``m`` vanishes identically,
and so do its derivatives of every order (differentiating the identity). The
gradient changes only by the rounding of the dropped terms (``sum(ds)`` per row
is about ``eps * |ds|`` instead of 0).
"""
from __future__ import annotations

import numpy as np

from ..ad import rules
from ..ir.core import AType, Function
from .algebra import const_value, same
from .rewrite import rewrite

ZERO = None          # tangent 0
ADD, MUL = "add", "mul"
_UNKNOWN = ("unknown", 1)
_MAX_CANDIDATES = 8     # proofs are linear in the function: bound how many run

# reductions that keep an additive tangent as it is; ``sum`` multiplies it by the length
_MEAN_LIKE = {"max", "min", "mean"}
_REDUCTIONS = _MEAN_LIKE | {"sum"}
_SHAPE_OPS = {"reshape", "transpose", "broadcast_to", "expand_dims", "squeeze", "copy"}


def shift_invariance(fn: Function) -> Function:
    """``fn`` with every provably irrelevant shift read through ``stop_gradient``."""
    held = [g for g in _groups(_candidates(fn)) if _irrelevant(fn, g)]
    if not held:
        return fn
    ids = {id(m) for g in held for m in g}

    def rule(b, op, inputs):
        if not any(id(r) in ids for r in op.results):
            return None
        with b.at(op.loc):
            out = b.emit(op.prim, *inputs, hint=op.result.hint, **op.params)
            return [b.stop_gradient(out, hint=op.result.hint)]
    return rewrite(fn, rule)


def _candidates(fn: Function) -> list:
    """Values subtracted from a larger array (``z - m``), computed in the body."""
    found, seen = [], set()
    top = {id(op) for op in fn.body.ops}
    for op in fn.body.walk():
        if op.prim != "sub" or len(op.inputs) != 2:
            continue
        m = op.inputs[1]
        p = m.producer
        if (p is None or p.prim in ("const", "stop_gradient") or p.regions
                or id(p) not in top or len(p.results) != 1 or id(m) in seen
                or not _float(m.type) or m.type.dynamic or op.result.type.dynamic
                or m.type.size >= op.result.type.size):
            continue
        seen.add(id(m))
        found.append(m)
    return found[:_MAX_CANDIDATES]


def _groups(found) -> list:
    """Candidates that compute the same value (``np.max(z, 1)`` spelled twice) move
    together: their derivatives are equal, so only the sum of their effects counts."""
    groups: list = []
    for m in found:
        for g in groups:
            if same(g[0], m):
                g.append(m)
                break
        else:
            groups.append([m])
    return groups


def _float(t) -> bool:
    return isinstance(t, AType) and t.dtype.kind == "f"


# -- the proof ------------------------------------------------------------------

def _irrelevant(fn: Function, group) -> bool:
    """Whether the tangent of every output of ``fn`` is 0 when the values of
    ``group`` (equal values of one type) move by ``δ``."""
    tangent = {id(m): (ADD, 1) for m in group}  # exact coefficients: ints or Fractions
    delta = group[0].type.shape
    producers = {id(m.producer) for m in group}
    start = min(i for i, op in enumerate(fn.body.ops) if id(op) in producers)
    for op in fn.body.ops[start:]:
        if id(op) in producers:
            continue
        if op.regions:
            moved = _region_reads(op) & tangent.keys()
            if moved or any(id(v) in tangent for v in op.inputs):
                tangent.update({id(r): _UNKNOWN for r in op.results})
            continue
        ins = [tangent.get(id(v), ZERO) for v in op.inputs]
        if all(t is ZERO for t in ins):
            continue
        out = _step(op, ins, delta)
        if out is not ZERO and out[1] == 0:
            out = ZERO
        if out is not ZERO and out is not _UNKNOWN and not _aligned(op.result.type, delta):
            out = _UNKNOWN
        for r in op.results:
            if out is ZERO:
                tangent.pop(id(r), None)
            else:
                tangent[id(r)] = out
    return not any(id(v) in tangent for v in fn.body.results)


def _region_reads(op) -> set:
    reads = set()
    for region in op.regions:
        for inner in region.walk():
            reads.update(id(v) for v in inner.inputs)
        reads.update(id(v) for v in region.results)
    return reads


def _aligned(t, delta) -> bool:
    """Whether ``δ`` (of shape ``delta``) broadcasts onto ``t`` without growing it."""
    if not isinstance(t, AType) or t.dynamic:
        return False
    if int(np.prod(delta)) == 1:
        return True
    if len(t.shape) < len(delta):
        return False
    tail = t.shape[len(t.shape) - len(delta):]
    return all(d == 1 or n == d for n, d in zip(tail, delta))


def _constant_axes(t, delta) -> set:
    """The axes of ``t`` along which ``δ`` is constant."""
    if int(np.prod(delta)) == 1:
        return set(range(t.ndim))
    lead = t.ndim - len(delta)
    return {j for j in range(t.ndim) if j < lead or delta[j - lead] == 1}


def _number(v):
    """The exact value of a one-element real constant, else None."""
    c = const_value(v)
    if c is None or np.size(c) != 1 or np.asarray(c).dtype.kind not in "iuf":
        return None
    c = float(np.asarray(c).reshape(()))
    return _exact(c) if np.isfinite(c) else None


def _exact(x):
    """``x`` as an exact rational: an int when it is whole, else a Fraction (the
    fractions module is imported when a proof first needs one)."""
    if isinstance(x, int) or float(x).is_integer():
        return int(x)
    from fractions import Fraction
    return Fraction(x)


def _ratio(a, b):
    """``a / b`` exactly (``b`` nonzero)."""
    if isinstance(a, int) and isinstance(b, int) and a % b == 0:
        return a // b
    from fractions import Fraction
    return Fraction(a) / b


def _step(op, ins, delta):
    """The tangent of ``op``'s result from its inputs' tangents (at least one nonzero)."""
    prim = op.prim
    if rules.get(prim).nondiff:
        return ZERO
    rule = _RULES.get(prim)
    if rule is None or len(op.results) != 1 or any(t is _UNKNOWN for t in ins):
        return _UNKNOWN
    return rule(op, ins, delta)


def _unary(op, ins, delta):
    kind, a = ins[0]
    prim = op.prim
    if prim == "neg":
        return (kind, -a) if kind == ADD else (kind, a)
    if prim == "exp" and kind == ADD:
        return (MUL, a)
    if prim == "log" and kind == MUL:
        return (ADD, a)
    if prim == "square" and kind == MUL:
        return (MUL, 2 * a)
    if prim == "sqrt" and kind == MUL:
        return (MUL, _ratio(a, 2))
    if prim == "pow_scalar" and kind == MUL:
        p = op.params.get("exponent")
        if isinstance(p, (int, float)) and not isinstance(p, bool) and np.isfinite(p):
            return (MUL, a * _exact(p))
    if prim == "cast" and _float(op.result.type):
        return ins[0]
    if prim in _SHAPE_OPS and int(np.prod(delta)) == 1:
        return ins[0]
    return _UNKNOWN


def _add_sub(op, ins, delta):
    sign = 1 if op.prim == "add" else -1
    x, y = ins
    if any(t is not ZERO and t[0] != ADD for t in ins):
        return _UNKNOWN
    a = (x[1] if x is not ZERO else 0) + sign * (y[1] if y is not ZERO else 0)
    return (ADD, a)


def _mul_div(op, ins, delta):
    x, y = ins
    sign = 1 if op.prim == "mul" else -1
    if all(t is ZERO or t[0] == MUL for t in ins):
        a = (x[1] if x is not ZERO else 0) + sign * (y[1] if y is not ZERO else 0)
        return (MUL, a)
    # an additive tangent scaled by a known number
    if x is not ZERO and x[0] == ADD and y is ZERO:
        c = _number(op.inputs[1])
        if c is not None and (op.prim == "mul" or c != 0):
            return (ADD, x[1] * c if op.prim == "mul" else _ratio(x[1], c))
    if y is not ZERO and y[0] == ADD and x is ZERO and op.prim == "mul":
        c = _number(op.inputs[0])
        if c is not None:
            return (ADD, y[1] * c)
    return _UNKNOWN


def _axes(op, t) -> set | None:
    """The axes ``op`` reduces of its input of type ``t``; None for a 0-d input
    (``np.sum(x, axis=0)`` of a 0-d x), where no proof is attempted."""
    if t.ndim == 0:
        return None
    axis = op.params.get("axis")
    return set(range(t.ndim)) if axis is None else {
        ax % t.ndim for ax in (axis if isinstance(axis, (tuple, list)) else (axis,))}


def _reduce(op, ins, delta):
    kind, a = ins[0]
    t = op.inputs[0].type
    axes = _axes(op, t)
    if axes is None:
        return _UNKNOWN
    if not axes <= _constant_axes(t, delta):
        return _UNKNOWN
    if not op.params.get("keepdims") and int(np.prod(delta)) != 1:
        lead = t.ndim - len(delta)
        if any(ax >= lead for ax in axes):  # dropping an axis δ lines up with
            return _UNKNOWN
    if kind == ADD and op.prim == "sum":
        return (ADD, a * int(np.prod([t.shape[ax] for ax in axes])))
    return (kind, a)


def _normalized(op, ins, delta):
    """``normalize`` (``e / sum(e)``) undoes a multiplicative tangent, ``log_softmax``
    an additive one, along constant axes."""
    kind, _ = ins[0]
    want = MUL if op.prim == "normalize" else ADD
    t = op.inputs[0].type
    axes = _axes(op, t)
    if axes is None:
        return _UNKNOWN
    return ZERO if kind == want and axes <= _constant_axes(t, delta) else _UNKNOWN


_RULES = {
    **{p: _unary for p in ("neg", "exp", "log", "square", "sqrt", "pow_scalar", "cast",
                           *_SHAPE_OPS)},
    "add": _add_sub, "sub": _add_sub, "mul": _mul_div, "div": _mul_div,
    **{p: _reduce for p in _REDUCTIONS},
    "normalize": _normalized, "log_softmax": _normalized,
    "stop_gradient": lambda op, ins, delta: ZERO,
    "where": lambda op, ins, delta: ins[1] if ins[1] == ins[2] else _UNKNOWN,
}
