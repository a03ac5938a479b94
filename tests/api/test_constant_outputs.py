"""A Python int (a constant) among a function's outputs: the cotangent of ``ms.vjp``
and the ``sens`` of ``GradOperation(sens_param=True)`` may have an entry for it, as
JAX and MindSpore structure the cotangent like the output; whatever it holds
multiplies a zero derivative. Checked against closed forms and ``ms.check_grad``."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.errors import GradRuntimeError, GradTypeError

X = np.array([0.2, -0.5])
V0, V1, V2 = np.array([1.0, -2.0]), 0.7, np.array([0.5, 3.0])


def tuple_output(x):
    return x * 2.0, np.sum(x ** 2), (np.sin(x), 3)


def by_hand(x, v0, v1, v2):
    return 2.0 * v0 + 2.0 * v1 * x + v2 * np.cos(x)


@pytest.mark.parametrize("constant_entry", [0, None, np.zeros(()), 5.0],
                         ids=["zero", "None", "0-d", "any-number"])
def test_vjp_takes_a_cotangent_structured_like_the_output(constant_entry):
    out, vjp_fn = ms.vjp(tuple_output, X)
    assert out[2][1] == 3
    (dx,) = vjp_fn((V0, V1, (V2, constant_entry)))
    np.testing.assert_allclose(dx, by_hand(X, V0, V1, V2), rtol=1e-14)
    (flat,) = vjp_fn((V0, V1, (V2,)))  # or without that entry, as before
    np.testing.assert_allclose(flat, dx, rtol=1e-14)


def test_check_grad_first_and_second_order():
    ms.check_grad(tuple_output, (X,), modes=("rev",))
    ms.check_grad(tuple_output, (X,), order=2, modes=("rev",))


def test_gradoperation_sens_and_float32():
    x32 = X.astype(np.float32)
    sens = (V0.astype(np.float32), np.float32(V1), (V2.astype(np.float32), 0))
    dx = ops.GradOperation(sens_param=True)(tuple_output)(x32, sens)
    assert dx.dtype == np.float32
    np.testing.assert_allclose(dx, by_hand(X, V0, V1, V2), rtol=1e-6)


def test_wrong_counts_and_entries_are_still_errors():
    _, vjp_fn = ms.vjp(tuple_output, X)
    with pytest.raises(GradRuntimeError, match=r"sens has 2 entries but the function has 3 "
                                               r"outputs \(and 1 constant output"):
        vjp_fn((V0, V1))
    with pytest.raises(GradTypeError, match="sens entry 3 is a str, for a constant output"):
        vjp_fn((V0, V1, (V2, "zero")))


def vjp_inside(x):
    dx = ops.GradOperation(sens_param=True)(tuple_output)(x, (x, 1.5, (np.cos(x), 0)))
    return np.sum(dx * dx)


def test_inside_compiled_code():
    ms.check_grad(vjp_inside, (X,), modes=("rev",))
    assert ms.value_and_grad(vjp_inside)(X)[0] == pytest.approx(vjp_inside(X), rel=1e-14)
