"""Complex linear algebra, orderings, sign, and complex numbers built from real values,
end to end (docs/complex.md).

Expected values are plain NumPy; gradients are complex central finite differences in
complex128 (``dL/dx - i dL/dy``, JAX's convention), never ad_compiler itself. The
eigenvectors and singular vectors of a complex matrix are fixed only up to a phase each:
the losses on them here do not depend on those phases (a loss that does has no
derivative, and its gradient is not checked).
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import grad
from ad_compiler.errors import AdCompilerError
from tests.api.test_complex import check
from tests.finite_differences import central_at as numeric_grad

EPS = 1e-6
RNG = np.random.default_rng(7)


def _complex(shape, scale=1.0):
    return scale * (RNG.uniform(-1, 1, shape) + 1j * RNG.uniform(-1, 1, shape))


def _hermitian(n, batch=()):
    a = _complex(batch + (n, n))
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


H = _hermitian(3)
HB = _hermitian(3, (2,))
SQUARE = _complex((3, 3)) + 2.0 * np.eye(3)
TALL = _complex((4, 2))
WIDE = _complex((2, 4))
Z = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.7 - 1.1j, -0.5 - 0.2j])
WEIGHTS = np.array([0.3, -1.2, 0.8, 0.5])


def check_jvp(fn, *args, tol=1e-6):
    """ms.jvp of ``fn`` along random complex (real for real inputs) directions equals
    the central difference of the plain function."""
    ts = tuple(_complex(np.shape(a)) if np.iscomplexobj(a) else RNG.uniform(-1, 1, np.shape(a))
               for a in args)
    _, t_out = ms.jvp(fn, args, ts)
    plus = fn(*(a + EPS * t for a, t in zip(args, ts)))
    minus = fn(*(a - EPS * t for a, t in zip(args, ts)))
    np.testing.assert_allclose(t_out, (np.asarray(plus) - np.asarray(minus)) / (2 * EPS),
                               rtol=tol, atol=tol)


def check_second_order(fn, z, tol=1e-4):
    """grad of ``sum(|grad fn|^2)`` against finite differences of the same sum made of
    finite differences."""
    got = grad(lambda z: np.sum(np.abs(grad(fn)(z)) ** 2))(z)
    ref = numeric_grad(lambda z: np.sum(np.abs(numeric_grad(fn, [z], 0, 1e-5)) ** 2), [z], 0,
                       1e-4)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


# -- eigh: eigenvalues, and phase-invariant functions of the eigenvectors ---------------------

def eigh_values(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.array([0.5, -1.0, 2.0]))


def eigh_vectors(a):
    w, v = np.linalg.eigh(a)
    return np.sum(np.abs(v) ** 4 * np.array([1.0, -2.0, 0.5]))


def eigh_projector(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    p = (v * np.exp(-w)) @ np.conj(v.T)  # expm(-a), a function of the matrix
    return np.real(np.sum(p * np.array([[1.0, 2.0j, 0.5], [0.0, -1.0, 1j], [2.0, 0.3, 1.0]])))


@pytest.mark.parametrize("fn", [eigh_values, eigh_vectors, eigh_projector])
def test_eigh_of_a_hermitian_matrix(fn):
    check(fn, H)
    check_jvp(lambda a: fn(a), H)


def test_eigh_batched_and_eigvalsh():
    check(lambda a: np.sum(np.linalg.eigvalsh(a) ** 2) + np.sum(np.abs(np.linalg.eigh(a)[1]) ** 3),
          HB)


def test_eigh_reads_one_triangle_and_the_real_diagonal():
    """NumPy (LAPACK) reads the lower triangle and the real part of the diagonal: the
    gradient is 0 elsewhere, as finite differences say."""
    g = grad(eigh_values)(H)
    assert np.all(g[np.triu_indices(3, 1)] == 0) and np.all(np.imag(np.diag(g)) == 0)


def test_eigh_second_order():
    check_second_order(eigh_vectors, H)


# -- svd -------------------------------------------------------------------------------------

def svd_values(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) * np.arange(1.0, 1.0 + min(a.shape)))


def svd_rebuilt(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    k = min(a.shape)
    low_rank = (u[:, :k - 1] * s[:k - 1]) @ vh[:k - 1]  # drop the smallest singular value
    return np.sum(np.abs(low_rank) ** 2 * np.arange(low_rank.size).reshape(low_rank.shape))


def svd_vectors(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(np.abs(u) ** 4) + np.sum(np.abs(vh) ** 3 * s[:, None])


@pytest.mark.parametrize("fn", [svd_values, svd_rebuilt, svd_vectors])
@pytest.mark.parametrize("a", [SQUARE, TALL, WIDE], ids=["square", "tall", "wide"])
def test_svd_of_a_complex_matrix(fn, a):
    check(fn, a)
    check_jvp(fn, a)


def test_svd_second_order():
    check_second_order(svd_rebuilt, TALL)


# -- qr, cholesky, slogdet, the rest of np.linalg ---------------------------------------------

def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.real(np.sum(q * np.arange(q.size).reshape(q.shape))) + np.sum(np.imag(r) ** 2) \
        + np.sum(np.real(r))


def cholesky_loss(a):
    low = np.linalg.cholesky(a)
    up = np.linalg.cholesky(a, upper=True)
    return np.sum(np.abs(low * np.array([1.0, 2.0j, -1.0])) ** 2) + np.real(np.sum(up * 1j))


def slogdet_loss(a):
    sign, logabs = np.linalg.slogdet(a)
    return logabs + np.real(sign * (0.3 - 2.0j))


def other_linalg(a, b):
    return (np.sum(np.abs(np.linalg.inv(a)) ** 2) + np.real(np.linalg.det(a))
            + np.sum(np.abs(np.linalg.pinv(a[:, :2]) @ b))
            + np.sum(np.abs(np.linalg.solve(a, b))) + np.real(np.sum(a @ b * 1j))
            + np.imag(np.einsum("ij,j->", a, b))
            + np.sum(np.abs(np.linalg.lstsq(a[:, :2], b, rcond=None)[0])))


@pytest.mark.parametrize("fn, a", [(qr_loss, SQUARE), (qr_loss, TALL), (cholesky_loss, H),
                                   (slogdet_loss, SQUARE)],
                         ids=["qr-square", "qr-tall", "cholesky", "slogdet"])
def test_decompositions_of_complex_matrices(fn, a):
    check(fn, a)
    check_jvp(fn, a)
    check_second_order(fn, a)


def test_slogdet_sign_is_a_complex_unit():
    sign, logabs = np.linalg.slogdet(SQUARE)
    got = ms.value_and_grad(lambda a: np.linalg.slogdet(a)[1], has_aux=False)(SQUARE)
    assert np.asarray(got[0]).dtype == np.float64 and got[0] == pytest.approx(logabs)
    out, _ = ms.vjp(lambda a: np.linalg.slogdet(a)[0], SQUARE)
    assert out == sign and np.iscomplexobj(out)


def test_inv_pinv_solve_det_matmul_einsum_lstsq():
    check(other_linalg, SQUARE, _complex((3,)))


@pytest.mark.parametrize("ord_, axis", [
    (None, None), (2, None), (1, None), (np.inf, None), (-np.inf, None), (0, None), (3.0, None),
    (0.5, None), (None, 0), (2, 1), (1, -1), (np.inf, 0)])
def test_vector_norms(ord_, axis):
    z = Z if axis is None else np.stack([Z, Z[::-1] * 1j, Z + 0.5])
    fn = lambda z: np.sum(np.linalg.norm(z, ord_, axis=axis))  # noqa: E731
    if ord_ == 0:  # the count of nonzero entries: no derivative, a float count
        assert ms.value_and_grad(fn)(z)[0] == fn(z)
        return
    check(fn, z)
    check_jvp(fn, z)


@pytest.mark.parametrize("ord_", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(ord_):
    fn = lambda a: np.linalg.norm(a, ord_)  # noqa: E731
    check(fn, SQUARE)
    check(lambda a: np.sum(np.linalg.norm(a, ord_, axis=(2, 0), keepdims=True)),
          np.stack([SQUARE, SQUARE * 1j + 1.0], axis=1))


def test_linalg_keeps_complex64():
    a = H.astype(np.complex64)
    for fn in (eigh_vectors, svd_rebuilt, qr_loss, cholesky_loss, slogdet_loss,
               lambda a: np.linalg.norm(a, "nuc")):
        g = grad(fn)(a)
        assert g.dtype == np.complex64, fn
        np.testing.assert_allclose(g, numeric_grad(fn, [H], 0), rtol=2e-3, atol=2e-3)


# -- std, sort, max / min, sign -----------------------------------------------------------------

def spread(z):
    return (np.std(z) + np.sum(np.std(z.reshape(2, 2), axis=1, ddof=1) * WEIGHTS[:2])
            + np.var(z, axis=0) + z.std())


def orders(z):  # on distinct real parts (a tie is decided by the imaginary parts: a kink)
    s = np.sort(z)
    return (np.sum(np.real(s) * WEIGHTS) + np.sum(np.imag(s) * WEIGHTS[::-1])
            + np.abs(np.max(z)) + np.real(np.min(z) * 1j) + np.abs(np.amax(z) - np.amin(z))
            + np.imag(z.max()) + np.sum(np.real(np.max(z.reshape(2, 2), axis=0))))


def signs(z):
    return np.sum(np.real(np.sign(z) * (0.5 - 1j) * WEIGHTS)) + np.sum(np.imag(np.sign(z * z)))


DISTINCT = Z + np.array([0.0, 0.0, 0.0, 0.25])


@pytest.mark.parametrize("fn", [spread, orders, signs])
def test_numpy_semantics_on_complex(fn):
    want = fn(DISTINCT)
    got, _ = ms.value_and_grad(fn)(DISTINCT)
    assert got == want and type(got) is type(want)
    check(fn, DISTINCT)
    check_jvp(fn, DISTINCT)


def test_sort_and_extrema_use_numpys_lexicographic_order():
    """Real parts first, then imaginary parts (Z has two entries with real part -0.5)."""
    z = np.array([-0.5 + 0.9j, 0.2 - 3.0j, -0.5 - 0.2j])
    g = grad(lambda z: np.real(np.max(z)) + np.imag(np.min(z)))(z)
    np.testing.assert_array_equal(g, [0.0, 1.0, -1j])
    g = grad(lambda z: np.sum(np.real(np.sort(z)) * np.array([1.0, 2.0, 3.0])))(z)
    np.testing.assert_array_equal(g, [2.0, 3.0, 1.0])


def test_sign_at_zero_takes_abs_convention():
    z = np.array([0.0 + 0.0j, 1.0 - 1.0j])
    g = grad(lambda z: np.sum(np.real(np.sign(z))))(z)
    assert g[0] == 0
    assert g[1] == pytest.approx(numeric_grad(lambda z: np.sum(np.real(np.sign(z))), [z], 0)[1])


def test_second_order_of_std_and_sign():
    check_second_order(lambda z: np.std(z) ** 2 + np.sum(np.real(np.sign(z)) * WEIGHTS), DISTINCT)


def test_complex64_std_sort_sign_stay_complex64():
    z = DISTINCT.astype(np.complex64)
    for fn in (spread, orders, signs):
        g = grad(fn)(z)
        assert g.dtype == np.complex64
        np.testing.assert_allclose(g, numeric_grad(fn, [DISTINCT], 0), rtol=1e-3, atol=1e-3)


# -- complex numbers built from real values ----------------------------------------------------

def built(x):
    a = complex(x[0], x[1])
    b = np.complex128(x[2]) * (1 - 2j)
    c = np.complex128(x) * 1j
    d = 1j * np.sum(x)
    e = complex(np.sum(x * x))
    return np.abs(a * b) + np.sum(np.abs(c + d)) + np.imag(e * 1j) + np.real(complex(imag=x[0]) * 1j)


def test_complex_of_traced_real_values():
    x = np.array([0.3, -1.2, 0.8])
    want = built(x)
    got, _ = ms.value_and_grad(built)(x)
    assert got == want and type(got) is type(want)
    check(built, x)
    check_jvp(built, x)
    check_second_order(built, x)


def of_two_items(x):
    return complex(x[0], x[1])


def numpy_complex128(x):
    return np.complex128(x[0])


def numpy_complex64(x):
    return np.complex64(x[0])


def numpy_complex64_array(x):
    return np.complex64(x)


def times_a_sum(x):
    return 1j * np.sum(x)


def times_an_item(x):
    return 1j * x[0] * 2.0


def over_a_mean(x):
    return (0.5 - 1j) / np.mean(x)


def plus_imag_of_a_max(x):
    return 1j * np.max(x) + 1j * np.imag(np.min(x * 1j))  # np.imag of a NumPy scalar


@pytest.mark.parametrize("fn", [of_two_items, numpy_complex128, numpy_complex64,
                                numpy_complex64_array, times_a_sum, times_an_item, over_a_mean,
                                plus_imag_of_a_max])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_built_complex_values_have_pythons_type(fn, dtype):
    x = np.array([0.3, -1.2, 0.8], dtype)
    want = fn(x)
    out, vjp_fn = ms.vjp(fn, x)
    assert type(out) is type(want) and np.asarray(out).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(out, want)
    ct = np.asarray(want).dtype.type(0.7 - 0.4j) if isinstance(want, np.generic) else \
        (0.7 - 0.4j if np.ndim(want) == 0 else np.full(np.shape(want), 0.7 - 0.4j, np.asarray(want).dtype))
    g = vjp_fn(ct)[0]
    assert g.dtype == dtype
    single = np.asarray(want).dtype == np.complex64  # float32 precision: a larger step
    ref = numeric_grad(lambda x: np.real(np.sum(ct * fn(x))), [x.astype(np.float64)], 0,
                       1e-3 if single else EPS)
    np.testing.assert_allclose(g, ref, rtol=1e-3 if single else 1e-6, atol=1e-5)


def python_complex_times_argument(x, s):
    return np.sum(np.abs(x + 1j * s))


def test_python_complex_times_a_float64_argument_is_a_located_refusal():
    """An argument s may be an np.float64 (1j * s a Python complex) or a 0-d array
    (np.complex128): the two meet a float32 array differently, and the compiler cannot
    tell them apart. Refused at the line, with both spellings."""
    with pytest.raises(AdCompilerError) as info:
        grad(python_complex_times_argument)(np.ones(2, np.float32), np.float64(0.5))
    assert info.value.loc.file == __file__
    assert "float(v)" in str(info.value) and "np.complex128(1j)" in str(info.value)


def test_generated_source_is_readable():
    source = ms.adjoint_source(lambda x: np.abs(complex(x[0], x[1]) + 1j * np.sum(x)),
                               np.ones(3))
    assert "complex(" in source and "float(" in source, source
    source = ms.adjoint_source(eigh_vectors, H)
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert all(line.count("np.") <= 2 for line in code), source


def methods_of_numpy_scalars(x):
    c = np.complex64(0.5 + 1j)
    s = np.float32(2.0)
    return np.sum(np.real(c.conj() * x) * s.item())


def test_methods_of_a_numpy_complex64_constant_run_at_compile_time():
    """np.complex64 and np.float32 are no Python complex or float: their methods on a
    constant are still plain Python, as np.float64's are."""
    x = np.array([0.5, -1.0])
    assert ms.value_and_grad(methods_of_numpy_scalars)(x)[0] == methods_of_numpy_scalars(x)
    check(methods_of_numpy_scalars, x)
