"""``for`` over ranges, array rows and loop-built lists, ``while`` with data-dependent
exits, ``break``/``continue``/``return`` inside loops, appended lists and carried-type
promotion. Each function is lifted, interpreted, compiled and optimised, and all
three must agree with Python (float64 and float32)."""
import time

import numpy as np
import pytest

from ad_compiler import nn, ops
from ad_compiler.codegen import compile_function
from ad_compiler.frontend import lift
from ad_compiler.ir.core import AType
from ad_compiler.nn import Parameter


def vec(dtype, n=5, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def loop_ops(lifted):
    return [op.prim for op in lifted.function.body.walk() if op.prim in ("for", "while")]


# -- for over range -------------------------------------------------------------------
def weighted_sum(x, start, stop, step):
    s = x * 0.0
    for i in range(start, stop, step):
        s = s + x * i
    return s


@pytest.mark.parametrize("bounds", [(0, 5, 1), (2, 9, 3), (5, -3, -2), (3, 3, 1), (5, 0, 1),
                                    (-4, 4, 3)])
def test_range_with_start_stop_step(flow, dtype, bounds):
    lifted = flow.check(weighted_sum, vec(dtype, 3), *bounds)
    assert loop_ops(lifted) == ["for"]  # never unrolled, even when empty


def index_after_loop(x):
    i = -1
    for i in range(3, 7):
        x = x * 0.5 + i
    return x, i


def test_loop_target_keeps_its_last_value_after_the_loop(flow, dtype):
    flow.check(index_after_loop, vec(dtype, 2))


def rows(m):
    acc = m[0] * 0.0
    for row in m:
        acc = acc + row * row
    return acc


def test_for_over_the_rows_of_an_array(flow, dtype):
    lifted = flow.check(rows, vec(dtype, 12).reshape(4, 3))
    assert loop_ops(lifted) == ["for"]


def static_sequence(x):
    for w in (1.0, 2.0, 3.0):
        x = x * w + 1
    return x


def test_loop_over_a_static_tuple_is_unrolled(flow, dtype):
    lifted = flow.check(static_sequence, vec(dtype, 3))
    assert loop_ops(lifted) == []


def static_sequence_with_break(x):
    total = x * 0.0
    for k in (1.0, 2.0, 3.0, 4.0):
        if np.sum(total) > 3.0:
            break
        total = total + k * x
    return total


@pytest.mark.parametrize("scale", [0.3, 3.0])
def test_data_dependent_break_in_an_unrolled_loop(flow, dtype, scale):
    flow.check(static_sequence_with_break, np.full(2, scale, dtype))


def static_sequence_with_return(x):
    for k in (1.0, 2.0, 3.0):
        x = x * k
        if np.sum(x) > 4.0:
            return x, k
    return -x, 0.0


@pytest.mark.parametrize("scale", [0.1, 1.0, 3.0])
def test_data_dependent_return_in_an_unrolled_loop(flow, dtype, scale):
    flow.check(static_sequence_with_return, np.full(2, scale, dtype))


def enumerate_zip_reversed(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y), 1):
        s = s + a * b * i
    t = 0.0
    for j in reversed(range(1, x.shape[0], 2)):
        t = t * 0.5 + x[j]
    u = x[0] * 0.0
    for v in reversed(y):
        u = u * 2 + v
    return s, t, u


def test_enumerate_zip_and_reversed(flow, dtype):
    lifted = flow.check(enumerate_zip_reversed, vec(dtype, 5, 1), vec(dtype, 5, 2))
    assert loop_ops(lifted) == ["for", "for", "for"]


def zip_with_static(x, scales):
    out = x[0] * 0.0
    for row, k in zip(x, scales):
        out = out + row * k
    return out


def test_zip_with_a_static_list_unrolls(flow, dtype):
    lifted = flow.check(zip_with_static, vec(dtype, 6).reshape(3, 2), [1.0, 2.0, 3.0])
    assert loop_ops(lifted) == []


