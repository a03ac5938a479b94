"""Checks the IR's invariants; run after every pass in tests and in debug mode.

On failure it raises :class:`~ad_compiler.errors.IRError` with the function's
text and a marker at the offending op, so an internal bug shows its context.
"""
from __future__ import annotations

from ..ad import rules
from ..errors import IRError
from .core import AType, Block, Function, ListType, Value

#: ops with regions, handled by the passes that know them (not in the registry)
STRUCTURAL: set[str] = set()


def verify(fn: Function) -> Function:
    """Return ``fn`` unchanged if it is well formed, else raise IRError."""
    defined: set[int] = set()
    _verify_block(fn, fn.body, defined, visible=[])
    return fn


def _fail(fn, message, op=None):
    text = str(fn)
    if op is not None:
        line = repr(op).strip()
        text = "\n".join((">> " + l if l.strip() == line else "   " + l) for l in text.splitlines())
    raise IRError(f"invalid IR: {message}\n{text}")


def _define(fn, v, defined, scope, op=None):
    if not isinstance(v, Value):
        _fail(fn, f"{v!r} is not a Value", op)
    if not isinstance(v.type, (AType, ListType)):
        _fail(fn, f"value {v!r} has no type", op)
    if id(v) in defined:
        _fail(fn, f"value {v!r} is defined twice", op)
    defined.add(id(v))
    scope.add(id(v))


def _verify_block(fn, block: Block, defined, visible):
    scope: set[int] = set()
    chain = visible + [scope]
    for a in block.args:
        _define(fn, a, defined, scope)
    for op in block.ops:
        for v in op.inputs:
            if not any(id(v) in s for s in chain):
                _fail(fn, f"{op.prim} uses {v!r} before it is defined (or outside its scope)", op)
        if op.prim not in rules.PRIMITIVES and op.prim not in STRUCTURAL:
            _fail(fn, f"unknown op {op.prim!r}", op)
        for region in op.regions:
            _verify_block(fn, region, defined, chain)
        for r in op.results:
            _define(fn, r, defined, scope, op)
            if r.producer is not op:
                _fail(fn, f"{r!r} does not point back at the op that defines it", op)
    for v in block.results:
        if not any(id(v) in s for s in chain):
            _fail(fn, f"yielded value {v!r} is not defined")
