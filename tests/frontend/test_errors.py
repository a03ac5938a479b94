"""User errors point at the user's code: type, real file, real line, source text, hint.

Each failing function marks the line the error must name with a ``# E:<key>``
comment; the expected line number is found by reading this file, independently
of the compiler's own use of ``inspect``.
"""
import builtins

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401
from ad_compiler import nn
from ad_compiler.errors import (AdCompilerError, GradTypeError, InvalidOperandError,
                                RecursiveCallError, UnresolvedAttributeError,
                                UnresolvedNameError, UnsupportedOperationError,
                                UnsupportedSyntaxError)
from ad_compiler.frontend import lift
from ad_compiler.ir.core import AType

V3 = AType((3,), np.dtype("float64"))
THIS_FILE = __file__


def marker_line(key: str) -> tuple[int, str]:
    """The 1-based line number and text of the line tagged ``# E:<key>`` in this file."""
    with open(THIS_FILE) as f:
        hits = [(i, line) for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# E:{key}")]
    assert len(hits) == 1, key
    line, text = hits[0]
    return line, text.split("#")[0].strip()


def check(exc_info, key: str, cls, builtin=None):
    err = exc_info.value
    assert isinstance(err, cls) and isinstance(err, AdCompilerError)
    if builtin is not None:
        assert isinstance(err, builtin)
    line, text = marker_line(key)
    message = str(err)
    assert f"{THIS_FILE}:{line}:" in message, message
    assert text in message, message
    assert "^" in message and "hint:" in message, message
    assert err.loc.file == THIS_FILE and err.loc.line == line
    return message


# -- syntax the fence rejects --------------------------------------------------
def uses_try(x):
    try:  # E:try
        y = x * 2
    except ValueError:
        y = x
    return y


def uses_with(x):
    with open("f"):  # E:with
        return x


def uses_global(x):
    global SOME  # E:global
    return x


def uses_comprehension(x):
    return {i: x * i for i in range(3)}  # E:comprehension


def uses_fstring(x):
    name = f"value {x}"  # E:fstring
    return name


def uses_yield(x):
    yield x  # E:yield


def uses_import(x):
    import math  # E:import
    return x * math.pi


def uses_del(x):
    y = x
    del y  # E:del
    return x


def sets_attribute(self, x):
    self.cache = x  # E:setattr
    return x


def starred_too_few(t):
    a, b, *rest = t  # E:starred
    return a


@pytest.mark.parametrize("fn, key", [
    (uses_try, "try"), (uses_with, "with"),
    (uses_global, "global"),
    (uses_comprehension, "comprehension"), (uses_fstring, "fstring"), (uses_yield, "yield"),
    (uses_import, "import"), (uses_del, "del"),
])
def test_fence_rejects_unsupported_syntax(fn, key):
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(fn, (V3,))
    message = check(info, key, UnsupportedSyntaxError, RuntimeError)
    assert "unsupported syntax" in message


def test_fence_rejects_attribute_assignment():
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(sets_attribute, (object(), V3))
    check(info, "setattr", UnsupportedSyntaxError)


def test_a_starred_target_with_too_few_values_names_the_line():
    with pytest.raises(InvalidOperandError) as info:
        lift(starred_too_few, ((V3,),))
    assert "not enough values to unpack (expected at least 2, got 1)" in \
        check(info, "starred", InvalidOperandError, ValueError)


def test_fence_runs_before_lowering():
    # the undefined name on the first line is never reached: the try is rejected first
    def f(x):
        y = undefined_name_here(x)  # noqa: F821
        try:  # E:fence-first
            pass
        finally:
            pass
        return y
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(f, (V3,))
    check(info, "fence-first", UnsupportedSyntaxError)


# -- errors found while lifting ----------------------------------------------------
def array_condition(x):
    y = np.sin(x)
    if y > 0:  # E:dd-if
        y = y * 2
    return y


def array_ternary(x):
    return x if x > 0 else -x  # E:dd-ternary


def array_and(x, flag):
    return flag and x > 0 and x  # E:dd-and


def test_array_condition_is_numpys_ambiguity_error():
    with pytest.raises(ValueError) as info:
        lift(array_condition, (V3,))
    message = check(info, "dd-if", InvalidOperandError, ValueError)
    assert "truth value of an array with more than one element is ambiguous" in message
    assert "bool[3]" in message and "np.any" in message


def test_array_ternary_and_boolop_conditions_are_ambiguous():
    with pytest.raises(InvalidOperandError) as info:
        lift(array_ternary, (V3,))
    check(info, "dd-ternary", InvalidOperandError)
    with pytest.raises(InvalidOperandError) as info:
        lift(array_and, (V3, True))
    check(info, "dd-and", InvalidOperandError)


def endless(x):
    while True:  # E:endless
        x = x * 2
    return x


def test_while_true_without_exit_is_an_infinite_loop():
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(endless, (V3,))
    assert "infinite loop" in check(info, "endless", UnsupportedSyntaxError)


def undefined_name(x):
    y = x * 2
    return y + not_defined_anywhere  # noqa: F821  # E:undefined


def unbound_local(x, flag):
    if flag:
        y = x
    return y * 2  # E:unbound


def test_undefined_name_is_a_name_error():
    with pytest.raises(NameError) as info:
        lift(undefined_name, (V3,))
    message = check(info, "undefined", UnresolvedNameError, NameError)
    assert "'not_defined_anywhere' is not defined" in message


def test_local_read_before_assignment_does_not_fall_back_to_globals():
    with pytest.raises(UnresolvedNameError) as info:
        lift(unbound_local, (V3, False))
    assert "read before it is assigned" in check(info, "unbound", UnresolvedNameError)


def recurse(x, n):
    if np.sum(x) > n:
        return x
    return recurse(x * 2, n)  # E:recursion


def ping(x):
    return pong(x)


def pong(x):
    return ping(x) + 1  # E:mutual


def test_recursion_is_a_clear_error():
    with pytest.raises(RecursionError) as info:
        lift(recurse, (V3, 2))
    message = check(info, "recursion", RecursiveCallError, RecursionError)
    assert "recursive call of recurse() under a data-dependent condition" in message


def test_mutual_recursion_names_the_chain():
    with pytest.raises(RecursiveCallError) as info:
        lift(ping, (V3,))
    assert "ping -> pong -> ping" in check(info, "mutual", RecursiveCallError)


class Opaque:
    """Callable, but with neither a lowering nor Python source to inline."""
    __call__ = staticmethod(np.linalg.norm)


OPAQUE = Opaque()


def calls_opaque(x):
    return OPAQUE(x) + x  # E:opaque


def calls_numpy_without_lowering(x):
    return np.linalg.eig(x)  # E:eig


def calls_builtin_on_value(x):
    return max(x, 0.0)  # E:max


def test_unsupported_call_names_the_callee():
    with pytest.raises(TypeError) as info:
        lift(calls_opaque, (V3,))
    message = check(info, "opaque", UnsupportedOperationError, TypeError)
    assert "no lowering" in message
    with pytest.raises(UnsupportedOperationError) as info:
        lift(calls_numpy_without_lowering, (AType((3, 3), np.dtype("float64")),))
    assert "np.linalg.eig" in check(info, "eig", UnsupportedOperationError)
    with pytest.raises(UnsupportedOperationError) as info:
        lift(calls_builtin_on_value, (V3,))
    assert "max() of an array value" in check(info, "max", UnsupportedOperationError)


def bad_shapes(x, y):
    return x @ y  # E:shapes


def wrong_arity(x):
    return helper_two(x)  # E:arity


def helper_two(x, y):
    return x + y


def missing_attribute(x):
    return x * np.not_a_numpy_thing  # E:attr


def item_assignment(x, table):
    table[0] = x  # E:setitem
    return x


def test_shape_mismatch_is_a_located_value_error():
    with pytest.raises(ValueError) as info:
        lift(bad_shapes, (AType((2, 3), np.dtype("float64")), AType((2, 3), np.dtype("float64"))))
    check(info, "shapes", InvalidOperandError)


def test_wrong_arguments_of_a_helper_name_it():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(wrong_arity, (V3,))
    assert "helper_two()" in check(info, "arity", UnsupportedOperationError)


def test_missing_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError) as info:
        lift(missing_attribute, (V3,))
    check(info, "attr", UnresolvedAttributeError)