def python_list_indexed_by_counter(x, weights):
    for i in range(len(weights)):
        x = x * weights[i]
    return x


def test_indexing_a_python_list_with_the_counter_unrolls_the_loop(flow, dtype):
    weights = [np.full(2, k, dtype) for k in (1.0, 2.0, 3.0)]
    lifted = flow.check(python_list_indexed_by_counter, vec(dtype, 2), weights)
    assert loop_ops(lifted) == []


def triangular(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            total = total + x[i] * x[j]
    return total


def test_inner_range_with_a_run_time_bound(flow, dtype):
    lifted = flow.check(triangular, vec(dtype, 4))
    assert loop_ops(lifted) == ["for", "for"]


# -- branches, break, continue and return inside loops --------------------------------
def branchy_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = s + x[i]
        elif x[i] > -0.5:
            s = s - 1.0
        else:
            s = s * 0.5
    return s


def test_if_elif_else_inside_a_loop(flow, dtype):
    flow.check(branchy_sum, vec(dtype, 8, 3))


def nested_break_continue(m):
    total = 0.0
    count = 0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            v = m[i][j]
            if v < 0:
                continue
            if v > 1.0:
                break
            total = total + v
            count = count + 1
    return total, count


def test_nested_loops_with_break_and_continue(flow, dtype):
    m = np.array([[0.5, -1.0, 0.25, 2.0, 0.5], [1.5, 0.5, 0.5, 0.5, 0.5],
                  [0.1, 0.2, -0.3, 0.4, 0.5]], dtype)
    lifted = flow.check(nested_break_continue, m)
    assert loop_ops(lifted) == ["for", "while"]  # the loop with 'break' tests its flag


def first_large(x, limit):
    for i in range(x.shape[0]):
        if x[i] > limit:
            return x[i] * 10, i
    return np.sum(x), -1


@pytest.mark.parametrize("limit", [0.5, 100.0])
def test_early_return_inside_a_loop(flow, limit):
    flow.check(first_large, vec(np.float64, 6, 4), limit)


def search_rows(m):
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i][j] < 0:
                return i * 10 + j
    return -1


@pytest.mark.parametrize("seed", [0, 5])
def test_return_from_nested_loops(flow, seed):
    m = np.abs(vec(np.float64, 6, seed)).reshape(2, 3)
    if seed:
        m[1, 1] = -1.0
    flow.check(search_rows, m)


# -- while ----------------------------------------------------------------------------
def grow(x, a):
    y = x
    steps = 0
    while np.sum(y * y) < 100.0:
        y = y * a + 0.1
        steps = steps + 1
    return y, steps


def test_while_with_a_data_dependent_trip_count(flow, dtype):
    lifted = flow.check(grow, np.abs(vec(dtype, 3)) + 0.5, np.full(3, 1.3, dtype))
    assert loop_ops(lifted) == ["while"]


def newton_sqrt(a):
    x = a
    while True:
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-12:
            break
        x = x_new
    return x


def test_while_true_with_break(flow):
    flow.check(newton_sqrt, 2.0)


def countdown(x, n):
    while n > 0:
        x = x * 2
        n -= 1
    return x


def test_while_over_a_python_int_stays_a_loop(flow, dtype):
    lifted = flow.check(countdown, vec(dtype, 2), 20)
    assert loop_ops(lifted) == ["while"]
    lifted = flow.check(countdown, vec(dtype, 2), 0)  # statically false: no loop at all
    assert loop_ops(lifted) == []


def find_root(f_scale):
    lo, hi = 0.0, 4.0
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if mid * mid * f_scale > 2.0:
            hi = mid
        else:
            lo = mid
    return lo


def test_bisection_with_a_branch_in_a_while(flow):
    flow.check(find_root, 1.0)


def while_return(x):
    k = 0
    while True:
        if np.sum(x) > 50.0:
            return x, k
        x = x * 2 + 1
        k += 1


def test_while_true_that_only_returns(flow, dtype):
    flow.check(while_return, np.ones(2, dtype))


