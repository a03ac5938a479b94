"""Copying IR: inline a Function's body into a builder (fresh values, same ops).

Used to build a new function from an old one without mutating it (passes are
pure), and to inline a gradient function's IR where it is called, which is how
gradients of gradients are taken.
"""
from __future__ import annotations

from .core import Block, Function, Op, Value


def clone_block(b, block: Block, vmap: dict) -> list:
    """Append copies of ``block``'s ops to ``b``; ``vmap`` maps old value ids to new values.

    A value missing from ``vmap`` is an outer value the block captures: it is used as
    is. Returns the new values for ``block.results``.
    """
    for op in block.ops:
        new_op = Op(op.prim, [vmap.get(id(v), v) for v in op.inputs], dict(op.params), [],
                    [], op.loc if op.loc is not None else b.loc)
        new_op.regions = [_clone_region(r, vmap) for r in op.regions]
        for r in op.results:
            nv = Value(r.type, r.hint, new_op)
            vmap[id(r)] = nv
            new_op.results.append(nv)
        b.add_op(new_op)
    return [vmap.get(id(v), v) for v in block.results]


def _clone_region(region: Block, vmap: dict) -> Block:
    from .builder import Builder
    new = Block()
    for a in region.args:
        na = Value(a.type, a.hint)
        vmap[id(a)] = na
        new.args.append(na)
    sub = Builder(new)
    new.results = clone_block(sub, region, vmap)
    return new


def inline(b, fn: Function, args) -> list:
    """Emit ``fn``'s body into ``b`` with ``args`` for its arguments; return its outputs.

    ``args`` are IR values of the argument types (a constant must be made an op
    first, ``b.const``): any other input would leave the inlined ops reading
    something that is no value of the function.
    """
    for a, v in zip(fn.args, args, strict=True):
        if not isinstance(v, Value) or v.type.shape != a.type.shape:
            raise TypeError(f"inline {fn.name}: argument {a.hint} of type {a.type} "
                            f"given {v!r}")
    vmap = {id(a): v for a, v in zip(fn.args, args, strict=True)}
    return clone_block(b, fn.body, vmap)


def copy_function(fn: Function, name: str | None = None) -> tuple[Function, dict]:
    """A fresh copy of ``fn`` and the map from old value ids to new values."""
    from .builder import Builder
    body = Block(args=[Value(a.type, a.hint) for a in fn.args])
    vmap = {id(a): n for a, n in zip(fn.args, body.args)}
    body.results = clone_block(Builder(body), fn.body, vmap)
    return Function(name or fn.name, body, fn.loc), vmap
