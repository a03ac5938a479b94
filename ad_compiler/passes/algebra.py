"""Algebra on the adjoint: the identities a careful person applies by hand.

A registry of local rewrites, ``REWRITES[prim] -> [rule, ...]``; the first rule
that returns values replaces the op (``@rewrites("add")`` registers one). Each rule is
exact, or exact up to rounding, and says so (docs/optimizations.md shows each with
the code it changes):

* ``x + 0``, ``0 + x``, ``x - 0`` -> ``x`` (a folded ``np.zeros``, a ``zeros_like``):
  the same numbers, except that ``-0.0 + 0.0`` is ``+0.0`` in NumPy and stays
  ``-0.0`` here (the two compare equal);
* ``c*y + c*y`` -> ``(2c)*y``: doubling is exact, so both sides round once, to the
  same value (overflow and subnormal products aside);
* ``sum(broadcast_to(v, shape), axes)`` over replicated axes -> ``v * count``
  (``mean`` -> ``v``), broadcast to the result if other axes were: a sum of
  ``count`` equal numbers, up to its rounding;
* ``reshape(reshape(x))`` -> one reshape of ``x``: exact;
* ``x ** 3`` and ``x ** 4`` of a float array -> products (``x * x * x``): NumPy's
  ``power`` has no fast path for them (a general ``pow`` per element, over 100x a
  product on negative numbers); up to the rounding of two or three products;
* ``(c1/d1 ± c2/d2 ± ...) * f1 * f2 * ...``, where every ``d`` is one of the
  factors ``f`` -> ``c1 * (the other factors) ± ...``: the divisions cancel (this
  is what turns the adjoint of a log-loss through a sigmoid, ``(ct1/p - ct2/(1-p))
  * p * (1-p)``, into ``ct1*(1-p) - ct2*p``). Equal in exact arithmetic wherever
  every ``d`` is finite and nonzero; where one is 0 or infinite (``log(0)``), the
  literal adjoint is ``nan`` or infinite and this one may be finite.

* ``x ** 2`` of a float array -> ``x * x``: NumPy computes it as ``np.square(x)``,
  the same correctly rounded product; as a product, cse shares it with an ``x * x``
  elsewhere;
* ``(c / d) * y`` -> ``(c * y) / d`` (``y / d`` for ``c == 1``): one division where a
  quotient's adjoint makes a reciprocal first; up to the rounding of one product;
* like terms of a sum of products collected (``passes/terms.py``: equal monomials
  merged, cancelled ones dropped, each coefficient and common factor written once,
  products of sums multiplied out where that is cheaper): equal in exact arithmetic.

Only the exact rules run in ``algebra`` (the pipeline's pass: the function may
return forward values, which must be Python's bit for bit); ``gradient_algebra``
runs them all, for a function that returns gradients only (``grad``, not
``value_and_grad``: ``api/compiler.py`` picks ``gradient_pipeline()`` then).

Rules look through single-use intermediates only (use counts of the input
function), so no value is computed twice; what they leave unused is DCE's job.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..ad.rules import has_effect
from ..ir.core import AType, Function
from .dce import dce
from .rewrite import rewrite

REWRITES: dict[str, list[Callable]] = {}
#: the rules whose result may differ from the literal one by rounding (or a zero's sign)
ROUNDING: set = set()


#: the rules whose results other rules read only in a second round of the pass
AGAIN: set = set()


def rewrites(*prims, exact=True, again=False):
    """Register ``rule(b, op, inputs, uses) -> new values | None`` for these primitives;
    ``exact=False`` for a rule exact only up to rounding; ``again=True`` for a rule
    whose result others may rewrite further (the pass then runs a second round)."""
    def register(rule):
        for p in prims:
            REWRITES.setdefault(p, []).append(rule)
        if not exact:
            ROUNDING.add(rule)
        if again:
            AGAIN.add(rule)
        return rule
    return register


class Uses:
    """Use counts of the input function, reachable from the values being rebuilt.

    ``rewrite`` hands a rule the new inputs of an old op; pairing them as they
    pass gives each new value its old one, and so its number of uses.
    """

    def __init__(self, fn: Function):
        self.count: dict[int, int] = {}
        blocks = [fn.body] + [r for op in fn.body.walk() for r in op.regions]
        for block in blocks:
            for op in block.ops:
                for v in op.inputs:
                    self.count[id(v)] = self.count.get(id(v), 0) + 1
            for v in block.results:
                self.count[id(v)] = self.count.get(id(v), 0) + 1
        self.old_of: dict[int, object] = {}
        self._fn, self._inside = fn, None

    def see(self, op, inputs) -> None:
        for old, new in zip(op.inputs, inputs):
            self.old_of.setdefault(id(new), old)

    def of(self, v) -> int:
        old = self.old_of.get(id(v))
        return 2 if old is None else self.count.get(id(old), 0)

    def inside(self, v) -> bool:
        """``v`` (old, or new and paired) is inside a sum tree, below its root
        (:func:`.terms.interior`)."""
        if self._inside is None:
            from .terms import interior
            self._inside = interior(self._fn, self.count)
        return id(self.old_of.get(id(v), v)) in self._inside


def algebra(fn: Function) -> Function:
    """The bit-exact rewrites: safe where the function returns forward values."""
    return _run(fn, rounding=False)


def gradient_algebra(fn: Function) -> Function:
    """Every rewrite, those exact up to rounding too: for a function that returns
    gradients only (its forward values are never seen, and a gradient is a
    derivative up to rounding anyway). A second round runs when a rule of
    :data:`AGAIN` fired: what it builds (the terms of ``cancel_divisions``) is read
    by the others only then."""
    fired: list = []
    fn = _run(fn, rounding=True, fired=fired)
    return _run(dce(fn), rounding=True) if AGAIN.intersection(fired) else fn


def gradient_pipeline() -> list:
    """The optimisation pipeline with ``gradient_algebra`` in place of ``algebra``."""
    from .pipeline import PIPELINE
    return [gradient_algebra if p is algebra else p for p in PIPELINE]


def _run(fn: Function, rounding: bool, fired: list | None = None) -> Function:
    uses = Uses(fn)

    def rule(b, op, inputs):
        uses.see(op, inputs)
        if len(op.results) != 1:
            return None
        for r in REWRITES.get(op.prim, ()):
            if r in ROUNDING and not rounding:
                continue
            with b.at(op.loc):
                new = r(b, op, inputs, uses)
            if new is not None and new[0].type == op.result.type:
                if fired is not None:
                    fired.append(r)
                return new
        return None
    return rewrite(fn, rule)


# -- helpers ----------------------------------------------------------------------

def const_value(v):
    """The value of a ``const`` op's result (an array or a number), else None."""
    p = v.producer
    if p is None or p.prim != "const":
        return None
    c = p.params.get("value")
    if isinstance(c, bool) or not isinstance(c, (int, float, np.ndarray, np.generic)):
        return None
    return c


