"""Batching: the source transform behind ``vmap``.

``batch_function(f, in_axes, out_axes, size)`` returns a new Function (``f`` is
untouched) that computes ``f`` for ``size`` examples at once: the argument ``k``
carries the examples along axis ``in_axes[k]`` (``None``: one value shared by
every example), and output ``k`` is returned with the examples along
``out_axes[k]``.

Every value of the batched function has a *batch axis*: the position of its
example axis, or ``None`` when the value is the same for every example. An op
none of whose inputs is batched is copied as it is; otherwise its primitive's
batching rule ``batch(b, axes, *inputs, **params) -> (out, out_axis)`` emits the
batched op (see :mod:`ad_compiler.ops._batch` for the shared rules). The result
is ordinary NumPy on the whole batch: one call per op, never a loop over the
examples.

Structured ops: an ``if`` on a condition shared by the batch batches its
branches; a condition that differs between examples is refused (each example
would take its own path). A ``for`` loop batches its body (its trip count is
never batched: shapes are static); a ``while`` loop whose condition is shared
likewise. A call with its own derivative rule (``bprop_call``: ``custom_vjp``,
``custom_jvp``, ``Cell.bprop``, ``checkpoint``) batches as the code it runs when
the result is only evaluated, and as a call whose rule is vmapped when it may be
differentiated afterwards (the rule is written for one example). A length known
only at run time batches when it is the same for every example (a mask shared by
the batch); a mask that differs between examples is refused where it selects
(each example would have its own length: ops/dynamic.py).

Random draws (``effect`` ops) draw what a Python loop of calls draws, one example
after the other (:func:`_batch_draws`): a function's only draw is its primitive's
batching rule, one NumPy call of size ``(B, ...)`` where that gives the same
numbers; otherwise every draw of the function runs in a loop over the examples,
in order, where the first one was, and the results are stacked. This is the one
loop over the examples batched code may hold, and it holds only the draws.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from . import rules
from ..errors import UnsupportedOperationError
from ..ir.builder import Builder
from ..ir.clone import clone_block
from ..ir.control import build_for, free_values
from ..ir.core import AType, Block, Function, ListType, Op, Value
from ..ir.dims import HINT, is_dynamic
from ..ir.names import built_hint


class BatchBuilder(Builder):
    """A builder that knows the batch size (rules materialise shared values with it) and
    whether the batched code may be differentiated afterwards."""

    def __init__(self, block: Block, size: int, differentiable: bool):
        super().__init__(block)
        self.batch_size = size
        self.differentiable = differentiable
        #: id of a loop-carried list (a list cotangent, whose items a loop adds to) ->
        #: its length: that of its initial value
        self.list_lengths: dict = {}
        #: (id of a block, r) -> (the block, the example numbers ``arange(B)`` with r
        #: axes of length 1 after it, made there): index rules share one
        self.example_numbers: dict = {}


def batch_function(fn: Function, in_axes: Sequence, out_axes: Sequence, size: int,
                   name: str | None = None, differentiable: bool = True) -> Function:
    """The batched counterpart of ``fn`` (see the module docstring).

    ``differentiable=False`` says the result only computes values (it is never
    differentiated): a call with its own derivative rule (``custom_vjp``,
    ``Cell.bprop``) then batches as the code it runs; otherwise it stays a call whose
    rule (written for one example) runs vmapped.
    """
    body = Block(args=[Value(_batched_type(a.type, ax, size), a.hint)
                       for a, ax in zip(fn.args, in_axes)])
    b = BatchBuilder(body, size, differentiable)
    env = {id(a): na for a, na in zip(fn.args, body.args)}
    axes = {id(na): ax for na, ax in zip(body.args, in_axes) if ax is not None}
    _batch_ops(b, fn.body.ops, env, axes, draws=[op for op in fn.body.ops if _draws(op)])
    outs = []
    for v, want in zip(fn.outputs, out_axes):
        nv = env.get(id(v), v)
        outs.append(_place(b, nv, axes.get(id(nv)), want, fn))
    body.results = outs
    return Function(name or f"{fn.name}_vmap", body, fn.loc)


def _batched_type(t, ax, size: int):
    if ax is None:
        return t
    if isinstance(t, ListType):  # a list batched: each item along axis 0
        return ListType(_batched_type(t.elem, 0, size))
    shape = list(t.shape)
    shape.insert(ax, size)
    return AType(tuple(shape), t.dtype, False)


def _place(b, v, ax, want, fn):
    """Output ``v`` (batch axis ``ax``) with its batch axis at ``want``."""
    if want is None:
        if ax is not None:
            raise UnsupportedOperationError(
                f"out_axes is None for an output of {fn.name} that differs between examples",
                fn.loc, "give that output an int out_axes (where its batch axis goes)")
        return v
    v = materialize(b, v, ax)
    return move_axis(b, v, 0, want)


def _batch_ops(b, ops, env: dict, axes: dict, draws=()) -> None:
    """Copy ``ops`` into ``b`` batched; ``env`` maps old values to new ones and ``axes``
    new value ids to their batch axis (absent: shared by the batch). ``draws``: the
    function's ops with effects (random draws), batched together where the first is."""
    drawn = {id(op) for op in draws}
    for op in ops:
        if id(op) in drawn:  # all of them where the first one is
            if op is draws[0]:
                with b.at(op.loc):
                    _batch_draws(b, draws, env, axes)
            continue
        if op.regions:
            if not _touches_batch(op, env, axes):
                clone_block(b, Block(ops=[op], results=[]), env)
                continue
            rule = STRUCTURAL.get(op.prim)
            if rule is None:
                raise UnsupportedOperationError(f"vmap does not go through '{op.prim}'", op.loc)
            with b.at(op.loc):
                rule(b, op, env, axes)
            continue
        if rules.get(op.prim).effect:
            raise UnsupportedOperationError(
                f"vmap does not batch '{op.prim}' (a random draw) inside a loop or a branch",
                op.loc, "draw the numbers before the loop or branch (one call with size=...)")
        inputs = [env.get(id(v), v) for v in op.inputs]
        in_axes = [axes.get(id(v)) for v in inputs]
        if all(ax is None for ax in in_axes):
            clone_block(b, Block(ops=[op], results=[]), env)
            continue
        with b.at(op.loc):
            out, out_ax = _apply_rule(b, op, inputs, in_axes)
        env[id(op.result)] = out
        if out_ax is not None:
            axes[id(out)] = out_ax
        if op.result.hint and out.producer is not None and built_hint(out):
            out.hint = op.result.hint


