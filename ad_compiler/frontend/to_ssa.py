"""Lift a Python function to the SSA IR: the :class:`Lifter` and its statement visitors.

The lifter runs the user's code *symbolically*: an environment maps each name to
a lift-time value (an IR Value, a static Python object, or a container of those,
see :mod:`.resolve`). Statements update the environment and emit ops through one
:class:`~ad_compiler.ir.builder.Builder`; the returned lift-time value becomes the
function's outputs. Because the builder infers every result type, shapes and
dtypes are known while lifting, so ``x.shape`` or ``len(x)`` are static.

Invariants:

* An ``if``/ternary/``and``/``or`` whose condition is static lifts only the taken
  branch; one whose condition is an IR Value lifts both into an ``if`` op
  (:mod:`.flow`). A ``for`` over a static sequence is unrolled; over ``range``,
  an array or a list a loop built it is a loop op, as is a ``while``
  (:mod:`.loops`). ``break``/``continue``/``return`` under data-dependent control
  become flags (:mod:`.desugar`).
* ``y = <expr>`` names the Values that the statement created ``y``; an alias
  ``y = x`` creates no op.
* ``x += y`` on an array and ``x[i] = v`` (``x[i] += v``) are writes in place:
  a functional update (``rules.METHODS['__setitem__']``, or the operator cast to
  ``x``'s dtype) whose new Value every holder of the old one sees
  (:meth:`~.alias.AliasLifter.write`); ``x += y`` on a number rebinds ``x``.
* Every op carries the SourceLoc of the statement/expression that made it, in
  the file of the function that contains it (inlined helpers keep their lines).
"""
from __future__ import annotations

import gast
import numpy as np

from ..ad import rules
from ..errors import InvalidOperandError, UnsupportedOperationError, UnsupportedSyntaxError
from ..ir.builder import Builder
from ..ir.core import AType, Function, Value
from . import operators, resolve
from .alias import AliasLifter
from .builtin_calls import BuiltinLifter
from .captured import CaptureLifter, Captures
from .calls import CallLifter
from .desugar import ReadAfter, Syntax
from .exprs import ExprLifter, holds_value, mark_user_exception
from .flow import FlowLifter
from .inline import InlineLifter
from .iterables import LoopList
from .loops import MAX_UNROLL, LoopLifter  # noqa: F401  (MAX_UNROLL: part of the API)
from .objects import ObjectCallLifter
from .values import Mark


def stale_use(param) -> UnsupportedOperationError:
    """The refusal of a Value of ``param`` read before the code wrote the Parameter."""
    return UnsupportedOperationError(
        f"a value of Parameter '{param.name}' read before the Parameter was written "
        "(ops.assign, BatchNorm's moving statistics) is used after the write: in Python "
        "that name would show the new value", hint=f"read the Parameter again after the "
        "write (e.g. self.<attribute>) or keep a copy made before it (x * 1.0)")


class LiftBuilder(Builder):
    """The builder lowerings get while lifting: it can also read Parameters."""

    def __init__(self, lifter: "Lifter"):
        super().__init__()
        self._lifter = lifter
        self._snapshots: dict = {}  # id(array) -> (array, its read-only copy)

    def call(self, fn, args: list):
        """``fn(*args)`` lifted as the compiled code calls a function (inlined)."""
        return self._lifter.call(fn, list(args), {})

    def read_parameter(self, param) -> Value:
        """The Value of ``param`` in the function being lifted."""
        return self._lifter.parameter_value(param)

    def parameter_of(self, value):
        """The Parameter whose Value ``value`` is in the function being lifted, or None."""
        return self._lifter.parameter_of(value)

    def random_input(self, type, draw, what: str) -> Value:
        """An input of the compiled code that the gradient function fills with ``draw()``
        before each call (only ``grad``/``value_and_grad``/``GradOperation`` do)."""
        if not self._lifter.randoms_allowed:
            return super().random_input(type, draw, what)
        if self._lifter.depth:
            raise UnsupportedOperationError(
                f"{what} inside a loop or a data-dependent branch is not supported in "
                "compiled code", hint="call it at the top level of construct")
        v = Value(type, "mask")
        self._lifter.randoms.append((v, draw))
        return v

    def write_parameter(self, target, value) -> None:
        """Record that the call sets the Parameter read as ``target`` to ``value``: a
        side effect, not differentiated, performed after the compiled code returns.
        Later reads of the Parameter in the same call give ``value`` (as in Python);
        a use of a Value read before the write is refused (``emit``)."""
        param = self.parameter_of(target)
        if param is None:
            raise UnsupportedOperationError(
                "only a Parameter (an attribute of a Cell) can be updated in compiled code",
                hint="pass the Cell's Parameter itself, e.g. self.moving_mean")
        if self._lifter.depth:
            raise UnsupportedOperationError(
                f"Parameter '{param.name}' is updated inside a loop or a data-dependent "
                "branch, which compiled code does not support",
                hint="update it at the top level of construct (outside loops and `if`s on data)")
        new = self.emit("stop_gradient", value, hint="updated")
        self._lifter.effects[id(param)] = (param, new)
        self._lifter.rebind_parameter(param, new)

    def emit(self, prim: str, *inputs: Value, hint: str | None = None, **params) -> Value:
        stale = self._lifter.stale
        if stale:
            for v in inputs:
                if id(v) in stale:
                    raise stale_use(stale[id(v)][1])
        return super().emit(prim, *inputs, hint=hint, **params)

    def depends_on_epoch(self) -> None:
        """The code being built depends on the Cell epoch (``requires_grad`` flags ...):
        its entry is compiled again when the epoch moves."""
        self._lifter.captures.needs_epoch = True

    def at_top_level(self) -> bool:
        """Whether ops go to the function's own body (not into a loop's or branch's region)."""
        return self.block is self._lifter.function.body

    def read_captured(self, state, owner) -> list:
        """The Values of the captured arrays of inlined code (see ``Lifter.adopt``)."""
        return self._lifter.adopt(state, owner)

    def const(self, value, hint: str | None = None) -> Value:
        """A constant of a static array is a snapshot of it: the lifted code may
        write into the array later (``buf += 1`` after ``y = x * buf``)."""
        if isinstance(value, np.ndarray) and _may_change(value):
            held = self._snapshots.get(id(value))
            if held is None or not (held[1].dtype == value.dtype
                                    and np.array_equal(held[1], value)):
                copy = value.copy()
                copy.flags.writeable = False
                held = self._snapshots[id(value)] = (value, copy)
            value = held[1]
        return super().const(value, hint)