def _is_zero(v) -> bool:
    if v.producer is not None and v.producer.prim == "zeros_like":
        return True
    c = const_value(v)
    return c is not None and np.asarray(c).dtype.kind in "iuf" and bool(np.all(np.asarray(c) == 0))


def _plain(v, out) -> bool:
    """``v`` can stand for ``out``: the same type, no length known only at run time."""
    return isinstance(v.type, AType) and v.type == out.type and not v.type.dynamic


def same(u, v, depth: int = 3) -> bool:
    """``u`` and ``v`` are the same computation (identical, equal constants, or the
    same primitive and params of the same inputs, ``depth`` levels down)."""
    if u is v:
        return True
    if u.type != v.type or depth == 0:
        return False
    cu, cv = const_value(u), const_value(v)
    if cu is not None or cv is not None:
        return (cu is not None and cv is not None and type(cu) is type(cv)
                and np.shape(cu) == np.shape(cv) and bool(np.all(np.asarray(cu) == np.asarray(cv))))
    pu, pv = u.producer, v.producer
    if pu is None or pv is None or pu.prim != pv.prim or pu.regions or pv.regions:
        return False
    if has_effect(pu) or len(pu.inputs) != len(pv.inputs) or not _same_params(pu, pv):
        return False
    return all(same(a, c, depth - 1) for a, c in zip(pu.inputs, pv.inputs))


