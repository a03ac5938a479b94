"""Data-dependent ``if``/``elif``/``else``, conditional expressions, ``and``/``or``/``not``
and early returns lift to ``if`` ops; the interpreted IR, the generated code and the
optimised IR must all agree with Python, in float64 and float32."""
import numpy as np
import pytest

from ad_compiler.frontend import lift
from ad_compiler.ir.core import AType


def rng_vec(dtype, n=4, seed=0, shift=0.0):
    return (np.random.default_rng(seed).standard_normal(n) + shift).astype(dtype)


# -- if / elif / else ---------------------------------------------------------------
def if_elif_else(x):
    s = np.sum(x)
    a = x * 0.5
    if s > 1.0:
        a = x * 2
        b = 1.5
    elif s > -1.0:
        a = x + 1
        b = 2.0
        c = 7.0  # only here, and not used after: no error
    else:
        b = np.sum(x * x)
    return a * b


@pytest.mark.parametrize("shift", [3.0, 0.0, -3.0])
def test_if_elif_else_with_different_assigned_sets(flow, dtype, shift):
    x = np.full(3, shift / 3 + 0.01, dtype=dtype)
    lifted = flow.check(if_elif_else, x)
    assert flow.prims(lifted).count("if") == 2


def ms_type(dtype, *shape):
    from ad_compiler.ir.core import AType
    return AType(shape, np.dtype(dtype))


def branch_types(x, flag_value):
    if np.sum(x) > 0:
        y = 1.0             # a Python float here ...
        z = np.sum(x)       # a 0-d array here ...
    else:
        y = x[0]            # ... a 0-d array there: one dtype
        z = np.max(x)       # ... and there: same shape, one dtype
    return y * 3, z, flag_value


@pytest.mark.parametrize("shift", [1.0, -1.0])
def test_branch_types_unify_by_numpy_promotion(flow, dtype, shift):
    x = rng_vec(dtype, 3, shift=shift * 3)
    y, z, tag = branch_types(x, "tag")  # Python keeps each branch's type; the IR one type
    want = (np.asarray(y, dtype), np.asarray(z, dtype), tag)
    lifted = flow.check(branch_types, x, "tag", want=want)
    ys = [v for v in lifted.function.outputs]
    assert [v.type.shape for v in ys] == [(), ()]
    assert {v.type.dtype for v in ys} == {dtype}


def number_or_array(x):
    s = 1.0
    if np.sum(x) > 100.0:
        s = x * 2.0         # Python: a number on one path, an array on the other
    return np.sum(s)


def test_a_number_and_an_array_are_not_broadcast_together(dtype):
    from ad_compiler.errors import InvalidOperandError
    from ad_compiler.frontend import lift
    from ad_compiler.ir.core import AType
    with pytest.raises(InvalidOperandError, match="different shapes") as info:
        lift(number_or_array, (AType((3,), np.dtype(dtype)),))
    assert "test_branches.py" in str(info.value)


def arrays_of_two_shapes(x):
    if np.sum(x) > 0:
        z = np.sum(x)       # f[] ...
    else:
        z = x * 2           # ... vs f[3]: the shape would depend on the data
    return z


def test_branch_arrays_of_different_shapes_are_an_error(flow, dtype):
    from ad_compiler.errors import InvalidOperandError
    from ad_compiler.frontend import lift
    with pytest.raises(InvalidOperandError, match="different shapes"):
        lift(arrays_of_two_shapes, (ms_type(dtype, 3),))


def python_float_branches(a, b):
    if a > b:
        m = a - b
    else:
        m = 2 * (b - a)
    return m * 0.5


@pytest.mark.parametrize("a, b", [(1.5, 0.25), (-1.0, 2.0)])
def test_branches_on_python_floats_stay_python_floats(flow, a, b):
    lifted = flow.check(python_float_branches, a, b)
    assert lifted.function.outputs[0].type.weak


def static_condition(x, mode):
    if mode == "double":
        return x * 2
    return x


def test_static_conditions_still_fold(flow):
    lifted = flow.check(static_condition, np.ones(3), "double")
    assert "if" not in flow.prims(lifted)


def size_one_condition(x, flag):
    if flag:
        return x * 2
    return -x


@pytest.mark.parametrize("flag", [np.array([True]), np.array([[0.0]])])
def test_one_element_arrays_are_conditions(flow, flag):
    flow.check(size_one_condition, np.arange(3.0), flag)


# -- conditional expressions and boolean operators ------------------------------------
def ternaries(x, a):
    y = x * 2 if np.max(x) > 0.5 else x - 1
    k = a if a > 0 else -a
    return y, k, (1.0 if a > 0 else 2)


