"""Builtins on run-time values: ``len``, ``abs``, ``max``/``min``, ``sum``, ``float``,
``int``, ``bool`` and the ``math`` module on Python floats, checked against Python."""
import math

import numpy as np
import pytest

from ad_compiler.frontend import lift
from ad_compiler.ir.core import AType
from tests.finite_differences import central


def scalars(a, b):
    return abs(a - b), max(a, b), min(a, b, 0.25), max([a, b, 1.0]), float(a), \
        int(a * 10), bool(a > b)


@pytest.mark.parametrize("a, b", [(1.75, -2.5), (-0.5, 0.125)])
def test_builtins_on_python_floats(flow, a, b):
    lifted = flow.check(scalars, a, b, want=scalars(a, b)[:6] + (np.bool_(a > b),))
    outs = lifted.function.outputs
    assert [o.type.weak for o in outs[:5]] == [True] * 5  # still Python floats


def zero_d(x):
    s = np.sum(x)
    m = np.max(x)
    return max(s, m), min(s, 0.0), abs(s), float(s), sum(x), sum(x, 10.0), len(x)


def test_builtins_on_zero_d_arrays(flow, dtype):
    x = np.array([0.5, -2.0, 1.0], dtype)
    got = flow.check(zero_d, x, want=None)
    assert got.out_tree[-1].value == 3


def float_keeps_float32(x, a):
    k = float(np.sum(x))     # a Python float: it meets float32 arrays as one
    return x * k + math.exp(a) * x


def test_float_and_math_results_are_python_floats(flow):
    x = np.array([1.0, 2.0], np.float32)
    lifted = flow.check(float_keeps_float32, x, 0.5)
    assert lifted.function.outputs[0].type == AType((2,), np.dtype("float32"))


def math_functions(a, b):
    return (math.sqrt(a), math.log(a), math.log(a, 2.0), math.exp(-a), math.sin(a),
            math.cos(a), math.tanh(a), math.pow(a, 1.5), math.fabs(-a), math.log10(a),
            math.log2(a), math.hypot(a, b), math.tan(b))


def test_math_functions_of_run_time_floats(flow):
    flow.check(math_functions, 1.7, 0.3)


def sum_of_list(x, y):
    return sum([x, y, x * y]), sum((x, y), 1.0)


def test_sum_of_a_python_list_of_values(flow, dtype):
    x, y = np.arange(3, dtype=dtype), np.ones(3, dtype)
    flow.check(sum_of_list, x, y)


def test_int_of_a_float_value_is_an_int64_array():
    def f(a):
        return int(a)
    lifted = lift(f, (AType((), np.dtype("float64"), True),))
    assert lifted.function.outputs[0].type == AType((), np.dtype("int64"))


def comprehension_over_rows(x):
    return np.stack([np.sin(v) * 2.0 for v in x]) * x


def generator_sum(x):
    return sum(v * v for v in x)


def nested_comprehensions(x):
    return sum(np.sum(np.stack([a * b for b in x])) for a in x)


def filtered_over_a_tuple(x):
    parts = (x, np.sin(x), x * x, np.exp(-x))
    return sum(np.sum(p * k) for k, p in enumerate(parts) if k != 1)


def two_clauses_over_tuples(x):
    pairs = [a * b for a in (x, 2.0 * x) for b in (np.cos(x), x) if b is not a]
    return np.sum(np.stack(pairs))


def clause_reads_the_previous_one(x):
    rows = (x, x * x)
    return sum(np.sum(v * r) for r in rows for v in (r, np.tanh(r)))


@pytest.mark.parametrize("fn", [comprehension_over_rows, generator_sum, nested_comprehensions,
                                filtered_over_a_tuple, two_clauses_over_tuples,
                                clause_reads_the_previous_one])
def test_simple_comprehensions_become_loops(fn):
    import ad_compiler as ms
    x = np.array([0.3, -0.5, 0.7])
    fd = central(lambda v: np.sum(fn(v)), x)
    np.testing.assert_allclose(ms.grad(fn)(x), fd, rtol=1e-6, atol=1e-8)


def test_comprehension_variables_do_not_leak():
    from ad_compiler.frontend import lift
    from ad_compiler.ir.core import AType

    def f(x):
        v = 2.0
        ys = [v * 3.0 for v in (x, x)]   # the comprehension's own v: the outer one survives
        return ys[0] * v
    lifted = lift(f, (AType((2,), np.dtype(np.float64)),))
    from ad_compiler.ir.interp import interpret
    np.testing.assert_allclose(interpret(lifted.function, np.ones(2))[0], f(np.ones(2)))


def filtered_by_data(x):
    return sum([v * v for v in x if v > 0])  # E:filter


def nested_over_range(x):
    return sum([x[i] * x[j] for i in range(3) for j in range(i, 3) if x[j] > 0])  # E:nested


@pytest.mark.parametrize("fn, key", [(filtered_by_data, "filter"), (nested_over_range, "nested")])
def test_comprehensions_of_data_dependent_length_name_the_comprehension(fn, key):
    import ad_compiler as ms
    from ad_compiler.errors import UnsupportedOperationError
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(fn)(np.array([0.3, -0.5, 0.7]))
    message = str(info.value)
    line = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1)
                if text.endswith(f"# E:{key}"))
    assert f"{__file__}:{line}:" in message and "list comprehension" in message
    assert "_comp" not in message and "hint:" in message