def _draws(op) -> bool:
    """Whether ``op`` has an effect (a random draw), or contains an op that has one."""
    return rules.has_effect(op) or any(_draws(o) for r in op.regions for o in r.ops)


def _batch_draws(b, draws, env, axes) -> None:
    """The function's random draws for every example: what a loop of calls draws, one
    example after the other. The only draw, when its batching rule is one call of NumPy
    giving those numbers (ops/randomness.py), is that call; otherwise a loop over the
    examples runs every draw of the function, in order, and stacks what each draws."""
    only = draws[0] if len(draws) == 1 and not draws[0].regions else None
    rule = rules.get(only.prim).batch_rule if only is not None else None
    batched = rule(b, (), **only.params) if rule is not None else None
    if batched is not None:
        env[id(only.result)], axes[id(batched[0])] = batched
        return

    results = [r for op in draws for r in op.results]

    def step(b, k, carried):
        local = dict(env)
        for op in draws:
            _draw_inputs(b, op, local, axes)
            clone_block(b, Block(ops=[op], results=[]), local)
        return [], [_as_array(b, local[id(r)]) for r in results]
    n = b.const(b.batch_size)
    lists = build_for(b, n, [], step, index_hint="k", hints=[r.hint for r in results])
    for r, lst in zip(results, lists):
        stacked = b.stack_list(lst, axis=0, length=b.batch_size, hint=r.hint)
        if isinstance(r.type, ListType):  # the draws of a vmap inside: a list of batches
            t = stacked.type
            stacked = b.unstack(stacked, axis=1, elem=AType(t.shape[:1] + t.shape[2:], t.dtype))
        env[id(r)] = stacked
        axes[id(stacked)] = 0


def _as_array(b, v):
    """``v``, a list (the draws of a vmap inside, one per example) stacked into an array."""
    if not isinstance(v.type, ListType):
        return v
    n = _list_length(b, v)
    if isinstance(n, Value) and n.producer is not None and n.producer.prim == "const":
        n = n.producer.params["value"]
    if not isinstance(n, int) or isinstance(v.type.elem, ListType):
        raise UnsupportedOperationError("vmap: random draws in a list of unknown length")
    return b.stack_list(v, axis=0, length=n)