def _same_params(p, q) -> bool:
    if p.params.keys() != q.params.keys():
        return False
    for k, a in p.params.items():
        c = q.params[k]
        if isinstance(a, np.ndarray) or isinstance(c, np.ndarray):
            return a is c
        try:
            if type(a) is not type(c) or a != c:
                return False
        except (TypeError, ValueError):
            return False
    return True


# -- x + 0, x - 0 -------------------------------------------------------------------

@rewrites("add", "sub", exact=False)
def drop_zero(b, op, inputs, uses):
    x, y = inputs
    if _is_zero(y) and _plain(x, op.result):
        return [x]
    if op.prim == "add" and _is_zero(x) and _plain(y, op.result):
        return [y]
    return None


# -- c*y + c*y -> (2c)*y ------------------------------------------------------------

@rewrites("add", exact=False)
def merge_doubled(b, op, inputs, uses):
    x, y = inputs
    if x.producer is None or x.producer.prim != "mul" or not same(x, y):
        return None
    if uses.of(x) != (2 if x is y else 1) or (x is not y and uses.of(y) != 1):
        return None
    for i in (0, 1):
        c = const_value(x.producer.inputs[i])
        if c is None or np.size(c) != 1 or np.asarray(c).dtype.kind != "f":
            continue
        doubled = c * 2 if not isinstance(c, np.ndarray) else (c * 2).astype(c.dtype)
        if not np.all(np.isfinite(doubled)):
            return None
        two_c = b.const(doubled, hint=x.producer.inputs[i].hint)
        other = x.producer.inputs[1 - i]
        return [b.mul(*((two_c, other) if i == 0 else (other, two_c)), hint=op.result.hint)]
    return None


# -- sum / mean of a broadcast ------------------------------------------------------

@rewrites("sum", "mean", exact=False)
def reduce_broadcast(b, op, inputs, uses):
    (src,) = inputs
    p = src.producer
    if p is None or p.prim != "broadcast_to" or not _plain(src, src):
        return None
    v, shape = p.inputs[0], tuple(p.params["shape"])
    out = op.result.type
    if not isinstance(v.type, AType) or v.type.dynamic or out.dtype.kind != "f" \
            or v.type.dtype != out.dtype or v.type.weak:
        return None
    axis = op.params.get("axis")
    nd = len(shape)
    axes = set(range(nd)) if axis is None else {
        a % nd for a in (axis if isinstance(axis, (tuple, list)) else (axis,))}
    vk = (1,) * (nd - v.type.ndim) + tuple(v.type.shape)
    if any(vk[j] != 1 for j in axes):  # a reduced axis that was not replicated
        return None
    small = tuple(1 if j in axes else vk[j] for j in range(nd))
    if not op.params.get("keepdims"):
        small = tuple(n for j, n in enumerate(small) if j not in axes)
    count = int(np.prod([shape[j] for j in axes])) if axes else 1
    out_v = _reshaped(b, v, small)
    if op.prim == "sum" and count != 1:
        out_v = b.mul(out_v, b.const(float(count)), hint=op.result.hint)
    if small != tuple(out.shape):
        out_v = b.broadcast_to(out_v, shape=tuple(out.shape), hint=op.result.hint)
    return [out_v]


# -- reshape of a reshape ---------------------------------------------------------

@rewrites("reshape")
def reshape_once(b, op, inputs, uses):
    """``reshape(reshape(x))`` is one reshape of ``x`` (or ``x`` itself): the same view."""
    (src,) = inputs
    p = src.producer
    if p is None or p.prim != "reshape" or not _plain(src, src) or op.result.type.dynamic:
        return None
    return [_reshaped(b, src, tuple(op.result.type.shape), op.result.hint)]


def _reshaped(b, v, shape, hint=None):
    """``v`` reshaped to ``shape``, from the start of a chain of reshapes."""
    while v.producer is not None and v.producer.prim == "reshape" and not v.type.dynamic:
        v = v.producer.inputs[0]
    if tuple(v.type.shape) == tuple(shape):
        return v
    return b.reshape(v, shape=tuple(shape), hint=hint or v.hint)


# -- x ** 3, x ** 4 as products ---------------------------------------------------

