"""The shared central differences against closed forms: the reference every gradient test
trusts must itself be right (a real and a complex input, a Python float, a Jacobian and a
directional derivative)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.finite_differences import central, central_at, directional, jacobian, jacobian_at

X = np.array([[0.3, -1.2], [0.7, 2.0]])


def test_central_of_an_array_and_of_a_python_float():
    np.testing.assert_allclose(central(lambda x: np.sum(np.sin(x) * x), X),
                               np.cos(X) * X + np.sin(X), rtol=1e-8)
    assert central(lambda x: x ** 3, 0.5) == pytest.approx(0.75, rel=1e-8)
    assert central(lambda x: np.sum(x * x), X.astype(np.float32)).dtype == np.float64


def test_central_of_a_complex_input_is_dl_dx_minus_i_dl_dy():
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    # L = |z|^2 = x^2 + y^2: dL/dx - i dL/dy = 2x - 2iy = 2 conj(z)
    np.testing.assert_allclose(central(lambda v: np.sum(np.abs(v) ** 2), z), 2 * np.conj(z),
                               rtol=1e-8)


def test_central_at_fixes_the_other_arguments():
    y = np.array([[2.0, -1.0], [0.5, 3.0]])
    np.testing.assert_allclose(central_at(lambda a, b: np.sum(a * b * b), (X, y), 1),
                               2 * X * y, rtol=1e-8)


def test_jacobians_and_directional_derivatives():
    a = np.array([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]])
    v = np.array([0.2, -0.4, 1.5])
    np.testing.assert_allclose(jacobian(lambda x: a @ x, v), a, rtol=1e-8)
    # d(m @ x)_i / d m_jk = delta_ij x_k
    np.testing.assert_allclose(jacobian_at(lambda m, x: m @ x, (a, v), 0),
                               np.einsum("ij,k->ijk", np.eye(2), v), atol=1e-8)
    t = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(directional(np.sin, [v], [t]), np.cos(v) * t, rtol=1e-8)
    np.testing.assert_allclose(directional(lambda x, y: x * y, [v, 2.0], [t, None]), 2.0 * t,
                               rtol=1e-8)