def _draw_inputs(b, op, env, axes) -> None:
    """Make the inputs of the draw ``op`` available where the draws are batched: they
    are the same for every example (a draw's arguments are static), and a constant
    defined after the first draw is copied in."""
    for v in op.inputs:
        if id(env.get(id(v), v)) in axes:
            raise UnsupportedOperationError(
                "vmap: a random draw whose arguments differ between examples", op.loc)
        p = v.producer
        if id(v) not in env and p is not None and p.prim == "const":
            clone_block(b, Block(ops=[p], results=[]), env)


def _apply_rule(b, op, inputs, in_axes):
    prim = rules.get(op.prim)
    rule = prim.batch_rule
    if rule is None:
        raise UnsupportedOperationError(
            f"vmap needs a batching rule for '{op.prim}', which has none", op.loc,
            "compute it outside vmap, or register one with primitive(..., batch=...)")
    inputs = _numbers_typed(b, op, inputs, in_axes)
    try:
        return rule(b, tuple(in_axes), *inputs, **op.params)
    except UnsupportedOperationError as e:  # a case the rule refuses: at the user's line
        if e.loc is not None:
            raise
        raise UnsupportedOperationError(e.message, op.loc, e.hint) from None
    except (ValueError, TypeError, IndexError):
        if not any(is_dynamic(v.type) for v in [*inputs, *op.results]):
            raise
        raise UnsupportedOperationError(
            f"vmap does not batch '{op.prim}' of a value whose length is known only at run "
            "time (selected by a boolean mask)", op.loc, HINT) from None


def _numbers_typed(b, op, inputs, in_axes) -> list:
    """The inputs of an elementwise op, a Python number of one example (a weak value,
    batched into an array: a scalar draw, ``float(...)``) cast to the dtype NumPy gives
    it against the op's arrays, so a float32 array times a float stays float32."""
    if rules.get(op.prim).family != "elementwise":
        return inputs
    strong = [v.type.dtype for v in op.inputs if not v.type.weak]
    if not strong:
        return inputs
    out = list(inputs)
    for k, (v, ax) in enumerate(zip(op.inputs, in_axes)):
        if v.type.weak and ax is not None:
            want = np.result_type(*strong, v.type.python_type(0))
            if inputs[k].type.dtype != want:
                out[k] = b.cast(inputs[k], dtype=want)
    return out


def _touches_batch(op, env, axes) -> bool:
    return any(id(env.get(id(v), v)) in axes for v in [*op.inputs, *free_values(op)])


# -- helpers shared by the rules ---------------------------------------------------

def move_axis(b, v, src: int, dst: int):
    """``v`` with its axis ``src`` moved to ``dst`` (a transpose; nothing when equal)."""
    nd = v.type.ndim
    src, dst = src % nd, dst % nd
    if src == dst:
        return v
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return b.transpose(v, axes=tuple(perm))


def to_front(b, v, ax):
    """``v`` with its batch axis first (a shared value, ``ax`` None, unchanged)."""
    return v if ax is None else move_axis(b, v, ax, 0)


def materialize(b, v, ax):
    """``v`` batched along axis 0: a shared value is broadcast along a new axis 0 (a
    shared list item by item)."""
    if ax is not None:
        return v if isinstance(v.type, ListType) else move_axis(b, v, ax, 0)
    t = v.type
    if isinstance(t, ListType):
        return _materialize_list(b, v)
    if t.weak:
        v = b.cast(v, dtype=t.dtype)
    return b.broadcast_to(v, shape=(b.batch_size,) + tuple(t.shape))


def _list_length(b, lst):
    """The length of the list ``lst`` (a Value or an int) if known, else None."""
    from .control import list_length
    known = b.list_lengths.get(id(lst))
    return known if known is not None else list_length(lst)


