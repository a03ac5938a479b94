"""``bprop_call``: a Cell call whose adjoint is the Cell's own ``bprop``.

Forward, the op runs its region (the inlined ``construct``) on its inputs. Its
VJP lifts ``cell.bprop(*inputs, out, dout)`` with the frontend and inlines that
IR: one gradient per input (a bare value for one input; ``None`` means zeros;
extra entries are ignored). Too few gradients or a wrong shape is a
RuntimeError naming the Cell; a wrong dtype is cast. Values the region only
captures (the Cell's Parameters) get no gradient from the call, as in MindSpore.
"""
from __future__ import annotations

from .reverse import STRUCTURAL_VJP, accumulate
from ..codegen.control import rebind
from ..codegen.emit import STRUCTURAL_EMIT
from ..errors import GradRuntimeError
from ..ir import interp, verifier
from ..ir.builder import fit
from ..ir.clone import inline

verifier.STRUCTURAL.add("bprop_call")


def _eval(op, env, run_block):
    return run_block(op.regions[0], env, [env[id(v)] for v in op.inputs])


def _emit(op, ctx) -> list:
    (region,) = op.regions
    return (rebind(ctx, region.args, op.inputs) + ctx.block(region)
            + rebind(ctx, op.results, region.results))


def _pack(values):
    return values[0] if len(values) == 1 else tuple(values)


def vjp_bprop_call(b, op, cts, active) -> None:
    from ..frontend import lift
    from ..api.signature import Static
    cell = op.params["cell"]
    name = type(cell).__name__
    douts = [cts.get(id(r)) or b.emit("zeros_like", r) for r in op.results]
    specs = tuple(v.type for v in op.inputs) + (
        _pack([r.type for r in op.results]), _pack([d.type for d in douts]))
    lifted = lift(cell.bprop, specs)
    if lifted.params or lifted.captured.arrays:
        what = "Parameters" if lifted.params else "arrays from outside it"
        raise GradRuntimeError(f"{name}.bprop reads {what}; pass what it needs as inputs",
                               op.loc)
    with b.at(op.loc):
        outs = inline(b, lifted.function, [*op.inputs, *op.results, *douts])
    tree = lifted.out_tree
    grads = list(tree) if isinstance(tree, (tuple, list)) else [tree]
    if len(grads) < len(op.inputs):
        raise GradRuntimeError(f"{name}.bprop returned {len(grads)} gradient(s) for "
                               f"{len(op.inputs)} input(s)", op.loc,
                               "return one gradient per input of construct (None for zeros)")
    for v, g in zip(op.inputs, grads):
        if isinstance(g, Static) or g is None or not isinstance(g, int):
            continue  # None: a zero gradient
        ct = outs[g]
        if ct.type.shape != v.type.shape:
            raise GradRuntimeError(f"{name}.bprop returned a gradient of shape {ct.type.shape} "
                                   f"for an input of shape {v.type.shape}", op.loc)
        if id(v) in active:
            accumulate(b, cts, v, fit(b, ct, v.type))


interp.STRUCTURAL_EVAL["bprop_call"] = _eval
STRUCTURAL_EMIT["bprop_call"] = _emit
STRUCTURAL_VJP["bprop_call"] = vjp_bprop_call
