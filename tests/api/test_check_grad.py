"""``ms.check_grad``: passes on correct rules, names argument and element on wrong ones."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.api.extension import forget
from ad_compiler.errors import GradCheckError, GradValueError


def poly(x, y):
    return np.sin(x) * y + x ** 3


def loop_sum(x, n):
    total = 0.0
    for i in range(n):
        total = total + np.sum(np.tanh(x * (i + 1)))
    return total


def two_outputs(x):
    return np.exp(x), np.sum(x * x)


X = np.array([0.3, -1.2, 0.7])
Y = np.array([2.0, 0.5, -1.0])


@pytest.mark.parametrize("order", [1, 2])
def test_correct_rules_pass(order):
    ms.check_grad(poly, (X, Y), order=order)


def test_an_integer_argument_is_passed_through():
    ms.check_grad(loop_sum, (X, 3), modes=("rev",))


def test_several_outputs_and_float32_inputs():
    ms.check_grad(two_outputs, (X.astype(np.float32),), order=2)


def test_a_python_float_argument():
    ms.check_grad(lambda_free, (0.7, X))


def lambda_free(s, x):
    return np.sum(np.cos(x * s))


def bad_square(x):
    return x * x


@pytest.fixture
def wrong_rule():
    # d(x^2)/dx written as x instead of 2x
    ms.primitive(bad_square, vjp=lambda b, ct, out, x: (b.mul(ct, x),),
                 jvp=lambda b, t, out, x: b.mul(t[0], b.mul(x, b.const(2.0))))
    yield
    forget(bad_square)


def uses_bad(w, x):
    return np.sum(bad_square(x) * w)


def test_a_wrong_reverse_rule_names_the_argument_and_element(wrong_rule):
    with pytest.raises(GradCheckError) as info:
        ms.check_grad(uses_bad, (Y, X), modes=("rev",))
    message = str(info.value)
    assert isinstance(info.value, AssertionError)
    assert "reverse mode (order 1)" in message and "'x' (position 1)" in message
    # the error is |c * w * x| for the scalar cotangent c: largest where |w * x| is
    assert f"at element ({int(np.argmax(np.abs(Y * X)))},)" in message


def test_the_forward_rule_is_checked_separately(wrong_rule):
    ms.check_grad(uses_bad, (Y, X), modes=("fwd",))      # its JVP is right


def test_bad_settings():
    with pytest.raises(GradValueError):
        ms.check_grad(poly, (X, Y), order=3)
    with pytest.raises(GradValueError):
        ms.check_grad(poly, (X, Y), modes=("backward",))


def opaque_square(x):
    return x * x


def test_a_wrong_second_order_is_found_only_at_order_2():
    # right first derivative, but built from stop_gradient(x): its own derivative is 0
    ms.primitive(opaque_square,
                 vjp=lambda b, ct, out, x: (b.mul(ct, b.mul(b.stop_gradient(x), b.const(2.0))),),
                 jvp=lambda b, t, out, x: b.mul(t[0], b.mul(b.stop_gradient(x), b.const(2.0))))
    try:
        def f(x):
            return np.sum(opaque_square(x))
        ms.check_grad(f, (X,), order=1)
        with pytest.raises(GradCheckError, match=r"\(order 2\)"):
            ms.check_grad(f, (X,), order=2)
    finally:
        forget(opaque_square)
