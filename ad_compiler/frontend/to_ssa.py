"""Lift a Python function to the SSA IR: the :class:`Lifter` and its statement visitors.

The lifter runs the user's code *symbolically*: an environment maps each name to
a lift-time value (an IR Value, a static Python object, or a container of those,
see :mod:`.resolve`). Statements update the environment and emit ops through one
:class:`~ad_compiler.ir.builder.Builder`; the returned lift-time value becomes the
function's outputs. Because the builder infers every result type, shapes and
dtypes are known while lifting, so ``x.shape`` or ``len(x)`` are static.

Invariants:

* Straight-line code only, for now: an ``if``/ternary whose condition is static
  lifts only the taken branch; one that depends on a Value raises
  UnsupportedSyntaxError. A ``for`` over a static sequence is unrolled; a loop
  over a Value raises. (Data-dependent control flow will become structured
  ``if``/loop ops with regions: ``visit_If``/``visit_For`` are where it goes.)
* ``y = <expr>`` names the Values that the statement created ``y``; an alias
  ``y = x`` creates no op.
* ``x += y`` rebinds ``x`` to a new Value (SSA); unlike NumPy it never writes
  into the array other names may share.
* Every op carries the SourceLoc of the statement/expression that made it, in
  the file of the function that contains it (inlined helpers keep their lines).
"""
from __future__ import annotations

import gast
import numpy as np

from ..errors import InvalidOperandError, UnsupportedOperationError, UnsupportedSyntaxError
from ..ir.builder import Builder
from ..ir.core import AType, Function, Value
from ..ir.names import sanitize
from . import operators, resolve
from .calls import CallLifter
from .exprs import ExprLifter, mark_user_exception
from .inline import InlineLifter

#: how many iterations a static ``for`` loop may unroll to
MAX_UNROLL = 10_000


class LiftBuilder(Builder):
    """The builder lowerings get while lifting: it can also read Parameters."""

    def __init__(self, lifter: "Lifter"):
        super().__init__()
        self._lifter = lifter

    def read_parameter(self, param) -> Value:
        """The Value of ``param`` in the function being lifted."""
        return self._lifter.parameter_value(param)


