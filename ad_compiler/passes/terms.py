"""Like terms collected: a sum of products rewritten as a careful person would.

``collect_terms`` (an algebra rule, exact up to rounding, for gradient-only
functions) reads the tree of single-use ``add``, ``sub``, ``neg`` and ``mul`` ops
under a sum as a signed sum of monomials ``c * f1 * f2 ...`` (``c`` a number, the
``f`` values computed elsewhere, compared by :func:`~.algebra.same`), adds the
coefficients of equal monomials, drops those that cancel, and writes the rest with
each coefficient once: ``c1 * (m1 + m2 - m3) + m4 ...``. It first reads products of
sums as they stand, then with the sums multiplied out (what cancels the log-loss
through a sigmoid: ``c*y*(1-p) - c*(1-y)*p`` is ``c*(y - p)``). The new form is
kept only when it is cheaper (one call's overhead plus one unit per element for
each NumPy call) and of the same type.

Exactness: equal in exact arithmetic; the grouping, and the coefficients summed
in float64, change the rounding. Where a monomial is infinite or nan, a dropped
pair (``inf - inf``) may leave a finite result where the literal one is nan.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import AdCompilerError
from ..ir.core import AType
from .algebra import const_value, rewrites, same

#: one NumPy call costs about as much as this many elements of arithmetic
CALL = 256
#: at most this many monomials when products of sums are multiplied out
MAX_TERMS = 12
_SUMS = ("add", "sub", "neg")


def interior(fn, count) -> set:
    """ids of the values inside a sum tree below its root: used once, by an ``add``,
    ``sub`` or ``neg``, or by a ``mul`` that is itself inside one."""
    inside: set = set()
    blocks = [fn.body] + [r for op in fn.body.walk() for r in op.regions]
    for block in blocks:
        own = {id(op) for op in block.ops}
        for op in reversed(block.ops):
            if len(op.results) != 1 or not (op.prim in _SUMS
                                             or op.prim == "mul" and id(op.result) in inside):
                continue
            for v in op.inputs:
                p = v.producer
                if count.get(id(v)) == 1 and p is not None and id(p) in own \
                        and p.prim in _SUMS + ("mul",) and len(p.results) == 1:
                    inside.add(id(v))
    return inside


@rewrites("add", "sub", "neg", exact=False)
def collect_terms(b, op, inputs, uses):
    if uses.inside(op.result) or not _float_array(op.result.type) \
            or not any(_through(v, uses) for v in inputs):
        return None   # (a sum of two values computed elsewhere has nothing to collect)
    for expand in (False, True):
        if expand and not _holds_products_of_sums(inputs, uses):
            break   # multiplied out, it reads the same
        terms = _terms(op.prim, inputs, uses, expand)
        if terms is None or len(terms) < 2:
            continue
        collected = _collect(terms)
        if collected is None or _ops(collected) >= _count(op, inputs, uses, expand):
            continue  # not fewer NumPy calls: nothing to gain (before building anything)
        start = len(b.block.ops)
        try:
            out = _emit(b, collected, op.result.hint)
        except AdCompilerError:
            out = None
        new = [o for o in b.block.ops[start:] if o.prim != "const"]   # (constants are free)
        if out is not None and out.type == op.result.type and \
                sum(_cost(o.result) for o in new) < _tree_cost(op, inputs, uses, expand):
            return [out]
        del b.block.ops[start:]   # not cheaper: nothing emitted
    return None


def _holds_products_of_sums(inputs, uses) -> bool:
    return any(_through(v, uses) and (_holds_sum(v, uses) if v.producer.prim == "mul"
                                      else _holds_products_of_sums(v.producer.inputs, uses))
               for v in inputs)


def _count(op, inputs, uses, expand) -> int:
    """The number of ops the reading ``expand`` of the tree under ``op`` takes apart."""
    return 1 + len(_read_nodes(inputs, uses, expand))


def _ops(terms) -> int:
    """The number of ops :func:`_emit` writes for ``terms`` (constants aside)."""
    groups: dict = {}
    for c, f in terms:
        groups.setdefault(abs(c), []).append(f)
    n = len(groups) - 1 + (all(c < 0 for c, _ in terms))
    for m, monomials in groups.items():
        if any(not f for f in monomials):
            return 1 << 30   # a bare number: not written (see _monomial)
        common = len(_common_factors(monomials))
        n += sum(len(f) - 1 - common for f in monomials) + len(monomials) - 1 + common
        n += m != 1.0
    return n


def _float_array(t) -> bool:
    return isinstance(t, AType) and t.dtype.kind == "f" and not t.dynamic


def _cost(v) -> int:
    t = v.type
    return CALL + (math.prod(t.shape) if isinstance(t, AType) and not t.dynamic else CALL)


def _tree_cost(op, inputs, uses, expand) -> int:
    """The cost of the ops under ``op`` that the reading ``expand`` goes through (they
    die when it is rewritten; its inputs are already rebuilt, perhaps by other
    rules), each computation once (cse merges repeats)."""
    return _cost(op.result) + sum(_cost(n) for n in _read_nodes(inputs, uses, expand))


def _read_nodes(inputs, uses, expand) -> list:
    """The values under ``inputs`` that the reading ``expand`` goes through, each once."""
    nodes: list = []

    def walk(u):
        if not _read_through(u, uses, expand) or any(same(u, n) for n in nodes):
            return
        nodes.append(u)
        for w in u.producer.inputs:
            walk(w)
    for v in inputs:
        walk(v)
    return nodes


def _read_through(v, uses, expand) -> bool:
    """The reading ``expand`` takes ``v`` apart (else ``v`` is a monomial's factor)."""
    return _through(v, uses) and (v.producer.prim != "mul" or expand
                                  or not _holds_sum(v, uses))


def _through(v, uses) -> bool:
    """``v`` is a sum or product inside the tree (a paired new value may be another
    rule's replacement of an op inside: a division, a value computed elsewhere)."""
    p = v.producer
    return uses.inside(v) and p is not None and p.prim in _SUMS + ("mul",)


def _coefficient(v):
    """The value of a finite real scalar constant, else None."""
    c = const_value(v)
    if c is None or np.size(c) != 1 or np.asarray(c).dtype.kind not in "iuf":
        return None
    c = float(np.asarray(c).reshape(()))
    return c if np.isfinite(c) else None


def _terms(prim, inputs, uses, expand):
    """The op ``prim`` of ``inputs`` as ``[(coefficient, [factors])]``, or None when
    a leaf is not a float array or a float, or when there would be too many terms."""
    parts = [_expand(v, uses, expand) for v in inputs]
    if None in parts:
        return None
    if prim == "add":
        return parts[0] + parts[1]
    if prim == "sub":
        return parts[0] + _negated(parts[1])
    if prim == "neg":
        return _negated(parts[0])
    return _product(parts[0], parts[1])


def _expand(v, uses, expand):
    c = _coefficient(v)
    if c is not None:
        return [(c, [])]
    p = v.producer
    if _read_through(v, uses, expand):
        terms = _terms(p.prim, p.inputs, uses, expand)
        return None if terms is None or len(terms) > MAX_TERMS else terms
    t = v.type
    if not isinstance(t, AType) or t.dynamic or t.dtype.kind != "f" and not t.weak:
        return None
    return [(1.0, [v])]


def _holds_sum(v, uses) -> bool:
    """A product with a sum among its factors (kept whole unless multiplied out)."""
    p = v.producer
    return p is not None and (p.prim in _SUMS or p.prim == "mul" and any(
        uses.inside(u) and _holds_sum(u, uses) for u in p.inputs))


def _negated(terms):
    return [(-c, f) for c, f in terms]


def _product(left, right):
    return [(a * c, f + g) for a, f in left for c, g in right]


def _collect(terms):
    """Equal monomials merged (coefficients added), cancelled ones dropped:
    ``[(coefficient, factors)]`` in order of first appearance, or None if the
    coefficients overflow."""
    reps: list = []

    def index(f):
        for i, r in enumerate(reps):
            if same(f, r):
                return i
        reps.append(f)
        return len(reps) - 1
    merged: dict = {}
    for c, factors in terms:
        key = tuple(sorted(index(f) for f in factors))
        if key in merged:
            merged[key] = (merged[key][0] + c, merged[key][1])
        else:
            merged[key] = (c, factors)
    out = [(c, f) for c, f in merged.values() if c != 0]
    if not all(np.isfinite(c) for c, _ in out):
        return None
    return out


def _emit(b, terms, hint):
    """``sum of coefficient * monomial``, each coefficient written once."""
    if not terms:
        return None
    groups: dict = {}
    for c, f in terms:
        groups.setdefault(abs(c), []).append((1 if c > 0 else -1, f))
    parts = []   # (sign, value)
    for m, items in groups.items():
        items.sort(key=lambda sf: -sf[0])   # a positive monomial first: no neg to start
        flip = items[0][0] < 0
        common = _common_factors([f for _, f in items])
        if common:   # a factor of every monomial multiplies their sum, once
            items = [(sign, _without(f, common)) for sign, f in items]
        value = None
        for sign, f in items:
            mono = _monomial(b, f)
            if mono is None:
                return None
            sign = -sign if flip else sign
            value = mono if value is None else (b.add(value, mono) if sign > 0
                                                else b.sub(value, mono))
        for f in common:
            value = b.mul(value, f)
        sign = -1 if flip else 1
        if m != 1.0:
            value = b.mul(value, b.const(m * sign))
            sign = 1
        parts.append((sign, value))
    parts.sort(key=lambda sv: -sv[0])   # (stable: the coefficient of the first term first)
    out = None
    for sign, value in parts:
        if out is None:
            out = value if sign > 0 else b.neg(value)
        else:
            out = b.add(out, value) if sign > 0 else b.sub(out, value)
    if out.producer is not None and all(out is not f for _, fs in terms for f in fs):
        out.hint = hint
    return out


def _common_factors(monomials) -> list:
    """The factors every one of ``monomials`` (two or more) has, when each keeps one."""
    if len(monomials) < 2:
        return []
    common = []
    rest = [list(f) for f in monomials]
    for f in list(rest[0]):
        if all(any(same(f, g) for g in r) for r in rest[1:]) and all(len(r) > 1 for r in rest):
            common.append(f)
            rest = [_without(r, [f]) for r in rest]
    return common


def _without(factors, drop) -> list:
    """``factors`` less one occurrence of each of ``drop``."""
    out = list(factors)
    for d in drop:
        k = next(i for i, g in enumerate(out) if same(d, g))
        del out[k]
    return out


def _monomial(b, factors):
    if not factors:
        return None   # a bare number: left to the literal form
    out = factors[0]
    for f in factors[1:]:
        out = b.mul(out, f)
    return out