def test_item_assignment_into_a_container_from_outside_is_rejected():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(item_assignment, (V3, [1.0, 2.0]))
    assert "item assignment" in check(info, "setitem", UnsupportedOperationError)


class BadCell(nn.Cell):
    def construct(self, x):
        y = self.helper(x)
        return y

    def helper(self, x):
        with open("f"):  # E:cell-while
            return x


def test_errors_inside_cells_and_helpers_point_at_their_line():
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(BadCell(), (V3,))
    check(info, "cell-while", UnsupportedSyntaxError)


def test_wrong_number_of_top_level_arguments():
    with pytest.raises(GradTypeError):
        lift(helper_two, (V3,))


def test_not_a_function():
    with pytest.raises(GradTypeError):
        lift(42, ())


def test_print_is_dropped():
    def f(x):
        print("value", x)
        return x * 2
    lifted = lift(f, (V3,))
    assert [op.prim for op in lifted.function.body.ops] == ["const", "mul"]
    assert builtins.print is print


async def uses_async(x):  # E:async
    return x


def uses_nonlocal(x):
    y = x

    def inner():
        nonlocal y  # E:nonlocal
        y = y * 2
    inner()
    return y


def test_async_and_nonlocal_are_rejected():
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(uses_async, (V3,))
    assert "'async def'" in check(info, "async", UnsupportedSyntaxError)
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(uses_nonlocal, (V3,))
    check(info, "nonlocal", UnsupportedSyntaxError)
