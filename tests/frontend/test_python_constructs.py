"""Python around the NumPy: recursion, loop ``else`` clauses, callable objects and
partials, lambdas and nested functions, nested comprehensions over ``range``.

Each construct: the value equals plain Python's, the gradient matches float64
central differences, or the refusal is a typed error naming this file, the line
(marked ``# E:<key>``) and its source text, with a hint.
"""
import functools

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.depth import MAX_RECURSION
from ad_compiler.errors import RecursiveCallError, UnsupportedOperationError
from tests.finite_differences import central

X = np.array([0.3, -0.5, 0.8, 1.1])
BIG = np.array([1.3, 2.5, 0.8, 2.1])


def check(f, x=X):
    """Value equal to Python's; gradients (reverse and forward) equal to central differences."""
    value = ms.value_and_grad(f)(x)[0]
    assert value == pytest.approx(f(x.copy()), rel=1e-12, abs=1e-12)
    ms.check_grad(f, (x,), rtol=1e-6, atol=1e-7)


def located(info, key):
    """The error names this file, the line marked ``# E:key`` and its text, with a hint."""
    message = str(info.value)
    lines = open(__file__).read().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.endswith(f"# E:{key}"))
    assert f"{__file__}:{line}:" in message
    assert lines[line - 1].strip() in message
    assert "hint:" in message
    return message


# -- recursion ------------------------------------------------------------------------
def power(x, n):
    return x if n == 1 else x * power(x, n - 1)


def uses_power(x):
    return np.sum(power(x, 3) + power(np.sin(x), 2))


def even(x, n):
    return x if n == 0 else odd(x * 1.5, n - 1)


def odd(x, n):
    return x if n == 0 else even(np.sin(x), n - 1)


def uses_mutual(x):
    return np.sum(even(x, 5))


def product_of_rows(x):
    """Depth from the shape: each call sees a shorter array."""
    return x[0] if x.shape[0] == 1 else x[0] * product_of_rows(x[1:])


def branching(x, n):
    if n == 0:
        return x
    if np.sum(x) > 0.0:
        return branching(np.sin(x), n - 1)
    return branching(x * 0.5, n - 1)


def uses_branching(x):
    return np.sum(branching(x, 3))


def uses_local_recursion(x):
    def fact(v, n):
        return v if n <= 1 else v * fact(v - 0.1, n - 1)
    return np.sum(fact(x, 4))


@pytest.mark.parametrize("f", [uses_power, uses_mutual, product_of_rows, uses_branching,
                               uses_local_recursion])
@pytest.mark.parametrize("x", [X, -BIG])
def test_recursion_with_a_static_depth_unrolls(f, x):
    check(f, x)


def until_big(x):
    if np.sum(x) > 10.0:
        return x
    return until_big(x * 2.0)  # E:data


def uses_until_big(x):
    return np.sum(until_big(x))


def counting(x, k):
    if np.sum(x) > 10.0:
        return x
    return counting(x * 2.0, k + 1)  # E:counting


def test_recursion_on_data_is_a_located_error():
    with pytest.raises(RecursiveCallError) as info:
        ms.grad(uses_until_big)(X)
    message = located(info, "data")
    assert "data-dependent condition" in message and "run-time data" in message
    assert "uses_until_big -> until_big -> until_big" in message


def test_recursion_past_the_limit_is_a_located_error(monkeypatch):
    from ad_compiler.frontend import inline
    monkeypatch.setattr(inline, "MAX_RECURSION", 40)  # the real limit: the test below
    with pytest.raises(RecursiveCallError) as info:
        ms.grad(lambda x: np.sum(counting(x, 0)))(X)
    message = located(info, "counting")
    assert "under a data-dependent condition" in message and "deeper than 40 calls" in message


