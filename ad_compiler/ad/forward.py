"""Forward mode: build the Jacobian-vector-product function of an IR function.

``jvp_function(f, wrt)`` returns a new Function (``f`` is untouched)::

    def f_jvp(*f.args, *tangents of the wrt args):
        <each op of f, followed by its JVP rule when an input carries a tangent>
        return (*f.outputs, *tangents of the outputs)

Tangents are propagated with the primitives' JVP rules (``jvp(b, tangents, out,
*inputs, **params)``), so the result is ordinary IR again. Structured control
flow is not handled in forward mode yet (a clear error says so).
"""
from __future__ import annotations

from typing import Sequence

from . import rules
from ..errors import UnsupportedOperationError
from ..ir.builder import Builder, fit
from ..ir.clone import clone_block
from ..ir.control import free_values
from ..ir.core import Block, Function, Value


def jvp_function(fn: Function, wrt: Sequence[int], name: str | None = None) -> Function:
    body = Block(args=[Value(a.type, a.hint) for a in fn.args])
    tangents = {id(body.args[i]): Value(body.args[i].type, "t" + (body.args[i].hint or ""))
                for i in wrt}
    b = Builder(body)
    vmap = {id(a): n for a, n in zip(fn.args, body.args)}
    for op in fn.body.ops:
        new_op = _clone_op(b, op, vmap)
        _push_tangent(b, new_op, tangents)
    outs = [vmap.get(id(v), v) for v in fn.outputs]
    touts = [_tangent_out(b, tangents.get(id(o)), o) for o in outs]
    body.args.extend(tangents[id(body.args[i])] for i in wrt)
    body.results = outs + touts
    return Function(name or f"{fn.name}_jvp", body, fn.loc)


def _clone_op(b, op, vmap):
    clone_block(b, Block(ops=[op], results=[]), vmap)
    return b.block.ops[-1]


def _push_tangent(b, op, tangents: dict) -> None:
    ins = tuple(tangents.get(id(v)) for v in op.inputs)
    captured = free_values(op) if op.regions else []
    if all(t is None for t in ins) and not any(id(v) in tangents for v in captured):
        return
    if op.regions:
        raise UnsupportedOperationError(
            f"forward mode (jvp, jacfwd) does not go through '{op.prim}' yet", op.loc,
            "use vjp or jacrev, which handle control flow")
    prim = rules.get(op.prim)
    if prim.nondiff:
        return
    if prim.jvp is None:
        raise UnsupportedOperationError(
            f"forward mode (jvp, jacfwd) needs a jvp rule for '{op.prim}', which has none", op.loc,
            "register one with ad_compiler.primitive(..., jvp=...), or use vjp or jacrev")
    with b.at(op.loc):
        t = prim.jvp(b, ins, op.result, *op.inputs, **op.params)
    if t is not None:
        tangents[id(op.result)] = t


def _tangent_out(b, t, out: Value) -> Value:
    if t is None:
        return b.emit("zeros_like", out, hint="t" + (out.hint or "out"))
    return fit(b, t, out.type) if t.type != out.type else t
