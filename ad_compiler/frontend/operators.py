"""Python operators on lift-time values: primitives for Values, Python for statics.

Invariants:

* If neither operand is a Value the operator runs in Python at compile time
  (``2 * 3``, ``x.shape + (1,)``, ``(a, b) + (c,)``): the result is static.
* Otherwise the operator is lowered like a call of its ``operator`` function:
  the lowering registered for ``operator.pow`` (say) decides, so ``x ** 2``
  lowers exactly as ``np.power(x, 2)`` does. Without one, it becomes the
  primitive named in the tables below. Static numbers reach the lowering as
  Python numbers; static arrays become ``const`` ops (:func:`as_value`). A
  missing primitive is a located error, not a KeyError.
* ``not v`` of a one-element Value is ``v == 0`` (``v == False`` for bools); of a
  bigger array it is NumPy's ambiguity error. ``in`` on a Value and ``assert``
  on a Value would need the run-time data: they raise. Data-dependent ``if``,
  ``and``/``or`` and chained comparisons are lifted in :mod:`.flow`.
"""
from __future__ import annotations

import operator

import gast
import numpy as np

from ..ad import rules
from ..errors import UnsupportedOperationError, UnsupportedSyntaxError
from ..ir.core import Value
from .specs import tree_leaves

#: gast operator -> (primitive, symbol, python function, in-place python function)
BINARY = {
    gast.Add: ("add", "+", operator.add, operator.iadd),
    gast.Sub: ("sub", "-", operator.sub, operator.isub),
    gast.Mult: ("mul", "*", operator.mul, operator.imul),
    gast.Div: ("div", "/", operator.truediv, operator.itruediv),
    gast.Pow: ("pow", "**", operator.pow, operator.ipow),
    gast.MatMult: ("matmul", "@", operator.matmul, operator.imatmul),
    gast.FloorDiv: ("floor_divide", "//", operator.floordiv, operator.ifloordiv),
    gast.Mod: ("mod", "%", operator.mod, operator.imod),
    gast.BitAnd: ("bitwise_and", "&", operator.and_, operator.iand),
    gast.BitOr: ("bitwise_or", "|", operator.or_, operator.ior),
    gast.BitXor: ("bitwise_xor", "^", operator.xor, operator.ixor),
    gast.LShift: ("left_shift", "<<", operator.lshift, operator.ilshift),
    gast.RShift: ("right_shift", ">>", operator.rshift, operator.irshift),
}

COMPARE = {
    gast.Eq: ("equal", "==", operator.eq),
    gast.NotEq: ("not_equal", "!=", operator.ne),
    gast.Lt: ("less", "<", operator.lt),
    gast.LtE: ("less_equal", "<=", operator.le),
    gast.Gt: ("greater", ">", operator.gt),
    gast.GtE: ("greater_equal", ">=", operator.ge),
}

_DATA_DEPENDENT_HINT = (
    "the result would depend on array values known only at run time; conditions on "
    "shapes, dtypes, Python numbers and attributes are fine, and np.where(cond, a, b) "
    "selects elementwise")


def require_primitive(name: str, symbol: str):
    if name not in rules.PRIMITIVES:
        raise UnsupportedOperationError(
            f"operator {symbol!r} on arrays needs the primitive {name!r}, which is not declared",
            hint="call a NumPy function that has a derivative rule instead, or declare the "
                 "primitive in ad_compiler/ops")
    return name


def as_value(b, v) -> Value:
    """``v`` as an IR value: Values pass, static numbers and arrays become ``const`` ops."""
    from ..tensor import unwrap
    from .resolve import is_parameter
    if isinstance(v, Value):
        return v
    if is_parameter(v):  # however it got here, a Parameter is an input, never a constant
        return b.read_parameter(v)
    v = unwrap(v)
    if isinstance(v, (bool, int, float, complex, np.ndarray, np.generic)):
        return b.const(v)
    if isinstance(v, (tuple, list)) and not any(isinstance(x, Value) for x in tree_leaves(v)):
        return b.const(np.asarray(v))
    what = "a container holding array values" if isinstance(v, (tuple, list, dict)) \
        else f"a {type(v).__name__}"
    raise UnsupportedOperationError(
        f"cannot use {what} as an array operand",
        hint="combine arrays with np.stack/np.concatenate, or pass numbers and arrays")


def binary(b, op_type, left, right, inplace: bool = False):
    name, symbol, py, ipy = BINARY[op_type]
    if not isinstance(left, Value) and not isinstance(right, Value):
        return (ipy if inplace else py)(left, right)
    right = _python_complex_operand(b, symbol, left, right)
    return apply(b, py, name, symbol, left, right)


def _python_complex_operand(b, symbol, left, right):
    """``right`` as Python sees it in ``1j * v``, ``v`` a 0-d float64: an np.float64 (a
    float subclass) meets Python's complex arithmetic, which gives a Python complex,
    while a 0-d array gives np.complex128 (the two differ in type: a float32 array they
    meet stays complex64 or not). Where ``v`` is an np.float64 in Python (its op gives
    a NumPy scalar even of 0-d arrays: ufuncs, reductions) it is ``float(v)``; where
    that is not known here (an argument, a view) the expression is refused."""
    weak_complex = type(left) is complex or isinstance(left, Value) and left.type.weak \
        and left.type.dtype.kind == "c"
    if not (weak_complex and isinstance(right, Value) and not right.type.weak
            and right.type.shape == () and right.type.dtype == np.float64):
        return right
    if _numpy_scalar(right):
        return b.pyfloat(right)
    raise UnsupportedOperationError(
        f"a Python complex {symbol} a float64 scalar computed in the function: its type "
        "depends on whether that scalar is an np.float64 (Python complex result) or a "
        "0-d array (np.complex128), which is not known here",
        hint="write float(v) for a Python complex result, or np.complex128(1j) for "
             "NumPy's (docs/complex.md)")


