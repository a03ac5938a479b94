"""``ad_compiler.primitive``: a user's own function with its own derivative rules.

Expected gradients are central finite differences (float64) of the plain function.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.api.extension import forget
from ad_compiler.errors import UnsupportedOperationError
from tests.finite_differences import central


def softplus(x):
    return np.logaddexp(0.0, x)


def row_norms(x, *, power=2):
    return np.sum(np.abs(x) ** power, axis=-1)


@pytest.fixture
def registered():
    """softplus and row_norms registered for one test, then forgotten."""
    ms.primitive(softplus, vjp=lambda b, ct, out, x: (b.mul(ct, b.sigmoid(x)),),
                 jvp=lambda b, t, out, x: b.mul(t[0], b.sigmoid(x)))

    def norms_vjp(b, ct, out, x, *, power):
        # d/dx sum |x|^p = p |x|^(p-1) sign(x) = p x |x|^(p-2); here p = 2 only
        assert power == 2
        return (b.mul(b.mul(b.expand_dims(ct, axis=-1), x), b.const(2.0)),)
    ms.primitive(row_norms, vjp=norms_vjp)
    yield
    forget(softplus)
    forget(row_norms)


def loss(x):
    return np.sum(softplus(x * x) * np.cos(x))


X = np.array([0.3, -1.2, 0.8, 2.0])


def test_gradient_matches_finite_differences(registered):
    ms.check_grad(loss, (X,), modes=("rev",), rtol=1e-6, atol=1e-8)


def test_second_order_through_the_rule(registered):
    def first(x):
        return np.sum(ms.grad(loss)(x) * np.array([1.0, 2.0, -1.0, 0.5]))
    np.testing.assert_allclose(ms.grad(first)(X), central(first_plain, X), rtol=1e-5, atol=1e-6)


def first_plain(x):
    """The first derivative in closed form: d/dx softplus(x^2) cos(x)."""
    sigmoid = 1 / (1 + np.exp(-x * x))
    grad = sigmoid * 2 * x * np.cos(x) - softplus(x * x) * np.sin(x)
    return np.sum(grad * np.array([1.0, 2.0, -1.0, 0.5]))


def test_forward_mode_uses_the_jvp(registered):
    t = np.array([1.0, 0.0, -2.0, 0.5])
    _, tangent = ms.jvp(loss, (X,), (t,))
    assert np.isfinite(tangent)
    ms.check_grad(loss, (X,), modes=("fwd",), rtol=1e-6, atol=1e-8)


def test_the_generated_code_calls_the_function_by_name(registered):
    source = ms.adjoint_source(loss, X)
    assert "softplus(" in source


def test_float32_stays_float32(registered):
    g = ms.grad(loss)(X.astype(np.float32))
    assert g.dtype == np.float32
    ms.check_grad(loss, (X,), modes=("rev",))  # the float64 gradient, then float32's near it
    np.testing.assert_allclose(g, ms.grad(loss)(X), rtol=1e-4, atol=1e-5)


def test_static_keywords_and_a_sampled_type_rule(registered):
    def f(x):
        return np.sum(row_norms(x, power=2) * np.array([1.0, 3.0]))
    x = np.arange(6.0).reshape(2, 3) / 5 - 0.4
    value, grad = ms.value_and_grad(f)(x)
    assert value == pytest.approx(f(x))
    ms.check_grad(f, (x,), modes=("rev",), rtol=1e-6, atol=1e-8)  # (no jvp rule given)


def test_forward_mode_without_a_jvp_is_a_located_error(registered):
    def f(x):
        return row_norms(x)
    with pytest.raises(UnsupportedOperationError) as info:
        ms.jacfwd(f)(np.ones((2, 3)))
    message = str(info.value)
    assert "jvp rule for 'row_norms'" in message and "return row_norms(x)" in message


def test_registration_errors(registered):
    with pytest.raises(ValueError, match="already has a rule"):
        ms.primitive(softplus, vjp=lambda b, ct, out, x: (ct,), name="softplus2")
    with pytest.raises(ValueError, match="is taken"):
        ms.primitive(lambda x: x, vjp=lambda b, ct, out, x: (ct,), name="np")
    with pytest.raises(ValueError, match="not usable as a name"):
        ms.primitive(lambda x: x, vjp=lambda b, ct, out, x: (ct,))   # '<lambda>'
    with pytest.raises(TypeError, match="give vjp="):
        ms.primitive(np.i0)


def test_a_non_static_keyword_is_refused(registered):
    def f(x):
        return np.sum(row_norms(x, power=np.float64(2.0) * x[0, 0]))
    with pytest.raises(Exception, match="static"):
        ms.grad(f)(np.ones((2, 3)))


def test_forget_makes_the_function_ordinary_python_again():
    def cube(x):
        return x ** 3
    ms.primitive(cube, vjp=lambda b, ct, out, x: (b.mul(ct, b.const(0.0)),))   # a wrong rule
    assert float(ms.grad(lambda x: np.sum(cube(x)))(np.ones(2))[0]) == 0.0   # the rule is used
    forget(cube)
    np.testing.assert_allclose(ms.grad(lambda x: np.sum(cube(x)))(np.ones(2) * 2.0), [12.0, 12.0])


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def _doubled(x):
    logistic = 2.0 * x          # a local named like the registered function
    return logistic


def test_a_local_named_like_the_function_does_not_shadow_it():
    # the rule reads ``out``, so the adjoint calls the function
    ms.primitive(logistic, vjp=lambda b, ct, out, x: (b.mul(ct, b.mul(out, b.sub(b.const(1.0), out))),))
    try:
        def f(x):
            return np.sum(logistic(_doubled(x)))
        source = ms.adjoint_source(f, X)
        code = [line.strip() for line in source.splitlines() if not line.strip().startswith("#")]
        assert any("logistic(" in line for line in code)
        assert not any(line.startswith("logistic =") for line in code)
        ms.check_grad(f, (X,), modes=("rev",), rtol=1e-6, atol=1e-8)
    finally:
        forget(logistic)


def test_only_code_that_calls_it_holds_the_function(registered):
    from ad_compiler.api.transforms import compiled_entry
    without = compiled_entry(lambda x: np.sum(np.sin(x)), X).compiled.fn.__globals__
    assert "softplus" not in without