def test_deep_static_recursion_compiles_and_deeper_is_a_clear_error():
    def chain(x, n):
        return x if n == 0 else chain(x + 0.001, n - 1)
    grad = ms.grad(lambda x: np.sum(np.sin(chain(x, 300))))(X)
    np.testing.assert_allclose(grad, np.cos(X + 0.3), rtol=1e-9)
    with pytest.raises(RecursionError, match="too deep to unroll"):
        ms.grad(lambda x: np.sum(chain(x, MAX_RECURSION + 5)))(X)


# -- for/while ... else ---------------------------------------------------------------
def for_else_counter(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x * i)
        if s > 1.0:
            break
    else:
        s = s * 2.0
    return s


def for_else_rows(x):
    s = 0.0
    for row in x.reshape(2, 2):
        s = s + np.sum(np.sin(row))
        if np.sum(row) > 1.0:
            break
    else:
        s = s * 3.0
    return s


def for_else_static_break(x):
    for i in range(4):
        if i == 2:
            break
        x = x * 1.5
    else:
        x = x * 10.0
    return np.sum(x * x)


def for_else_without_break(x):
    for _ in range(2):
        x = x * 1.5
    else:
        x = x + 1.0
    return np.sum(x * x)


def while_else(x):
    while np.sum(x * x) < 10.0:
        x = x * 1.5
        if np.max(x) > 2.0:
            break
    else:
        x = x + 1.0
    return np.sum(x * x)


def nested_else(x):
    for _ in range(3):
        for _ in range(2):
            if np.sum(x) > 3.0:
                break
            x = x * 1.2
        else:
            x = x + 0.1
    else:
        x = x * 2.0
    return np.sum(x)


def else_after_return(x):
    for i in range(3):
        if np.sum(x) > 2.0 + i:
            return np.sum(np.cos(x))
        x = x * 1.3
    else:
        x = -x
    return np.sum(x)


@pytest.mark.parametrize("f", [for_else_counter, for_else_rows, for_else_static_break,
                               for_else_without_break, while_else, nested_else,
                               else_after_return])
@pytest.mark.parametrize("x", [X, BIG, -BIG])
def test_loop_else_clauses(f, x):
    check(f, x)


def test_loop_else_gradient_follows_the_path():
    # no break: the else doubles s; with a break it does not
    g_else = ms.grad(for_else_counter)(X * 0.1)
    np.testing.assert_allclose(g_else, np.full(4, 2.0 * 3.0))
    g_break = ms.grad(for_else_counter)(BIG)
    np.testing.assert_allclose(g_break, np.full(4, 1.0))


# -- calling user objects ---------------------------------------------------------------
class Scaler:
    k = 3.0

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return np.sin(x) * self.w

    def apply(self, x):
        return np.cos(x) * self.w

    @staticmethod
    def double(x):
        return x * 2.0

    @classmethod
    def by_k(cls, x):
        return x * cls.k


SCALER = Scaler(2.0)
SCALER_ARRAY = Scaler(np.array([1.0, 2.0, 3.0, 4.0]))


def helper(x, a, b=1.0):
    return np.tanh(x * a) + b


P_KW = functools.partial(helper, a=3.0, b=2.0)
P_POS = functools.partial(helper, b=np.array([0.5, 1.0, 1.5, 2.0]))
P_NUMPY = functools.partial(np.multiply, 2.5)
P_NESTED = functools.partial(P_KW, b=-1.0)


def calls_instance(x):
    return np.sum(SCALER(x) * SCALER_ARRAY(x))


def calls_bound_method(x):
    f = SCALER.apply
    return np.sum(f(x) + SCALER_ARRAY.apply(x))


def calls_static_and_class_methods(x):
    return np.sum(Scaler.double(x) * SCALER.double(x) + Scaler.by_k(x) + SCALER.by_k(x))


def calls_partials(x):
    return np.sum(P_KW(x) * P_POS(x, 0.5) + P_NUMPY(x) + P_NESTED(x, a=0.5))


class Recursive:
    def __init__(self, s):
        self.s = s

    def rec(self, x, n):
        return x if n == 0 else np.sin(self.rec(x, n - 1)) * self.s