def _materialize_list(b, lst):
    """A shared list with each item broadcast across the batch: a loop over its items
    (its length is the trip count of the loop that built it)."""
    n = _list_length(b, lst)
    if n is None:
        raise UnsupportedOperationError(
            "vmap cannot broadcast this list across the batch: its length is not known here")

    def step(b, i, carried):
        return [], [materialize(b, b.list_get(lst, i), None)]
    (out,) = build_for(b, b.const(n) if isinstance(n, int) else n, [], step,
                       index_hint="k", hints=(lst.hint,))
    return out


# -- structured ops -------------------------------------------------------------

def _batch_if(b, op, env, axes) -> None:
    cond = env.get(id(op.inputs[0]), op.inputs[0])
    if id(cond) in axes:
        raise UnsupportedOperationError(
            "vmap: this 'if' tests a value that differs between the examples of the batch",
            op.loc, "write the choice with np.where(cond, a, b) so every example takes "
                    "its own value, or make the condition independent of the batched inputs")
    built = []
    for region in op.regions:
        block = Block()
        local_axes = dict(axes)
        with b.inside(block):
            _batch_ops(b, region.ops, env, local_axes)
        outs = [env.get(id(v), v) for v in region.results]
        built.append((block, outs, local_axes))
    batched = [k for k in range(len(op.results))
               if any(id(outs[k]) in la for _, outs, la in built)]
    for block, outs, la in built:
        with b.inside(block):
            block.results = [materialize(b, o, la.get(id(o))) if k in batched else o
                             for k, o in enumerate(outs)]
    results = [Value(v.type, r.hint) for v, r in zip(built[0][0].results, op.results)]
    b.add_op(Op("if", [cond], dict(op.params), results, [blk for blk, _, _ in built], op.loc))
    env.update({id(r): nr for r, nr in zip(op.results, results)})
    axes.update({id(results[k]): 0 for k in batched})


def _batch_loop(b, op, env, axes) -> None:
    """A ``for``/``while`` whose body runs on the whole batch: the carried values that
    vary between examples (found by batching the body until the set is stable) are
    carried batched along axis 0, and stacked values keep their elements' batch axis 0."""
    k = op.params["n_carried"]
    counted = op.prim == "for"
    head = [env.get(id(op.inputs[0]), op.inputs[0])] if counted else []
    if counted and id(head[0]) in axes:
        raise UnsupportedOperationError("vmap: the trip count of this loop differs between "
                                        "examples", op.loc)
    init = [env.get(id(v), v) for v in op.inputs[len(head):]]
    active = {j for j in range(k) if id(init[j]) in axes}
    while True:
        block, outs, local_axes, cond = _loop_regions(b, op, env, axes, active, counted, init)
        grown = active | {j for j in range(k) if id(outs[j]) in local_axes}
        if grown == active:
            break
        active = grown
    stacked = {s for s in range(len(outs) - k) if id(outs[k + s]) in local_axes}
    with b.inside(block):
        block.results = [materialize(b, o, local_axes.get(id(o))) if j in active else o
                         for j, o in enumerate(outs[:k])] + [
            materialize(b, o, local_axes.get(id(o))) if s in stacked else o
            for s, o in enumerate(outs[k:])]
    init = [materialize(b, v, axes.get(id(v))) if j in active else v
            for j, v in enumerate(init)]
    results = [Value(v.type, r.hint) for v, r in zip(init, op.results[:k])]
    results += [Value(ListType(v.type), r.hint) for v, r in zip(block.results[k:],
                                                                 op.results[k:])]
    regions = [block] if cond is None else [cond, block]
    b.add_op(Op(op.prim, head + init, dict(op.params), results, regions, op.loc))
    env.update({id(r): nr for r, nr in zip(op.results, results)})
    axes.update({id(results[j]): 0 for j in active})
    axes.update({id(results[k + s]): 0 for s in stacked})


