"""``bprop_call``: a call whose adjoint is its own rule (frontend/custom.py).

Forward, the op runs its region (the inlined ``construct`` or ``fwd``) on its
inputs. Its VJP lifts the rule's backward function with the frontend and
inlines that IR, so the adjoint is ordinary IR (differentiable again):

* a Cell's ``bprop(*inputs, out, dout)``: one gradient per input (a bare value
  for one input; ``None`` means zeros; extra entries are ignored);
* a ``custom_vjp`` function's ``bwd(residuals, g)``: a tuple with one cotangent
  per positional argument (``None`` for none).

Too few gradients or a wrong shape is a RuntimeError naming the rule; a wrong
dtype is cast. Values the region only captures (the Cell's Parameters) get no
gradient from the call, as in MindSpore.
"""
from __future__ import annotations

from .control import _replay
from .forward import STRUCTURAL_JVP
from .reverse import ARG, NONE, STRUCTURAL_VJP, accumulate, vjp_function
from ..codegen.control import rebind
from ..codegen.emit import STRUCTURAL_EMIT
from ..errors import GradRuntimeError, UnsupportedOperationError
from ..ir import interp, verifier
from ..ir.builder import fit
from ..frontend.specs import Static
from ..frontend.custom import At, CellRule, JVPRule
from ..ir.clone import inline
from ..ir.control import free_values

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
    rule = op.params["rule"]
    n_out = op.params["n_out"]
    outputs = op.results[:n_out]
    douts = [cts.get(id(r)) or b.emit("zeros_like", r) for r in outputs]
    if isinstance(rule, CellRule):
        grads = _cell_backward(b, op, outputs, douts)
    elif isinstance(rule, JVPRule):
        grads = _transposed_jvp(b, op, douts)
    else:
        grads = _function_backward(b, op, douts)
    _residual_backward(b, op, cts, active)
    for v, ct in zip(op.inputs, grads):
        if ct is None:
            continue  # a zero gradient
        if ct.type.shape != v.type.shape:
            raise GradRuntimeError(f"{rule.name} returned a gradient of shape {ct.type.shape} "
                                   f"for an input of shape {v.type.shape}", op.loc)
        if id(v) in active:
            accumulate(b, cts, v, fit(b, ct, v.type))


def _residual_backward(b, op, cts, active) -> None:
    """Cotangents reaching the residuals (a gradient of a gradient reads them in the
    inlined ``bwd``) flow back through ``fwd``, differentiated as ordinary code."""
    n_out = op.params["n_out"]
    seeds = [None] * n_out + [cts.get(id(r)) for r in op.results[n_out:]]
    if all(s is None for s in seeds):
        return
    (region,) = op.regions
    vmap = {id(a): v for a, v in zip(region.args, op.inputs)}
    captured = [v for v in free_values(op) if id(v) in active]
    with b.at(op.loc):
        inner = _replay(b, region, vmap, seeds, captured)
    for v in [*op.inputs, *captured]:
        ct = inner.get(id(v))
        if ct is not None and id(v) in active:
            accumulate(b, cts, v, fit(b, ct, v.type))


def _lift_backward(b, op, fn, specs, values, name):
    """``fn`` lifted on ``specs`` and inlined on ``values``: (output values, output tree)."""
    from ..frontend import lift
    lifted = lift(fn, specs)
    if lifted.params or lifted.captured.arrays:
        what = "Parameters" if lifted.params else "arrays from outside it"
        raise GradRuntimeError(f"{name} reads {what}; pass what it needs as inputs", op.loc)
    with b.at(op.loc):
        outs = inline(b, lifted.function, values)
    return outs, lifted.out_tree


def _cell_backward(b, op, outputs, douts) -> list:
    """``cell.bprop(*inputs, out, dout)``: one gradient per input (a bare value for one
    input; None means zeros; extra entries are ignored)."""
    rule = op.params["rule"]
    specs = tuple(v.type for v in op.inputs) + (
        _pack([r.type for r in outputs]), _pack([d.type for d in douts]))
    outs, tree = _lift_backward(b, op, rule.cell.bprop, specs,
                                [*op.inputs, *outputs, *douts], rule.name)
    grads = list(tree) if isinstance(tree, (tuple, list)) else [tree]
    if len(grads) < len(op.inputs):
        raise GradRuntimeError(f"{rule.name} returned {len(grads)} gradient(s) for "
                               f"{len(op.inputs)} input(s)", op.loc,
                               "return one gradient per input of construct (None for zeros)")
    return [outs[g] if _is_position(g) else None for g in grads[:len(op.inputs)]]


def _function_backward(b, op, douts) -> list:
    """``bwd(residuals, g)`` of a ``custom_vjp`` function: a tuple with one cotangent per
    positional argument (a tuple for a tuple argument, None for a zero)."""
    rule = op.params["rule"]
    residual_tree = op.params["residuals"]
    saved: list = []
    res_spec = _spec(residual_tree, op.results, saved)
    g_spec = _pack([d.type for d in douts])
    outs, tree = _lift_backward(b, op, rule.custom.bwd, (res_spec, g_spec),
                                saved + list(douts), rule.name)
    args_tree = op.params["args"]
    if not isinstance(tree, (tuple, list)) or len(tree) != len(args_tree):
        got = len(tree) if isinstance(tree, (tuple, list)) else "a single value"
        raise GradRuntimeError(f"{rule.name} returned {got} where a tuple of "
                               f"{len(args_tree)} cotangent(s) is needed", op.loc,
                               "return one cotangent per argument of the function, in a tuple "
                               "(None for an argument without one)")
    grads: list = [None] * len(op.inputs)
    _match(args_tree, tuple(tree), outs, grads, rule.name, op.loc)
    return grads


