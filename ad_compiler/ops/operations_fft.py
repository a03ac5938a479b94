"""MindSpore ``ops`` spellings of the discrete Fourier transforms (MindSpore 2.3+):
``ops.fft``, ``ops.ifft``, ``ops.rfft``, ``ops.irfft``, ``ops.fft2``, ``ops.ifft2``,
``ops.fftn``, ``ops.ifftn``, ``ops.fftshift``, ``ops.ifftshift``. They take MindSpore's
argument names (``dim`` for NumPy's ``axis``/``axes``) and lower exactly as the ``np.fft``
functions do (ops/fft.py), so values and dtypes are NumPy's: an integer input gives
complex128 here, where MindSpore gives complex64."""
from __future__ import annotations

from . import fft as _fft
from .operations import functional


def _one(lower, name):
    def op(b, input, n=None, dim=-1, norm=None):  # noqa: A002 - MindSpore's name
        return lower(b, input, n, dim, norm)
    op.__doc__ = f"``ops.{name}(input, n=None, dim=-1, norm=None)``: ``np.fft.{name}``."
    return functional(op, name)


def _many(lower, name, dim):
    def op(b, input, s=None, dim=dim, norm=None):  # noqa: A002 - MindSpore's name
        return lower(b, input, s, dim, norm)
    op.__doc__ = f"``ops.{name}(input, s=None, dim={dim}, norm=None)``: ``np.fft.{name}``."
    return functional(op, name)


def _shift(lower, name):
    def op(b, input, dim=None):  # noqa: A002 - MindSpore's name
        return lower(b, input, dim)
    op.__doc__ = f"``ops.{name}(input, dim=None)``: ``np.fft.{name}``."
    return functional(op, name)


fft = _one(_fft.fft, "fft")
ifft = _one(_fft.ifft, "ifft")
rfft = _one(_fft.rfft, "rfft")
irfft = _one(_fft.irfft, "irfft")
fft2 = _many(_fft.fft2, "fft2", (-2, -1))
ifft2 = _many(_fft.ifft2, "ifft2", (-2, -1))
fftn = _many(_fft.fftn, "fftn", None)
ifftn = _many(_fft.ifftn, "ifftn", None)
fftshift = _shift(_fft.fftshift, "fftshift")
ifftshift = _shift(_fft.ifftshift, "ifftshift")

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "fftshift",
           "ifftshift"]
