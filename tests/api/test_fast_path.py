"""The fast path of a cache hit: Python ints and bools are guarded by value."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.api.fastpath import MISS


def rosenbrock(x, n, squared):
    s = 0.0
    for i in range(n - 1):
        term = 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
        s = s + (term if squared else np.sqrt(term))
    return s


def fd(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for k in range(x.size):
        hi, lo = x.copy(), x.copy()
        hi[k] += eps
        lo[k] -= eps
        g[k] = (f(hi) - f(lo)) / (2 * eps)
    return g


X = np.array([0.5, 1.2, -0.3, 0.8])


@pytest.mark.parametrize("n, squared", [(4, True), (3, True), (4, False), (2, True)])
def test_ints_and_bools_by_value(n, squared):
    g = ms.grad(rosenbrock)
    for _ in range(3):  # compile, then two hits through the guard
        np.testing.assert_allclose(g(X, n, squared), fd(lambda v: rosenbrock(v, n, squared), X),
                                   rtol=1e-6, atol=1e-6)
    assert g._hot((X, n, squared)) is not MISS      # served by the generated guard


def test_another_value_misses_the_guard_and_compiles_its_own():
    g = ms.grad(rosenbrock)
    first = g(X, 4, True)
    assert g._hot((X, 3, True)) is MISS
    assert g._hot((X, 4, 1)) is MISS    # 1 == True, but an int is not a bool: the general path
    np.testing.assert_allclose(g(X, 3, True), fd(lambda v: rosenbrock(v, 3, True), X),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g(X, 4, True), first)


def test_a_differentiated_int_position_stays_an_error():
    from ad_compiler.errors import GradRuntimeError
    g = ms.grad(rosenbrock, grad_position=(0, 1))
    for _ in range(2):   # never served by a guard
        with pytest.raises(GradRuntimeError, match="constant with no gradient"):
            g(X, 4, True)
