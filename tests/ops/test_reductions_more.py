"""End to end: products, scans, order statistics, averages and NaN-ignoring reductions.

User-style functions compiled with ``ms.grad``/``ms.value_and_grad``; gradients are
checked against central finite differences in float64 (exact for the multilinear
``prod``/``cumprod``, so also at zeros) and against closed forms at ties and NaN.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Tensor, ops
from ad_compiler.errors import UnsupportedOperationError
from tests.finite_differences import central, central_at

RNG = np.random.default_rng(20261125)


def _check(adcheck, f, *args):
    """Value equals plain NumPy; every gradient matches finite differences."""
    positions = tuple(range(len(args)))
    value, grads = ms.value_and_grad(f, grad_position=positions)(*args)
    expected = f(*args)
    assert np.asarray(value).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(value, expected)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in enumerate(grads):
        adcheck.assert_close(g, central_at(f, args, i), f"{f.__name__}: gradient {i}")
    return grads


# -- prod -------------------------------------------------------------------------------------

def prod_all(x):
    return np.prod(x)


def prod_rows(x):
    return np.sum(np.prod(x, axis=1) ** 2)


def prod_tuple(x):
    return np.sum(np.sin(np.prod(x, axis=(0, 2), keepdims=True)) * x)


def prod_negative(x):
    return np.sum(x.prod(axis=-1, keepdims=True) * x)


@pytest.mark.parametrize("f, shape", [(prod_all, (3, 4)), (prod_rows, (2, 3)),
                                      (prod_tuple, (2, 3, 2)), (prod_negative, (3, 2))])
def test_prod_matches_finite_differences(adcheck, f, shape):
    _check(adcheck, f, RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1, 1], shape))


def test_prod_with_one_zero_gives_the_product_of_the_others_there(adcheck):
    x = np.array([[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]])
    g = _check(adcheck, prod_all, x)[0]
    expected = np.zeros_like(x)
    expected[0, 1] = 2.0 * 3.0 * 1.5 * -2.0 * 0.5
    np.testing.assert_array_equal(g, expected)


def test_prod_with_two_zeros_gives_zero(adcheck):
    x = np.array([[2.0, 0.0, 3.0], [0.0, -2.0, 0.5]])
    g = _check(adcheck, prod_all, x)[0]
    np.testing.assert_array_equal(g, np.zeros_like(x))
    g_rows = ms.grad(prod_rows)(x)  # one zero per row: each row has its own product of others
    np.testing.assert_array_equal(g_rows, [[0, 0, 0], [0, 0, 0]])
    x[1, 0] = 1.0
    adcheck.assert_close(ms.grad(prod_rows)(x), central(prod_rows, x), "one zero")


def prod_hessian_product(x, w):
    return np.sum(ms.grad(prod_all)(x) * w)


def test_prod_second_order_is_exact_with_a_zero():
    x = np.array([1.5, 0.0, -2.0, 0.5])
    w = np.array([0.3, -1.0, 0.7, 2.0])
    hessian = np.array([[0.0 if i == j else np.prod(np.delete(x, [i, j])) for j in range(4)]
                        for i in range(4)])
    np.testing.assert_allclose(ms.grad(prod_hessian_product)(x, w), hessian @ w)


# -- cumsum, cumprod ----------------------------------------------------------------------------

def cumsum_flat(x):
    return np.sum(np.cumsum(x) ** 2)


def cumsum_axis(x):
    return np.sum(np.sin(x.cumsum(axis=-2)))


def cumprod_axis(x):
    return np.sum(np.cumprod(x, axis=1) * np.cos(x))


def cumprod_method(x):
    return np.sum(x.cumprod() ** 2)


@pytest.mark.parametrize("f, shape", [(cumsum_flat, (2, 3)), (cumsum_axis, (3, 2, 2)),
                                      (cumprod_axis, (2, 4)), (cumprod_method, (5,))])
def test_scans_match_finite_differences(adcheck, f, shape):
    _check(adcheck, f, RNG.uniform(-1.5, 1.5, shape))


@pytest.mark.parametrize("x", [np.array([[1.5, 0.0, 2.0, -1.0], [0.5, 2.0, 0.0, 0.0]]),
                               np.array([[0.0, 0.0, 2.0, -1.0], [0.0, 3.0, 1.0, 0.5]])])
def test_cumprod_with_zeros_matches_finite_differences(adcheck, x):
    g = _check(adcheck, cumprod_axis, x)[0]
    assert np.all(np.isfinite(g))


def test_cumprod_zero_gets_the_products_around_it():
    """d sum(cumprod(x)) / d x[1] = x0 + x0 x2 + x0 x2 x3 at x[1] = 0."""
    x = np.array([2.0, 0.0, 3.0, -1.0])
    g = ms.grad(lambda v: np.sum(np.cumprod(v)))(x)
    np.testing.assert_array_equal(g, [1.0, 2.0 + 6.0 - 6.0, 0.0, 0.0])


# -- order statistics ----------------------------------------------------------------------------

def median_all(x):
    return np.median(x) * 2.0


def median_axis(x):
    return np.sum(np.median(x, axis=0, keepdims=True) * x)


def quantile_list(x):
    return np.sum(np.quantile(x, [0.2, 0.75], axis=-1) ** 2)


def quantile_tuple(x):
    return np.sum(np.quantile(x, 0.4, axis=(0, 2)))


def percentile_keep(x):
    return np.sum(np.percentile(x, 30, axis=1, keepdims=True) * x)


@pytest.mark.parametrize("f, shape", [(median_all, (5,)), (median_all, (2, 3)),
                                      (median_axis, (4, 3)), (quantile_list, (2, 5)),
                                      (quantile_tuple, (3, 2, 2)), (percentile_keep, (2, 4))])
def test_order_statistics_match_finite_differences(adcheck, f, shape):
    _check(adcheck, f, RNG.permutation(np.linspace(-2.0, 2.0, int(np.prod(shape)))).reshape(shape))


def test_median_of_ties_splits_the_weight(adcheck):
    x = np.array([1.0, 3.0, 3.0, -2.0])  # two tied upper middles: each gets half of 1/2
    g = _check(adcheck, lambda v: np.median(v), x)[0]
    np.testing.assert_array_equal(g, [0.5, 0.25, 0.25, 0.0])
    three = ms.grad(lambda v: np.median(v))(np.array([3.0, 3.0, 3.0, 1.0, 5.0]))
    np.testing.assert_array_equal(three, [1 / 3, 1 / 3, 1 / 3, 0.0, 0.0])
    assert three.sum() == 1.0  # median(x + c) = median(x) + c


def test_quantile_refuses_other_methods():
    with pytest.raises(UnsupportedOperationError, match="method='nearest'.*only method='linear'"):
        ms.grad(lambda v: np.quantile(v, 0.5, method="nearest"))(np.ones(3))


def test_quantile_out_of_range_is_a_value_error():
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        ms.grad(lambda v: np.percentile(v, 150.0))(np.ones(3))


# -- ptp, average ---------------------------------------------------------------------------------

def ptp_axis(x):
    return np.sum(np.ptp(x, axis=0) ** 2)


def average_axis(x, w):
    return np.sum(np.average(x, axis=1, weights=w) ** 2)


def average_full(x, w):
    return np.average(np.sin(x), weights=w)


def average_tuple(x, w):
    return np.sum(np.average(x, axis=(2, 0), weights=w, keepdims=True) * x)


def test_ptp_and_average_match_finite_differences(adcheck):
    _check(adcheck, ptp_axis, RNG.permutation(np.linspace(-1, 1, 6)).reshape(2, 3))
    _check(adcheck, average_axis, RNG.normal(size=(2, 3)), RNG.uniform(0.5, 2.0, 3))
    _check(adcheck, average_full, RNG.normal(size=(2, 3)), RNG.uniform(0.5, 2.0, (2, 3)))
    _check(adcheck, average_tuple, RNG.normal(size=(2, 3, 4)), RNG.uniform(0.5, 2.0, (4, 2)))


def test_average_weights_shape_errors_are_numpys():
    with pytest.raises(TypeError, match="Axis must be specified"):
        ms.grad(average_full)(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        ms.grad(average_axis)(np.ones((2, 3)), np.ones(2))


# -- NaN-ignoring reductions ---------------------------------------------------------------------

def nan_reductions(x):
    return (np.nansum(x) * 3.0 + np.sum(np.nanmean(x, axis=1) ** 2)
            + np.nanmax(x) - np.sum(np.nanmin(x, axis=0)))


def test_nan_reductions_give_no_gradient_to_nan(adcheck):
    """(``np.nansum(x * x)`` has NaN there: the chain rule multiplies 0 by the NaN of x.)"""
    x = np.array([[0.5, np.nan, -1.0], [2.0, 0.3, np.nan]])
    value, g = ms.value_and_grad(nan_reductions)(x)
    assert value == nan_reductions(x)
    present = ~np.isnan(x)
    assert np.all(g[~present] == 0.0)
    filled = np.where(present, x, 0.0)

    def on_present(v):
        return nan_reductions(np.where(present, v, np.nan))
    adcheck.assert_close(g[present], central(on_present, filled)[present], "nan")


def test_nanmax_of_a_nan_slice_is_nan():
    x = np.array([[np.nan, np.nan], [1.0, 2.0]])
    value, g = ms.value_and_grad(lambda v: np.sum(np.nanmax(v, axis=1) * 0.0 + 1.0))(x)
    assert np.isnan(value)
    np.testing.assert_array_equal(g, np.zeros_like(x))


# -- MindSpore spellings -------------------------------------------------------------------

def ms_style(x):
    a = ops.prod(x, 1).sum() + ops.cumsum(x, 0).sum() + ops.cumprod(x, 1).sum()
    b = ops.amax(x, 1).sum() + ops.amin(x) + ops.std(x, 1, 1).sum() + ops.var(x, (0, 1), True)
    c = ops.nansum(x) + ops.nanmean(x, 0).sum() + ops.quantile(x, 0.3, 1).sum()
    d = ops.ReduceProd()(x, 1).sum() + ops.ReduceMax(True)(x).sum() + ops.ReduceMin()(x, 0).sum()
    e = (ops.CumSum()(x, 1) * x).sum() + (ops.CumSum(True, True)(x, 0) * x).sum()
    return a + b + c + d + e


def test_ops_spellings_match_finite_differences(adcheck):
    x = RNG.permutation(np.linspace(0.3, 1.6, 12)).reshape(3, 4)
    np.testing.assert_allclose(ms.grad(ms_style)(x), central(ms_style, x),
                               rtol=1e-5, atol=1e-6)


def logsumexp_rows(x):
    return np.sum(ops.logsumexp(x, 1) * np.array([1.0, -2.0]))


def test_logsumexp_is_stable_and_its_gradient_is_the_softmax():
    x = np.array([[1000.0, 1001.0, 999.0], [-3.0, 0.5, 2.0]])
    value, g = ms.value_and_grad(logsumexp_rows)(x)
    m = x.max(axis=1, keepdims=True)
    soft = np.exp(x - m) / np.exp(x - m).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(value, (np.log(np.exp(x - m).sum(1)) + m[:, 0]) @ [1.0, -2.0])
    np.testing.assert_allclose(g, soft * np.array([[1.0], [-2.0]]))
    eager = ops.logsumexp(Tensor(x[1:]), (), keep_dims=True)
    assert isinstance(eager, Tensor) and eager.shape == (1, 1)


def test_cumsum_class_form_exclusive_and_reverse():
    x = np.array([[1.0, 2.0, 4.0]])
    np.testing.assert_array_equal(ops.CumSum(exclusive=True)(x, 1), [[0.0, 1.0, 3.0]])
    np.testing.assert_array_equal(ops.CumSum(reverse=True)(x, -1), [[7.0, 6.0, 4.0]])
    np.testing.assert_array_equal(ops.CumSum(True, True)(x, 1), [[6.0, 4.0, 0.0]])


# -- float32, readable code ----------------------------------------------------------------------

def everything(x, w):
    return (np.prod(x, axis=0).sum() + np.cumsum(x, axis=1).sum() + np.cumprod(x).sum()
            + np.median(x) + np.quantile(x, [0.1, 0.6]).sum() + np.percentile(x, 20, axis=0).sum()
            + np.ptp(x) + np.average(x, axis=1, weights=w).sum() + np.nanmean(x)
            + np.nansum(x) + np.nanmax(x, axis=1).sum())


def everything_float32(x):
    return (np.prod(x) + np.cumprod(x, axis=0).sum() + np.median(x, axis=1).sum()
            + np.quantile(x, 0.3) + np.percentile(x, 20, axis=0).sum() + np.nanmean(x))


def test_float32_stays_float32(adcheck):
    x = RNG.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    w = RNG.uniform(0.5, 1.5, 4).astype(np.float32)
    value, (gx, gw) = ms.value_and_grad(everything, grad_position=(0, 1))(x, w)
    plain = everything(x, w)  # float64: NumPy's quantiles of a list of q are float64
    assert np.asarray(value).dtype == np.asarray(plain).dtype and value == plain
    parts = ms.value_and_grad(everything_float32)(x)
    assert np.asarray(parts[0]).dtype == np.float32 and parts[0] == everything_float32(x)
    assert parts[1].dtype == np.float32
    assert gx.dtype == np.float32 and gw.dtype == np.float32
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for i, g in enumerate((gx, gw)):
        np.testing.assert_allclose(g, central_at(everything, [x64, w64], i), rtol=2e-3,
                                   atol=2e-3)


def test_generated_code_is_one_numpy_call_per_op():
    source = ms.adjoint_source(cumprod_axis, np.ones((2, 3)))
    assert "np.cumprod(x, axis=1)" in source
    assert "rt.linear_recurrence(" in source
    assert all(line.count(";") == 0 for line in source.splitlines())
    source = ms.adjoint_source(median_axis, np.ones((3, 2)))
    assert "rt.quantile_weights(x, 0.5, 0, 1)" in source


def test_average_with_weights_summing_to_zero_raises_numpys_error():
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        ms.grad(average_axis)(np.ones((2, 3)), np.array([1.0, -1.0, 0.0]))


def spread(x):
    return (np.sum(np.var(x, axis=(0, 2), ddof=1)) + np.std(x, ddof=1)
            + np.sum(x.var(axis=-1, keepdims=True) * x) + np.sum(np.amax(x, axis=1))
            - np.sum(np.amin(x, axis=(0, 1), keepdims=True)))


def test_var_std_with_ddof_and_amax_amin_match_finite_differences(adcheck):
    _check(adcheck, spread, RNG.permutation(np.linspace(-2.0, 2.0, 24)).reshape(2, 3, 4))


def ms_median(x):
    values, indices = ops.median(x, 0)
    return np.sum(values ** 2) + np.sum(ops.median(x, keepdims=True)[0] * x)


def test_ops_median_is_the_lower_median_with_its_index(adcheck):
    x = np.array([[9.0, 3.0, 4.0, 5.0], [5.0, 2.0, 7.0, 4.0], [8.0, 1.0, 3.0, 6.0]])
    values, indices = ops.median(Tensor(x))
    np.testing.assert_array_equal(values.asnumpy(), [4.0, 4.0, 3.0])
    np.testing.assert_array_equal(indices.asnumpy(), [2, 3, 2])
    assert indices.asnumpy().dtype == np.int64
    _check(adcheck, ms_median, x + RNG.uniform(-0.1, 0.1, x.shape))