@rewrites("pow_scalar", exact=False)
def small_power(b, op, inputs, uses):
    """``x ** 3`` -> ``x * x * x`` and ``x ** 4`` -> ``(x * x) * (x * x)`` on float
    arrays: NumPy's ``power`` has fast paths for 2, 0.5 and -1 only, and computes
    other exponents with a general ``pow`` per element (about 7x a product on
    positive numbers, over 100x on negative ones); the products round two or three
    times where ``pow`` rounds once."""
    (x,) = inputs
    n = op.params.get("exponent")
    t = x.type
    if type(n) not in (int, float) or n not in (3, 4) or not isinstance(t, AType) \
            or t.dtype.kind != "f" or not t.shape:
        return None
    square = b.mul(x, x, hint=x.hint)
    return [b.mul(square, x if n == 3 else square, hint=op.result.hint)]


# -- x ** 2 as a product; a reciprocal times a value as a division -----------------

@rewrites("pow_scalar", exact=False)
def square_product(b, op, inputs, uses):
    """``x ** 2`` -> ``x * x`` on float arrays: NumPy computes ``x ** 2`` as
    ``np.square(x)``, the same correctly rounded product, and as a product it is
    the same computation as an ``x * x`` elsewhere (cse shares them)."""
    (x,) = inputs
    n = op.params.get("exponent")
    t = x.type
    if type(n) not in (int, float) or n != 2 or not isinstance(t, AType) \
            or t.dtype.kind != "f" or not t.shape:
        return None
    return [b.mul(x, x, hint=op.result.hint)]


@rewrites("mul", exact=False)
def divide_once(b, op, inputs, uses):
    """``(c / d) * y`` -> ``(c * y) / d``, and ``(1 / d) * y`` -> ``y / d``: one
    division where the literal adjoint of a quotient makes a reciprocal first; up to
    the rounding of one product."""
    for i in (0, 1):
        q, y = inputs[i], inputs[1 - i]
        p = q.producer
        if p is None or p.prim != "div" or uses.of(q) != 1:
            continue
        c = const_value(p.inputs[0])
        if c is None or np.size(c) != 1 or np.asarray(c).dtype.kind not in "iuf":
            continue
        num = y if c == 1 and _plain(y, op.result) else b.mul(y, p.inputs[0])
        return [b.div(num, p.inputs[1], hint=op.result.hint)]
    return None


# -- divisions cancelled by factors of the same product -----------------------------

@rewrites("mul", exact=False, again=True)
def cancel_divisions(b, op, inputs, uses):
    factors = _factors(inputs[0], uses) + _factors(inputs[1], uses)
    for s, total in enumerate(factors):
        terms = _terms(total, uses)
        if terms is None:
            continue
        others = factors[:s] + factors[s + 1:]
        plan = []
        for sign, num, den in terms:
            k = next((k for k, f in enumerate(others) if same(den, f)), None)
            if k is None:
                break
            plan.append((sign, num, others[:k] + others[k + 1:]))
        else:
            return [_combine(b, plan, op.result.hint)]
    return None


def _factors(v, uses) -> list:
    p = v.producer
    if p is not None and p.prim == "mul" and uses.of(v) == 1:
        return _factors(p.inputs[0], uses) + _factors(p.inputs[1], uses)
    return [v]


def _terms(v, uses):
    """``v`` as a signed sum of ``num / den`` terms: [(sign, num, den)], else None."""
    p = v.producer
    if p is None or uses.of(v) != 1:
        return None
    if p.prim in ("add", "sub"):
        left, right = _terms(p.inputs[0], uses), _terms(p.inputs[1], uses)
        if left is None or right is None:
            return None
        flip = -1 if p.prim == "sub" else 1
        return left + [(flip * s, n, d) for s, n, d in right]
    if p.prim == "div":
        return [(1, p.inputs[0], p.inputs[1])]
    return None


def _combine(b, plan, hint):
    out = None
    for sign, num, rest in plan:
        term = num
        for f in rest:
            term = b.mul(term, f)
        if out is None:
            out = term if sign > 0 else b.neg(term)
        else:
            out = b.add(out, term) if sign > 0 else b.sub(out, term)
    if all(out is not num for _, num, _ in plan):
        out.hint = hint  # a new last op carries the name of the value it replaces
    return out


from . import terms  # noqa: E402,F401  (registers collect_terms)