RECURSIVE = Recursive(1.5)


def calls_recursive_method(x):
    return np.sum(RECURSIVE.rec(x, 3))


def makes_a_partial(x):
    p = functools.partial(helper, a=x * 0.5)   # made inside: it holds a run-time value
    return np.sum(p(x) + P_NUMPY(p(x, b=0.0)))


@pytest.mark.parametrize("f", [calls_instance, calls_bound_method,
                               calls_static_and_class_methods, calls_partials,
                               calls_recursive_method, makes_a_partial])
def test_user_objects_are_called_as_python_calls_them(f):
    check(f)


def test_callable_objects_and_partials_can_be_differentiated_directly():
    obj = Scaler(np.array([1.0, -2.0, 3.0, 0.5]))
    np.testing.assert_allclose(ms.vjp(obj, X)[1](np.ones(4))[0], np.cos(X) * obj.w)
    p = functools.partial(helper, 2.0)  # x bound: the input is a
    np.testing.assert_allclose(ms.vjp(p, X)[1](np.ones(4))[0],
                               central(lambda a: np.sum(helper(2.0, a)), X), rtol=1e-6)
    q = functools.partial(lambda x, s: np.sum(np.sin(x) * s), s=3.0)
    np.testing.assert_allclose(ms.grad(q)(X), 3.0 * np.cos(X))


def test_attributes_read_by_objects_are_guarded():
    obj = Scaler(2.0)
    grad = ms.grad(lambda x: np.sum(obj(x)))
    np.testing.assert_allclose(grad(X), 2.0 * np.cos(X))
    obj.w = 5.0   # a number folded into the code: recompiles
    np.testing.assert_allclose(grad(X), 5.0 * np.cos(X))
    obj.w = np.full(4, 0.5)   # an array: read at call time
    np.testing.assert_allclose(grad(X), 0.5 * np.cos(X))
    obj.w[:] = 4.0
    np.testing.assert_allclose(grad(X), 4.0 * np.cos(X))
    direct = ms.grad(obj)  # the object itself: its gradient (of the sum of its outputs)
    np.testing.assert_allclose(direct(X), 4.0 * np.cos(X))
    obj.w = np.full(4, -1.0)
    np.testing.assert_allclose(direct(X), -np.cos(X))
    bound = ms.grad(lambda x: np.sum(obj.apply(x)))
    np.testing.assert_allclose(bound(X), np.sin(X))
    obj.w = 1.0
    np.testing.assert_allclose(bound(X), -np.sin(X))


def test_partial_arguments_are_guarded():
    p = functools.partial(helper, a=3.0)
    grad = ms.grad(lambda x: np.sum(p(x)))
    np.testing.assert_allclose(grad(X), 3.0 / np.cosh(3.0 * X) ** 2)
    p.keywords["a"] = 0.5   # the partial's keywords dict changed in place
    np.testing.assert_allclose(grad(X), 0.5 / np.cosh(0.5 * X) ** 2)
    b = np.ones(4)
    q = functools.partial(helper, b=b)
    value = ms.value_and_grad(lambda x: np.sum(q(x, 1.0)))
    assert value(X)[0] == pytest.approx(np.sum(np.tanh(X) + 1.0))
    b[:] = 3.0  # a bound array is read at call time
    assert value(X)[0] == pytest.approx(np.sum(np.tanh(X) + 3.0))


class Opaque:
    __call__ = staticmethod(np.linalg.norm)


OPAQUE = Opaque()


def calls_opaque(x):
    return OPAQUE(x)  # E:opaque


def test_a_callable_without_source_or_rule_is_a_located_error():
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(calls_opaque)(X)
    located(info, "opaque")


# -- lambdas and nested functions -----------------------------------------------------
TWICE, PLUS = (lambda v: v * 2.0), (lambda v: np.sin(v) + 1.0)
SQUARES = [lambda v: v ** 2, lambda v: v ** 3]


