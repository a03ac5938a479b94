"""Programs whose compiled value or gradient once differed from Python's.

Each case is checked three ways: the value against calling the function in plain
Python, the gradient of every input against central finite differences in float64,
and, for array inputs, float32 in giving float32 gradients and Python's value dtype.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.errors import InvalidOperandError, UnsupportedOperationError

X3 = np.array([0.3, -0.5, 0.8])
Y3 = np.array([1.2, 0.7, -0.4])
M32 = np.array([[0.3, -0.5], [0.8, 1.1], [0.2, -0.7]])


# -- a constant result ---------------------------------------------------------------

def constant(x):
    return -0.54


# -- a value read by one loop and overwritten by a later one -------------------------

def overwritten_by_a_later_loop(x, y):
    for i in range(1):
        x = x * y
    for i in range(1):
        y = x
    return np.sum(y)


def carried_then_overwritten(x, y):
    for i in range(2):
        y = y * x
    for i in range(2):
        x = y
    return np.sum(x * y)


def captured_then_overwritten(x, y):
    for i in range(2):
        x = np.tanh(x) * y
    for i in range(2):
        y = x
    return np.sum(y)


# -- early return from nested data-dependent ifs in a loop ---------------------------

def nested_early_return(x, s):
    for i in range(2):
        if np.sum(x) > 0.0:
            if np.sum(x) > -5.0:
                return 0.0 if i == 0 else s
    return np.max(x)


# -- lists and tuples of values given to NumPy functions -----------------------------

def sum_of_a_list(x):
    return np.sum([x])


def nested_lists_of_floats(x, y):
    return np.sum(np.array([[x, 2.0 * x], [x * y, y]]))


def deeply_nested_lists(x, y):
    return np.sum(np.array([[[x, y], [y, x * y]], [[1.0, x], [2.0, y * y]]]))


def mean_of_a_list(x):
    return np.mean([x, x + 2.0])


def constants_and_values(a):
    return np.sum([1.0, a * a, 2.0])


def maximum_of_nested_lists(x, y):
    return np.sum(ops.maximum([[x, y], [y, x]], [[y, x], [x, y]]))


def maximum_of_a_list_and_a_number(x, y):
    return np.sum(np.maximum([[x, 0.5]], [[0.5, y]]))


def stack_of_arrays_and_values(a, b):
    return np.sum(np.stack([a, b * 2.0, np.sin(a)]) ** 2)


def extremum_of_a_list(a, b):
    return np.max([np.sum(a), np.sum(b * b), 0.5])


def tuple_mean_over_an_axis(a, b):
    return np.mean((a, b, a * b), axis=0).sum()


def lists_in_a_loop(a, b):
    s = 0.0
    for i in range(3):
        s = s + np.sum([a[i], b[i] * a[i], 1.0])
    return s


def index_with_nested_lists_of_values(x):
    k = np.argmax(x[0])
    return np.sum(x[[[k, 0], [1, k]]] ** 2)


def array_of_a_list_with_a_dtype(a, b):
    return np.sum(np.asarray([a * 2.0, b], dtype=np.float64) * 3.0)


# -- std and var where the spread is zero --------------------------------------------

def std_of_one_element(x):
    return np.std(x)


def std_over_an_axis_of_length_one(x):
    return np.sum(np.std(x, axis=1))


def std_and_var(x):
    return np.sum(x.std(axis=0)) + np.sum(np.var(x, axis=1, ddof=1)) + np.std(x, ddof=1)


def var_over_an_axis_of_length_one(x):
    return np.sum(np.var(x, axis=1))


def std_of_a_float_list(x):
    return np.std(np.array([x, 2.0 * x - x]))


def iterating_a_view_of_an_array_rebound_in_the_loop(x, z):
    # v views t's first buffer; 't = t + 1.0' makes new arrays, so v keeps its values
    # (buffer reuse once wrote the sum into that first buffer, under v)
    t = np.floor(x) * 1.0
    v = t.reshape(-1)
    s = z * 1.0
    for item in v:
        s = s * 0.9 + item
        t = t + 1.0
    return np.sum(s) + np.sum(t)


def std_of_equal_values_whose_mean_rounds(x):
    # each column holds three equal floats; their mean rounds, so np.std is 1e-17, not 0
    return np.sum(np.std(np.zeros((3, 3)) + x, axis=0))


# -- loops whose carried value changes shape -----------------------------------------

def max_over_an_axis_in_nested_loops(x):
    a = x * 1.0
    s = 0.0
    for i in range(2):
        for j in range(2):
            a = np.max(a, axis=0, keepdims=True) * 0.5
            s = s + np.sum(a)
    return s + np.sum(a)


def number_that_becomes_an_array(x):
    acc = 1.0
    for i in range(2):
        acc = acc * x + np.sum(acc)
    return np.sum(acc)


def row_that_becomes_the_matrix(x):
    a = x[:1] * 1.0
    for i in range(2):
        a = a * np.sum(a) + x
    return np.sum(a)


def reduced_axis_in_a_loop_that_appends(x):
    a = x * 1.0
    ys = []
    for i in range(3):
        a = np.max(a, axis=0, keepdims=True) * 2.0
        ys.append(np.sum(a))
    return np.sum(np.stack(ys))


def shape_settles_then_the_counter_slices(x):
    a = x * 1.0
    for i in range(3):
        if a.shape[0] == 1:     # after the first iteration only: x[i:i + 1] needs i static
            a = a * x[i:i + 1]
        a = np.max(a, axis=0, keepdims=True)
    return np.sum(a)


# -- lists built by comprehensions across data-dependent jumps -----------------------

def comprehension_in_a_tuple_loop_with_break(x):
    s = 0.0
    for t in (1.0, 2.0):
        ys = [x * t for _ in range(2)]
        s = s + np.sum(np.stack(ys))
        if np.sum(x) > 0:
            break
    return s


def comprehension_read_after_the_loop(x):
    for t in (1.0, 2.0):
        ys = [x * t * k for k in range(2)]
        if np.sum(x) > 0:
            break
    return np.sum(np.stack(ys))


def comprehension_in_a_tuple_loop_with_return(x):
    for t in (1.0, 2.0):
        ys = [x * t for _ in range(2)]
        if np.sum(x) > 0:
            return np.sum(ys[1])
    return np.sum(ys[0])


def comprehension_rebuilt_in_a_loop(x):
    ys = [x * k for k in range(3)]
    for i in range(2):
        ys = [y * x for y in ys]
    return np.sum(np.stack(ys))


def comprehension_rebuilt_in_a_branch(x):
    ys = [x * k for k in range(3)]
    if np.sum(x) > 0:
        ys = [y * x for y in ys]
    return np.sum(np.stack(ys)) + len(ys)


def returns_a_comprehension(x):
    return [x * k for k in range(3)]


def returns_an_appended_list(x):
    ys = []
    for k in range(3):
        ys.append(np.sin(x) * k)
    return ys, np.sum(x)


# -- a loop-invariant maximum, counted on every iteration ----------------------------

def invariant_maximum_in_a_loop(x):
    buf = np.zeros_like(x)
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.maximum(np.sum(x[2]), buf[2]))
    return s


# -- a stack of Python floats and an array ------------------------------------------

def matmul_with_a_stack_of_floats(x, s, t):
    return np.sum(x @ np.stack([s, s, t]))


# -- a loop over a compile-time array that the body writes in place ------------------

def loop_over_a_constant_array_written_in_place(x):
    t = np.linspace(0.06, -0.68, 4, endpoint=False)   # computed when compiling
    s = 0.0
    for v in t:              # Python reads each item when its iteration starts
        t /= (t * t + 1.0)   # in place: the later items are divided too
        t = t * 0.5 + t      # rebinds t: the loop still runs over the first array
        s = s + v * np.sum(x)
    return s + np.sum(t)


def loop_over_a_constant_matrix_written_in_place(x):
    m = np.ones((3, 2))
    s = 0.0
    for row in m:            # rows are views: a write into m reaches the later rows
        m *= 2.0
        s = s + np.sum(row * x)
    return s


CASES = [
    (constant, (X3,)),
    (invariant_maximum_in_a_loop, (X3,)),
    (matmul_with_a_stack_of_floats, (M32.T.copy(), 0.5, -0.25)),
    (overwritten_by_a_later_loop, (X3, Y3)),
    (carried_then_overwritten, (X3, Y3)),
    (captured_then_overwritten, (X3, Y3)),
    (nested_early_return, (X3, 0.7)),
    (nested_early_return, (-X3, 0.7)),
    (sum_of_a_list, (X3,)),
    (nested_lists_of_floats, (0.7, 1.3)),
    (deeply_nested_lists, (0.7, 1.3)),
    (mean_of_a_list, (0.7,)),
    (constants_and_values, (0.7,)),
    (maximum_of_nested_lists, (0.5, 0.25)),
    (maximum_of_a_list_and_a_number, (0.7, 0.25)),
    (stack_of_arrays_and_values, (M32, -M32)),
    (extremum_of_a_list, (M32, M32 * 0.5)),
    (tuple_mean_over_an_axis, (M32, M32 + 1.0)),
    (lists_in_a_loop, (X3, Y3)),
    (array_of_a_list_with_a_dtype, (X3, Y3)),
    (index_with_nested_lists_of_values, (M32,)),
    (std_of_one_element, (np.array([1.5]),)),
    (std_of_one_element, (np.array([0.5, 0.5]),)),
    (std_of_one_element, (0.7,)),
    (std_over_an_axis_of_length_one, (np.array([[1.0], [2.0]]),)),
    (std_over_an_axis_of_length_one, (M32,)),
    (std_and_var, (M32,)),
    (var_over_an_axis_of_length_one, (np.array([[1.0], [2.0]]),)),
    (std_of_a_float_list, (0.7,)),
    (std_of_equal_values_whose_mean_rounds, (np.array([0.1, 0.7, 1.3]),)),
    (iterating_a_view_of_an_array_rebound_in_the_loop,
     (np.array([[0.41, -0.69, -1.38]]), np.array([1.0, 2.0]))),
    (max_over_an_axis_in_nested_loops, (M32,)),
    (number_that_becomes_an_array, (M32,)),
    (row_that_becomes_the_matrix, (M32,)),
    (reduced_axis_in_a_loop_that_appends, (M32,)),
    (shape_settles_then_the_counter_slices, (M32,)),
    (comprehension_in_a_tuple_loop_with_break, (X3,)),
    (comprehension_in_a_tuple_loop_with_break, (-X3,)),
    (comprehension_read_after_the_loop, (X3,)),
    (comprehension_read_after_the_loop, (-X3,)),
    (comprehension_in_a_tuple_loop_with_return, (X3,)),
    (comprehension_in_a_tuple_loop_with_return, (-X3,)),
    (comprehension_rebuilt_in_a_loop, (X3,)),
    (comprehension_rebuilt_in_a_branch, (X3,)),
    (comprehension_rebuilt_in_a_branch, (-X3,)),
    (returns_a_comprehension, (X3,)),
    (returns_an_appended_list, (X3,)),
    (loop_over_a_constant_array_written_in_place, (X3,)),
    (loop_over_a_constant_matrix_written_in_place, (np.array([0.5, -1.5]),)),
]


def _ids():
    seen: dict = {}
    out = []
    for fn, _ in CASES:
        k = seen[fn.__name__] = seen.get(fn.__name__, 0) + 1
        out.append(fn.__name__ + ("" if k == 1 else f"-{k}"))
    return out


def _copy(args):
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


@pytest.mark.parametrize("fn, args", CASES, ids=_ids())
def test_value_and_gradient_are_pythons(api, fn, args):
    positions = tuple(range(len(args)))
    value, grads = ms.value_and_grad(fn, grad_position=positions)(*_copy(args))
    want = fn(*_copy(args))
    if not isinstance(want, float):  # a Python float returned on one path of several
        assert type(value) is type(want)   # may come back as the other paths' 0-d array
    assert len(api.leaves(value)) == len(api.leaves(want))
    for got_leaf, want_leaf in zip(api.leaves(value), api.leaves(want)):
        api.assert_values(got_leaf, want_leaf)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, (got, ref) in enumerate(zip(grads, api.fd_grads(fn, args))):
        api.assert_grad(got, ref, args[i], what=f"{fn.__name__}: gradient of input {i}")


F32_CASES = [(fn, args) for fn, args in CASES
             if any(isinstance(a, np.ndarray) for a in args)]


@pytest.mark.parametrize("fn, args", F32_CASES, ids=[fn.__name__ for fn, _ in F32_CASES])
def test_float32_stays_float32(api, fn, args):
    args32 = tuple(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args)
    positions = tuple(range(len(args)))
    value, grads = ms.value_and_grad(fn, grad_position=positions)(*_copy(args32))
    want = fn(*_copy(args32))
    for got_leaf, want_leaf in zip(api.leaves(value), api.leaves(want)):
        if not isinstance(want_leaf, float):
            assert np.asarray(got_leaf).dtype == np.asarray(want_leaf).dtype
    grads = grads if isinstance(grads, tuple) else (grads,)
    for a, g in zip(args32, grads):
        if isinstance(a, np.ndarray):
            assert g.dtype == np.float32


def test_a_constant_result_is_pythons_float():
    value, grad = ms.value_and_grad(constant)(X3)
    assert type(value) is float and value == -0.54
    assert grad.tolist() == [0.0, 0.0, 0.0]


# -- what is refused, at the user's line ---------------------------------------------

def shape_depends_on_the_trip_count(x):
    a = x * 1.0
    k = 0
    while k < 2:
        a = np.max(a, axis=0, keepdims=True)
        k += 1
    return np.sum(a)


def shape_change_then_break(x):
    a = x * 1.0
    for i in range(3):
        a = np.max(a, axis=0, keepdims=True)
        if np.sum(a) > 10.0:
            break
    return np.sum(a)


@pytest.mark.parametrize("fn", [shape_depends_on_the_trip_count, shape_change_then_break])
def test_a_first_iteration_that_surely_runs_settles_the_shape(api, fn):
    # the while's condition is True at compile time, the for's first iteration runs
    # before its break can: both are unrolled once, then the shape no longer changes
    value, grad = ms.value_and_grad(fn)(M32.copy())
    want = fn(M32.copy())
    assert type(value) is type(want)
    api.assert_values(value, want)
    api.assert_grad(grad, api.fd_grads(fn, (M32,))[0], M32)


def shape_depends_on_data(x):
    a = x * 1.0
    while np.sum(a) > -10.0:
        a = np.max(a, axis=0, keepdims=True) - 1.0
    return np.sum(a)


def break_before_the_shape_change(x):
    a = x * 1.0
    for i in range(3):
        if np.sum(a) > 10.0:
            break
        a = np.max(a, axis=0, keepdims=True)
    return np.sum(a)


@pytest.mark.parametrize("fn, what", [
    (shape_depends_on_data, "'a' changes shape in the loop"),
    (break_before_the_shape_change, "gives the variable 'a' different shapes")])
def test_a_shape_that_depends_on_the_trip_count_is_a_located_error(fn, what):
    with pytest.raises(InvalidOperandError, match=what) as err:
        ms.grad(fn)(M32)
    assert "test_wrong_results.py" in str(err.value)


def item_of_a_while_list_in_a_branch(x):
    ys = []
    k = 0
    while k < 2:
        ys.append(x * (k + 1))
        k += 1
    if np.sum(x) > 0:
        return np.sum(ys[1])
    return np.sum(ys[0])


def test_a_gradient_through_a_run_time_length_list_in_a_branch_is_not_dropped(api):
    # its cotangent was once dropped at the 'if': a zero gradient
    for x in (X3, -X3):
        grad = ms.grad(item_of_a_while_list_in_a_branch)(x)
        api.assert_grad(grad, api.fd_grad(item_of_a_while_list_in_a_branch, [x], 0), x)


def unpacks_a_comprehension(x):
    a, b, c = [x * k + 1.0 for k in range(3)]
    first, *rest = [x * k + 1.0 for k in range(3)]
    return np.sum(a * b + c) + np.sum(first * rest[1])


def test_a_comprehension_list_of_known_length_unpacks(api):
    for x in (X3, Y3):
        value, grad = ms.value_and_grad(unpacks_a_comprehension)(x.copy())
        api.assert_values(value, unpacks_a_comprehension(x.copy()))
        api.assert_grad(grad, api.fd_grad(unpacks_a_comprehension, [x], 0), x)


def iterates_a_comprehension_in_python(x):
    ys = [x * k for k in range(3)]
    return np.sum(np.array(list(zip(*ys))))


def test_messages_name_the_comprehension_not_its_temporary():
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(iterates_a_comprehension_in_python)(X3)
    assert "_comp" not in str(info.value) and "comprehension" in str(info.value)


def filtered_by_the_counter(x):
    return np.sum(sum([x[k] * 0.5 for k in range(3) if k != 1]))


def filtered_by_data(x):
    return np.sum(np.stack([x[k] for k in range(3) if x[k] > 0]))


def test_a_filter_on_the_counter_unrolls_the_comprehension(api):
    for x in (X3, Y3):
        value, grad = ms.value_and_grad(filtered_by_the_counter)(x.copy())
        api.assert_values(value, filtered_by_the_counter(x))
        api.assert_grad(grad, api.fd_grad(filtered_by_the_counter, [x], 0), x)
    with pytest.raises(UnsupportedOperationError, match="its length is not"):
        ms.grad(filtered_by_data)(X3)   # the length depends on the data


def loop_over_a_constant_array_written_with_an_input(x):
    t = np.linspace(0.06, -0.68, 4, endpoint=False)
    s = 0.0
    for v in t:
        t /= np.sum(x)       # a run-time value written into the array the loop reads
        s = s + v
    return s


def test_a_run_time_write_into_a_constant_array_a_loop_reads_is_located():
    with pytest.raises(UnsupportedOperationError, match="an enclosing 'for' loop runs over") \
            as info:
        ms.value_and_grad(loop_over_a_constant_array_written_with_an_input)(X3)
    assert info.value.loc is not None and "t /= np.sum(x)" in str(info.value)


def halves_a_constant_in_a_branch(x):
    t = np.array([0.9, 1.46]) * -0.42
    if np.max(t) + 0.0 * np.sum(x) < -1.719:      # False: the branch does not run
        t *= 0.5
    return np.sum(t) + np.sum(x)


def halves_a_constant_slice_in_a_branch(x):
    t = np.array([0.9, 1.46]) * -0.42
    if np.max(t) < -1.719:
        t[:] *= 0.5
    return np.sum(t) + np.sum(x)


@pytest.mark.parametrize("fn", [halves_a_constant_in_a_branch,
                                halves_a_constant_slice_in_a_branch])
def test_an_in_place_update_of_a_compile_time_array_in_a_branch_is_refused(fn):
    """The update ran on the array while the branch was lifted, whether or not the branch
    runs: the value was 1.5044 where Python gives 1.0088 (fuzz seeds 206146, 206213).
    It cannot be made conditional, so it is a located refusal."""
    with pytest.raises(UnsupportedOperationError, match="in-place update of an array") as e:
        ms.value_and_grad(fn)(np.ones(2))
    assert e.value.loc.line == fn.__code__.co_firstlineno + 3


def test_a_new_array_in_the_branch_is_right():
    def fn(x):
        t = np.array([0.9, 1.46]) * -0.42
        if np.max(t) + 0.0 * np.sum(x) < -1.719:
            t = t * 0.5
        return np.sum(t) + np.sum(x)
    value, g = ms.value_and_grad(fn)(np.ones(2))
    assert value == fn(np.ones(2))
    np.testing.assert_array_equal(g, np.ones(2))


def sets_a_constant_in_a_branch(x):
    t = np.array([1.45, 0.11, -1.5]) * 1.28
    if np.max(x) > 4.896:                          # False: the branch does not run
        t[np.abs(t) < 0.99] = np.sin(t[np.abs(t) < 0.99]) * 0.47
    return np.sum(t) + np.sum(x)


def test_an_item_assignment_into_a_compile_time_array_in_a_branch_is_refused():
    """Written while the branch was lifted, whether or not it runs (fuzz seed 223563)."""
    with pytest.raises(UnsupportedOperationError, match="in-place update of an array") as e:
        ms.value_and_grad(sets_a_constant_in_a_branch)(np.ones(2))
    assert e.value.loc.line == sets_a_constant_in_a_branch.__code__.co_firstlineno + 3