@pytest.mark.parametrize("shift, a", [(2.0, 0.5), (-2.0, -0.25)])
def test_conditional_expressions(flow, dtype, shift, a):
    flow.check(ternaries, rng_vec(dtype, shift=shift), a)


def boolean_ops(a, b):
    both = a > 0 and b > 0
    either = a > 0 or b > 0
    inside = 0.0 < a < 1.0
    return (1.0 if both else 0.0), (1.0 if either else 0.0), (2.0 if inside else 3.0), \
        (5.0 if not a > b else 6.0), (a or b), (a and b)


@pytest.mark.parametrize("a, b", [(0.5, 2.0), (-1.0, 2.0), (1.5, -3.0), (0.0, -2.0)])
def test_and_or_not_and_chained_comparisons_short_circuit(flow, a, b):
    flow.check(boolean_ops, a, b)


def guarded_index(x, i):
    # evaluating x[i] when i is out of range would fail: 'and' must not
    return 1.0 if i < 3.0 and np.sum(x) > 0 else 0.0


def test_and_evaluates_its_right_operand_only_when_needed(flow):
    flow.check(guarded_index, np.ones(3), 5.0)
    flow.check(guarded_index, np.ones(3), 1.0)


# -- early return -------------------------------------------------------------------
def early_return(x):
    s = np.sum(x)
    if s > 0:
        if s > 2:
            return x * 3
        x = x + 1
    else:
        return -x
    y = x * x
    return y + 1


@pytest.mark.parametrize("shift", [3.0, 0.3, -3.0])
def test_early_returns_in_nested_branches(flow, dtype, shift):
    flow.check(early_return, np.full(3, shift / 3, dtype=dtype))


def guard_clauses(x):
    if np.sum(x) < 0:
        return -x
    if np.max(x) > 10:
        return x / 10
    y = x * 2
    return y


@pytest.mark.parametrize("x", [[-1.0, -2.0], [20.0, 1.0], [1.0, 2.0]])
def test_guard_clauses_take_the_rest_as_their_else_branch(flow, x):
    lifted = flow.check(guard_clauses, np.array(x))
    assert "returned" not in str(lifted.function)  # no flags: plain nested ifs


def return_in_elif_chain(x):
    m = np.max(x)
    if m > 2:
        return 2.0
    elif m > 1:
        return 1.0
    elif m > 0:
        r = 0.5
    else:
        return 0.0
    return r + m


@pytest.mark.parametrize("m", [3.0, 1.5, 0.5, -1.0])
def test_returns_of_python_floats_and_arrays_mix(flow, m):
    flow.check(return_in_elif_chain, np.array([m, m - 4]))


def helper_with_return(v):
    if np.sum(v) < 0:
        return v * 0.0
    return v


def calls_helper(x):
    return helper_with_return(x) + helper_with_return(-x)


def test_data_dependent_return_in_an_inlined_helper(flow, dtype):
    flow.check(calls_helper, rng_vec(dtype))


def swap_in_branch(a, b):
    if np.sum(a) > np.sum(b):
        a, b = b, a
    return a - b


def test_branch_that_swaps_two_variables(flow, dtype):
    flow.check(swap_in_branch, rng_vec(dtype, seed=1), rng_vec(dtype, seed=2))
    flow.check(swap_in_branch, rng_vec(dtype, seed=2), rng_vec(dtype, seed=1))


def containers_in_branches(x):
    if np.sum(x) > 0:
        pair = (x, 1.0)
        d = {"a": x * 2}
    else:
        pair = (-x, 2.0)
        d = {"a": x}
    return pair[0] * pair[1] + d["a"]


def test_tuples_and_dicts_merge_leaf_by_leaf(flow, dtype):
    flow.check(containers_in_branches, rng_vec(dtype, seed=3))
    flow.check(containers_in_branches, -np.abs(rng_vec(dtype, seed=3)))


def walrus_in_ternary(x):
    y = (t := x * 2) if np.sum(x) > 0 else (t := x * 3)
    return y + t


def test_assignment_expressions_in_branches(flow):
    flow.check(walrus_in_ternary, np.ones(2))
    flow.check(walrus_in_ternary, -np.ones(2))


def test_unused_branch_values_emit_no_if():
    def f(x):
        if np.sum(x) > 0:
            unused = x * 2  # noqa: F841
        return x
    lifted = lift(f, (AType((3,), np.dtype("float64")),))
    assert all(op.prim != "if" for op in lifted.function.body.walk())