def _numpy_scalar(v: Value, memo: dict | None = None) -> bool:
    """Whether the 0-d ``v`` is a NumPy scalar (never a 0-d array) in Python: the NumPy
    call of the op that made it gives a scalar of its inputs, each a scalar where this
    holds for it (np.imag of a reduction) and a 0-d array where not known."""
    memo = {} if memo is None else memo
    if id(v) not in memo:
        memo[id(v)] = False  # (a cycle, or too deep: not known)
        if len(memo) < 64:
            memo[id(v)] = _gives_numpy_scalar(v.producer, memo)
    return memo[id(v)]


def _gives_numpy_scalar(op, memo) -> bool:
    from ..ops._infer import stand_in
    prim = rules.PRIMITIVES.get(op.prim) if op is not None and not op.regions else None
    if prim is None or prim.effect or len(op.results) != 1:
        return False
    try:
        inputs = [i.type.dtype.type(1) if i.type.shape == () and not i.type.weak
                  and _numpy_scalar(i, memo) else stand_in(i.type) for i in op.inputs]
        with np.errstate(all="ignore"):
            out = prim.impl(*inputs, **{**prim.defaults, **op.params})
    except Exception:  # an input that is no array (a list): not known
        return False
    return isinstance(out, np.generic)


def in_place_result(b, op_type, target, result):
    """What ``target op= v`` leaves in the array ``target``: NumPy computes ``result``
    and casts it into ``target``'s dtype (``same_kind``); the shape cannot grow."""
    t, r = b.type_of(target), b.type_of(result)
    if r.shape != t.shape:
        raise ValueError(f"non-broadcastable output operand with shape {t.shape} doesn't "
                         f"match the broadcast shape {r.shape}")
    if r.dtype != t.dtype:
        check_same_kind(b, op_type, target, result)
        result = b.emit("cast", result, dtype=t.dtype)
    return result


def check_same_kind(b, op_type, target, result) -> None:
    """``target op= v`` on an array casts the result into it by ``same_kind``: complex
    into real is NumPy's TypeError (``buf[:2] += z``)."""
    t, r = b.type_of(target), b.type_of(result)
    if not np.can_cast(r.dtype, t.dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc {BINARY[op_type][0]!r} output from {r.dtype!r} "
                        f"to {t.dtype!r} with casting rule 'same_kind'")


def apply(b, py_fn, name: str, symbol: str, *operands):
    """``py_fn(*operands)`` on IR values, through its lowering or else primitive ``name``."""
    operands = [v if _is_number(v) else as_value(b, v) for v in operands]
    lower = rules.find_lowering(py_fn)
    if lower is not None:
        return lower(b, *operands)
    require_primitive(name, symbol)
    return b.emit(name, *(as_value(b, v) for v in operands))


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float, complex, np.generic))


def unary(b, op_type, operand):
    if not isinstance(operand, Value):
        return _UNARY_PY[op_type](operand)
    if op_type is gast.USub:
        return apply(b, operator.neg, "neg", "-", operand)
    if op_type is gast.UAdd:  # np.positive: a new array (a number stays itself)
        return b.copy(operand) if b.type_of(operand).ndim else operand
    if op_type is gast.Invert:
        return apply(b, operator.invert, "invert", "~", operand)
    return logical_not(b, operand)


def logical_not(b, v: Value) -> Value:
    """``not v`` for a one-element Value ``v``."""
    from ..errors import InvalidOperandError
    if getattr(v.type, "size", 0) != 1:
        raise InvalidOperandError(
            f"the truth value of an array of type {v.type} is ambiguous ('not' needs "
            "one element)",
            hint="use np.logical_not(x) (or x == 0) for an elementwise 'not', or reduce "
                 "it with np.any/np.all first")
    zero = False if v.type.dtype.kind == "b" else 0
    return b.equal(v, b.const(zero), hint="not_")


_UNARY_PY = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
             gast.Invert: operator.invert}


def compare(b, op_type, left, right):
    """One comparison ``left <op> right``."""
    if op_type in (gast.Is, gast.IsNot):
        same = _identical(left, right)
        return same if op_type is gast.Is else not same
    if op_type in (gast.In, gast.NotIn):
        if isinstance(left, Value) or isinstance(right, Value):
            raise UnsupportedSyntaxError("'in' on an array value is data-dependent",
                                         hint=_DATA_DEPENDENT_HINT)
        found = left in right
        return found if op_type is gast.In else not found
    name, symbol, py = COMPARE[op_type]
    if not isinstance(left, Value) and not isinstance(right, Value):
        return py(left, right)
    return apply(b, py, name, symbol, left, right)


def _identical(left, right) -> bool:
    """``is`` at compile time. A Value is a run-time array, so it is never a
    compile-time object (``x is None`` is False); two Values are the same
    object only if they are the same Value."""
    return left is right


def truth(value, what: str) -> bool:
    """The static truth value of a condition that must be known at compile time
    (an ``assert``; see :mod:`.flow` for conditions that may be Values)."""
    if isinstance(value, Value):
        raise UnsupportedSyntaxError(
            f"a data-dependent {what} cannot be checked when the function is compiled: "
            "the condition is an array value", hint=_DATA_DEPENDENT_HINT)
    return bool(value)