def _loop_regions(b, op, env, axes, active, counted, init):
    """The loop's regions batched with the carried values ``active`` batched along 0."""
    body = op.regions[-1]
    first = 1 if counted else 0
    args = [Value(a.type, a.hint) for a in body.args]
    for j in active:
        args[first + j] = Value(_batched_type(args[first + j].type, 0, b.batch_size),
                                args[first + j].hint)
    for a, v in zip(args[first:], init):
        if isinstance(a.type, ListType) and _list_length(b, v) is not None:
            b.list_lengths[id(a)] = _list_length(b, v)
    local_axes = dict(axes)
    local_axes.update({id(args[first + j]): 0 for j in active})
    cond = None
    if not counted:
        cond = Block(args=[Value(a.type, a.hint) for a in args])
        cenv = dict(env)
        cenv.update({id(a): na for a, na in zip(op.regions[0].args, cond.args)})
        caxes = dict(axes)
        caxes.update({id(cond.args[j]): 0 for j in active})
        with b.inside(cond):
            _batch_ops(b, op.regions[0].ops, cenv, caxes)
        cond.results = [cenv.get(id(v), v) for v in op.regions[0].results]
        if any(id(v) in caxes for v in cond.results):
            raise UnsupportedOperationError(
                "vmap: this 'while' loop's condition differs between the examples of the "
                "batch", op.loc, "make the number of iterations independent of the batched "
                                 "inputs (e.g. a for loop with a fixed count)")
    block = Block(args=args)
    local = dict(env)
    local.update({id(a): na for a, na in zip(body.args, args)})
    with b.inside(block):
        _batch_ops(b, body.ops, local, local_axes)
    return block, [local.get(id(v), v) for v in body.results], local_axes, cond


def _batch_rule_call(b, op, env, axes) -> None:
    """A call with its own derivative rule. Only evaluated, it batches as the code it
    runs (its region); differentiable, it stays a call with a rule, for the batch: its
    inputs, outputs and residuals carry the examples along axis 0, and its rule runs
    the original one on each example (the backward function vmapped)."""
    (region,) = op.regions
    if not b.differentiable:
        local = dict(env)
        local.update({id(a): env.get(id(v), v) for a, v in zip(region.args, op.inputs)})
        _batch_ops(b, region.ops, local, axes)
        env.update({id(r): local.get(id(v), v) for r, v in zip(op.results, region.results)})
        return
    inputs = [env.get(id(v), v) for v in op.inputs]
    inputs = [materialize(b, v, axes.get(id(v))) for v in inputs]
    block = Block(args=[Value(v.type, a.hint) for v, a in zip(inputs, region.args)])
    local, local_axes = dict(env), dict(axes)
    local.update({id(a): na for a, na in zip(region.args, block.args)})
    local_axes.update({id(a): 0 for a in block.args})
    with b.inside(block):
        _batch_ops(b, region.ops, local, local_axes)
        outs = [local.get(id(v), v) for v in region.results]
        block.results = [materialize(b, o, local_axes.get(id(o))) for o in outs]
    results = [Value(v.type, r.hint) for v, r in zip(block.results, op.results)]
    params = dict(op.params, rule=_batched_rule(op.params["rule"], op.params["residuals"]))
    b.add_op(Op("bprop_call", inputs, params, results, [block], op.loc))
    env.update({id(r): nr for r, nr in zip(op.results, results)})
    axes.update({id(r): 0 for r in results})


def _batched_rule(rule, residuals):
    """The rule of a call on a batch (every input, output and residual batched along
    axis 0): the original backward (or JVP) function vmapped; a recomputed call
    (checkpoint) differentiates its batched region again and needs nothing."""
    from ..api.vmap import vmap
    from ..frontend.custom import CellRule, FunctionRule, JVPRule
    if isinstance(rule, FunctionRule):
        bwd = vmap(rule.custom.bwd, in_axes=(_residual_axes(residuals), 0))
        return FunctionRule(_Batched(rule.custom.__name__, bwd=bwd))
    if isinstance(rule, JVPRule):
        return JVPRule(_Batched(rule.custom.__name__, jvp=vmap(rule.custom.jvp)))
    if isinstance(rule, CellRule):
        cls = type(rule.cell)
        return CellRule(type(cls.__name__, (), {"bprop": vmap(rule.cell.bprop)})())
    return rule


class _Batched:
    """A custom rule's functions, vmapped (what ad/custom.py reads of the rule)."""

    def __init__(self, name: str, **functions):
        self.__name__ = name
        self.__dict__.update(functions)


def _residual_axes(tree):
    """``in_axes`` of the residuals: 0 where a value is saved, None for a static entry."""
    if isinstance(tree, tuple):
        return tuple(_residual_axes(t) for t in tree)
    return None if tree is None else 0


STRUCTURAL = {"if": _batch_if, "for": _batch_loop, "while": _batch_loop,
              "bprop_call": _batch_rule_call}
