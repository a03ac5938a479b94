"""Calls: which of the ways to lift a call applies, tried in a fixed order.

1. ``print(...)`` is dropped: compiled functions have no side effects; ``super()``
   gets its class and ``self`` from the frame, as Python does.
2. ``x.sum(axis=1)`` on a Value: ``rules.METHODS['sum'](b, x, axis=1)``; then
   builtins on Values and lists built by loops (:mod:`.builtin_calls`).
3. A pure callee (:func:`.statics.is_pure`) with only static arguments runs in
   Python now; its result is static (``range(3)``, ``np.zeros(2)``, ``math.pi * 2``).
4. A callee with a lowering (``rules.find_lowering``): ``lower(b, *args, **kwargs)``
   with Values for dynamic arguments and Python values for static ones (arrays
   among them become ``const`` ops first).
5. A Cell instance: its class's ``construct`` is inlined with ``self`` bound.
6. A ``def``/``lambda`` from the lifted code, then a Python function or method
   with source (library functions excepted): inlined; then a ``functools.partial``
   or an instance with a Python ``__call__`` (:mod:`.objects`).
7. A structural builtin on containers (``len``, ``zip``, ``list.append`` on a list
   the lifted code built ...): run in Python on the lift-time containers.

Anything else is an :class:`~ad_compiler.errors.UnsupportedOperationError` at the
user's call, naming the callee and what to write instead.
"""
from __future__ import annotations

from .custom import call_with_rule, has_bprop, note_recompute_flag, rule_of

import builtins
import inspect

import gast
import numpy as np

from ..ad import rules
from ..errors import UnsupportedOperationError
from ..ir.core import Value
from . import operators
from .exprs import ValueMethod, holds_value
from .inline import LocalFunction
from .resolve import construct_of, is_array, is_cell, is_parameter, lift_object, tensor_class
from .specs import tree_map
from .statics import describe, is_cell_reader, is_pure, is_structural
from .values import StaticIndexNeeded

NOT_HANDLED = object()

#: top-level packages whose Python functions are never inlined: without a
#: lowering they are not differentiable, and their source is not user code
_LIBRARIES = {"numpy", "scipy", "math", "builtins", "functools", "operator", "inspect",
              "typing", "copy"}
_INTERNAL = ("ad_compiler.ir", "ad_compiler.ad", "ad_compiler.frontend",
             "ad_compiler.codegen", "ad_compiler.api")


class CallLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: the ``Call`` visitor and its handlers."""

    HANDLERS = ("call_ignored", "call_super", "call_method", "call_frontend", "call_builtin",
                "call_static", "call_custom", "call_lowering", "call_cell", "call_local",
                "call_python", "call_object", "call_structural")

    def eval_Call(self, node):
        callee = self.expr(node.func)
        args = self.elements(node.args)
        kwargs = {}
        for kw in node.keywords:
            value = self.expr(kw.value)
            if kw.arg is None:
                kwargs.update(self.splat_mapping(value))
            else:
                kwargs[kw.arg] = value
        return self.call(callee, args, kwargs)

    def call(self, callee, args: list, kwargs: dict):
        for handler in self.HANDLERS:
            result = getattr(self, handler)(callee, args, kwargs)
            if result is not NOT_HANDLED:
                return result
        raise unsupported_call(callee)

    # -- handlers, in order ---------------------------------------------------
    def call_ignored(self, callee, args, kwargs):
        return None if callee is builtins.print else NOT_HANDLED

    def call_super(self, callee, args, kwargs):
        """``super()`` in a method: Python finds the class and ``self`` from the frame."""
        if callee is not super or args or kwargs:
            return NOT_HANDLED
        cls = self.frame.scope.lookup("__class__", self)
        if not isinstance(cls, type) or not self.frame.args:
            raise UnsupportedOperationError("super() without arguments outside a method",
                                            hint="write super(ClassName, self)")
        return super(cls, self.frame.args[0])

    def call_method(self, callee, args, kwargs):
        if not isinstance(callee, ValueMethod):
            return NOT_HANDLED
        lower = rules.METHODS[callee.name]
        return lower(self.b, callee.value, *self.arrays_to_values(args),
                     **self.arrays_to_values(kwargs))

    def call_static(self, callee, args, kwargs):
        if not is_pure(callee) or holds_value(args) or holds_value(kwargs):
            return NOT_HANDLED
        result = callee(*args, **kwargs)
        if is_cell_reader(callee):
            # which Parameters it lists depends on their requires_grad and on the
            # Cell tree: the code depends on the Cell epoch, which both move
            self.captures.needs_epoch = True
        if callee is len and len(args) == 1:
            self.captures.measured(args[0], result)
        if callee is getattr:  # getattr(self, 'w') reads like self.w
            where = self.captures.attr(args[0], args[1]) if isinstance(args[1], str) else None
            return lift_object(result, self, hint=str(args[1]), where=where)
        if isinstance(result, (list, dict)):  # a pure call returns a new container
            return self.own(result)
        return self.parameter_value(result) if is_parameter(result) else result

    def call_lowering(self, callee, args, kwargs):
        lower = rules.find_lowering(callee)
        if lower is None:
            return NOT_HANDLED
        out = lower(self.b, *self.arrays_to_values(args), **self.arrays_to_values(kwargs))
        return tree_map(self._numpy_result, out) if _is_numpy(callee) else out

    def _numpy_result(self, v):
        """A NumPy function rarely returns a Python number: of Python numbers it gives a
        NumPy scalar (np.float64), which is strongly typed (NEP 50). The exceptions
        (np.allclose, np.count_nonzero, np.random.uniform() ...) come from primitives
        whose type rule runs NumPy itself (``rules.exact_type``): kept as they are."""
        if isinstance(v, Value) and v.type.weak and not rules.exact_type(v):
            return self.b.npscalar(v, dtype=v.type.dtype)
        return v

    def call_custom(self, callee, args, kwargs):
        """A function made by ``ms.custom_vjp``/``custom_jvp``/``checkpoint``: its call
        carries its own rule."""
        from ..api.checkpoint import Checkpointed
        from ..api.custom_rules import CustomJVP, CustomVJP
        if not isinstance(callee, (CustomVJP, CustomJVP, Checkpointed)):
            return NOT_HANDLED
        return call_with_rule(self, rule_of(callee), args, kwargs)

    def call_cell(self, callee, args, kwargs):
        if not is_cell(callee):
            return NOT_HANDLED
        if not has_bprop(callee):
            note_recompute_flag(self.captures, callee)
        rule = rule_of(callee)
        if rule is not None:  # bprop replaces the derived adjoint; recompute() recomputes
            return call_with_rule(self, rule, args, kwargs)
        construct = construct_of(callee)
        return self.inline_function(construct, [callee, *args], kwargs,
                                    name=f"{type(callee).__name__}.construct", owner=callee)

    def call_local(self, callee, args, kwargs):
        if not isinstance(callee, LocalFunction):
            return NOT_HANDLED
        return self.inline_local(callee, args, kwargs)

    def call_python(self, callee, args, kwargs):
        owner = None
        if inspect.ismethod(callee):
            owner, callee, args = callee.__self__, callee.__func__, [callee.__self__, *args]
        if not inspect.isfunction(callee) or _is_library(callee):
            return NOT_HANDLED
        return self.inline_function(callee, args, kwargs, owner=owner)

    def call_structural(self, callee, args, kwargs):
        if callee is sum and holds_value(args):
            return self.call_sum(*args, **kwargs)
        if not is_structural(callee, self.own_ids):
            return NOT_HANDLED
        if callee is len and len(args) == 1 and isinstance(args[0], Value):
            if args[0].type.shape[:1] == (None,):  # a run-time length (ir/dims.py)
                return self.run_time_shape(args[0], "shape")[0]
            return _len_of_value(args[0])
        if callee is isinstance and args and isinstance(args[0], Value):
            return _value_isinstance(args[0], args[1])
        if _is_container_builtin(callee) and any(isinstance(a, Value) for a in args):
            return NOT_HANDLED  # tuple(x), zip(x, y): iterating an array needs its data
        result = callee(*args, **kwargs)
        return self.own(result) if isinstance(result, (list, dict)) else self.outside(result)

    # -- helpers -----------------------------------------------------------------
    def arrays_to_values(self, tree):
        """Static ndarrays/Tensors in call arguments become ``const`` ops (Parameters
        their arguments)."""
        return tree_map(lambda v: lift_object(v, self) if is_array(v) else v, tree)

    def call_sum(self, items, start=0):
        """``sum(values)``: a chain of ``add`` ops, as Python's left fold."""
        if isinstance(items, Value):
            return NOT_HANDLED
        total = start
        for item in items:
            total = operators.binary(self.b, gast.Add, total, item)
        return total


