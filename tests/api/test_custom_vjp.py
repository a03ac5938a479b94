"""ms.custom_vjp: a plain function's own reverse-mode rule, inside compiled code.

Expected gradients are closed forms or central differences (float64)."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import GradRuntimeError, UnsupportedOperationError
from tests.finite_differences import central


def clip_gradient(x, lo, hi):
    return x


clip_gradient = ms.custom_vjp(clip_gradient)


def _clip_fwd(x, lo, hi):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return np.clip(g, lo, hi), None, None


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def clipped_loss(x):
    return np.sum(clip_gradient(x * x, -1.0, 1.0) * 3.0)


def test_the_rule_replaces_the_derivative():
    x = np.array([0.2, -2.0, 1.5])
    # d/dx sum(clip(3) * x^2 ...): the cotangent 3 is clipped to 1 before x*x's adjoint
    np.testing.assert_allclose(ms.grad(clipped_loss)(x), 2 * x)
    assert ms.value_and_grad(clipped_loss)(x)[0] == pytest.approx(clipped_loss(x))


# -- a stable rule with residuals ---------------------------------------------------------

def log1pexp(x):
    return np.log(1.0 + np.exp(x))


log1pexp = ms.custom_vjp(log1pexp)


def _l_fwd(x):
    e = np.exp(-np.abs(x))
    return np.log(1.0 + np.exp(x)), (x, e)


def _l_bwd(res, g):
    x, e = res
    sigmoid = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return (g * sigmoid,)


log1pexp.defvjp(_l_fwd, _l_bwd)


def softplus_loss(x):
    return np.sum(log1pexp(x) * np.array([1.0, 2.0, -1.0]))


def test_a_rule_with_residuals_matches_finite_differences():
    x = np.array([0.3, -1.7, 2.2])
    ms.check_grad(softplus_loss, (x,), modes=("rev",), rtol=1e-6, atol=1e-10)


def test_float32_stays_float32():
    x = np.array([0.3, -1.7, 2.2], dtype=np.float32)
    g = ms.grad(softplus_loss)(x)
    assert g.dtype == np.float32


# -- second order differentiates bwd ----------------------------------------------------

def cube(x):
    return x ** 3


cube = ms.custom_vjp(cube)


def _cube_fwd(x):
    return x ** 3, x


def _cube_bwd(x, g):
    return (3.0 * x * x * g,)


cube.defvjp(_cube_fwd, _cube_bwd)


def cube_sum(x):
    return np.sum(cube(x))


def test_second_order_goes_through_bwd():
    first = ms.grad(cube_sum)

    def weighted(x):
        return np.sum(first(x) * np.array([1.0, -2.0]))
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(ms.grad(weighted)(x), 6 * x * np.array([1.0, -2.0]))
    np.testing.assert_allclose(ms.hessian(cube_sum)(x), np.diag(6 * x))


# -- inside helpers and Cells, several arguments ---------------------------------------------

def scale_add(a, b):
    return a * 2.0 + b


scale_add = ms.custom_vjp(scale_add)


def _sa_fwd(a, b):
    return a * 2.0 + b, None


def _sa_bwd(res, g):
    return g * 2.0, None            # no gradient for b, on purpose


scale_add.defvjp(_sa_fwd, _sa_bwd)


def helper(a, b):
    return np.sum(scale_add(a, b) ** 2)


class Net(ms.nn.Cell):
    def construct(self, a, b):
        return helper(a, b)


def test_several_arguments_a_none_cotangent_helpers_and_cells():
    a, b = np.array([1.0, -0.5]), np.array([0.25, 2.0])
    ga, gb = ms.grad(Net(), grad_position=(0, 1))(a, b)
    np.testing.assert_allclose(ga, 2 * (2 * a + b) * 2)
    np.testing.assert_allclose(gb, np.zeros(2))


# -- errors -------------------------------------------------------------------------------------

def bad(x):
    return x * 1.0


bad = ms.custom_vjp(bad)


def _bad_fwd(x):
    return x * 1.0, None


def _bad_bwd(res, g):
    return g, g                     # two cotangents for one argument


bad.defvjp(_bad_fwd, _bad_bwd)


def test_a_wrong_number_of_cotangents_is_a_runtime_error():
    with pytest.raises(GradRuntimeError, match="2 where a tuple of 1"):
        ms.grad(lambda_free_bad)(np.ones(2))


def lambda_free_bad(x):
    return np.sum(bad(x))


def test_a_second_rule_and_a_missing_rule_are_errors():
    with pytest.raises(GradRuntimeError, match="already has a VJP rule"):
        bad.defvjp(_bad_fwd, _bad_bwd)

    def norule(x):
        return x
    norule = ms.custom_vjp(norule)

    def f(x):
        return np.sum(norule(x))
    with pytest.raises(GradRuntimeError, match="has no VJP rule yet"):
        ms.grad(f)(np.ones(2))


def test_forward_mode_is_a_located_error():
    with pytest.raises(UnsupportedOperationError) as info:
        ms.jvp(softplus_loss, (np.ones(3),), (np.ones(3),))
    assert "test_custom_vjp.py" in str(info.value)


def test_outside_compiled_code_it_is_the_plain_function():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(log1pexp(x), np.log(1.0 + np.exp(x)))
    assert log1pexp.__name__ == "log1pexp"


def test_a_custom_vjp_result_next_to_another_output():
    def f(x, y):
        return np.sum(y), log1pexp(x)
    x, y = np.array([-1.3, 1.1]), np.array([0.45, 0.3])
    (value, grads) = ms.value_and_grad(f, grad_position=(0, 1))(x, y)
    np.testing.assert_allclose(grads[0], 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(grads[1], np.ones(2))


# -- custom_jvp: one forward rule, transposed for reverse mode ---------------------------

def softplus_j(x):
    return np.log(1.0 + np.exp(x))


softplus_j = ms.custom_jvp(softplus_j)


def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = np.log(1.0 + np.exp(x))
    return out, t * (1.0 - np.exp(-out))       # sigmoid(x) = 1 - exp(-softplus(x))


softplus_j.defjvp(_softplus_jvp)

W = np.array([1.0, 2.0, -0.5])


def jloss(x):
    return np.sum(softplus_j(x * x) * W)


def jloss_grad(x):
    return W * 2 * x / (1 + np.exp(-x * x))


def test_custom_jvp_in_reverse_forward_and_second_order():
    x = np.array([0.4, -1.1, 0.9])
    np.testing.assert_allclose(ms.grad(jloss)(x), jloss_grad(x), rtol=1e-12)
    t = np.array([1.0, 0.5, -2.0])
    np.testing.assert_allclose(ms.jvp(jloss, x, t)[1], jloss_grad(x) @ t, rtol=1e-12)
    np.testing.assert_allclose(ms.hessian(jloss)(x), np.stack(
        [central(lambda v: jloss_grad(v)[i], x) for i in range(3)]), rtol=1e-6, atol=1e-8)
    ms.check_grad(jloss, (x,), order=2)


def test_custom_jvp_rule_is_used_not_the_function():
    def same(x):
        return x * 1.0
    same = ms.custom_jvp(same)
    same.defjvp(lambda primals, tangents: (primals[0] * 1.0, tangents[0] * 3.0))

    def f(x):
        return np.sum(same(x))
    np.testing.assert_allclose(ms.grad(f)(np.ones(2)), [3.0, 3.0])
    np.testing.assert_allclose(ms.jvp(f, np.ones(2), np.ones(2))[1], 6.0)