class Lifter(ExprLifter, CallLifter, InlineLifter):
    """Lifts one top-level function (with everything it calls) into one Function."""

    def __init__(self, name: str):
        self.b = LiftBuilder(self)
        self.function = Function(name, self.b.block)
        self.frames = []
        self.params: list = []
        self._param_values: dict[int, Value] = {}
        self._own: list = []            # keeps containers alive so their ids stay unique
        self.own_ids: set[int] = set()  # containers built by the lifted code

    # -- values that come from outside ------------------------------------------
    def new_arg(self, type: AType, hint: str) -> Value:
        v = Value(type, hint)
        self.function.body.args.append(v)
        return v

    def parameter_value(self, param) -> Value:
        """The Function argument of a Parameter, created on its first read."""
        v = self._param_values.get(id(param))
        if v is None:
            from ..tensor import unwrap
            hint = sanitize(getattr(param, "name", None) or "param")
            v = self.new_arg(AType.of(np.asarray(unwrap(param))), hint)
            self.params.append(param)
            self._param_values[id(param)] = v
        return v

    def parameter_of(self, value: Value):
        """The Parameter whose argument ``value`` is, or None."""
        for param in self.params:
            if self._param_values[id(param)] is value:
                return param
        return None

    def array_const(self, obj, hint: str | None = None) -> Value:
        from ..tensor import unwrap
        return self.b.const(np.asarray(unwrap(obj)), hint=hint)

    def outside(self, obj):
        """A Parameter reached through a static container is its argument (also
        inside the tuples ``dict.items()`` or ``zip`` yield)."""
        if resolve.is_parameter(obj):
            return self.parameter_value(obj)
        if type(obj) is tuple:
            return tuple(self.outside(item) for item in obj)
        return obj

    def own(self, container):
        """Mark ``container`` as built here: the lifted code may change it."""
        self._own.append(container)
        self.own_ids.add(id(container))
        return container

    # -- statements ---------------------------------------------------------------
    def stmt(self, node) -> None:
        method = getattr(self, "visit_" + type(node).__name__, None)
        with self.located(node):
            if method is None:
                raise UnsupportedSyntaxError(f"unsupported syntax: {type(node).__name__}",
                                             hint="rewrite it with assignments and calls")
            method(node)

    def run_body(self, stmts) -> None:
        for node in stmts:
            self.stmt(node)
            if self.frame.signal is not None:
                return

    def visit_Expr(self, node):
        self.expr(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node):
        mark = _Mark(self.b.block)
        value = self.expr(node.value)
        for target in node.targets:
            self.assign(target, value, mark)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            mark = _Mark(self.b.block)
            self.assign(node.target, self.expr(node.value), mark)

    def visit_AugAssign(self, node):
        mark = _Mark(self.b.block)
        target = node.target
        if isinstance(target, gast.Name):
            current = self.eval_Name(target)
            value = operators.binary(self.b, type(node.op), current, self.expr(node.value), True)
            self.assign(target, value, mark)
            return
        container, index = self.expr(target.value), self.expr(target.slice)
        current = self.subscript(container, index)
        value = operators.binary(self.b, type(node.op), current, self.expr(node.value), True)
        self.store_item(container, index, value)

    def visit_Return(self, node):
        self.frame.result = None if node.value is None else self.expr(node.value)
        self.frame.signal = "return"

    def visit_If(self, node):
        with self.located(node.test):
            taken = operators.truth(self.expr(node.test), "'if'")
        self.run_body(node.body if taken else node.orelse)

    def visit_For(self, node):
        with self.located(node.iter):
            items = self.static_items(self.expr(node.iter))
        for item in items:
            self.assign(node.target, item)
            self.run_body(node.body)
            signal, self.frame.signal = self.frame.signal, None
            if signal == "return":
                self.frame.signal = signal
                return
            if signal == "break":
                return

    def visit_Break(self, node):
        self.frame.signal = "break"

    def visit_Continue(self, node):
        self.frame.signal = "continue"

    def visit_Raise(self, node):
        if node.exc is None:
            raise UnsupportedSyntaxError("a bare 'raise' outside an except block",
                                         hint="raise an exception instance: raise ValueError(...)")
        exc = self.expr(node.exc)
        exc = exc() if isinstance(exc, type) else exc
        if not isinstance(exc, BaseException):
            raise UnsupportedOperationError(
                "exceptions must derive from BaseException",
                hint="raise an exception instance: raise ValueError(...)")
        # the function raises while it is compiled: its own exception, noted with the line
        raise mark_user_exception(exc, self.frame.source.loc(node))

    def visit_Assert(self, node):
        with self.located(node.test):
            ok = operators.truth(self.expr(node.test), "'assert'")
        if not ok:
            msg = self.expr(node.msg) if node.msg is not None else ""
            raise mark_user_exception(AssertionError(msg), self.frame.source.loc(node))

    # -- helpers of the statements -----------------------------------------------
    def static_items(self, seq) -> list:
        if isinstance(seq, Value):
            raise UnsupportedSyntaxError(
                "a 'for' loop over an array value is not supported yet",
                hint="loop over range(n) with a Python int n (x.shape[0] is one) and "
                     "index the array, or over a Python list/tuple")
        items = []
        for item in seq:
            items.append(self.outside(item))
            if len(items) > MAX_UNROLL:
                raise UnsupportedSyntaxError(f"a 'for' loop of more than {MAX_UNROLL} "
                                             "iterations is too long to unroll")
        return items

    def assign(self, target, value, mark=None) -> None:
        if isinstance(target, gast.Name):
            if mark is not None:
                mark.name(value, target.id)
            self.frame.scope.bind(target.id, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            items = self.unpack(value, len(target.elts))
            for sub, item in zip(target.elts, items):
                self.assign(sub, item, mark)
        elif isinstance(target, gast.Subscript):
            self.store_item(self.expr(target.value), self.expr(target.slice), value)
        else:  # attributes and starred targets are fenced
            raise UnsupportedSyntaxError(f"cannot assign to {type(target).__name__}")

    def unpack(self, value, n: int) -> list:
        if isinstance(value, Value):
            shape = value.type.shape
            if not shape or shape[0] != n:
                raise InvalidOperandError(
                    f"cannot unpack an array of shape {shape} into {n} names")
            return [self.index_value(value, i) for i in range(n)]
        items = list(value)
        if len(items) != n:
            raise InvalidOperandError(f"cannot unpack {len(items)} values into {n} names")
        return items

    def store_item(self, container, index, value) -> None:
        if id(container) not in self.own_ids:
            what = "an array" if isinstance(container, Value) else "a container it did not create"
            raise UnsupportedOperationError(
                f"item assignment into {what} is not supported",
                hint="compute a new array instead (np.where(mask, new, x), np.concatenate), "
                     "or build a new list")
        container[index] = value


class _Mark:
    """Which ops a statement created, to name their results after its targets."""

    def __init__(self, block):
        self.block, self.start = block, len(block.ops)
        self._created: set | None = None
        self._named: set = set()

    def name(self, value, name: str) -> None:
        if isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                self.name(item, f"{name}_{i}")
            return
        if not isinstance(value, Value) or id(value) in self._named:
            return
        if self._created is None:
            self._created = {id(r) for op in self.block.ops[self.start:] for r in op.results}
        if id(value) in self._created:
            value.hint = name
            self._named.add(id(value))
