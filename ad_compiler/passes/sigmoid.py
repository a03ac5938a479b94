"""The logistic function spelled out: ``1 / (1 + np.exp(-a))`` is the ``sigmoid`` primitive.

Users write the logistic function by hand. Its literal adjoint goes through the
reciprocal, the sum and the exponential (``ct * p / (1 + e) * e``) and knows
nothing of ``p``; as ``sigmoid(a)`` its VJP is ``ct * p * (1 - p)``, in terms of
the forward value, which lets the algebra pass cancel the divisions of a
log-loss (``d/da log p = 1 - p``, ``d/da log(1 - p) = -p``) and reuse the
forward ``1 - p``. The primitive's template is the same expression,
``1 / (1 + np.exp(-a))``, so the value is the same, bit for bit.

Rewritten only when the constants are the Python numbers 1 (a NumPy constant
could change the result's dtype, and the result type is checked unchanged), and
the intermediate ``-a``, ``exp``, ``1 + exp`` are used nowhere else (they would
be computed twice).
"""
from __future__ import annotations

from ..ir.core import Function
from .algebra import Uses, const_value
from .rewrite import rewrite


def recognise_sigmoid(fn: Function) -> Function:
    uses = Uses(fn)

    def rule(b, op, inputs):
        uses.see(op, inputs)
        if op.prim != "div" or not _one(inputs[0]):
            return None
        a = _logistic_argument(inputs[1], uses)
        if a is None:
            return None
        with b.at(op.loc):
            out = b.sigmoid(a, hint=op.result.hint)
        return [out] if out.type == op.result.type else None
    return rewrite(fn, rule)


def _one(v) -> bool:
    c = const_value(v)
    return type(c) in (int, float) and c == 1


def _logistic_argument(v, uses):
    """``a`` if ``v`` is ``1 + exp(-a)`` (or ``exp(-a) + 1``) built for this use only."""
    add = v.producer
    if add is None or add.prim != "add" or uses.of(v) != 1:
        return None
    for i in (0, 1):
        e = add.inputs[1 - i]
        if not _one(add.inputs[i]) or e.producer is None or e.producer.prim != "exp":
            continue
        n = e.producer.inputs[0]
        if uses.of(e) == 1 and n.producer is not None and n.producer.prim == "neg" \
                and uses.of(n) == 1:
            return n.producer.inputs[0]
    return None
