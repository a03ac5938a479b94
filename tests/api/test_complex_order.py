"""Complex values through order, rounding, casts and writes, as NumPy 2 computes them
(docs/complex.md): ``np.maximum``/``np.minimum``/``np.clip`` and comparisons order
complex values lexicographically (a NaN wins), ``np.median`` takes the lexicographic
middle, ``np.round``/``np.rint`` round both parts (no derivative), a cast to a real
dtype and a complex array written into a real one keep the real part (NumPy's
ComplexWarning); where NumPy raises (``np.floor`` of complex, ``<`` of Python complex
numbers, a Python complex written into a real array) the compiler raises the same
TypeError at the user's line. Gradients against complex central finite differences.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import grad
from ad_compiler.errors import AdCompilerError
from tests.api.test_complex import check
from tests.finite_differences import directional

Z = np.array([1.1 + 2.0j, 1.3 - 1.0j, 3.0 + 0.5j, -0.4 + 0.2j, 0.9 - 0.7j])
W = np.array([1.0 + 1.0j, 0.5 + 2.0j, 3.2 - 0.5j, -0.3 + 0.6j, 1.2 + 0.1j])
C = np.array([0.3 - 1.2j, 0.8 + 0.5j, -1.1 + 0.2j, 0.6 - 0.4j, 1.5 + 0.7j])


def extrema(z, w):
    hi = np.maximum(z, w)
    lo = np.minimum(z, 0.5 + 0.1j)
    return np.sum(np.real(hi * C) + np.abs(lo * z) ** 2)


def clipped(z):
    return np.sum(np.abs(np.clip(z, 0.0 + 0.5j, 1.0 + 0.0j) * C) ** 2)


def compared(z, w):
    return np.sum(np.where(z < w, z * z, np.conj(w)).real + np.where(z >= 1.0, z, 0).imag)


def rounded(z):
    return np.sum(np.abs(np.round(z * 2.13, 1) * z) + np.real(np.rint(z * 3.3) * np.conj(z)))


def middle(z):
    return np.abs(np.median(z * z)) ** 2 + np.real(np.median(z[:4]) * (0.2 - 1j))


def middle_rows(w):
    return np.sum(np.abs(np.median(np.reshape(w, (2, 3)), axis=1, keepdims=True) - 1j) ** 2)


def as_real(z):
    return np.sum(z.astype(np.float64) ** 2 + np.asarray(z * z, dtype=float) * 0.5)


def written_into_real(z):
    buf = np.zeros(6)
    buf[1:6] = z * z
    buf[0] = z[2]
    return np.sum(buf ** 2)


@pytest.mark.parametrize("fn,args", [
    (extrema, (Z, W)), (clipped, (Z,)), (compared, (Z, W)), (rounded, (Z,)), (middle, (Z,)),
    (middle_rows, (np.concatenate([W, [0.3 + 0.3j]]),)), (as_real, (Z,)),
    (written_into_real, (Z,))], ids=lambda v: getattr(v, "__name__", ""))
def test_values_and_gradients_match_numpy_and_finite_differences(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        value, _ = ms.value_and_grad(fn, tuple(range(len(args))))(*args)
        assert value == fn(*args)
        check(fn, *args)


@pytest.mark.parametrize("fn", [extrema, compared, middle, as_real, written_into_real],
                         ids=lambda f: f.__name__)
def test_forward_mode_matches_directional_differences(fn):
    rng = np.random.default_rng(3)
    args = (Z, W)[:fn.__code__.co_argcount]
    ts = tuple(rng.normal(size=a.shape) + 1j * rng.normal(size=a.shape) for a in args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        _, got = ms.jvp(fn, args, ts)
        np.testing.assert_allclose(got, directional(fn, args, ts), rtol=1e-6, atol=1e-6)


def test_complex64_stays_complex64():
    z, w = Z.astype(np.complex64), W.astype(np.complex64)
    for fn, args in ((extrema, (z, w)), (clipped, (z,)), (middle, (z,)), (as_real, (z,))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            got = ms.grad(fn, tuple(range(len(args))))(*args)
        for g in got if isinstance(got, tuple) else (got,):
            assert g.dtype == np.complex64, (fn.__name__, g.dtype)


def test_maximum_follows_numpys_nan_and_ties():
    """A NaN operand is the result (the first when both are); a tie splits evenly."""
    nan = complex(np.nan, 0.0)
    z = np.array([nan, 1.0 + 1.0j, nan, 2.0 + 0.0j, 0.5j])
    w = np.array([1.0 + 0.0j, nan, nan, 2.0 + 0.0j, 0.5j + 0.1])
    for op in (np.maximum, np.minimum):
        out = op(z, w)
        from_z = np.isnan(out) & np.isnan(z) | (out == z) & (out != w)
        tie = (z == w) & ~np.isnan(z)
        want = np.where(tie, 0.5, np.where(from_z, 1.0, 0.0)) * C
        gz, gw = grad(lambda z, w: np.sum(np.real(op(z, w) * C)), (0, 1))(z, w)
        np.testing.assert_array_equal(gz, want)
        np.testing.assert_array_equal(gw, C - want)


def test_a_cast_to_a_real_dtype_warns_as_numpy_and_its_derivative_does_not():
    with pytest.warns(np.exceptions.ComplexWarning):
        got = grad(as_real)(Z)
    # Re(z)^2 + Re(z^2) / 2: d/dx = 3x, d/dy = -y, so dL/dx - i dL/dy = 3x + iy
    np.testing.assert_allclose(got, 3 * np.real(Z) + 1j * np.imag(Z), rtol=1e-12)
    source = ms.adjoint_source(as_real, Z)
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert all(line.count("np.") <= 2 for line in code), source  # one op per statement


def _floor(z):
    return np.sum(np.abs(np.floor(z)))


def _ceil(z):
    return np.sum(np.abs(np.ceil(z)))


def _trunc(z):
    return np.sum(np.abs(np.trunc(z)))


def _fix(z):
    return np.sum(np.abs(np.fix(z)))


def _quantile(z):
    return np.abs(np.quantile(z, 0.3))


def _python_less(z):
    return np.sum(np.abs(z)) if (1 + 2j) < 2j else 0.0


@pytest.mark.parametrize("fn", [_floor, _ceil, _trunc, _fix, _quantile, _python_less],
                         ids=lambda f: f.__name__)
def test_where_numpy_raises_the_compiler_raises_its_type_error_at_the_line(fn):
    with pytest.raises(TypeError):
        fn(Z)  # NumPy / Python themselves
    with pytest.raises(AdCompilerError) as info:
        grad(fn)(Z)
    assert isinstance(info.value, TypeError), repr(info.value)
    assert info.value.loc is not None and info.value.loc.file == __file__
