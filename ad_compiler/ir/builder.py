"""Builders: the one way ops are created, by the frontend, the AD rules and passes.

``b.emit('sin', x)`` (or the shorthand ``b.sin(x)``) infers the result type from
the primitive's ``infer`` rule, appends the op to the current block and returns
its result :class:`Value`. Rules and lowerings are written against this
interface only, so the same rule body works in two builders:

* :class:`Builder` records IR (compilation);
* :class:`EagerBuilder` runs each primitive at once on concrete arrays (the
  functional ops, ``ops.softmax(t)``, called outside a compiled function).
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..ad import rules
from ..errors import SourceLoc
from . import dims
from .core import AType, Block, Op, Value
from .names import expression_hint


class _At:
    """The context of :meth:`Builder.at` (a class: the passes enter one per op)."""

    __slots__ = ("b", "loc", "saved")

    def __init__(self, b, loc):
        self.b, self.loc = b, loc

    def __enter__(self):
        b = self.b
        self.saved = b.loc
        if self.loc is not None:
            b.loc = self.loc
        return b

    def __exit__(self, *exc) -> bool:
        self.b.loc = self.saved
        return False


class Builder:
    """Appends ops to ``block``; every op gets the builder's current ``loc``."""

    eager = False

    def __init__(self, block: Block | None = None, loc: SourceLoc | None = None):
        self.block = block if block is not None else Block()
        self.loc = loc

    # -- creating ops ---------------------------------------------------------
    def emit(self, prim: str, *inputs: Value, hint: str | None = None, **params) -> Value:
        p = rules.get(prim)
        if p.defaults:
            params = {**p.defaults, **params}
        for v in inputs:
            if not isinstance(v, Value):
                raise TypeError(f"{prim}: input {v!r} is not an IR value (use b.const)")
        if p.array_inputs and any(v.type.weak for v in inputs):
            inputs = tuple(self.emit("cast", v, dtype=v.type.dtype) if v.type.weak else v
                           for v in inputs)
        out_type = dims.infer(p, [v.type for v in inputs], params, self.loc)
        result = Value(out_type, hint or expression_hint(prim, inputs))
        op = Op(prim, list(inputs), dict(params), [result], [], self.loc)
        result.producer = op
        self.block.ops.append(op)
        return result

    def add_op(self, op: Op) -> Op:
        """Append a ready-made op (structural ops: if, loops)."""
        for v in op.results:
            v.producer = op
        self.block.ops.append(op)
        return op

    def const(self, value, hint: str | None = None) -> Value:
        """A constant: a Python number stays weak, arrays keep their dtype.

        A list or tuple (nested to any depth) holding values is the array NumPy makes
        of it: a ``stack`` of its items, each converted the same way.
        """
        if isinstance(value, Value):
            return value
        if isinstance(value, (list, tuple)) and holds_value(value):
            return self.emit("stack", *(self.const(v) for v in value), hint=hint, axis=0)
        if not isinstance(value, (bool, int, float, complex, np.ndarray, np.generic)):
            value = np.asarray(value)
        return self.emit("const", hint=hint or "c", value=value)

    def type_of(self, v) -> AType:
        return v.type if isinstance(v, Value) else AType.of(v)

    def depends_on_epoch(self) -> None:
        """The code being built depends on the Cell epoch (the frontend's builder records
        it; nothing to record elsewhere)."""

    def read_parameter(self, param):
        """The value of a Parameter in the code being built (the frontend's builder
        makes it an input of the function it lifts)."""
        raise TypeError(f"Parameter {getattr(param, 'name', param)!r} can only be read inside "
                        "a function being compiled")

    def parameter_of(self, value):
        """The Parameter ``value`` reads (the frontend's builder knows), or None."""
        return None

    def random_input(self, type, draw, what: str):
        """A value ``draw()`` makes anew at each call (a dropout mask), of AType ``type``:
        eagerly the array itself; the frontend's builder makes it an input of the
        compiled code that the gradient function draws before each call."""
        from ..errors import UnsupportedOperationError
        raise UnsupportedOperationError(f"{what} draws random numbers at each call, which "
                                        "this transform does not do")

    def write_parameter(self, target, value) -> None:
        """Make the compiled code set the Parameter whose Value is ``target`` to ``value``
        after the call (the frontend's builder records it; see frontend/to_ssa.py)."""
        raise TypeError("a Parameter can only be written by code being compiled")

    def at(self, loc: SourceLoc | None) -> "_At":
        """Emit ops inside the ``with`` block with ``loc`` as their location (None: keep
        the current one)."""
        return _At(self, loc)

    @contextmanager
    def inside(self, block: Block):
        """Emit ops inside the ``with`` block into ``block`` (a region)."""
        saved, self.block = self.block, block
        try:
            yield self
        finally:
            self.block = saved

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in rules.PRIMITIVES:
            raise AttributeError(name)
        return lambda *inputs, **params: self.emit(name, *inputs, **params)

    # -- helpers shared by rules ----------------------------------------------
    def fit(self, ct, like):
        """``ct`` reduced (un-broadcast) and cast to the type of ``like``.

        Resolved at compile time: emits nothing when the types already agree.
        Used by every VJP of a broadcasting primitive (broadcasting is resolved at compile time).
        """
        return fit(self, ct, self.type_of(like), like)

    def zeros(self, like):
        return self.emit("zeros_like", like) if not self.eager else np.zeros_like(like)


class EagerBuilder(Builder):
    """Runs primitives immediately on concrete values instead of recording them."""

    eager = True

    def __init__(self):
        super().__init__(Block())

    def random_input(self, type, draw, what: str):
        return draw()

    def emit(self, prim: str, *inputs, hint: str | None = None, **params):
        p = rules.get(prim)
        return p.impl(*inputs, **{**p.defaults, **params})

    def const(self, value, hint: str | None = None):
        return value

    def read_parameter(self, param):
        from ..tensor import unwrap
        return unwrap(param)


def holds_value(tree) -> bool:
    """Whether a (nested) list or tuple holds an IR value."""
    return any(isinstance(v, Value) or isinstance(v, (list, tuple)) and holds_value(v)
               for v in tree)


def fit(b, ct, target: AType, like=None):
    """Sum ``ct`` over broadcast axes so it has ``target``'s shape, then cast its dtype
    (a complex ``ct`` of a real target: its real part, ops/complex_numbers.py).

    When that needs lengths known only at run time (``ir/dims.py``) it is a
    ``sum_to(ct, like)``, which needs the value ``like`` of that type."""
    t = b.type_of(ct)
    if (t.dynamic or target.dynamic) and dims.fit_needs_run_time(t, target) \
            and not dims.shaped_like(ct, like):
        if not isinstance(like, Value):
            raise dims.refused("un-broadcasting", (t, target), b.loc)
        ct = b.emit("sum_to", ct, like)
    elif t.shape != target.shape:
        lead = t.ndim - len(target.shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(target.shape) if d == 1 and t.shape[lead + i] != 1)
        if axes:
            # no leading axes: keepdims gives the target shape in one op
            ct = b.emit("sum", ct, axis=axes, keepdims=lead == 0)
        if b.type_of(ct).shape != target.shape:
            ct = b.emit("reshape", ct, shape=target.shape)
    t = b.type_of(ct)
    if t.dtype.kind == "c" and target.dtype.kind != "c":
        # a real value that met complex ones: its cotangent is the real part (JAX's convention)
        ct = b.emit("real", ct)
        t = b.type_of(ct)
    if target.weak:
        return ct
    if t.dtype != target.dtype or t.weak:
        ct = b.emit("cast", ct, dtype=target.dtype)
    return ct
