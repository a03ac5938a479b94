"""Python for the structured ops: ``if``, ``for`` and ``while`` (see ir/control.py).

    if cond:                      h = h0                     s = s0
        <then ops>                ys_list = []               while True:
        r = a                     for i in range(n):             <cond ops>
    else:                             <body ops>                 if not keep_going:
        <else ops>                    ys_list.append(y)              break
        r = b                         h = h_next                 s_1 = s
                                  h_final = h                    <body ops>
                                  (ys_list.reverse() after a
                                  reverse loop)
                                                                 ys_list.append(y)
                                                                 s = s_next
                                                             s_final = s

Carried values are rebound with one tuple assignment, so a body that swaps
them (``a, b = b, a``) stays correct.
"""
from __future__ import annotations

import ast

from .emit import STRUCTURAL_EMIT


def _name(ctx, v) -> ast.Name:
    return ast.Name(id=ctx.name(v), ctx=ast.Load())


def rebind(ctx, targets, sources) -> list:
    """``t1, t2 = s1, s2`` (nothing when every target already is its source)."""
    pairs = [(t, s) for t, s in zip(targets, sources, strict=True)
             if ctx.name(t) != ctx.name(s)]
    if not pairs:
        return []
    if len(pairs) == 1:
        return ctx.bind([pairs[0][0]], [pairs[0][1]])
    target = ast.Tuple(elts=[ast.Name(id=ctx.name(t), ctx=ast.Store()) for t, _ in pairs],
                       ctx=ast.Store())
    value = ast.Tuple(elts=[_name(ctx, s) for _, s in pairs], ctx=ast.Load())
    return [ast.Assign(targets=[target], value=value, lineno=0)]


def _or_pass(stmts: list) -> list:
    return stmts or [ast.Pass()]


def emit_if(op, ctx) -> list:
    then, other = op.regions
    body = ctx.block(then) + rebind(ctx, op.results, then.results)
    orelse = ctx.block(other) + rebind(ctx, op.results, other.results)
    return [ast.If(test=_name(ctx, op.inputs[0]), body=_or_pass(body), orelse=orelse)]


def _stack_lists(ctx, op, n_carried) -> list:
    return [ast.parse(f"{ctx.name(r)} = []").body[0] for r in op.results[n_carried:]]


def _appends(ctx, op, region, n_carried, first: bool) -> list:
    """The appends of the stacked values: with ``first``, those of the region's own
    arguments, at the top of the body (read there, an argument is free for the value
    the body makes for it: codegen/coalesce.py); the others at its end."""
    values = region.results[n_carried:]
    return [ast.parse(f"{ctx.name(r)}.append({ctx.name(v)})").body[0]
            for r, v in zip(op.results[n_carried:], values)
            if any(v is a for a in region.args) == first]


def emit_for(op, ctx) -> list:
    k = op.params["n_carried"]
    (region,) = op.regions
    index, args = region.args[0], region.args[1:]
    n = ctx.name(op.inputs[0])
    order = f"range({n} - 1, -1, -1)" if op.params.get("reverse") else f"range({n})"
    loop = ast.parse(f"for {ctx.name(index)} in {order}:\n    pass").body[0]
    # appends before the rebinding: a stacked value may be a carried one
    loop.body = _or_pass(_appends(ctx, op, region, k, True) + ctx.block(region)
                         + _appends(ctx, op, region, k, False)
                         + rebind(ctx, args, region.results[:k]))
    return (rebind(ctx, args, op.inputs[1:]) + _stack_lists(ctx, op, k) + [loop]
            + rebind(ctx, op.results[:k], args)
            + (_reverse_lists(ctx, op, k) if op.params.get("reverse") else []))


def _reverse_lists(ctx, op, n_carried) -> list:
    """``ys.reverse()`` after a reversed loop: item ``i`` of a list is iteration ``i``'s."""
    return [ast.parse(f"{ctx.name(r)}.reverse()").body[0] for r in op.results[n_carried:]]


def emit_while(op, ctx) -> list:
    k = op.params["n_carried"]
    cond, body = op.regions
    loop = ast.parse("while True:\n    pass").body[0]
    stop = ast.parse(f"if not {ctx.name(cond.results[0])}:\n    break").body[0]
    loop.body = (ctx.block(cond) + [stop] + rebind(ctx, body.args, cond.args)
                 + _appends(ctx, op, body, k, True) + ctx.block(body)
                 + _appends(ctx, op, body, k, False)
                 + rebind(ctx, cond.args, body.results[:k]))
    return (rebind(ctx, cond.args, op.inputs) + _stack_lists(ctx, op, k) + [loop]
            + rebind(ctx, op.results[:k], cond.args))


STRUCTURAL_EMIT.update({"if": emit_if, "for": emit_for, "while": emit_while})
