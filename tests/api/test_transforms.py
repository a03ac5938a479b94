"""vjp, jvp, jacfwd and jacrev against a finite-difference Jacobian in float64."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Tensor
from tests.finite_differences import jacobian_at


def f(x, y):
    return np.sin(x) * np.sum(y) + x * x * np.sum(y * y)      # R^3 x R^2 -> R^3


@pytest.fixture
def args():
    rng = np.random.default_rng(3)
    return rng.standard_normal(3), rng.standard_normal(2)


@pytest.mark.parametrize("jac", [ms.jacrev, ms.jacfwd])
def test_jacobians_match_finite_differences(jac, args):
    jx, jy = jac(f, grad_position=(0, 1))(*args)
    np.testing.assert_allclose(jx, jacobian_at(f, args, 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jy, jacobian_at(f, args, 1), rtol=1e-6, atol=1e-8)
    single = jac(f)(*args)
    np.testing.assert_allclose(single, jx)


def test_vjp_is_the_transposed_jacobian_times_v(args):
    v = np.array([0.5, -1.0, 2.0])
    out, vjp_fn = ms.vjp(f, *args)
    np.testing.assert_allclose(out, f(*args))
    gx, gy = vjp_fn(v)
    np.testing.assert_allclose(gx, v @ jacobian_at(f, args, 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, v @ jacobian_at(f, args, 1), rtol=1e-6, atol=1e-8)


def test_jvp_is_the_jacobian_times_v(args):
    vx, vy = np.array([1.0, 0.0, -2.0]), np.array([0.3, 0.7])
    out, tangent = ms.jvp(f, args, (vx, vy))
    np.testing.assert_allclose(out, f(*args))
    expected = jacobian_at(f, args, 0) @ vx + jacobian_at(f, args, 1) @ vy
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)


def test_has_aux_forms(args):
    def g(x, y):
        return np.sum(x * np.sum(y)), x, y
    out, vjp_fn, aux = ms.vjp(g, *args, has_aux=True)
    assert isinstance(aux, tuple) and len(aux) == 2
    np.testing.assert_allclose(vjp_fn(np.float64(1.0))[0], np.full(3, np.sum(args[1])))
    out, tangent, aux = ms.jvp(lambda x: (x * 2.0, x), (args[0],), (np.ones(3),), has_aux=True)
    np.testing.assert_allclose(tangent, np.full(3, 2.0))
    np.testing.assert_allclose(aux, args[0])          # a single aux comes back bare
    jac, aux = ms.jacrev(lambda x: (x * 3.0, x + 1.0), has_aux=True)(args[0])
    np.testing.assert_allclose(jac, 3.0 * np.eye(3))
    np.testing.assert_allclose(aux, args[0] + 1.0)


def test_tensors_in_give_tensors_out():
    x = Tensor(np.array([1.0, 2.0], np.float32))
    jac = ms.jacrev(lambda x: x * x)(x)
    assert isinstance(jac, Tensor) and jac.asnumpy().dtype == np.float32
    np.testing.assert_allclose(jac.asnumpy(), np.diag([2.0, 4.0]))
    out, tangent = ms.jvp(lambda x: x * x, x, Tensor(np.array([1.0, 1.0], np.float32)))
    assert isinstance(tangent, Tensor)
    np.testing.assert_allclose(tangent.asnumpy(), [2.0, 4.0])


def test_names_are_where_mindspore_has_them():
    from ad_compiler import ops
    assert ops.vjp is ms.vjp and ops.jvp is ms.jvp
    assert ops.jacfwd is ms.jacfwd and ops.jacrev is ms.jacrev
