"""ms.hessian and ms.hvp against central differences of hand-derived gradients."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import UnsupportedOperationError
from tests.finite_differences import jacobian_at


def f(x, y):
    return np.sum(np.sin(x) * y * x) + np.sum(x * x * y * y)


def grad_f(x, y):
    """Closed form: (d/dx, d/dy)."""
    return (np.cos(x) * y * x + np.sin(x) * y + 2 * x * y * y,
            np.sin(x) * x + 2 * x * x * y)


X = np.array([0.3, -0.8, 1.1])
Y = np.array([1.5, 0.4, -0.7])


def test_hessian_of_one_input():
    want = jacobian_at(lambda x, y: grad_f(x, y)[0], [X, Y], 0)
    np.testing.assert_allclose(ms.hessian(f)(X, Y), want, rtol=1e-6, atol=1e-7)


def test_hessian_blocks_of_several_inputs():
    got = ms.hessian(f, grad_position=(0, 1))(X, Y)
    for i in range(2):
        for j in range(2):
            want = jacobian_at(lambda x, y, i=i: grad_f(x, y)[i], [X, Y], j)
            np.testing.assert_allclose(got[i][j], want, rtol=1e-6, atol=1e-7)


def loop_energy(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.cos(x * (i + 1)))
    return total


def loop_gradient(x):
    return -sum(np.sin(x * (i + 1)) * (i + 1) for i in range(3))


def test_through_a_loop_forward_over_reverse():
    # forward mode carries tangents through the gradient's loop and its tape
    want = jacobian_at(loop_gradient, [X], 0)
    np.testing.assert_allclose(ms.hessian(loop_energy)(X), want, rtol=1e-6, atol=1e-7)
    v = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(ms.hvp(loop_energy, X, v), want @ v, rtol=1e-6, atol=1e-7)


def data_loop(x):
    total = 0.0
    while total < 3.0:
        total = total + np.sum(x * x)
    return total * np.sum(np.sin(x))


def test_reverse_over_reverse_through_a_while_loop():
    # an 'if' on data makes jacrev the way; the while loop runs twice at X
    def branchy_loop(x):
        y = data_loop(x)
        if y > 100.0:
            y = y * 2.0
        return y
    got = ms.jacrev(_gradient_of(branchy_loop))(X)
    s, big_s, x = np.sum(X * X), np.sum(np.sin(X)), X
    want = 2 * (2 * np.eye(3) * big_s + 2 * np.outer(np.cos(x), x) + 2 * np.outer(x, np.cos(x))
                - s * np.diag(np.sin(x)))          # y = 2 s S: its Hessian by hand
    np.testing.assert_allclose(got, want, rtol=1e-9)


def _gradient_of(fn):
    g = ms.grad(fn)

    def gradient(x):
        return g(x)
    return gradient


def quartic(x):
    return np.sum(x ** 4) * np.sum(np.exp(x))


def quartic_gradient(x):
    return (4 * x ** 3 * np.sum(np.exp(x)) + np.sum(x ** 4) * np.exp(x),)


@pytest.mark.parametrize("fn, gradient", [(f, grad_f), (quartic, quartic_gradient)])
def test_hvp_is_the_hessian_times_the_vector(fn, gradient):
    args = [X, Y][:fn.__code__.co_argcount]
    v = tuple(np.linspace(-1.0, 1.0, 3) * (k + 1) for k in range(len(args)))
    got = ms.hvp(fn, tuple(args), v)
    for i in range(len(args)):
        want = sum(jacobian_at(lambda *a, i=i: gradient(*a)[i], list(args), j) @ v[j]
                   for j in range(len(args)))
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-7)


def test_hvp_of_one_array_returns_an_array():
    out = ms.hvp(quartic, X, np.ones(3))
    assert isinstance(out, np.ndarray) and out.shape == (3,)


def branchy(x):
    if np.sum(x) > 0:
        y = np.sum(np.sin(x) * x)
    else:
        y = np.sum(x ** 3)
    return y


def branchy_gradient(x):
    if np.sum(x) > 0:
        return (np.cos(x) * x + np.sin(x),)
    return (3 * x ** 2,)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_data_dependent_branch_goes_reverse_over_reverse(sign):
    x = X * sign + 0.1 * sign
    want = jacobian_at(lambda x: branchy_gradient(x)[0], [x], 0)
    np.testing.assert_allclose(ms.hessian(branchy)(x), want, rtol=1e-6, atol=1e-7)
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(ms.hvp(branchy, x, v), want @ v, rtol=1e-6, atol=1e-7)
