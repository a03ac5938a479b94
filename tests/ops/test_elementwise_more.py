"""The elementwise math functions end to end: user-style functions compiled with
``ms.grad``/``value_and_grad``, checked against plain Python for the value and
against central finite differences in float64 (or closed forms at the edges
NumPy defines) for the gradient.

The per-primitive rules (first and second order, float32, type inference) are
checked by tests/ops/test_rules.py from each declaration's examples.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.errors import UnsupportedOperationError
from tests.finite_differences import central, central_at


def check_grad(fn, *args, rtol=1e-5, atol=1e-7):
    """value_and_grad of ``fn`` w.r.t. every argument: value equals ``fn``'s, each
    gradient matches finite differences."""
    positions = tuple(range(len(args)))
    value, grads = ms.value_and_grad(fn, grad_position=positions)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_at(fn, args, i), rtol=rtol, atol=atol,
                                   err_msg=f"gradient of argument {i}")
    return grads


# away from every jump of the rounding functions, fmod and remainder used below
X = np.array([-0.73, 0.21, 0.47, 0.83])
Y = np.array([[0.31], [-1.13], [0.94]])  # broadcasts against X: (3, 4)


def trig(x, y):
    return np.sum(np.tan(x) * np.arcsin(x) + np.arccos(x) * np.arctan(y) + np.arctan2(y, x))


def hyperbolic(x, y):
    return np.sum(np.sinh(x) * np.cosh(y) + np.arcsinh(y) - np.arctanh(x)
                  + np.arccosh(np.abs(y) + 1.5))


def logs_and_exps(x, y):
    p = np.abs(x) + 0.5
    return np.sum(np.log1p(p) * np.expm1(y) + np.log2(p) - np.log10(p * 3.0) + np.exp2(x)
                  + np.logaddexp(x, y) + np.logaddexp2(y, x) * 0.5)


def algebraic(x, y):
    return np.sum(np.hypot(x, y) + np.cbrt(x + 2.0) + np.reciprocal(y + 2.0) + np.sinc(x * y)
                  + np.square(np.fabs(x)) + np.deg2rad(y) * np.rad2deg(x)
                  + np.radians(x) - np.degrees(y))


def two_argument(x, y):
    return np.sum(np.fmod(x, y + 2.0) * np.remainder(y, 0.7) + np.float_power(np.abs(x) + 0.5, y)
                  + np.fmax(x, y) - np.fmin(y * 2.0, x) + np.copysign(x, y)
                  + np.nan_to_num(x * y))


def steps(x, y):
    # rounding contributes no gradient; the products around it do
    return np.sum(x * np.trunc(y * 3.0) + np.rint(x * 4.0) * y + np.round(y, 1) * x
                  + np.around(x * 2.0) + np.fix(y * 2.5) * x + np.floor(x) + np.sign(y) * x
                  + y * x.round(1))


@pytest.mark.parametrize("fn", [trig, hyperbolic, logs_and_exps, algebraic, two_argument,
                                steps])
def test_compositions_match_finite_differences(fn):
    check_grad(fn, X, Y)


def test_python_floats_and_arrays_mix():
    def f(x, s):
        return np.sum(np.arctan2(s, x) * np.hypot(x, s) + np.logaddexp(s, x) + np.tan(s) * x)
    check_grad(f, X, 0.35)


def test_float32_stays_float32_and_float_power_computes_in_float64():
    x32, y32 = X.astype(np.float32), Y.astype(np.float32)

    def f(x, y):
        return np.sum(np.arctan2(y, x) + np.log1p(np.abs(x)) * np.hypot(x, y) + np.sinc(x)
                      + np.fmax(x, y) + np.copysign(x, y) + np.nan_to_num(x / y))

    value, (gx, gy) = ms.value_and_grad(f, grad_position=(0, 1))(x32, y32)
    assert value.dtype == np.float32 and gx.dtype == np.float32 and gy.dtype == np.float32
    np.testing.assert_allclose(gx, central_at(f, [X, Y], 0), rtol=1e-3, atol=1e-4)

    def g(x):
        return np.sum(np.float_power(x, 2.5))

    value, gx = ms.value_and_grad(g)(np.abs(x32) + 0.5)
    assert value.dtype == np.float64  # as in NumPy: float_power computes in float64
    assert gx.dtype == np.float32     # the gradient has its input's type
    np.testing.assert_allclose(gx, 2.5 * (np.abs(X) + 0.5) ** 1.5, rtol=1e-6)


def math_on_floats(a, b):
    u = math.tanh(a) * 0.9
    return (math.atan(a) + math.atan2(a, b) + math.asin(u) * math.acos(u) + math.sinh(a)
            * math.cosh(b) + math.asinh(b) + math.acosh(abs(a) + 1.5) + math.atanh(u)
            + math.log1p(abs(b)) + math.expm1(a) + math.log2(abs(a) + 0.5)
            + math.log10(abs(b) + 0.5) + math.hypot(a, b) + math.hypot(a, b, 2.0)
            + math.degrees(a) * math.radians(b) + math.copysign(a, b) + math.fmod(a, 0.3)
            + math.cbrt(a + 3.0) + math.exp2(b) + math.tan(b) + math.fabs(b)
            + math.trunc(a * 4.0) * b)


@pytest.mark.parametrize("a, b", [(0.37, -1.1), (-0.8, 0.45)])
def test_math_functions_on_python_floats(a, b):
    value, (ga, gb) = ms.value_and_grad(math_on_floats, grad_position=(0, 1))(a, b)
    assert type(value) is float
    assert value == pytest.approx(math_on_floats(a, b), rel=1e-12)
    assert ga == pytest.approx(central_at(math_on_floats, [a, b], 0), rel=1e-5)
    assert gb == pytest.approx(central_at(math_on_floats, [a, b], 1), rel=1e-5)


def test_math_results_stay_python_floats_next_to_float32():
    def f(x, a):
        return np.sum(x * math.atan(a) + x * math.hypot(a, 1.0))

    value, (gx, ga) = ms.value_and_grad(f, grad_position=(0, 1))(X.astype(np.float32), 0.5)
    assert value.dtype == np.float32 and gx.dtype == np.float32


def ms_ops(x, y):
    return ops.sum(ops.atan2(y, x) + ops.asinh(x) * ops.acos(ops.tanh(y) * 0.9)
                   + ops.logaddexp(x, y) + ops.hypot(x, y) + ops.sinc(x) + ops.deg2rad(y)
                   + ops.float_power(ops.abs(x) + 0.5, 1.5) + ops.fmax(x, y)
                   + ops.copysign(x, y) + ops.nan_to_num(x) + ops.round(y, decimals=1) * x
                   + ops.trunc(y) * x + ops.remainder(x, 0.7) + ops.fmod(y, 0.6)
                   + ops.reciprocal(y + 2.0) + ops.log1p(ops.abs(y)) + ops.exp2(x))


def test_mindspore_ops_spellings():
    check_grad(ms_ops, X, Y)


def test_mindspore_ops_run_eagerly_on_tensors():
    t = ms.Tensor(X.astype(np.float32))
    out = ops.atan2(t, 2.0)
    assert isinstance(out, ms.Tensor) and out.asnumpy().dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), np.arctan2(X.astype(np.float32), 2.0))
    np.testing.assert_array_equal(ops.round(X, decimals=1), np.round(X, 1))


# -- edges --------------------------------------------------------------------------------

def test_hypot_at_the_origin_has_zero_gradient_like_abs():
    def f(x, y):
        return np.sum(np.hypot(x, y))
    gx, gy = ms.grad(f, grad_position=(0, 1))(np.array([0.0, 3.0]), np.array([0.0, -4.0]))
    np.testing.assert_array_equal(gx, [0.0, 0.6])
    np.testing.assert_array_equal(gy, [0.0, -0.8])


def test_arctan2_at_the_origin_has_zero_gradient_and_elsewhere_no_underflow():
    def f(y, x):
        return np.sum(np.arctan2(y, x))
    gy, gx = ms.grad(f, grad_position=(0, 1))(np.array([0.0, 1e-200]), np.array([0.0, 1e-200]))
    np.testing.assert_array_equal(gy[:1], [0.0])
    np.testing.assert_allclose([gy[1], gx[1]], [0.5e200, -0.5e200], rtol=1e-12)


def test_fmax_fmin_ties_split_and_nan_gives_the_other_operand_everything():
    x = np.array([1.0, np.nan, 2.0, 0.5])
    y = np.array([1.0, 3.0, np.nan, 0.25])

    def f(x, y):
        return np.sum(np.fmax(x, y) + 2.0 * np.fmin(x, y))
    gx, gy = ms.grad(f, grad_position=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.5, 0.0, 3.0, 1.0 + 0.0])
    np.testing.assert_array_equal(gy, [1.5, 3.0, 0.0, 2.0])


def test_maximum_and_fmax_agree_on_ties():
    x = np.array([1.0, -2.0])
    gm = ms.grad(lambda x, y: np.sum(np.maximum(x, y)), grad_position=(0, 1))(x, x.copy())
    gf = ms.grad(lambda x, y: np.sum(np.fmax(x, y)), grad_position=(0, 1))(x, x.copy())
    for a, b in zip(gm, gf):
        np.testing.assert_array_equal(a, b)


def test_nan_to_num_passes_gradient_where_kept_only():
    def f(x):
        return np.sum(np.nan_to_num(x * 2.0, posinf=7.0, neginf=-5.0) * np.arange(1.0, 6.0))
    x = np.array([0.5, np.inf, np.nan, -np.inf, -2.0])
    value, g = ms.value_and_grad(f)(x)
    assert value == f(x)
    np.testing.assert_array_equal(g, [2.0, 0.0, 0.0, 0.0, 10.0])


def test_nan_to_num_copy_false_is_refused():
    def f(x):
        return np.sum(np.nan_to_num(x, copy=False))
    with pytest.raises(UnsupportedOperationError, match="copy=False"):
        ms.grad(f)(X.copy())


def test_sinc_at_zero_first_and_second_order_exact():
    def f(x):
        return np.sum(np.sinc(x))
    x = np.array([0.0, 0.5])
    np.testing.assert_allclose(ms.grad(f)(x), [0.0, central(f, x)[1]], atol=1e-9)

    def df(x):
        return np.sum(ms.grad(f)(x))

    def d2f(x):
        return np.sum(ms.grad(df)(x))
    second = ms.grad(df)(x)
    assert second[0] == pytest.approx(-math.pi ** 2 / 3, rel=1e-12)
    assert second[1] == pytest.approx(central(df, x)[1], rel=1e-6)
    assert ms.grad(d2f)(x)[0] == 0.0


def test_copysign_at_zero_and_float_power_at_zero_base():
    def f(x, y):
        return np.sum(np.copysign(x, y))
    gx, gy = ms.grad(f, grad_position=(0, 1))(np.array([0.0, 2.0, -3.0]),
                                              np.array([1.0, -1.0, -0.0]))
    np.testing.assert_array_equal(gx, [0.0, -1.0, 1.0])
    np.testing.assert_array_equal(gy, [0.0, 0.0, 0.0])


def test_arccosh_and_arctanh_at_the_domain_edge_are_infinite_as_the_slope():
    with np.errstate(divide="ignore"):
        g = ms.grad(lambda x: np.sum(np.arccosh(x)))(np.array([1.0, 2.0]))
        h = ms.grad(lambda x: np.sum(np.arctanh(x)))(np.array([1.0, 0.5]))
    assert g[0] == np.inf and g[1] == pytest.approx(1 / math.sqrt(3.0))
    assert h[0] == np.inf and h[1] == pytest.approx(1 / 0.75)


def test_rounding_has_no_gradient():
    def f(x):
        return np.sum(np.trunc(x) + np.rint(x) + np.round(x, 2) + np.fix(x) + np.around(x))
    np.testing.assert_array_equal(ms.grad(f)(X), np.zeros_like(X))


def test_generated_source_is_one_numpy_call_per_function():
    def f(x, y):
        return np.sum(np.arctan2(y, x) * np.log1p(x))
    source = ms.adjoint_source(f, np.ones(3), np.ones(3), grad_position=(0, 1))
    assert "np.arctan2(y, x)" in source and "np.log1p(x)" in source
    assert "np.hypot(y, x)" in source  # the adjoint's radius
