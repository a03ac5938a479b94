"""Errors of data-dependent control flow point at the user's line, name the variable
and its types, and say what to write instead.

Each failing function marks the line the error must name with ``# E:<key>``.
"""
import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401
from ad_compiler.errors import (AdCompilerError, InvalidOperandError, UnresolvedNameError,
                                UnsupportedOperationError, UnsupportedSyntaxError)
from ad_compiler.frontend import lift
from ad_compiler.ir.core import AType

F64 = np.dtype("float64")
V3 = AType((3,), F64)
M23 = AType((2, 3), F64)
THIS_FILE = __file__


def marker_line(key: str) -> tuple[int, str]:
    with open(THIS_FILE) as f:
        hits = [(i, line) for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# E:{key}")]
    assert len(hits) == 1, key
    line, text = hits[0]
    return line, text.split("#")[0].strip()


def check(exc_info, key: str, cls) -> str:
    err = exc_info.value
    assert isinstance(err, cls) and isinstance(err, AdCompilerError)
    line, text = marker_line(key)
    message = str(err)
    assert f"{THIS_FILE}:{line}:" in message, message
    assert text in message and "hint:" in message, message
    return message


def assigned_in_one_branch(x):
    if np.sum(x) > 0:
        y = x * 2
    return y  # E:one-branch


def test_a_name_assigned_in_one_branch_only_is_an_error_where_it_is_read():
    with pytest.raises(UnresolvedNameError) as info:
        lift(assigned_in_one_branch, (V3,))
    message = check(info, "one-branch", UnresolvedNameError)
    assert "'y' is assigned in only one branch" in message and "line" in message


def branch_shapes(x):
    if np.sum(x) > 0:  # E:branch-shapes
        y = x
    else:
        y = x[:2]
    return y


def test_branch_types_that_do_not_unify_name_the_variable_and_types():
    with pytest.raises(InvalidOperandError) as info:
        lift(branch_shapes, (V3,))
    message = check(info, "branch-shapes", InvalidOperandError)
    assert "'y'" in message and "f64[3]" in message and "f64[2]" in message


def branch_strings(x):
    if np.sum(x) > 0:  # E:branch-strings
        mode = "up"
    else:
        mode = "down"
    return x, mode


def test_python_values_that_differ_between_branches():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(branch_strings, (V3,))
    message = check(info, "branch-strings", UnsupportedOperationError)
    assert "'up'" in message and "'down'" in message


def returns_sometimes(x):
    if np.sum(x) > 0:
        return x
    y = x * 2  # E:falls-off


def test_returning_a_value_on_some_paths_only():
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(returns_sometimes, (V3,))
    assert "returns a value on some run-time paths" in check(info, "falls-off",
                                                             UnsupportedSyntaxError)


def growing(x):
    h = x
    for i in range(3):  # E:growing
        h = np.concatenate([h, x])
    return h


def test_a_carried_value_whose_shape_keeps_changing():
    with pytest.raises(InvalidOperandError) as info:
        lift(growing, (V3,))
    message = check(info, "growing", InvalidOperandError)
    assert "'h' changes type in the loop" in message and "f64[" in message


def assigned_in_loop_only(x):
    for row in x:
        last = row
    return last  # E:loop-only


def test_a_name_first_assigned_in_a_loop_is_undefined_after_it():
    with pytest.raises(UnresolvedNameError) as info:
        lift(assigned_in_loop_only, (M23,))
    assert "assigned in the loop" in check(info, "loop-only", UnresolvedNameError)


def conditional_append(x):
    ys = []
    for row in x:
        if np.sum(row) > 0:
            ys.append(row)  # E:cond-append
    return np.stack(ys)


def test_appending_under_a_data_dependent_condition():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(conditional_append, (M23,))
    assert "data-dependent condition" in check(info, "cond-append", UnsupportedOperationError)


def nested_append(m):
    ys = []
    for row in m:
        for v in row:
            ys.append(v)  # E:nested-append
    return np.stack(ys)


def test_appending_in_a_nested_loop():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(nested_append, (M23,))
    assert "nested loop" in check(info, "nested-append", UnsupportedOperationError)


def prefilled_append(x):
    ys = [x[0]]
    for row in x:  # E:prefilled
        ys.append(row)
    return ys


def test_appending_to_a_list_that_already_has_items():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(prefilled_append, (M23,))
    assert "holds 1 item(s)" in check(info, "prefilled", UnsupportedOperationError)


def mutate_outer_list(x):
    out = []
    if np.sum(x) > 0:
        out.append(x)  # E:outer-list
    return out


def test_changing_a_list_built_before_a_branch():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(mutate_outer_list, (V3,))
    assert "list.append()" in check(info, "outer-list", UnsupportedOperationError)


def stack_while_list(x):
    ys = []
    while np.sum(x) < 10:
        x = x * 2
        ys.append(x)
    return np.stack(ys)  # E:while-list


def test_stacking_a_list_built_by_a_while_loop_needs_its_length():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(stack_while_list, (V3,))
    assert "known only at run time" in check(info, "while-list", UnsupportedOperationError)


def float_of_array(x):
    return float(x)  # E:float


def loop_over_scalar(x):
    s = 0.0
    for v in np.sum(x):  # E:0d-loop
        s = s + v
    return s


def test_conversions_and_iteration_of_the_wrong_shape():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(float_of_array, (V3,))
    # NumPy's words: "one-element" before 2.4, "0-dimensional" since
    assert "arrays can be converted to Python scalars" in check(info, "float",
                                                                UnsupportedOperationError)
    with pytest.raises(UnsupportedOperationError) as info:
        lift(loop_over_scalar, (V3,))
    assert "0-d array" in check(info, "0d-loop", UnsupportedOperationError)


def changes_to_none(x):
    h = x
    for i in range(3):  # E:to-none
        h = None
    return h


def test_a_carried_array_cannot_become_a_python_object():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(changes_to_none, (V3,))
    assert "'h'" in check(info, "to-none", UnsupportedOperationError)


def assert_on_value(x):
    assert np.sum(x) > 0  # E:assert
    return x


def test_a_data_dependent_assert_cannot_be_checked_when_compiling():
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(assert_on_value, (V3,))
    assert "cannot be checked" in check(info, "assert", UnsupportedSyntaxError)


def raise_in_branch(x):
    if np.sum(x) < 0:
        raise ValueError("negative")  # E:raise
    return x


def test_a_raise_under_a_data_dependent_condition():
    with pytest.raises(UnsupportedSyntaxError) as info:
        lift(raise_in_branch, (V3,))
    assert "compiled code cannot raise" in check(info, "raise", UnsupportedSyntaxError)


def returns_loop_list(x):  # E:return-list
    ys = []
    k = 0
    while k < 2:        # a list of run-time length (one of known length is returned)
        ys.append(x[k])
        k += 1
    return ys


def appends_after_loop(x):
    ys = []
    for row in x:
        ys.append(row)
    ys.append(x[0])  # E:append-after
    return np.stack(ys)


def test_lists_built_by_loops_are_not_python_lists():
    with pytest.raises(UnsupportedOperationError) as info:
        lift(returns_loop_list, (M23,))
    assert "np.stack(ys)" in check(info, "return-list", UnsupportedOperationError)
    with pytest.raises(UnsupportedOperationError) as info:
        lift(appends_after_loop, (M23,))
    assert "after the loop" in check(info, "append-after", UnsupportedOperationError)
