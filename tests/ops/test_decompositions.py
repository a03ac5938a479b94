"""np.linalg in user-style functions: values against NumPy, gradients against float64
central differences, second order, float32, batches, degenerate spectra and bad input."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.errors import GradValueError, UnsupportedOperationError
from tests.finite_differences import central, directional

RNG = np.random.default_rng(7)


def _wellcond(n, m=None, batch=()):
    m = n if m is None else m
    x = RNG.uniform(-1, 1, batch + (n, m)) * 0.4
    k = min(n, m)
    return x + np.eye(n, m) * (2.0 + np.arange(k))[..., None, :] if n == m else x + np.eye(n, m) * 2


def _spd(n, batch=()):
    x = RNG.uniform(-1, 1, batch + (n, n))
    return x @ np.swapaxes(x, -1, -2) + 3 * np.eye(n)


def check(fn, x, rtol=1e-5, atol=1e-6):
    value, grad = ms.value_and_grad(fn)(x.copy())
    np.testing.assert_allclose(value, fn(x.copy()), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, central(fn, x), rtol=rtol, atol=atol)
    return grad


# -- user functions (module level: the compiler reads their source) --------------------------

def inv_loss(x):
    return np.sum(np.linalg.inv(x) * np.arange(x.shape[-1]))


def det_loss(x):
    return np.sum(np.linalg.det(x) ** 2)


def slogdet_loss(x):
    sign, logdet = np.linalg.slogdet(x)
    return np.sum(sign * logdet)


def solve_vec(a):
    return np.sum(np.linalg.solve(a, np.arange(3.0) + 1.0) ** 2)


def solve_mat(a):
    return np.sum(np.sin(np.linalg.solve(a, a[..., :2] + 1.0)))


def chol_loss(x):
    s = x @ x.T + 3 * np.eye(3)
    return np.sum(np.linalg.cholesky(s) ** 2 * np.arange(3.0))


def chol_upper(x):
    s = x @ x.T + 3 * np.eye(3)
    return np.sum(np.sin(np.linalg.cholesky(s, upper=True)))


def named_results(x):
    e = np.linalg.eigh(x @ x.T + 3 * np.eye(3))
    d = np.linalg.svd(x, full_matrices=False)
    f = np.linalg.qr(x)
    return (np.sum(e.eigenvalues) + np.sum(d.S * d.U[0] * d.Vh[:, 0]) + np.sum(f.R)
            + np.linalg.slogdet(x).logabsdet)


def eigh_values(x):
    w, v = np.linalg.eigh(x + x.T)
    return np.sum(w ** 3)


def eigh_invariant(x):
    w, v = np.linalg.eigh(x @ x.T)
    return np.sum(np.sin((v * np.exp(-w)) @ v.T))


def eigh_weighted(x):
    w, v = np.linalg.eigh(x + x.T, UPLO="U")
    return np.sum(v ** 2 * np.arange(3.0)) + np.sum(w)


def eigvalsh_loss(x):
    return np.sum(np.linalg.eigvalsh(x + x.transpose(0, 2, 1)) * np.arange(3.0))


def svd_values(x):
    return np.sum(np.linalg.svd(x, compute_uv=False) ** 2 * np.arange(1.0, 3.0))


def svd_invariant(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(np.tanh(u * s @ vt)) + np.sum((u @ u.T) * np.arange(4.0))


def svd_square(x):
    u, s, vt = np.linalg.svd(x)
    return np.sum(np.cos((u * np.sqrt(s)) @ vt))


def qr_loss(x):
    q, r = np.linalg.qr(x)
    return np.sum(np.sin(q @ r)) + np.sum(np.abs(r * np.eye(3))) + np.sum((q @ q.T) ** 2)


def pinv_loss(x):
    return np.sum(np.linalg.pinv(x) * np.arange(8.0).reshape(2, 4))


def lstsq_loss(a):
    x, res, rank, s = np.linalg.lstsq(a, np.arange(4.0), rcond=None)
    return np.sum(x * np.arange(1.0, 3.0)) + res[0] + np.sum(s)


def matrix_power_loss(x):
    return np.sum(np.linalg.matrix_power(x, 5)) + np.sum(np.linalg.matrix_power(x, -2))


CASES = [
    ("inv", inv_loss, _wellcond(3)),
    ("inv-batched", inv_loss, _wellcond(3, batch=(2,))),
    ("det", det_loss, _wellcond(3)),
    ("det-batched", det_loss, _wellcond(3, batch=(2,))),
    ("slogdet", slogdet_loss, _wellcond(3) - 4 * np.eye(3)),
    ("solve-vector", solve_vec, _wellcond(3)),
    ("solve-batched-vector", solve_vec, _wellcond(3, batch=(2,))),
    ("solve-matrix", solve_mat, _wellcond(3, batch=(2,))),
    ("cholesky", chol_loss, RNG.uniform(-1, 1, (3, 3))),
    ("cholesky-upper", chol_upper, RNG.uniform(-1, 1, (3, 3))),
    ("eigh-values", eigh_values, RNG.uniform(-1, 1, (3, 3))),
    ("eigh-invariant", eigh_invariant, RNG.uniform(-1, 1, (3, 3))),
    ("eigh-weighted-upper", eigh_weighted, RNG.uniform(-1, 1, (3, 3))),
    ("eigvalsh-batched", eigvalsh_loss, RNG.uniform(-1, 1, (2, 3, 3))),
    ("svd-values", svd_values, RNG.uniform(-1, 1, (4, 2))),
    ("svd-tall", svd_invariant, RNG.uniform(-1, 1, (4, 3))),
    ("svd-square", svd_square, _wellcond(3)),
    ("qr", qr_loss, RNG.uniform(-1, 1, (4, 3))),
    ("pinv", pinv_loss, RNG.uniform(-1, 1, (4, 2))),
    ("lstsq", lstsq_loss, RNG.uniform(-1, 1, (4, 2))),
    ("matrix_power", matrix_power_loss, _wellcond(3) * 0.5),
    ("named-results", named_results, _wellcond(3)),
]


@pytest.mark.parametrize("fn,x", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(fn, x):
    check(fn, x)


@pytest.mark.parametrize("fn,x", [c[1:] for c in CASES if c[0] in (
    "inv", "det", "solve-vector", "eigh-invariant", "svd-tall", "qr", "cholesky")],
    ids=["inv", "det", "solve", "eigh", "svd", "qr", "cholesky"])
def test_float32_stays_float32(fn, x):
    x32 = x.astype(np.float32)
    value, grad = ms.value_and_grad(fn)(x32.copy())
    assert np.asarray(value).dtype == np.asarray(fn(x32.copy())).dtype
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad, central(fn, x), rtol=2e-2, atol=2e-3)


def float32_only(x):
    w, v = np.linalg.eigh(x @ x.T)
    q, r = np.linalg.qr(np.linalg.inv(x))
    return np.sum(v * w) + np.linalg.det(x) + np.sum(np.linalg.svd(x, compute_uv=False)) \
        + np.linalg.norm(x, "nuc") + np.sum(np.linalg.solve(x, x[0])) + np.sum(q * r)


def test_float32_values_and_gradients_stay_float32():
    x = _wellcond(3).astype(np.float32)
    value, grad = ms.value_and_grad(float32_only)(x.copy())
    assert np.asarray(value).dtype == np.float32 and grad.dtype == np.float32
    assert np.asarray(float32_only(x.copy())).dtype == np.float32


def batched_factors(x):
    spd = x @ x.transpose(0, 2, 1) + 3 * np.eye(3)
    w, v = np.linalg.eigh(spd)
    u, sv, vt = np.linalg.svd(x[:, :, :2], full_matrices=False)
    q, r = np.linalg.qr(x[:, :, :2])
    low = np.linalg.cholesky(spd)
    root = (v * np.sqrt(w)[:, None, :]) @ v.transpose(0, 2, 1)
    return (np.sum(np.sin(root)) + np.sum((u * sv[:, None, :]) @ vt) + np.sum(sv ** 3) + np.sum(q @ r) + np.sum(low ** 2 * np.arange(3.0)))


def test_batched_decompositions():
    check(batched_factors, RNG.uniform(-1, 1, (2, 3, 3)))


@pytest.mark.parametrize("fn,x", [c[1:] for c in CASES if c[0] in (
    "inv", "solve-matrix", "eigh-invariant", "svd-tall", "qr", "cholesky-upper", "lstsq")],
    ids=["inv", "solve", "eigh", "svd", "qr", "cholesky", "lstsq"])
def test_forward_mode(fn, x):
    """``ms.jvp`` (the JVP rules) along a random direction, against central differences."""
    direction = RNG.uniform(-1, 1, x.shape)
    out, tangent = ms.jvp(fn, x.copy(), direction)
    expected = directional(fn, [x], [direction])
    np.testing.assert_allclose(tangent, expected, rtol=1e-5, atol=1e-6)


def eigh_second(x):
    return ms.grad(eigh_invariant)(x)[0, 1]


def svd_second(x):
    return ms.grad(svd_invariant)(x)[1, 2]


@pytest.mark.parametrize("fn,x", [(eigh_second, RNG.uniform(-1, 1, (3, 3))),
                                  (svd_second, RNG.uniform(-1, 1, (4, 3)))],
                         ids=["eigh", "svd"])
def test_second_order(fn, x):
    """The gradient of a gradient entry, against differences of the first gradient."""
    grad = ms.grad(fn)(x.copy())
    np.testing.assert_allclose(grad, central(fn, x), rtol=1e-4, atol=1e-5)


# -- norms -----------------------------------------------------------------------------------

def norm_of(ord, axis=None, keepdims=False):
    def fn(x):
        return np.sum(np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims) * 1.5)
    return fn


def norm_default(x):
    return np.linalg.norm(x)


def norm_vectors(x):
    return (np.sum(np.linalg.norm(x, axis=1)) + np.sum(np.linalg.norm(x, 1, axis=0))
            + np.sum(np.linalg.norm(x, np.inf, axis=-1) ** 2)
            + np.sum(np.linalg.norm(x, -np.inf, axis=0))
            + np.sum(np.linalg.norm(x, 3, axis=1, keepdims=True) * np.arange(3.0)[:, None])
            + np.sum(np.linalg.norm(x, 0.5, axis=1)) + np.sum(np.linalg.norm(x, 0, axis=1)))


def norm_vector_2(x):
    return np.linalg.norm(x[0], 2) + np.linalg.norm(x[1], -1.5)


def norm_matrices(x):
    return (np.linalg.norm(x, "fro") + np.linalg.norm(x, "nuc") + np.linalg.norm(x, 1)
            + np.linalg.norm(x, -1) + np.linalg.norm(x, np.inf) + np.linalg.norm(x, -np.inf)
            + np.linalg.norm(x, 2) + np.linalg.norm(x, -2))


def norm_batched(x):
    return (np.sum(np.linalg.norm(x, 2, axis=(2, 0)) * np.arange(1.0, 4.0))
            + np.sum(np.linalg.norm(x, "nuc", axis=(1, 2)) * np.arange(1.0, 3.0))
            + np.sum(np.linalg.norm(x, 1, axis=(-1, 0), keepdims=True))
            + np.sum(np.linalg.norm(x, -np.inf, axis=(0, 1)))
            + np.sum(np.linalg.norm(x, axis=(1, 2))))


NORM_X = RNG.uniform(-2, 2, (3, 4)) + np.array([[0.0, 0.3, -0.6, 0.9]])


@pytest.mark.parametrize("fn,x", [
    (norm_default, NORM_X), (norm_vectors, NORM_X), (norm_vector_2, NORM_X),
    (norm_matrices, NORM_X), (norm_batched, RNG.uniform(-2, 2, (2, 3, 4)))],
    ids=["default", "vectors", "vector-ords", "matrices", "axes-pairs"])
def test_norm(fn, x):
    check(fn, x)


def test_norm_ord_zero_has_zero_gradient():
    grad = ms.grad(norm_of(0, axis=0))(NORM_X.copy())
    assert np.all(grad == 0)


def norm_of_zeros(x):
    zero = x * (np.max(x) - np.max(x))
    return (np.linalg.norm(zero) + np.sum(np.linalg.norm(zero, "fro", axis=(1, 0)))
            + np.sum(np.linalg.norm(zero, 3, axis=0)) + np.linalg.norm(x[0]))


def test_norm_of_zeros_has_the_zero_subgradient():
    """The input is constant: finite differences see a slope of 0, not 0/0."""
    check(norm_of_zeros, NORM_X)


def test_norm_errors_like_numpy():
    with pytest.raises(ValueError, match="Invalid norm order"):
        ms.grad(norm_of("fro", axis=0))(NORM_X.copy())
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        ms.grad(norm_of(2))(np.ones((2, 2, 2)))


# -- degenerate spectra and other edges -------------------------------------------------------

def eigvec_sum(x):
    w, v = np.linalg.eigh(x)
    return np.sum(v[:, 0] * np.arange(3.0))


def test_degenerate_spectrum_is_a_clear_error():
    x = np.diag([1.0, 1.0, 2.0])
    with pytest.raises(GradValueError, match="two eigenvalues .* are equal"):
        ms.grad(eigvec_sum)(x)
    q, _ = np.linalg.qr(RNG.uniform(-1, 1, (3, 3)))
    root = q @ np.diag([1.0, 1.0, 1.5]) @ q.T  # x @ x.T has the eigenvalue 1 twice
    with pytest.raises(GradValueError, match="eigenvectors"):  # never a wrong number
        ms.grad(eigh_invariant)(root)


def simple_eigvec(x):
    w, v = np.linalg.eigh(x)
    return np.sum(v[:, 2] ** 2 * np.arange(3.0)) + np.sum(w ** 2)


def test_degenerate_spectrum_where_nothing_flows_through_the_tie():
    """The vector of a simple eigenvalue, and the eigenvalues, have derivatives there."""
    q, _ = np.linalg.qr(RNG.uniform(-1, 1, (3, 3)))
    x = q @ np.diag([1.0, 1.0, 2.0]) @ q.T
    grad = ms.grad(simple_eigvec)(x.copy())
    np.testing.assert_allclose(grad, central(simple_eigvec, x), rtol=1e-5, atol=1e-6)
    values = ms.grad(eigh_values)(np.eye(3))  # all eigenvalues equal
    np.testing.assert_allclose(values, central(eigh_values, np.eye(3)), atol=1e-6)


def svd_u(x):
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    return np.sum(u * np.arange(2.0))


def test_degenerate_singular_values_are_a_clear_error():
    with pytest.raises(GradValueError, match="singular values"):
        ms.grad(svd_u)(np.eye(3, 2) * 2.0)


def test_rank_deficient_tall_svd_is_a_clear_error():
    x = np.zeros((3, 2))
    x[0, 0] = 1.0
    with pytest.raises(GradValueError, match="singular value is 0"):
        ms.grad(svd_invariant)(np.concatenate([x, np.zeros((1, 2))]))


def test_rank_deficient_lstsq_is_a_clear_error():
    with pytest.raises(GradValueError, match="rank 1"):
        ms.grad(lstsq_loss)(np.ones((4, 2)))


def svd_full(x):
    u, s, vt = np.linalg.svd(x)
    return np.sum(u)


def qr_wide(x):
    q, r = np.linalg.qr(x)
    return np.sum(r)


def test_unsupported_forms_say_why():
    with pytest.raises(UnsupportedOperationError, match="full_matrices=False"):
        ms.grad(svd_full)(np.ones((3, 2)))
    with pytest.raises(UnsupportedOperationError, match="wide matrix"):
        ms.grad(qr_wide)(RNG.uniform(-1, 1, (2, 3)))


def test_generated_source_is_one_statement_per_op():
    source = ms.adjoint_source(eigh_invariant, RNG.uniform(-1, 1, (3, 3)))
    assert "np.linalg.eigh(" in source and "rt.gap_divide(" in source
    for line in source.splitlines():
        assert line.count("np.linalg.") <= 1, line


# -- MindSpore spellings ----------------------------------------------------------------------

def ms_spellings(x):
    s, u, v = ops.svd(x)
    sign, logdet = ops.slogdet(x)
    q, r = ops.qr(x)
    return (ops.norm(x) + ops.det(x) + logdet + np.sum(ops.inverse(x)) + np.sum(s)
            + np.sum((u * s) @ v.T) + np.sum(q @ r) + np.sum(ops.pinv(x))
            + np.sum(ops.matrix_power(x, 3)) + np.sum(ops.cholesky(x @ x.T, upper=True)))


def test_mindspore_ops_spellings():
    x = _wellcond(3)
    check(ms_spellings, x)
    s, u, v = ops.svd(ms.Tensor(x))
    np.testing.assert_allclose((u.asnumpy() * s.asnumpy()) @ v.asnumpy().T, x, atol=1e-12)
    sign, logdet = ops.slogdet(ms.Tensor(x))
    assert isinstance(logdet, ms.Tensor)
    np.testing.assert_allclose(sign.asnumpy() * np.exp(logdet.asnumpy()), np.linalg.det(x))
    q, r = ops.qr(ms.Tensor(x))
    np.testing.assert_allclose(q.asnumpy() @ r.asnumpy(), x, atol=1e-12)
    np.testing.assert_allclose(ops.norm(ms.Tensor(x), dim=0).asnumpy(),
                               np.linalg.norm(x, axis=0))


def array_api_norms(x):
    return (np.linalg.vector_norm(x) + np.sum(np.linalg.vector_norm(x, axis=(2, 0), ord=3))
            + np.sum(np.linalg.vector_norm(x, axis=-1, keepdims=True, ord=1))
            + np.sum(np.linalg.vector_norm(x, axis=(0, 1), keepdims=True, ord=np.inf))
            + np.sum(np.linalg.matrix_norm(x)) + np.sum(np.linalg.matrix_norm(x, ord="nuc"))
            + np.sum(np.linalg.matrix_norm(x, keepdims=True, ord=-np.inf))
            + np.sum(np.linalg.svdvals(x) ** 2))


def conditions(x):
    return (np.linalg.cond(x) + np.linalg.cond(x, -2) + np.linalg.cond(x, "fro")
            + np.linalg.cond(x, 1) + np.linalg.cond(x, np.inf))


def test_array_api_norms_and_cond():
    check(array_api_norms, RNG.uniform(-2, 2, (2, 3, 4)))
    check(conditions, _wellcond(3))
    assert np.asarray(ms.value_and_grad(conditions)(_wellcond(3).astype(np.float32))[1]).dtype \
        == np.float32
