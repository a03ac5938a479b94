"""Expressions → lift-time values: one ``eval_<Node>`` method per expression node
(conditional expressions, ``and``/``or`` and comparisons are in :mod:`.flow`, calls in
:mod:`.calls`).

Invariants:

* ``expr(node)`` returns a lift-time value: an IR Value, a static Python object,
  or a Python container (tuple/list/dict) of those. Containers never become ops.
* Every op emitted while evaluating ``node`` carries ``node``'s SourceLoc (the
  innermost expression wins), and any error raised below it is re-raised as an
  AdCompilerError located at the innermost expression (:meth:`located`).
* Nothing here changes the environment except ``NamedExpr`` (``:=``) and the
  assignment helpers used by statements.
"""
from __future__ import annotations

from contextlib import contextmanager

import gast
import numpy as np

from ..ad import rules
from ..depth import exhausted, too_deep
from ..errors import (AdCompilerError, InvalidAxisError, InvalidOperandError, UnresolvedAttributeError,
                      UnresolvedNameError, UnsupportedOperationError, UnsupportedSyntaxError)
from ..ir.core import Value
from . import operators, resolve
from .iterables import Appender, LoopList
from .resolve import is_array, lift_object
from .values import StaticIndexNeeded, Undefined

#: attributes of an array that are known from its type alone
_STATIC_ATTRS = {"shape": lambda t: tuple(t.shape), "ndim": lambda t: t.ndim,
                 "dtype": lambda t: t.dtype, "size": lambda t: t.size}


_TYPE_HINT = "check the types and the number of the operands or arguments here"
_VALUE_HINT = ("check the shapes and values of the operands here (the types the compiler "
               "inferred are in the message)")


def _located_error(exc: Exception, loc) -> Exception:
    """An exception from Python code run at compile time, as an error at ``loc``."""
    if isinstance(exc, TypeError):
        return UnsupportedOperationError(str(exc), loc, hint=_TYPE_HINT)
    if isinstance(exc, np.exceptions.AxisError):
        return InvalidAxisError(str(exc), loc, hint=_VALUE_HINT)
    if isinstance(exc, ValueError):
        return InvalidOperandError(str(exc), loc, hint=_VALUE_HINT)
    if isinstance(exc, (IndexError, KeyError, ZeroDivisionError)):
        return InvalidOperandError(f"{type(exc).__name__}: {exc}", loc, hint=_VALUE_HINT)
    mark_user_exception(exc, loc)
    return exc


def mark_user_exception(exc: BaseException, loc) -> BaseException:
    """Note ``loc`` on an exception that propagates unchanged (a user's ``raise``)."""
    if getattr(exc, "_ad_loc", None) is None:
        exc.add_note(loc.render())
        exc._ad_loc = loc
    return exc


class ValueMethod:
    """``x.sum`` before it is called: lowered by ``rules.METHODS['sum']``."""

    def __init__(self, name: str, value: Value):
        self.name, self.value = name, value


class ExprLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: expression visitors."""

    def expr(self, node):
        method = getattr(self, "eval_" + type(node).__name__, None)
        with self.located(node):
            if method is None:
                raise UnsupportedSyntaxError(
                    f"unsupported syntax: {type(node).__name__} expression",
                    hint="rewrite it with simple assignments, operators and calls")
            result = method(node)
        if isinstance(node, (gast.Call, gast.Attribute)):
            self.note_result(result)
        return result

    @contextmanager
    def located(self, node):
        """Ops emitted inside get ``node``'s location; errors are re-raised at it."""
        loc = self.frame.source.loc(node)
        saved, self.b.loc = self.b.loc, loc
        try:
            yield loc
        except AdCompilerError as exc:
            if exc.loc is None:
                exc.loc = loc
                exc.args = (exc._render(),)
            raise
        except Exception as exc:
            if exhausted(exc):  # not a user's runaway recursion run at compile time
                raise too_deep(f"the code here ({len(self.frames)} calls deep)", loc) from None
            if getattr(exc, "_ad_loc", None) is not None:  # the user's own raise: keep it
                raise
            raise _located_error(exc, loc) from exc
        finally:
            self.b.loc = saved

    # -- leaves ---------------------------------------------------------------
    def eval_Constant(self, node):
        return node.value

    def eval_Name(self, node):
        value = self.frame.scope.lookup(node.id, self)
        if value is resolve.MISSING:
            raise UnresolvedNameError(f"name {node.id!r} is not defined",
                                      hint="define it before this line, import it at module "
                                           "level, or pass it in as an argument")
        if value is resolve.UNBOUND:
            raise UnresolvedNameError(
                f"local variable {node.id!r} is read before it is assigned",
                hint="assign it on every path before this line (a branch not taken "
                     "does not assign)")
        if isinstance(value, Undefined):
            raise UnresolvedNameError(value.message, hint=value.hint)
        return value

    def eval_NamedExpr(self, node):
        value = self.expr(node.value)
        self.assign(node.target, value)
        return value

    # -- attributes and subscripts -------------------------------------------------
    def eval_Attribute(self, node):
        return self.attribute(self.expr(node.value), node.attr)

    def attribute(self, obj, name: str):
        if isinstance(obj, Value):
            return self.value_attribute(obj, name)
        if is_array(obj) and name in _STATIC_ATTRS:
            return getattr(obj, name)
        if is_array(obj) and (name in rules.ATTRIBUTES or name in rules.METHODS):
            return self.value_attribute(self.array_const(obj), name)
        try:
            found = getattr(obj, name)
        except AttributeError as exc:
            raise UnresolvedAttributeError(
                str(exc), hint="check the name: attributes are read when the function is "
                               "compiled, so they must exist by then") from None
        return lift_object(found, self, hint=name, where=self.captures.attr(obj, name))

    def value_attribute(self, value: Value, name: str):
        if name in ("shape", "size") and value.type.dynamic:
            return self.run_time_shape(value, name)
        if name in _STATIC_ATTRS:
            return _STATIC_ATTRS[name](value.type)
        if name in rules.ATTRIBUTES:
            return rules.ATTRIBUTES[name](self.b, value)
        if name in rules.METHODS:
            return ValueMethod(name, value)
        param = self.parameter_of(value)
        if param is not None and hasattr(param, name):  # self.w.name, self.w.requires_grad
            return getattr(param, name)
        raise UnsupportedOperationError(
            f"arrays have no supported attribute or method {name!r}",
            hint="supported: " + ", ".join(sorted([*_STATIC_ATTRS, *rules.ATTRIBUTES,
                                                   *rules.METHODS])))

    def run_time_shape(self, value: Value, name: str):
        """``x.shape``/``x.size`` of a value with a run-time length (ir/dims.py): that
        length is an int value (``x.shape[0]``), the others stay Python ints."""
        shape = tuple(self.b.dim(value, axis=i, hint="n") if d is None else d
                      for i, d in enumerate(value.type.shape))
        if name == "shape":
            return shape
        size = 1
        for d in shape:
            size = operators.binary(self.b, gast.Mult, size, d)
        return size

    def eval_Subscript(self, node):
        return self.subscript(self.expr(node.value), self.expr(node.slice))

    def subscript(self, obj, index):
        if isinstance(obj, Value):
            result = self.index_value(obj, index)
            if isinstance(result, Value) and _basic(index) and (
                    result.type.ndim or any(i is Ellipsis for i in _items(index))):
                self.note_view(result, obj, index)  # basic indexing gives a view
            return result
        if isinstance(obj, (LoopList, Appender)):
            return obj.get(self.b, index) if isinstance(obj, LoopList) else obj[index]
        if is_array(obj) and not holds_value(index):
            from ..tensor import unwrap
            return unwrap(obj)[index]
        if is_array(obj):
            return self.index_value(self.array_const(obj), index)
        lower = rules.find_subscript(obj)
        if lower is not None and holds_value(index if isinstance(index, tuple) else (index,)):
            return lower(self.b, index)
        if holds_value(index):
            raise StaticIndexNeeded(
                "cannot index a Python container with an array value (a loop counter "
                "is one)", hint="index with a Python int (or put the items in an array "
                "with np.stack)")
        item = obj[index]
        if type(index) in (int, str) and self.captures.of(obj) is not None:
            return lift_object(item, self, where=self.captures.child(self.captures.of(obj),
                                                                     ("item", index)))
        return self.outside(item)

    def index_value(self, value: Value, index):
        lower = rules.METHODS.get("__getitem__")
        if lower is None:
            raise UnsupportedOperationError(
                "indexing an array needs the '__getitem__' lowering, which is not declared",
                hint="declare it in ad_compiler/ops (indexing), or use np.take / reshapes")
        return lower(self.b, value, index)

    def eval_Slice(self, node):
        parts = [None if n is None else self.expr(n) for n in (node.lower, node.upper, node.step)]
        if holds_value(parts):
            raise StaticIndexNeeded("slice bounds must be Python ints, not array values (a "
                                    "loop counter is one)",
                                    hint="use int bounds, e.g. from x.shape")
        return slice(*parts)

    # -- displays ---------------------------------------------------------------
    def eval_Tuple(self, node):
        return tuple(self.elements(node.elts))

    def eval_List(self, node):
        return self.own(list(self.elements(node.elts)))

    def eval_Set(self, node):
        items = self.elements(node.elts)
        if holds_value(items):
            raise UnsupportedOperationError("a set cannot hold array values",
                                            hint="use a tuple or a list")
        return set(items)

    def eval_Dict(self, node):
        out = self.own({})
        for key, value in zip(node.keys, node.values):
            if key is None:  # {**other}
                out.update(self.splat_mapping(self.expr(value)))
            else:
                out[self.expr(key)] = self.expr(value)
        return out

    def elements(self, nodes) -> list:
        """Evaluated items of a display or call, with ``*seq`` spliced in."""
        items = []
        for n in nodes:
            if isinstance(n, gast.Starred):
                with self.located(n):
                    items.extend(self.splat_sequence(self.expr(n.value)))
            else:
                items.append(self.expr(n))
        return items

    def splat_sequence(self, seq) -> list:
        """``*seq``: a Python sequence's items; an array's rows (``zip(*rows)``)."""
        if isinstance(seq, Value):
            return self.sequence_items(seq, "'*'")
        return list(seq)

    def splat_mapping(self, mapping) -> dict:
        if not isinstance(mapping, dict):
            raise UnsupportedOperationError(f"'**' needs a dict, got {type(mapping).__name__}")
        return mapping

    # -- operators ----------------------------------------------------------------
    def eval_BinOp(self, node):
        """``a + b + c ...`` is a tree as deep as it is long, so its left spine is
        walked in a loop: operands and operations in Python's order, each
        operation located at its own node."""
        spine = [node]
        while isinstance(spine[-1].left, gast.BinOp):
            spine.append(spine[-1].left)
        value = self.expr(spine[-1].left)
        for inner in reversed(spine):
            with self.located(inner):
                right = self.expr(inner.right)
                value = operators.binary(self.b, type(inner.op), value, right)
        return value

    def eval_UnaryOp(self, node):
        return operators.unary(self.b, type(node.op), self.expr(node.operand))

    # -- f-strings (only inside raise/assert messages, see fence) -------------------
    def eval_JoinedStr(self, node):
        return "".join(str(self.expr(v)) for v in node.values)

    def eval_FormattedValue(self, node):
        value = self.expr(node.value)
        value = {115: str, 114: repr, 97: ascii}.get(node.conversion, lambda v: v)(value)
        spec = "" if node.format_spec is None else self.expr(node.format_spec)
        return format(value, spec)


def _items(index) -> tuple:
    return index if type(index) is tuple else (index,)


def _basic(index) -> bool:
    """A static basic index (ints, slices, None, ...): NumPy returns a view (a
    NumPy scalar, a copy, when ints select one element and there is no ``...``)."""
    items = _items(index)
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice))
               and not isinstance(i, bool) for i in items)


def holds_value(obj) -> bool:
    if isinstance(obj, Value):
        return True
    if isinstance(obj, (tuple, list)):
        return any(holds_value(x) for x in obj)
    if isinstance(obj, dict):
        return any(holds_value(x) for x in obj.values())
    return False