# -- scale ----------------------------------------------------------------------------
def long_scalar_loop(a):
    s = 0.0
    for i in range(10_000):
        s = s + a * 1e-4
    return s


def test_ten_thousand_iterations_compile_fast_and_run_as_a_loop(flow):
    start = time.perf_counter()
    lifted = lift(long_scalar_loop, (AType((), np.dtype("float64"), True),))
    compiled = compile_function(lifted.function)
    assert time.perf_counter() - start < 0.5
    assert len(list(lifted.function.body.walk())) < 20
    assert "for i in range(10000):" in compiled.source
    flow.check(long_scalar_loop, 2.0)


# -- lists built by loops --------------------------------------------------------------
def append_then_stack(x):
    ys = []
    for row in x:
        ys.append(np.sin(row) * 2)
    first = ys[0]
    again = x[0] * 0.0
    for y in ys:
        again = again + y
    return np.stack(ys), len(ys), sum(ys), first, ys[-1], np.array(ys), again


def test_append_then_stack(flow, dtype):
    lifted = flow.check(append_then_stack, vec(dtype, 6).reshape(3, 2))
    assert "stack_list" in flow.prims(lifted)


def stack_forms(x):
    ys = []
    alias = ys
    for i in range(x.shape[0]):
        ys.append(x[i] * i)
    return ops.stack(ys), ops.Stack(axis=1)(alias), np.concatenate(ys), \
        np.asarray(ys, np.float64)


def test_stack_forms_of_a_loop_built_list(flow, dtype):
    flow.check(stack_forms, vec(dtype, 6).reshape(3, 2))


def append_scalars(x):
    hs = []
    h = 0.0
    for i in range(x.shape[0]):
        h = 0.5 * h + x[i]
        hs.append(h)
    return np.stack(hs), np.concatenate([np.stack(hs), x]), max(hs)


def test_append_of_carried_scalars(flow, dtype):
    flow.check(append_scalars, vec(dtype, 4))


def cumulative(x):
    out = np.zeros_like(x)
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i]
        out[i] = s
    return out


def test_item_assignment_in_a_loop(flow, dtype):
    flow.check(cumulative, vec(dtype, 5))


# -- carried types ------------------------------------------------------------------
def promoted(x):
    s = 0
    acc = 0.0
    for i in range(x.shape[0]):
        s = s + x[i]          # int -> the array's dtype
        acc = acc + x         # float -> an array of x's shape
    return s, acc


def test_carried_values_are_promoted_to_the_body_type(flow, dtype):
    lifted = flow.check(promoted, vec(dtype, 3))
    assert [v.type for v in lifted.function.outputs] == [AType((), dtype), AType((3,), dtype)]


def int_counter(x):
    n = 0
    for row in x:
        if np.sum(row) > 0:
            n += 1
    return n


def test_a_python_int_counter_stays_an_int(flow):
    flow.check(int_counter, vec(np.float64, 12).reshape(4, 3))


# -- cells and generated code ----------------------------------------------------------
class Recurrent(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.eye(3) * 0.5, name="w")

    def construct(self, xs):
        h = xs[0] * 0.0
        for x in xs:
            h = np.tanh(self.w @ h + x)
        return h


def test_a_cell_loop_reads_its_parameter_inside_the_body(flow):
    cell = Recurrent()
    xs = vec(np.float64, 12).reshape(4, 3)
    lifted = lift(cell, (AType((4, 3), np.dtype("float64")),))
    assert [p.name for p in lifted.params] == ["w"]
    compiled = compile_function(lifted.function)
    np.testing.assert_allclose(compiled.fn(xs, np.eye(3) * 0.5)[0], cell.construct(xs))


def loop_and_branch(x, w):
    h = x
    for t in range(4):
        z = w @ h
        if np.sum(z) > 0:
            h = np.tanh(z)
        else:
            h = -z
    return h