def _lifted_jvp(op):
    """The rule ``jvp(primals, tangents)`` of a ``custom_jvp`` call, lifted: its arguments
    are the primals then the tangents; returns (lifted, indices of the tangent outputs)."""
    from ..frontend import lift
    rule = op.params["rule"]
    types = tuple(v.type for v in op.inputs)
    lifted = lift(rule.custom.jvp, (types, types))
    if lifted.params or lifted.captured.arrays:
        what = "Parameters" if lifted.params else "arrays from outside it"
        raise GradRuntimeError(f"{rule.name} reads {what}; pass what it needs as inputs", op.loc)
    tree = lifted.out_tree
    if not (isinstance(tree, tuple) and len(tree) == 2):
        raise GradRuntimeError(f"{rule.name} must return a pair (out, tangent_out)", op.loc)
    tangent_outs: list = []
    _positions_in(tree[1], tangent_outs)
    if len(tangent_outs) != op.params["n_out"]:
        raise GradRuntimeError(f"{rule.name} returned {len(tangent_outs)} tangent(s) for "
                               f"{op.params['n_out']} output(s)", op.loc)
    return lifted, tangent_outs


def _positions_in(tree, out: list) -> None:
    if _is_position(tree):
        out.append(tree)
    elif isinstance(tree, (tuple, list)):
        for t in tree:
            _positions_in(t, out)


def _transposed_jvp(b, op, douts) -> list:
    """Reverse mode through a ``custom_jvp`` call: the tangent output is linear in the
    tangents, so its VJP w.r.t. them (at any tangent, zeros here) is the cotangent of
    the inputs."""
    lifted, tangent_outs = _lifted_jvp(op)
    n = len(op.inputs)
    seeds = [NONE] * len(lifted.function.outputs)
    for k in tangent_outs:
        seeds[k] = ARG
    transposed = vjp_function(lifted.function, list(range(n, 2 * n)), seeds)
    zeros = [b.emit("zeros_like", v) for v in op.inputs]
    ordered = [douts[tangent_outs.index(k)] for k in sorted(tangent_outs)]
    with b.at(op.loc):
        return inline(b, transposed, [*op.inputs, *zeros, *ordered])


def jvp_bprop_call(b, op, vmap, tangents) -> None:
    """Forward mode through a ``custom_jvp`` call: its rule, inlined (the value too)."""
    rule = op.params["rule"]
    if not isinstance(rule, JVPRule):
        raise UnsupportedOperationError(
            f"forward mode (jvp, jacfwd) does not go through {rule!r}", op.loc,
            "use vjp or jacrev (a custom_jvp function has a forward-mode rule)")
    lifted, tangent_outs = _lifted_jvp(op)
    inputs = [vmap.get(id(v), v) for v in op.inputs]
    ts = [tangents.get(id(v)) or b.emit("zeros_like", v) for v in inputs]
    outs = inline(b, lifted.function, [*inputs, *ts])
    values: list = []
    _positions_in(lifted.out_tree[0], values)
    for r, k, t in zip(op.results, values, tangent_outs):
        vmap[id(r)] = outs[k]
        tangents[id(outs[k])] = outs[t]


def _spec(tree, values, saved: list):
    """The argument spec of a structure of ``At`` positions; appends its values to ``saved``."""
    if isinstance(tree, At):
        saved.append(values[tree.index])
        return values[tree.index].type
    if isinstance(tree, tuple):
        return tuple(_spec(t, values, saved) for t in tree)
    return None


def _match(args_tree, grads_tree, outs, grads: list, name, loc) -> None:
    """Place each cotangent of ``grads_tree`` at its argument's input position."""
    for arg, g in zip(args_tree, grads_tree):
        if isinstance(g, Static) and g.value is None:
            g = None
        if g is None or arg is None:
            continue
        if isinstance(arg, At):
            if not _is_position(g):
                raise GradRuntimeError(f"{name} returned a {type(g).__name__} where an array "
                                       "cotangent is needed", loc)
            grads[arg.index] = outs[g]
        elif isinstance(g, (tuple, list)) and len(g) == len(arg):
            _match(arg, g, outs, grads, name, loc)
        else:
            raise GradRuntimeError(f"{name} returned a cotangent whose structure differs from "
                                   "its argument's", loc)


def _is_position(g) -> bool:
    return isinstance(g, int) and not isinstance(g, bool)


interp.STRUCTURAL_EVAL["bprop_call"] = _eval
STRUCTURAL_EMIT["bprop_call"] = _emit
STRUCTURAL_VJP["bprop_call"] = vjp_bprop_call
STRUCTURAL_JVP["bprop_call"] = jvp_bprop_call
