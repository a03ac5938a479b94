"""A NumPy / math function without a derivative rule, applied to a run-time value,
is refused at the user's call with "np.X has no derivative rule yet" and a hint
naming the ways out; a loop counter passed to such a function is still fine."""
import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import UnsupportedOperationError

THIS_FILE = __file__


def bessel(x):
    return np.sum(np.i0(x))  # E:i0


def mantissa(x):
    return np.sum(np.frexp(x)[0])  # E:frexp


def gamma(s):
    return math.gamma(s) * 2.0  # E:gamma


def counter_through_math(x):
    total = 0.0
    for i in range(1, 4):
        total = total + math.gamma(i) * np.sum(x)
    return total


def _line_of(key):
    with open(THIS_FILE) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# E:{key}"))


@pytest.mark.parametrize("fn, arg, name, key", [
    (bessel, np.ones(3), "np.i0", "i0"),
    (mantissa, np.ones(3), "np.frexp", "frexp"),
    (gamma, 1.5, "math.gamma", "gamma"),
])
def test_missing_rule_is_named_and_located(fn, arg, name, key):
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(fn)(arg)
    text = str(info.value)
    assert f"{name} has no derivative rule yet" in text
    assert f"test_no_rule.py:{_line_of(key)}:" in text
    assert "cannot be computed at compile time" not in text
    assert "ad_compiler.primitive" in text and "docs/extending.md" in text  # the ways out


def test_a_loop_counter_through_a_math_function_still_compiles():
    x = np.array([0.5, -1.0])
    value, grad = ms.value_and_grad(counter_through_math)(x)
    assert value == counter_through_math(x)
    np.testing.assert_allclose(grad, np.full(2, 1.0 + 1.0 + 2.0))