def _len_of_value(value: Value) -> int:
    if not value.type.shape:
        raise UnsupportedOperationError("len() of a 0-d array (a scalar)",
                                        hint="a scalar has no length; check x.ndim first")
    return value.type.shape[0]


def _value_isinstance(value: Value, classes) -> bool:
    """``isinstance`` for a run-time array: an array argument may arrive as an
    ndarray or a Tensor, a Python number as its Python type."""
    classes = classes if isinstance(classes, tuple) else (classes,)
    t = value.type
    proxies = (t.python_type,) if t.weak else (tensor_class(), np.ndarray)
    return any(issubclass(p, c) for p in proxies for c in classes)


def _is_container_builtin(callee) -> bool:
    return isinstance(callee, type) or getattr(callee, "__self__", None) is builtins


def _is_library(fn) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] in _LIBRARIES or module.startswith(_INTERNAL)


def _is_numpy(callee) -> bool:
    return isinstance(callee, np.ufunc) or (
        getattr(callee, "__module__", None) or "").split(".")[0] == "numpy"


def unsupported_call(callee) -> UnsupportedOperationError:
    name = describe(callee)
    if not callable(callee):
        return UnsupportedOperationError(f"{type(callee).__name__} object is not callable")
    refusal = rules.find_refusal(callee)
    if refusal is not None:
        return UnsupportedOperationError(refusal[0], hint=refusal[1])
    if _is_numeric_library(callee):
        return no_rule_yet(name, pure=is_pure(callee))
    if is_pure(callee) or is_structural(callee, ()):
        # a loop over range whose body needs its counter here is unrolled instead
        return StaticIndexNeeded(
            f"{name}() of an array value cannot be computed at compile time",
            hint="use the NumPy form instead (np.maximum, np.abs, x.astype(...), x.shape[0])")
    if isinstance(callee, type):
        return UnsupportedOperationError(
            f"creating a {callee.__name__} object inside a compiled function is not supported",
            hint="create it outside (at module level, or in the Cell's __init__) and use it here")
    if isinstance(getattr(callee, "__self__", None), (list, dict, set)):
        return UnsupportedOperationError(
            f"{name}() changes a container the compiled function did not create",
            hint="build a new list or dict inside the function instead")
    return UnsupportedOperationError(
        f"cannot compile a call of {name}: it has no lowering (no derivative rule) and "
        "no Python source to inline",
        hint="use a NumPy function or an ad_compiler.ops primitive that has a derivative "
             "rule, or compute the value outside the function and pass it in")


_ADDING_A_RULE = ("write it with functions that have one (docs/primitives.md lists them), "
                  "or register a rule for it with ad_compiler.primitive (docs/extending.md)")


def no_rule_yet(name: str, pure: bool) -> UnsupportedOperationError:
    """A NumPy / ``math`` / ``ops`` function without a lowering, called on a run-time
    value. A pure one may still be computable from a loop counter: the error is then a
    :class:`StaticIndexNeeded`, so a loop over ``range`` is unrolled instead."""
    cls = StaticIndexNeeded if pure else UnsupportedOperationError
    return cls(f"{name} has no derivative rule yet: it cannot be applied to a value "
               "computed from the function's arguments", hint=_ADDING_A_RULE)


def _is_numeric_library(fn) -> bool:
    """NumPy, SciPy, ``math`` and ``ad_compiler.ops`` functions: those a rule may cover."""
    module = getattr(fn, "__module__", None) or ""
    return (isinstance(fn, np.ufunc) or module.split(".")[0] in ("numpy", "scipy", "math")
            or module.startswith("ad_compiler.ops"))