def uses_global_lambdas(x):
    return np.sum(TWICE(x) * PLUS(x) + SQUARES[0](x) - SQUARES[1](x))


def lambdas_inside(x):
    f, g = (lambda v: v * 2.0), (lambda v: v + 1.0)
    h = lambda v, s=3.0: np.cos(v) * s  # noqa: E731
    return np.sum(f(x) * g(x) + h(x))


def closes_over_local_arrays(x):
    w = np.sin(x)

    def inner(v):
        return v * w

    total = 0.0
    for i in range(3):
        def scaled(v):
            return v * i + w
        total = total + np.sum(scaled(inner(x)))
    return total


def closes_over_loop_variable_late(x):
    fs = []
    for k in [1.0, 2.0, 3.0]:
        fs.append(lambda v: v * k)   # late binding: every lambda sees k == 3.0
    return np.sum(fs[0](x) + fs[1](x) * x)


def closure_in_loop_op(x):
    out = np.zeros_like(x)
    for row in x.reshape(2, 2):
        f = lambda v: np.tanh(v * row[0])  # noqa: E731
        out = out + np.sum(f(row))
    return np.sum(out * x)


def closure_sees_rebinding(x):
    y = x * 2.0
    get = lambda: y  # noqa: E731
    y = np.sin(x)
    return np.sum(get() * x)


@pytest.mark.parametrize("f", [uses_global_lambdas, lambdas_inside, closes_over_local_arrays,
                               closes_over_loop_variable_late, closure_in_loop_op,
                               closure_sees_rebinding])
@pytest.mark.parametrize("x", [X, -BIG])
def test_lambdas_and_nested_functions(f, x):
    check(f, x)


def test_two_lambdas_on_one_line_differentiated_directly():
    np.testing.assert_allclose(ms.grad(lambda x: np.sum(TWICE(x)))(X), np.full(4, 2.0))
    a, b = (lambda v: np.sum(v * 2.0)), (lambda v: np.sum(v * v))
    np.testing.assert_allclose(ms.grad(a)(X), np.full(4, 2.0))
    np.testing.assert_allclose(ms.grad(b)(X), 2.0 * X)


def test_a_lambda_body_over_several_lines_is_read_whole():
    """``lambda x: np.sum(`` alone also parses (as ``np.sum``): the body must span
    every source position of the lambda's code."""
    grad = ms.grad(lambda x: np.sum(
        x * x) + np.sum(
        np.sin(x)))
    np.testing.assert_allclose(grad(X), central(lambda x: np.sum(x * x) + np.sum(np.sin(x)), X),
                               rtol=1e-6)
    scaled = ms.grad(lambda x: (np.sum(x * x)
                                * 3.0))
    np.testing.assert_allclose(scaled(X), 6.0 * X)


# -- nested comprehensions over range ------------------------------------------------
def triangle(x):
    return sum([x[i] * x[j] for i in range(4) for j in range(i, 4)])


def strictly_lower(x):
    return sum([x[i] * x[j] for i in range(4) for j in range(i)])


def filtered_counters(x):
    return sum([x[i] * np.sin(x[j]) for i in range(4) for j in range(i) if (i + j) % 2 == 1])


def filtered_single(x):
    return np.sum(np.stack([x[i] * 2.0 for i in range(4) if i != 1]))


def rectangle(x):
    return np.sum(np.array([x[i] * x[j] for i in range(3) for j in range(2)]))


def list_of_lists(x):
    return np.sum(np.array([[x[i] * x[j] for j in range(4)] for i in range(4)]) ** 2)


def rows_then_range(x):
    return np.sum(sum([np.sin(r) * r[j] for r in x.reshape(2, 2) for j in range(2)]))


def triple(x):
    return sum([x[i] * x[j] * x[k] for i in range(3) for j in range(i, 3)
                for k in range(j, 3) if (i + j + k) % 2 == 0])


def generator_nested(x):
    return sum(x[i] - x[j] ** 2 for i in range(4) for j in range(i + 1, 4))


