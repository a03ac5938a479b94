"""Negation pushing: move ``neg`` outward until it cancels or becomes a subtraction.

VJP rules negate freely (``d(a - b)/db``, ``d(1/y)``, ``d cos``); each ``neg`` is a
full pass over an array. Negation is exact in IEEE arithmetic, so these rewrites
change no bit of the result::

    mul(neg a, b) -> neg mul(a, b)      div(neg a, b) -> neg div(a, b)
    add(a, neg b) -> sub(a, b)          add(neg a, b) -> sub(b, a)
    sub(a, neg b) -> add(a, b)          neg(neg a)    -> a

    sum(neg a)    -> sub(0.0, sum(a))   mean(neg a)   -> sub(0.0, mean(a))
    index_add(acc, neg v) -> index_sub(acc, v)   (and index_sub -> index_add)

(Signed zeros included. A reduction's result is not simply negated: for
``a = [1, -1]``, ``-(sum a)`` is ``-0`` where ``sum(-a)`` is ``+0``; ``0.0 - s``
gives ``+0`` in both cases, and the subtraction runs on the small reduced array.)

A pushed-out ``neg`` lands on the op's result, where the next consumer can absorb
it in turn; the ``neg`` ops left unused are removed by DCE. A ``neg`` moves through
a ``mul``/``div`` whose result is larger than the negated value (``s * -q`` with
``q`` a row of sums) only when every use of that result absorbs it, so a small
negation never becomes a large one::

    d = s * neg(q);  out = a + d     ->     d = s * q;  out = a - d
"""
from __future__ import annotations

from ..ir.core import Function
from ..ir.names import expression_hint
from .rewrite import rewrite

_THROUGH = {"mul": (0, 1), "div": (0,)}


def _unneg(v):
    """``a`` when ``v`` is ``neg(a)``, else None."""
    op = v.producer
    return op.inputs[0] if op is not None and op.prim == "neg" else None


def negate(fn: Function) -> Function:
    absorbed = _absorbed(fn)

    def rule(b, op, inputs):
        if op.prim not in _REWRITTEN:
            return None
        with b.at(op.loc):
            if op.prim == "neg":
                return _neg_neg(inputs)
            if op.prim in ("add", "sub"):
                return _add_sub(b, op, inputs)
            if op.prim in _THROUGH:
                return _through(b, op, inputs, absorbed)
            if op.prim in ("sum", "mean"):
                return _reduce(b, op, inputs)
            if op.prim in _UPDATE_SWAP:
                return _update(b, op, inputs)
        return None
    return rewrite(fn, rule)


def _emit(b, op, prim, inputs, hint=None):
    out = b.emit(prim, *inputs, hint=hint or op.result.hint, **op.params)
    return out if out.type == op.result.type else None


def _neg_neg(inputs):
    inner = _unneg(inputs[0])
    return [inner] if inner is not None else None


def _absorbed(fn: Function) -> set:
    """ids of the values each of whose uses would absorb a negation of it: an ``add``,
    the right side of a ``sub``, a ``neg``, or a ``mul``/``div`` (on a side a negation
    moves through) whose own result is absorbed. Outputs and yields absorb nothing."""
    uses: dict[int, list] = {}
    blocks = [fn.body] + [r for op in fn.body.walk() for r in op.regions]
    for block in blocks:
        for op in block.ops:
            for i, v in enumerate(op.inputs):
                uses.setdefault(id(v), []).append((op, i))
        for v in block.results:
            uses.setdefault(id(v), []).append((None, None))
    absorbed: set = set()
    ops = [op for op in fn.body.walk()]
    for op in reversed(ops):  # uses come after definitions: decide consumers first
        for v in op.results:
            users = uses.get(id(v), [])
            if users and all(_absorbs(u, i, absorbed) for u, i in users):
                absorbed.add(id(v))
    return absorbed


def _absorbs(user, i, absorbed) -> bool:
    if user is None or user.regions:
        return False
    if user.prim in ("add", "neg") or (user.prim == "sub" and i == 1):
        return True
    return i in _THROUGH.get(user.prim, ()) and id(user.result) in absorbed


def _through(b, op, inputs, absorbed):
    for i in _THROUGH[op.prim]:
        inner = _unneg(inputs[i])
        # only where the neg does not grow (-k * x, k a number, x an array, stays)
        # or where every use of the result absorbs it
        if inner is not None and (op.result.type.size <= inner.type.size
                                  or id(op.result) in absorbed):
            ins = inputs[:i] + [inner] + inputs[i + 1:]
            new = _emit(b, op, op.prim, ins, hint=expression_hint(op.prim, ins))
            if new is not None:
                return [b.emit("neg", new, hint=op.result.hint)]
    return None


_UPDATE_SWAP = {"index_add": "index_sub", "index_sub": "index_add"}
#: the primitives the rule looks at
_REWRITTEN = {"neg", "add", "sub", "sum", "mean", *_THROUGH, *_UPDATE_SWAP}


def _update(b, op, inputs):
    """``acc[idx] += -v`` is ``acc[idx] -= v`` (and the other way round)."""
    inner = _unneg(inputs[1])
    if inner is None:
        return None
    new = _emit(b, op, _UPDATE_SWAP[op.prim], [inputs[0], inner, *inputs[2:]])
    return None if new is None else [new]


def _reduce(b, op, inputs):
    inner = _unneg(inputs[0])
    if inner is None or op.result.type.size >= inner.type.size:
        return None
    new = _emit(b, op, op.prim, [inner], hint=expression_hint(op.prim, [inner]))
    if new is None:
        return None
    out = b.emit("sub", b.const(0.0), new, hint=op.result.hint)
    return [out] if out.type == op.result.type else None


def _add_sub(b, op, inputs):
    x, y = inputs
    nx, ny = _unneg(x), _unneg(y)
    if op.prim == "add" and ny is not None:
        new = _emit(b, op, "sub", [x, ny])
    elif op.prim == "add" and nx is not None:
        new = _emit(b, op, "sub", [y, nx])
    elif op.prim == "sub" and ny is not None:
        new = _emit(b, op, "add", [x, ny])
    else:
        return None
    return None if new is None else [new]