class Lifter(FlowLifter, LoopLifter, BuiltinLifter, ExprLifter, CallLifter, ObjectCallLifter,
             InlineLifter, AliasLifter, CaptureLifter):
    """Lifts one top-level function (with everything it calls) into one Function."""

    def __init__(self, name: str, epoch: int = 0):
        self.b = LiftBuilder(self)
        self.function = Function(name, self.b.block)
        self.frames = []
        # the keys of ``frames``, and (key, static signature) pairs -> how many: recursion
        # is a lookup
        self.frame_keys: dict = {}
        self.recursive_calls = 0        # calls unrolled into a function already being lifted
        self.params: list = []
        self.effects: dict = {}         # id(Parameter) -> (Parameter, its new Value)
        self.effects_allowed = False    # whether writes and random inputs are compiled
        self.randoms_allowed = False    # whether random inputs are (lift's ``randoms``)
        self.randoms: list = []         # (input Value, draw) drawn before each call
        self._param_values: dict[int, Value] = {}
        self._param_current: dict[int, Value] = {}  # a Parameter's Value after a write
        self.stale: dict[int, tuple] = {}  # id(Value) -> (Value, Parameter) written since
        self.captures = Captures(epoch)  # captured state read (frontend/captured.py)
        self._captured_values: dict[int, Value] = {}
        self._own: list = []            # keeps containers alive so their ids stay unique
        self.own_ids: set[int] = set()  # containers built by the lifted code, changeable here
        self.frozen_ids: set[int] = set()  # built before the data-dependent region we are in
        self.depth = 0                  # how many data-dependent regions enclose this point
        self.syntax = Syntax()
        self.return_loc = None          # the top-level function's last 'return' lifted
        self.current_stmt = None
        self.init_aliases()

    # -- values that come from outside ------------------------------------------
    def new_arg(self, type: AType, hint: str) -> Value:
        v = Value(type, hint)
        self.function.body.args.append(v)
        return v

    def parameter_value(self, param) -> Value:
        """The Value of a Parameter now: its Function argument (created on its first
        read), or what the code last wrote into it (``rebind_parameter``)."""
        current = self._param_current.get(id(param))
        if current is not None:
            return current
        v = self._param_values.get(id(param))
        if v is None:
            from ..tensor import unwrap
            hint = str(getattr(param, "name", None) or "param")
            v = self.new_arg(AType.of(np.asarray(unwrap(param))), hint)
            self.params.append(param)
            self._param_values[id(param)] = v
        return v

    def parameter_argument(self, param) -> Value:
        """The Function argument holding a Parameter's value at the call."""
        return self._param_values[id(param)]

    def parameter_of(self, value: Value):
        """The Parameter whose argument or current Value ``value`` is, or None."""
        for param in self.params:
            if value is self._param_values[id(param)] or value is self._param_current.get(
                    id(param)):
                return param
        return None

    def rebind_parameter(self, param, new: Value) -> None:
        """After a write: reads of ``param`` give ``new``, and the Value they gave
        before is stale (a use of it is refused: Python would see the new value)."""
        old = self.parameter_value(param)
        self.stale[id(old)] = (old, param)
        self._param_current[id(param)] = new

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
        self.current_stmt = node
        with self.located(node):
            if method is None:
                raise UnsupportedSyntaxError(f"unsupported syntax: {type(node).__name__}",
                                             hint="rewrite it with assignments and calls")
            method(node)

    def run_body(self, stmts) -> None:
        """Run ``stmts`` until a sure jump; a jump that may have happened (a flag
        that is a Value) guards the statements after it.

        Keeps ``frame.live`` (names later code may read), ``frame.rest`` (the
        statements after the current one, which a data-dependent ``if`` may take
        into its non-jumping branch: it then sets ``frame.rest_taken``) and
        ``frame.tail`` (statements follow this block inside the loop body, so a
        ``continue`` flag matters).
        """
        frame = self.frame
        saved = (frame.live, frame.rest_taken, frame.rest, frame.tail)
        base, tail = frame.live, frame.tail or bool(frame.rest)
        frame.rest, frame.tail = [], tail
        last = self.syntax.last_reads(stmts)
        try:
            for k, node in enumerate(stmts):
                pending = self.pending_flag()
                if pending is not None:
                    self.guard_rest(*pending, stmts[k:])
                    return
                rest = stmts[k + 1:]
                frame.live = ReadAfter(base, last, k)
                frame.rest, frame.rest_taken = rest, False
                self.stmt(node)
                if frame.rest_taken or frame.signal is not None:
                    return
        finally:
            frame.live, frame.rest_taken, frame.rest, frame.tail = saved

    def run_block_body(self, stmts) -> None:
        """Run a function's or a loop iteration's body: nothing follows it there."""
        frame = self.frame
        saved = (frame.rest, frame.tail)
        frame.rest, frame.tail = [], False
        try:
            self.run_body(stmts)
        finally:
            frame.rest, frame.tail = saved

    def visit_Expr(self, node):
        self.expr(node.value)

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node):
        mark = Mark(self.b.block)
        value = self.expr(node.value)
        for target in node.targets:
            self.assign(target, value, mark)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            mark = Mark(self.b.block)
            self.assign(node.target, self.expr(node.value), mark)

    def visit_AugAssign(self, node):
        mark = Mark(self.b.block)
        target = node.target
        if isinstance(target, gast.Name):
            current = self.eval_Name(target)
            operand = self.expr(node.value)
            self._check_static_update(current, operand, node)
            value = operators.binary(self.b, type(node.op), current, operand, True)
            if self.is_array(current) and isinstance(value, Value):
                # ``y += v`` on an array writes into it: every name of ``y`` sees it
                value = operators.in_place_result(self.b, type(node.op), current, value)
                mark.name(value, target.id)
                self.write(current, value)
                return
            self.assign(target, value, mark)
            return
        container, index = self.expr(target.value), self.expr(target.slice)
        current = self.subscript(container, index)
        operand = self.expr(node.value)
        self._check_static_update(current, operand, node)
        value = operators.binary(self.b, type(node.op), current, operand, True)
        if self.is_array(current) and isinstance(value, Value):
            operators.check_same_kind(self.b, type(node.op), current, value)
        self.store_item(target, container, index, value)

    def _check_static_update(self, current, operand, node) -> None:
        """``a += v`` on an array known when compiling writes into it while the code is
        lifted; inside a data-dependent branch or loop that write would happen whether
        or not the branch runs (a silently wrong value), so it is refused there."""
        if (self.depth and isinstance(current, np.ndarray) and not isinstance(operand, Value)):
            raise _static_write_in_region()

    def visit_Return(self, node):
        if len(self.frames) == 1:
            self.return_loc = self.frame.source.loc(node)
        self.frame.result = None if node.value is None else self.expr(node.value)
        self.frame.signal = "return"

    def visit_Break(self, node):
        self.frame.signal = "break"

    def visit_Continue(self, node):
        self.frame.signal = "continue"

    def visit_Raise(self, node):
        if node.exc is None:
            raise UnsupportedSyntaxError("a bare 'raise' outside an except block",
                                         hint="raise an exception instance: raise ValueError(...)")
        self.check_compile_time("'raise'")
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
            self.check_compile_time("failing 'assert'")
            msg = self.expr(node.msg) if node.msg is not None else ""
            raise mark_user_exception(AssertionError(msg), self.frame.source.loc(node))

    # -- helpers of the statements -----------------------------------------------
    def check_compile_time(self, what: str) -> None:
        """A raise happens when the function is compiled: not under run-time control."""
        if self.depth:
            raise UnsupportedSyntaxError(
                f"a {what} under a data-dependent condition or inside a loop op: "
                "compiled code cannot raise", hint="check the condition outside the "
                "compiled function, or keep values valid with np.where/np.clip")

    def assign(self, target, value, mark=None) -> None:
        if isinstance(target, gast.Name):
            if mark is not None:
                mark.name(value, target.id)
            self.frame.scope.bind(target.id, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            starred = [k for k, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
            if starred:
                self.assign_starred(target.elts, starred[0], value, mark)
                return
            items = self.unpack(value, len(target.elts))
            for sub, item in zip(target.elts, items):
                self.assign(sub, item, mark)
        elif isinstance(target, gast.Subscript):
            self.store_item(target, self.expr(target.value), self.expr(target.slice), value)
        else:  # attributes and starred targets are fenced
            raise UnsupportedSyntaxError(f"cannot assign to {type(target).__name__}")

    def assign_starred(self, elts, k: int, value, mark) -> None:
        """``a, *rest, z = value``: ``rest`` gets a new list of the middle items."""
        n_fixed = len(elts) - 1
        items = self.unpack(value, None)
        if len(items) < n_fixed:
            raise InvalidOperandError(f"not enough values to unpack (expected at least "
                                      f"{n_fixed}, got {len(items)})",
                                      hint="the names besides the starred one need one "
                                      "value each")
        middle = items[k:len(items) - (n_fixed - k)]
        for sub, item in zip(elts[:k], items[:k]):
            self.assign(sub, item, mark)
        self.assign(elts[k].value, self.own(list(middle)), mark)
        for sub, item in zip(elts[k + 1:], items[len(items) - (n_fixed - k):]):
            self.assign(sub, item, mark)

    def unpack(self, value, n: int | None) -> list:
        """The items of ``value`` (exactly ``n`` of them, unless ``n`` is None)."""
        if isinstance(value, Value):
            shape = value.type.shape
            if not shape or (n is not None and shape[0] != n):
                raise InvalidOperandError(
                    f"cannot unpack an array of shape {shape} into {n} names")
            return [self.index_value(value, i) for i in range(shape[0])]
        if isinstance(value, LoopList):  # a list a loop built: its items, if its length is known
            items = [value.get(self.b, i) for i in range(len(value))]
        else:
            items = list(value)
        if n is not None and len(items) != n:
            raise InvalidOperandError(f"cannot unpack {len(items)} values into {n} names")
        return items

    def store_item(self, target, container, index, value) -> None:
        """``container[index] = value``: into a list/dict the lifted code built, or a
        functional update of an array whose new Value replaces the old one."""
        if isinstance(container, Value) or resolve.is_array(container):
            self.store_into_value(target.value, container, index, value)
            return
        if id(container) in self.frozen_ids:
            raise UnsupportedOperationError(
                "item assignment into a container built before this data-dependent "
                "branch or loop", hint="build a new list or dict inside it, or assign the "
                "item outside")
        if id(container) not in self.own_ids:
            raise UnsupportedOperationError(
                "item assignment into a container the compiled function did not create "
                "is not supported",
                hint="compute a new array instead (np.where(mask, new, x), np.concatenate), "
                     "or build a new list")
        container[index] = value

    def store_into_value(self, node, old, index, value) -> None:
        """``old[index] = value`` for an array ``old`` (a Value, or a static array
        that becomes a constant when a run-time value is written into it)."""
        lower = rules.METHODS.get("__setitem__")
        if lower is None:
            raise UnsupportedOperationError(
                "item assignment into an array is not supported: it needs the "
                "'__setitem__' lowering, which is not declared",
                hint="compute a new array instead (np.where(mask, new, x), np.concatenate)")
        if not isinstance(old, Value) and not holds_value(value) and not holds_value(index):
            if self.depth:  # it would be written whether or not the branch runs
                raise _static_write_in_region()
            from ..tensor import unwrap
            unwrap(old)[index] = value  # a static array written with static values
            return
        current = old if isinstance(old, Value) else self.array_const(old)
        self.check_overlap(current, index, value)
        new = lower(self.b, current, index, value)
        # every holder of the old array sees the update: its names, the lists and
        # dicts holding it, and the array it is a view of (``x[i][j] = v``)
        self.write(old, new)


def _static_write_in_region() -> UnsupportedOperationError:
    """A write of values known when compiling into an array known when compiling, inside
    a data-dependent branch or loop: lifting the code would write it whether or not the
    branch runs, so it is refused (fuzz seeds 206146, 206213, 223563)."""
    return UnsupportedOperationError(
        "an in-place update of an array computed when compiling, inside a data-dependent "
        "branch or loop: the compiler cannot make it conditional",
        hint="write a new array instead (t = t * 0.5, np.where(mask, new, t)), or compute "
             "the array from the function's inputs")


def _may_change(array) -> bool:
    """Whether ``array``'s memory may be written (it or an array it views is writeable)."""
    while isinstance(array, np.ndarray):
        if array.flags.writeable:
            return True
        array = array.base
    return False
