"""``np.fft`` end to end: every function, its ``n``/``s``/``axis``/``axes``/``norm`` arguments,
real and complex inputs, float32/complex64, the losses users write, jvp, vmap and the
MindSpore ``ops`` spellings.

Values are compared with plain NumPy bit for bit (the compiled code calls the same
transforms on the same data). Gradients follow JAX's convention (docs/complex.md: for a
real-valued ``L`` the gradient of ``z = x + iy`` is ``dL/dx - i dL/dy``) and are
compared with central finite differences in float64/complex128 of the same function run
as plain NumPy; second derivatives with second-order central differences. Never with
ad_compiler itself.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.errors import AdCompilerError
from tests.finite_differences import central, central_at, directional

RNG = np.random.default_rng(20261125)
X = RNG.uniform(-1, 1, (3, 4))
Z = RNG.uniform(-1, 1, (3, 4)) + 1j * RNG.uniform(-1, 1, (3, 4))


def weights_like(y):
    """Fixed complex weights for ``Re(sum(w * y))``, a real loss reading every part of y."""
    rng = np.random.default_rng(y.size)
    return rng.uniform(-1, 1, y.shape) + 1j * rng.uniform(-1, 1, y.shape)


# -- every function and argument, against NumPy and finite differences -------------------

CALLS = [
    ("fft", {}), ("fft", {"n": 7}), ("fft", {"n": 2, "axis": 0}), ("fft", {"norm": "ortho"}),
    ("ifft", {}), ("ifft", {"n": 6, "axis": 0, "norm": "forward"}),
    ("rfft", {}), ("rfft", {"n": 5}), ("rfft", {"n": 3, "axis": 0, "norm": "forward"}),
    ("rfft", {"n": 8, "norm": "ortho"}),
    ("irfft", {}), ("irfft", {"n": 7}), ("irfft", {"n": 4}), ("irfft", {"n": 2}),
    ("irfft", {"n": 9, "axis": 0, "norm": "ortho"}), ("irfft", {"n": 1, "norm": "forward"}),
    ("hfft", {}), ("hfft", {"n": 5, "norm": "ortho"}), ("hfft", {"n": 3, "axis": 0}),
    ("ihfft", {}), ("ihfft", {"n": 5, "norm": "forward"}),
    ("fft2", {}), ("fft2", {"s": (2, 6)}), ("fft2", {"axes": (1, 0), "norm": "ortho"}),
    ("ifft2", {"s": (4, 3), "norm": "forward"}),
    ("fftn", {}), ("fftn", {"s": (5,), "axes": (-1,)}), ("fftn", {"s": (2, 6), "axes": (1, 0)}),
    ("fftn", {"axes": (0, 0)}), ("fftn", {"s": (4, 2), "axes": (1, 1)}),
    ("ifftn", {"axes": (0,), "norm": "ortho"}), ("ifftn", {"s": (-1, 5), "axes": (0, 1)}),
    ("rfft2", {}), ("rfft2", {"s": (3, 5)}), ("rfftn", {"axes": (1, 0), "norm": "ortho"}),
    ("rfftn", {"s": (4, 4), "axes": (0, 0)}),
    ("irfft2", {}), ("irfft2", {"s": (4, 5)}),
    ("irfftn", {"s": (2, 7), "axes": (0, 1), "norm": "forward"}),
    ("irfftn", {"axes": (1, 0)}), ("irfftn", {"s": (3, 3, 4), "axes": (0, 1, 1)}),
    ("fftshift", {}), ("fftshift", {"axes": 1}), ("ifftshift", {"axes": (0,)}),
    ("ifftshift", {}),
]
REAL_ONLY = ("rfft", "ihfft", "rfft2", "rfftn")


def _case_id(call):
    name, kwargs = call
    return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


def make_loss(fn, kwargs, w):
    def loss(x):
        y = fn(x, **kwargs)
        return np.sum(np.real(w * y)), y
    return loss


def _inputs(name):
    return [X] if name in REAL_ONLY else [X, Z]


@pytest.mark.parametrize("call", CALLS, ids=[_case_id(c) for c in CALLS])
def test_value_and_gradient_match_numpy_and_finite_differences(call):
    name, kwargs = call
    fn = getattr(np.fft, name)
    for x in _inputs(name):
        want = fn(x, **kwargs)
        loss = make_loss(fn, kwargs, weights_like(want))
        (value, got), g = ms.value_and_grad(loss, has_aux=True)(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        assert value == loss(x)[0]
        assert g.dtype == x.dtype
        np.testing.assert_allclose(g, central(lambda v: loss(v)[0], x), rtol=1e-6,
                                   atol=1e-8, err_msg=f"{name}{kwargs}")


@pytest.mark.parametrize("call", [c for c in CALLS if c[0] not in ("fftshift", "ifftshift")],
                         ids=[_case_id(c) for c in CALLS if c[0] not in ("fftshift",
                                                                          "ifftshift")])
def test_float32_and_complex64_keep_their_precision(call):
    name, kwargs = call
    fn = getattr(np.fft, name)
    for x in _inputs(name):
        x32 = x.astype(np.complex64 if np.iscomplexobj(x) else np.float32)
        want = fn(x32, **kwargs)
        assert want.dtype in (np.float32, np.complex64)  # what NumPy 2 gives
        loss = make_loss(fn, kwargs, weights_like(want).astype(np.complex64))
        (_, got), g = ms.value_and_grad(loss, has_aux=True)(x32)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert g.dtype == x32.dtype
        np.testing.assert_allclose(g, central(lambda v: loss(v)[0], x), rtol=2e-3,
                                   atol=2e-4)


# -- what users write ----------------------------------------------------------------------

def power(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


def spectral_convolution(a, b):
    n = a.shape[-1]
    c = np.fft.irfft(np.fft.rfft(a) * np.fft.rfft(b), n=n)
    return np.sum(c * np.cos(c))


def lowpass_energy(x):
    spectrum = np.fft.fftshift(np.fft.fft2(x, norm="ortho"))
    keep = np.abs(np.fft.fftshift(np.fft.fftfreq(x.shape[0])))[:, None] < 0.3
    smooth = np.fft.ifft2(np.fft.ifftshift(spectrum * keep), norm="ortho")
    return np.sum(np.real(smooth) ** 2) + 0.1 * np.sum(np.abs(smooth))


def spectral_derivative(u, d):
    k = 2j * np.pi * np.fft.rfftfreq(u.shape[0], d)
    du = np.fft.irfft(k * np.fft.rfft(u), n=u.shape[0])
    return np.sum(du ** 2) * d


@pytest.mark.parametrize("n", [6, 7])
def test_power_spectrum_and_spectral_convolution(n):
    a, b = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, n)
    np.testing.assert_allclose(ms.grad(power)(a), central(power, a), rtol=1e-6)
    ga, gb = ms.grad(spectral_convolution, (0, 1))(a, b)
    np.testing.assert_allclose(ga, central(lambda v: spectral_convolution(v, b), a),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gb, central(lambda v: spectral_convolution(a, v), b),
                               rtol=1e-6, atol=1e-9)


def test_power_spectrum_closed_form():
    """The half spectrum of an even-length x holds bins 0 and n/2 once and the others
    for themselves and their mirror images: by Parseval, sum |rfft(x)|^2 =
    (n |x|^2 + S0^2 + S1^2) / 2 with S0 = sum x, S1 = sum (-1)^k x_k; its gradient is
    n x + S0 + (-1)^k S1."""
    x = RNG.uniform(-1, 1, 8)
    sign = (-1.0) ** np.arange(x.size)
    expected = x.size * x + np.sum(x) + sign * np.sum(sign * x)
    np.testing.assert_allclose(ms.grad(power)(x), expected, rtol=1e-12)


def test_lowpass_and_traced_frequency_spacing():
    x = RNG.uniform(-1, 1, (6, 5))
    np.testing.assert_allclose(ms.grad(lowpass_energy)(x), central(lowpass_energy, x),
                               rtol=1e-6, atol=1e-9)
    u = np.sin(np.linspace(0, 2 * np.pi, 8, endpoint=False)) + 0.1 * RNG.uniform(size=8)
    gu, gd = ms.grad(spectral_derivative, (0, 1))(u, 0.25)
    np.testing.assert_allclose(gu, central(lambda v: spectral_derivative(v, 0.25), u),
                               rtol=1e-6, atol=1e-9)
    d_num = central_at(spectral_derivative, (u, 0.25), 1)
    np.testing.assert_allclose(gd, d_num, rtol=1e-6)
    assert ms.value_and_grad(spectral_derivative)(u, 0.25)[0] == spectral_derivative(u, 0.25)


def second_order(fn, x, h=1e-4):
    """The Hessian of ``fn`` at the real ``x`` by second-order central differences (a mixed
    second difference, not a shared first-order one: only this file needs it)."""
    n = x.size
    hess = np.zeros((n, n))
    flat = x.ravel()
    for i in range(n):
        for j in range(n):
            def at(di, dj):
                v = flat.copy()
                v[i] += di
                v[j] += dj
                return fn(v.reshape(x.shape))
            hess[i, j] = (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)
    return hess


def quartic_spectrum(x):
    s = np.fft.rfft(x, n=7, norm="ortho")
    y = np.fft.irfft(s * s, n=6)
    return np.sum(np.abs(s) ** 4) + np.sum(y * np.sin(x))


def mixed_nd(x):
    z = np.fft.fftn(x * (1 + 0.5j), s=(3, 4), axes=(1, 0))
    return np.sum(np.abs(np.fft.ihfft(np.real(z * z), n=5)) ** 2)


@pytest.mark.parametrize("fn, shape", [(quartic_spectrum, (6,)), (mixed_nd, (2, 3))],
                         ids=["rfft-irfft", "fftn-ihfft"])
def test_second_order_matches_finite_differences(fn, shape):
    x = RNG.uniform(-1, 1, shape)
    np.testing.assert_allclose(ms.hessian(fn)(x).reshape(x.size, x.size),
                               second_order(fn, x), rtol=1e-5, atol=1e-5)


def test_complex_input_second_order():
    """d/dz of the gradient of a complex input (its real and imaginary parts as reals)."""
    def loss(re, im):
        z = re + 1j * im
        return np.sum(np.abs(np.fft.fft(z * z, n=6)[1:5]) ** 2 * np.real(np.fft.ifft(z)))
    re, im = RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, 4)
    h = ms.hessian(lambda v: loss(v[:4], v[4:]))(np.concatenate([re, im]))
    np.testing.assert_allclose(h, second_order(lambda v: loss(v[:4], v[4:]),
                                               np.concatenate([re, im])), rtol=1e-5, atol=1e-5)


# -- forward mode, vmap ----------------------------------------------------------------------

@pytest.mark.parametrize("name, kwargs", [("fft", {"n": 5}), ("rfft", {"n": 7}),
                                          ("irfft", {"n": 5}), ("irfft2", {"s": (3, 4)}),
                                          ("hfft", {}), ("ifftn", {"axes": (1, 0)})])
def test_jvp_matches_finite_differences(name, kwargs):
    fn = getattr(np.fft, name)
    x = Z if name not in REAL_ONLY else X
    t = weights_like(x) if np.iscomplexobj(x) else RNG.uniform(-1, 1, x.shape)

    def f(v):
        return fn(v, **kwargs)
    out, tangent = ms.jvp(f, x, t)
    np.testing.assert_array_equal(out, fn(x, **kwargs))
    np.testing.assert_allclose(tangent, directional(f, [x], [t]), rtol=1e-6, atol=1e-8)


def spectrum_magnitude(x):
    return np.abs(np.fft.rfft(x, n=8)) + np.real(np.fft.ifftshift(np.fft.fft(x)))[:5]


def test_vmap_of_a_function_using_fft():
    xs = RNG.uniform(-1, 1, (4, 5))
    got = ms.vmap(spectrum_magnitude)(xs)
    np.testing.assert_allclose(got, np.stack([spectrum_magnitude(x) for x in xs]), rtol=1e-13)
    grads = ms.vmap(ms.grad(lambda x: np.sum(spectrum_magnitude(x) ** 2)))(xs)
    for x, g in zip(xs, grads):
        np.testing.assert_allclose(
            g, central(lambda v: np.sum(spectrum_magnitude(v) ** 2), x), rtol=1e-6)
    cube = xs[:, :, None] * xs[:, None]  # (4, 5, 5), batched along axis 1

    def filtered(x):
        return np.fft.irfft2(np.fft.rfft2(x) * 0.5j, s=(4, 5))
    np.testing.assert_allclose(ms.vmap(filtered, in_axes=1)(cube),
                               np.stack([filtered(cube[:, k]) for k in range(5)]), rtol=1e-12,
                               atol=1e-14)


# -- MindSpore spellings, errors, generated code -----------------------------------------

def ms_spellings(x):
    a = ops.fft(x, n=6, dim=0, norm="ortho")
    b = ops.ifft2(x, s=(3, 3))
    c = ops.irfft(ops.rfft(x, dim=-1), n=4)
    d = ops.fftshift(ops.fftn(x), dim=(0,)) + ops.ifftshift(ops.ifftn(x, dim=(1,)))
    return np.sum(np.abs(a) ** 2) + np.sum(np.real(b)) + np.sum(c ** 3) + np.sum(np.imag(d))


def numpy_spellings(x):
    a = np.fft.fft(x, n=6, axis=0, norm="ortho")
    b = np.fft.ifft2(x, s=(3, 3))
    c = np.fft.irfft(np.fft.rfft(x, axis=-1), n=4)
    d = np.fft.fftshift(np.fft.fftn(x), axes=(0,)) + np.fft.ifftshift(np.fft.ifftn(x, axes=(1,)))
    return np.sum(np.abs(a) ** 2) + np.sum(np.real(b)) + np.sum(c ** 3) + np.sum(np.imag(d))


def test_mindspore_ops_spellings():
    assert ms_spellings(X) == numpy_spellings(X)  # eager
    np.testing.assert_allclose(ms.grad(ms_spellings)(X), central(numpy_spellings, X),
                               rtol=1e-6, atol=1e-9)
    out = ops.rfft(ms.Tensor(X), n=5)
    assert isinstance(out, ms.Tensor)
    np.testing.assert_array_equal(out.asnumpy(), np.fft.rfft(X, n=5))


def rfft_of_complex(z):
    return np.sum(np.abs(np.fft.rfft(z)))


def bad_norm(x):
    return np.sum(np.abs(np.fft.fft(x, norm="half")))


def zero_length(x):
    return np.sum(np.abs(np.fft.fft(x, n=0)))


def written_out(x):
    return np.sum(np.abs(np.fft.fft(x, out=x)))


@pytest.mark.parametrize("fn, x, error, text", [
    (rfft_of_complex, Z, TypeError, "takes a real array"),
    (bad_norm, X, ValueError, "Invalid norm value 'half'"),
    (zero_length, X, ValueError, "Invalid number of FFT data points (0)"),
    (written_out, Z, AdCompilerError, "out=...) is not supported"),
], ids=["rfft-complex", "norm", "n=0", "out"])
def test_bad_arguments_are_located_errors(fn, x, error, text):
    with pytest.raises(error) as info:
        ms.grad(fn)(x)
    assert isinstance(info.value, AdCompilerError) and info.value.loc is not None
    assert text in str(info.value)
    assert "test_fft.py" in str(info.value)  # the user's line


def test_generated_code_reads_as_numpy():
    source = ms.adjoint_source(spectral_convolution, np.ones(6), np.ones(6))
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert sum("np.fft.rfftn(" in line for line in code) >= 2
    assert any("np.fft.irfftn(" in line and "s=(6,)" in line for line in code)
    assert all(line.count("np.fft.") <= 1 for line in code), source  # one transform a line
