"""A loop's tape: one list per stacked value (no tuple per iteration), and only what
the adjoint cannot recompute cheaply; scalar loops stay on Python floats.

Gradients are checked against central differences; sources for what they store."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import ad_compiler as ms
from tests.finite_differences import central_at

X = np.array([0.3, -0.4, 0.8])
W = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6], [0.3, 0.2, 0.1]])
XS = np.array([[0.2, 0.5, -0.1], [0.7, -0.3, 0.4], [0.1, 0.9, -0.6]])


def scalar_loop(a, b):
    s = 0.0
    x, y = a, b
    for _ in range(6):
        s = s + (y - x * x) ** 2 + (1.0 - x) ** 2
        x, y = 0.9 * y + 0.1, 0.5 * x + 0.3
    return s


def test_one_list_per_stacked_value_and_no_tuples():
    source = ms.adjoint_source(scalar_loop, 0.3, 0.4, grad_position=(0, 1))
    lists = re.findall(r"(\w+)\.append\((\w+)\)\n", source)
    assert [v for _, v in lists] == ["x_1", "y_1"]
    assert ".append((" not in source
    for name, _ in lists:                           # each read back by itself
        assert re.search(rf"\n\s+\w+ = {name}\[i\w*\]\n", source)


def test_the_tape_gives_the_right_gradient():
    grad = ms.grad(scalar_loop, grad_position=(0, 1))(0.3, 0.4)
    fd = tuple(central_at(scalar_loop, (0.3, 0.4), i) for i in (0, 1))
    assert grad == pytest.approx(fd, rel=1e-6)
    assert all(type(g) is float for g in grad)


# -- what a loop stores: only what its adjoint cannot recompute cheaply -----------------

def assert_gradient(fn, *args, positions):
    grads = ms.grad(fn, grad_position=positions)(*args)
    for k, g in zip(positions, grads if len(positions) > 1 else (grads,)):
        np.testing.assert_allclose(g, central_at(fn, args, k), rtol=1e-6, atol=1e-9)
        assert type(g) is type(args[k])


def stacked(source: str) -> list[str]:
    """The names the forward loops stack per iteration (one ``.append`` each)."""
    return re.findall(r"\w+\.append\((\w+)\)\n", source)


def sin_loop(x):
    for _ in range(50):
        x = math.sin(x)
    return x


def test_a_python_float_loop_stores_one_float_and_stays_on_python_floats():
    source = ms.adjoint_source(sin_loop, 1.2)
    assert stacked(source) == ["x_2"]                    # one float per iteration
    assert re.search(r"x_\d = math\.sin\(x_\d\)", source)   # not float(np.sin(...))
    assert re.search(r"cos = math\.cos\(x_\d\)\n\s+dx_\d = dx_\d \* cos\n", source)
    assert "np." not in source and "float(" not in source
    assert_gradient(sin_loop, 1.2, positions=(0,))


def test_the_value_of_a_math_loop_is_pythons_to_the_bit():
    value, grad = ms.value_and_grad(sin_loop)(0.7)
    assert value == sin_loop(0.7) and type(value) is float
    assert grad == pytest.approx(central_at(sin_loop, (0.7,), 0), rel=1e-7)


def mixed(a, b):
    s = 0.0
    for _ in range(5):
        s = s + math.cos(a * s) * b + math.sin(a) * 0.5
    return s


def test_scalar_adjoints_use_no_numpy_scalars():
    source = ms.adjoint_source(mixed, 0.3, 0.7, grad_position=(0, 1))
    backward = source[source.index("for i in"):]
    assert "np." not in backward and "float(" not in backward, backward
    assert "math.sin(" in backward
    assert_gradient(mixed, 0.3, 0.7, positions=(0, 1))


def test_cheap_scalar_values_are_recomputed_from_the_carried_values():
    # the adjoint reads y - x * x and 1.0 - x: recomputed from x and y, not stacked
    source = ms.adjoint_source(scalar_loop, 0.3, 0.4, grad_position=(0, 1))
    assert stacked(source) == ["x_1", "y_1"]
    forward = source[:source.index("for i in")]
    assert "sub" not in forward                          # not computed for a tape any more
    test_the_tape_gives_the_right_gradient()


def invariant(x, w):
    for _ in range(4):
        x = np.tanh(x * np.exp(w))
    return np.sum(x)


def test_a_loop_invariant_value_is_not_stored():
    source = ms.adjoint_source(invariant, X, W[0], grad_position=(0, 1))
    assert source.count("= np.exp(") == 1                # computed once, before the loops
    assert stacked(source) == ["x_2", "x_3"]             # not np.exp(w)
    assert_gradient(invariant, X, W[0], positions=(0, 1))


def by_counter(x, xs):
    s = 0.0
    for t in range(3):
        s = s + np.sum(np.sin(x * xs[t]))
    return s


def test_a_row_read_with_the_counter_is_read_again_not_stored():
    source = ms.adjoint_source(by_counter, X, XS)
    assert stacked(source) == ["mul_x_xs_t"]             # not xs[t]
    assert re.search(r"= xs\[t\w*\]", source)       # the backward loop counts t too
    assert_gradient(by_counter, X, XS, positions=(0, 1))


def zero_d(x):
    for _ in range(20):
        x = np.sin(x) * 0.9
    return x


def test_a_zero_d_loop_stores_one_array():
    source = ms.adjoint_source(zero_d, np.array(0.4))
    assert stacked(source) == ["x_2"]
    assert_gradient(zero_d, np.array(0.4), positions=(0,))


def test_float32_loops_keep_float32():
    x, w = X.astype(np.float32), W[0].astype(np.float32)
    gx, gw = ms.grad(invariant, grad_position=(0, 1))(x, w)
    assert gx.dtype == np.float32 and gw.dtype == np.float32
    g64 = ms.grad(invariant, grad_position=(0, 1))(X, W[0])
    np.testing.assert_allclose(gx, g64[0], rtol=1e-4)


def test_second_order_and_forward_mode_through_a_python_float_loop():
    def first(x):
        return ms.grad(mixed, grad_position=0)(x, 0.7)

    second = ms.grad(first)(0.3)
    assert second == pytest.approx(central_at(first, (0.3,), 0), rel=1e-5)
    value, tangent = ms.jvp(lambda a: mixed(a, 0.7), 0.3, 1.0)
    assert tangent == pytest.approx(central_at(mixed, (0.3, 0.7), 0), rel=1e-7)


def numpy_and_python_scalars(x):
    s = np.sin(x)                        # an np.float64, also read as one below
    t = float(s * 3.0) + math.cos(x)
    for _ in range(3):
        t = t * math.sin(t) + 0.5
    return s * t


def test_numpy_scalars_stay_numpy_scalars_where_python_has_them():
    value, grad = ms.value_and_grad(numpy_and_python_scalars)(0.8)
    want = numpy_and_python_scalars(0.8)
    assert type(value) is type(want) is np.float64 and value == want
    assert grad == pytest.approx(central_at(numpy_and_python_scalars, (0.8,), 0), rel=1e-7)


def exp_tanh(x):
    for _ in range(5):
        x = math.tanh(x) * 1.5 + math.exp(-x)
    return x


def test_a_math_result_is_stacked_as_the_python_float_the_loop_made():
    source = ms.adjoint_source(exp_tanh, 0.3)
    assert stacked(source) == ["tanh", "exp"]            # math.exp(neg): Python floats
    assert "tanh = math.tanh(x" in source
    backward = source[source.index("for i in"):]
    assert "np." not in backward and "float(" not in backward, backward
    assert_gradient(exp_tanh, 0.3, positions=(0,))
