"""Reverse mode: build the vector-Jacobian-product function of an IR function.

``vjp_function(f, wrt, seeds)`` returns a new Function (``f`` is untouched)::

    def f_grad(*f.args, *sens_args):
        <forward ops of f, copied>
        <for each active op, in reverse: its VJP rule, emitted through the builder>
        return (*f.outputs if with_outputs, *cotangents of the wrt args)

Each output is seeded by ``seeds[i]``: ``"ones"`` (sensitivity one, as
GradOperation without sens_param), ``"arg"`` (a sensitivity argument appended
to the inputs) or ``"none"`` (not differentiated: has_aux outputs). The result
is ordinary IR made of registered primitives, so it can be optimised, printed
and differentiated again with this same function (gradients of gradients).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from . import rules
from .activity import active_values
from ..errors import AdCompilerError, located
from ..ir.builder import Builder
from ..ir.clone import clone_block
from ..ir.core import Block, Function, ListType, Value
from ..ir.names import adjoint_hint, built_hint
from ..stages import stage

ONES, ARG, NONE = "ones", "arg", "none"

#: VJP builders for structured ops (if, loops): fn(b, op, ct_map, active) -> None
STRUCTURAL_VJP: dict[str, Callable] = {}


@stage("reverse")
def vjp_function(fn: Function, wrt: Sequence[int], seeds: Sequence[str], *,
                 with_outputs: bool = False, name: str | None = None) -> Function:
    """The VJP of ``fn`` w.r.t. its args at positions ``wrt``; see the module docstring."""
    if len(seeds) != len(fn.outputs):
        raise ValueError(f"{len(seeds)} seeds for {len(fn.outputs)} outputs")
    body = Block(args=[Value(a.type, a.hint) for a in fn.args])
    b = Builder(body)
    vmap = {id(a): n for a, n in zip(fn.args, body.args)}
    outs = clone_block(b, fn.body, vmap)
    forward = Block(ops=list(body.ops))
    wrt_vals = [body.args[i] for i in wrt]
    seeded = [o for o, s in zip(outs, seeds) if s != NONE]
    active = active_values(forward, wrt_vals, seeded)
    cts: dict[int, Value] = {}
    _seed(b, body, outs, seeds, active, cts)
    backprop_block(b, forward, cts, active)
    grads = [_final_grad(b, cts.get(id(a)), a) for a in wrt_vals]
    body.results = (list(outs) if with_outputs else []) + grads
    return Function(name or f"{fn.name}_grad", body, fn.loc)


def _seed(b, body, outs, seeds, active, cts):
    sens = []
    for out, seed in zip(outs, seeds):
        if seed == ARG:
            arg = Value(out.type, "d" + (out.hint or "out"))
            sens.append(arg)
        if seed == NONE or id(out) not in active:
            continue
        with b.at(out.producer.loc if out.producer else None):
            ct = sens[-1] if seed == ARG else _ones(b, out)
        accumulate(b, cts, out, ct)
    body.args.extend(sens)


def _ones(b, v: Value) -> Value:
    """The seed sensitivity of ``v``: a constant, so the forward value itself is not
    needed (DCE drops a forward computation only the seed's shape depended on)."""
    t = v.type
    if t.dynamic:  # a run-time length (ir/dims.py): the seed takes v's shape then
        return b.ones_like(v, hint="d" + (v.hint or "out"))
    if t.weak:
        one = t.python_type(1)
    else:
        one = np.ones(t.shape, t.dtype)
        one = one[()] if t.shape == () else one
    return b.const(one, hint="d" + (v.hint or "out"))


def accumulate(b, cts: dict, v: Value, ct: Value) -> None:
    """Add the contribution ``ct`` to the cotangent of ``v``.

    A contribution that is an update of fresh zeros (a slice's adjoint) is applied
    to the cotangent built so far instead, through the primitive's
    ``rules.ACCUMULATE_INTO`` entry: slice adjoints then share one array.
    """
    old = cts.get(id(v))
    if old is None:
        cts[id(v)] = ct
        return
    merged = merge_into(b, old, ct)
    if merged is None:
        merged = merge_into(b, ct, old)
    if merged is not None and built_hint(merged):
        merged.hint = _dname(v)
    cts[id(v)] = merged if merged is not None else add_cotangents(b, old, ct, hint=_dname(v))


def add_cotangents(b, x: Value, y: Value, hint=None) -> Value:
    """``x + y`` for two cotangents of one value: item by item for lists (``+`` on
    Python lists would concatenate them)."""
    return b.emit("list_add" if isinstance(x.type, ListType) else "add", x, y, hint=hint)


def zero_cotangent(b, v: Value, hint=None) -> Value:
    """A zero cotangent for ``v``: ``zeros_like``, or a list of zeros for a list."""
    return b.emit("list_zeros" if isinstance(v.type, ListType) else "zeros_like", v,
                  hint=hint or _dname(v))


def merge_into(b, acc: Value, contribution: Value):
    """``acc + contribution`` as one update of ``acc`` when the contribution is an
    update of fresh zeros (``rules.ACCUMULATE_INTO``); None otherwise."""
    into = rules.ACCUMULATE_INTO.get(getattr(contribution.producer, "prim", None))
    if into is None:
        return None
    out = into(b, acc, contribution)
    if out is not None and built_hint(out):  # the accumulator, one update later: dx[i] += g keeps dx
        out.hint = acc.hint
    return out


def _dname(v: Value) -> str:
    return adjoint_hint(v)


def backprop_block(b, block: Block, cts: dict, active: set) -> None:
    """Emit the VJP of ``block``'s ops, last first, accumulating into ``cts``."""
    for op in reversed(block.ops):
        _backprop(b, op, cts, active)


def _backprop(b, op, cts, active) -> None:
    if not any(id(r) in cts for r in op.results):
        return
    if op.prim in STRUCTURAL_VJP:
        STRUCTURAL_VJP[op.prim](b, op, cts, active)
        return
    prim = rules.get(op.prim)
    if prim.nondiff or not any(id(v) in active for v in op.inputs):
        return
    if prim.vjp is None:
        raise AdCompilerError(f"no gradient is defined for {op.prim!r}", op.loc,
                              "wrap the value in ops.stop_gradient(...) if no gradient is needed")
    out = op.result
    with b.at(op.loc), located(op.loc):
        in_cts = prim.vjp(b, cts[id(out)], out, *op.inputs, **op.params)
        for inp, ct in zip(op.inputs, in_cts, strict=True):
            if ct is None or id(inp) not in active:
                continue
            _name_cotangent(ct, inp)
            accumulate(b, cts, inp, real_part(b, ct, inp))


def real_part(b, ct: Value, primal: Value) -> Value:
    """The cotangent of a real ``primal`` that met complex values is the real part of
    ``ct`` (JAX's convention, ops/complex_numbers.py); else ``ct`` itself."""
    ct_type, primal_type = b.type_of(ct), b.type_of(primal)
    if getattr(ct_type, "dtype", None) is None or getattr(primal_type, "dtype", None) is None:
        return ct  # lists
    if ct_type.dtype.kind == "c" and primal_type.dtype.kind != "c":
        return b.emit("real", ct, hint=ct.hint)
    return ct


def _name_cotangent(ct: Value, primal: Value) -> None:
    """Give a freshly computed cotangent the name ``d<primal>`` (``dx`` for ``x``)."""
    if built_hint(ct):  # an intermediate of the rule: named after what it is
        ct.hint = _dname(primal)


def _final_grad(b, ct, arg: Value) -> Value:
    if ct is None:
        return b.emit("zeros_like", arg, hint=_dname(arg))
    ct = b.fit(ct, arg)
    _name_cotangent(ct, arg)
    return ct