PAIRS = lambda x: sum([x[i] * x[j] for i in range(4) for j in range(i, 4)])  # noqa: E731


def in_lambdas(x):
    g = lambda v, c=2.0: np.sum(np.stack([v[i] * c for i in range(3)]))  # noqa: E731
    h = lambda v: sum(np.sin(v[i]) for i in range(2))  # noqa: E731
    return g(x) * h(x) + PAIRS(x)


def in_nested_def(x):
    def pairs(v):
        return sum([v[i] * np.sin(v[j]) for i in range(4) for j in range(i, 4)])
    return pairs(x) + pairs(x * 0.5)


@pytest.mark.parametrize("f", [triangle, strictly_lower, filtered_counters, filtered_single,
                               rectangle, list_of_lists, rows_then_range, triple,
                               generator_nested, in_nested_def, in_lambdas, PAIRS])
@pytest.mark.parametrize("x", [X, -BIG])
def test_nested_comprehensions_over_range(f, x):
    check(f, x)


def filtered_by_data(x):
    return sum([x[i] * x[j] for i in range(4) for j in range(i) if x[j] > 0])  # E:filter


def test_a_filter_on_data_is_a_located_error():
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(filtered_by_data)(X)
    assert "_comp" not in located(info, "filter")


def test_float32_stays_float32():
    x = X.astype(np.float32)
    for f in (uses_power, for_else_counter, calls_partials, triangle, lambdas_inside):
        value, grad = ms.value_and_grad(f)(x)
        assert grad.dtype == np.float32, f.__name__


def comprehension_in_a_peeled_loop(x):
    z = x * 1.0
    s = 0.0
    k = 0
    while k < 2:
        k += 1
        s = s + np.sum(np.stack([x[j] * z[i] for i in range(2) for j in range(2) if i != j]))
        z = z * 0.9 + np.float64(0.5)   # float32 z becomes float64: iterations unrolled
    return np.sum(z) + s


def test_a_comprehension_list_made_in_a_loop_body_is_not_carried_by_the_loop():
    x = X.astype(np.float32)
    value, grad = ms.value_and_grad(comprehension_in_a_peeled_loop)(x)
    assert value == comprehension_in_a_peeled_loop(x.copy())
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad, central(comprehension_in_a_peeled_loop, X), rtol=1e-5)


def defines_in_a_loop(x):
    t = x * 1.0
    for k in (1.0, 2.0):          # unrolled: the second pass sees the first one's 'inner'
        for _ in range(3):        # a loop op
            def inner(u):
                return np.tanh(u) * t * k
            t = t * 0.5 + inner(x)
    return np.sum(t)


def test_a_function_defined_in_a_loop_body_is_not_a_change():
    check(defines_in_a_loop)


def test_class_attributes_read_by_static_and_class_methods_are_guarded():
    class Holder:
        k = 3.0

        @classmethod
        def by_k(cls, x):
            return np.sum(np.sin(x) * cls.k)

        @staticmethod
        def static(x):
            return np.sum(x * Holder.k)

    grads = [ms.grad(Holder.by_k), ms.grad(Holder.static), ms.grad(lambda x: Holder.by_k(x))]
    expected = [3.0 * np.cos(X), np.full(4, 3.0), 3.0 * np.cos(X)]
    for grad, want in zip(grads, expected):
        np.testing.assert_allclose(grad(X), want)
    Holder.k = 5.0
    for grad, want in zip(grads, expected):
        np.testing.assert_allclose(grad(X), want * 5.0 / 3.0)


def test_a_recursion_that_branches_on_data_is_capped(monkeypatch):
    from ad_compiler.frontend import inline
    monkeypatch.setattr(inline, "MAX_RECURSIVE_CALLS", 20)   # both paths of each branch
    check(uses_branching)                                     # 2 + 4 + 8 calls: fine
    with pytest.raises(RecursiveCallError, match="more than 20 calls in all"):
        ms.grad(lambda x: np.sum(branching(x, 5)))(X)