GENERATED = """\
import numpy as np


def loop_and_branch(x, w):
    # test_loops.py:{line}: for t in range(4):
    h_1 = x
    for t in range(4):
        # test_loops.py:{z}: z = w @ h
        z = w @ h_1
        # test_loops.py:{cond}: if np.sum(z) > 0:
        sum_z = z.sum(axis=None, keepdims=False)
        greater_sum_z = sum_z > 0
        if greater_sum_z:
            # test_loops.py:{then}: h = np.tanh(z)
            h_3 = np.tanh(z)
            h_2 = h_3
        else:
            # test_loops.py:{other}: h = -z
            h_4 = -z
            h_2 = h_4
        h_1 = h_2
    h = h_1
    return (h,)
"""


def test_generated_source_of_a_loop_with_a_branch_reads_well(flow):
    lifted = flow.check(loop_and_branch, vec(np.float64, 3), vec(np.float64, 9).reshape(3, 3))
    source = compile_function(lifted.function).source
    first = loop_and_branch.__code__.co_firstlineno
    assert source == GENERATED.format(line=first + 2, z=first + 3, cond=first + 4,
                                      then=first + 5, other=first + 7), source


# -- more shapes of loops ---------------------------------------------------------------
def while_continue(x):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        i += 1
        if x[i - 1] < 0:
            continue
        s += x[i - 1]
    return s, i


def enumerate_break(x):
    s = 0.0
    for i, v in enumerate(x):
        if i > 2 and v > 0:
            break
        s = s + v * i
    return s


def while_in_for(m):
    out = m[:, 0] * 0.0
    for i in range(m.shape[0]):
        v = m[i][0]
        while v < 10.0:
            v = v * 2 + 1
            if v > 5.0:
                break
        out = out + v
    return out


def closure_in_loop(x):
    s = x * 0.0
    for i in range(3):
        def g(v):
            return v * i + s
        s = g(x)
    return s


def tuple_and_dict_state(x):
    state = (x, x * 0.0)
    d = {"a": x, "n": 0}
    for row in np.stack([x, x * 2, x * 3]):
        h, c = state
        c = c + row
        state = (np.tanh(h + c), c)
        d = {"a": d["a"] * 0.5 + row, "n": d["n"] + 1}
    return state, d["a"], d["n"]


def index_with_counter(x):
    n = 0
    while x[n] < 0.5:
        n += 1
    return x[n], n


def return_from_for_in_while(x):
    i = 0
    while i < 10:
        for j in range(3):
            if x[j] * i > 4:
                return i, j
        i += 1
    return -1, -1


def fill_static_array(m):
    out = np.zeros((3, 4))
    for i in range(3):
        out[i, :] = m[i] * 2
        out[i, 0] += 1.0
    return out


def sliding_window(x):
    s = x[0:2] * 0.0
    for i in range(x.shape[0] - 1):
        s = s + x[i:i + 2]   # a slice bounded by the counter: unrolled
    return s


@pytest.mark.parametrize("fn, make", [
    (while_continue, lambda d: np.array([0.5, -1.0, 2.0, 3.0, -0.5], d)),
    (enumerate_break, lambda d: np.array([0.5, -1.0, 2.0, 3.0, -0.5], d)),
    (while_in_for, lambda d: np.array([[0.5, 1.0], [3.0, 2.0], [20.0, 1.0]], d)),
    (closure_in_loop, lambda d: np.array([0.5, -1.0], d)),
    (tuple_and_dict_state, lambda d: np.array([0.5, -1.0, 0.25], d)),
    (index_with_counter, lambda d: np.array([0.1, 0.2, 0.7, 0.9], d)),
    (return_from_for_in_while, lambda d: np.array([0.5, 1.0, 1.5], d)),
    (fill_static_array, lambda d: np.arange(12.0, dtype=d).reshape(3, 4)),
    (sliding_window, lambda d: np.arange(5.0, dtype=d)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_more_shapes_of_loops(flow, dtype, fn, make):
    flow.check(fn, make(dtype))
