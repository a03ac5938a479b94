"""Constant folding: ops whose inputs are all small constants are computed now.

Seeds and scale factors of adjoints are constants (``1``, ``1/n``), so chains
like ``neg -> div -> reshape`` of a seed become one constant. Only results of
at most ``MAX_ELEMENTS`` elements are folded, so no large array is baked into
the generated code, and never an op whose result is larger than its inputs
(``broadcast_to`` stays symbolic, for simplify to make implicit). Products with
constants merge when that is exact: ``100.0 * (s * 2)`` becomes ``s * 200.0``.
Before/after::

    %dout = const {value=1.0}
    %neg = neg %dout
    %div = div %neg, %c4           ->   %div = const {value=-0.25}
"""
from __future__ import annotations

import numpy as np

from ..ad import rules
from ..ir.core import AType, Function
from .rewrite import copy_op, rewrite

MAX_ELEMENTS = 16


def fold(fn: Function) -> Function:
    values: dict[int, object] = {}

    def rule(b, op, inputs):
        if op.prim == "const":  # kept as it is (it was built by b.emit like _const's)
            new = copy_op(b, op, inputs)
            values[id(new[0])] = op.params["value"]
            return new
        if op.prim == "mul":
            merged = _merge_factors(b, op, inputs, values)
            if merged is not None:
                return merged
        if (op.prim == "copy" or len(op.results) != 1 or not inputs
                or not all(id(v) in values for v in inputs)):
            return None
        result = _evaluate(op, [values[id(v)] for v in inputs])
        if result is None:
            return None
        new = _const(b, op, result)
        values[id(new[0])] = result
        return new
    return rewrite(fn, rule)


def _merge_factors(b, op, inputs, values):
    """``c1 * (a * c2)`` -> ``a * (c1 * c2)`` when ``c1`` or ``c2`` is a power of two.

    Scaling by a power of two is exact, so both sides round once, to the same value
    (overflow and underflow aside): one multiplication less, bit for bit the same.
    """
    for i in (0, 1):
        c1, inner = inputs[i], inputs[1 - i]
        if id(c1) not in values or inner.producer is None or inner.producer.prim != "mul":
            continue
        ins = inner.producer.inputs
        for j in (0, 1):
            c2, a = ins[j], ins[1 - j]
            if id(c2) not in values or not (_power_of_two(values[id(c1)])
                                            or _power_of_two(values[id(c2)])):
                continue
            product = rules.get("mul").impl(values[id(c1)], values[id(c2)])
            if np.size(product) != 1:
                continue
            with b.at(op.loc):
                out = b.emit("mul", a, b.const(product), hint=op.result.hint)
            if out.type == op.result.type:
                return [out]
    return None


def _power_of_two(v) -> bool:
    if isinstance(v, bool) or np.size(v) != 1 or np.iscomplexobj(v):
        return False
    x = float(np.asarray(v).reshape(()))
    return x != 0.0 and np.isfinite(x) and np.frexp(abs(x))[0] == 0.5


def _const(b, op, value):
    with b.at(op.loc):
        return [b.emit("const", hint=op.result.hint, value=value)]


def _evaluate(op, args):
    """The op's value on constant ``args``, if it is small and has the op's exact type."""
    if not isinstance(op.result.type, AType):  # lists (unstack ...) stay symbolic
        return None
    if op.result.type.size > min(MAX_ELEMENTS, max(np.size(a) for a in args)):
        return None
    try:
        with np.errstate(all="ignore"):
            result = rules.get(op.prim).impl(*args, **op.params)
    except Exception:  # noqa: BLE001 - a failing fold just leaves the op in place
        return None
    if isinstance(result, np.ndarray) and result.ndim == 0:
        result = result[()]
    if AType.of(result) != op.result.type:
        return None
    if isinstance(result, np.ndarray):
        result.setflags(write=False)
    return result
