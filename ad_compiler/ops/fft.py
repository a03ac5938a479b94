"""Discrete Fourier transforms: ``np.fft`` and MindSpore's ``ops.fft`` spellings.

Four primitives, each over a tuple ``axes`` (non-negative, in the user's order) with
``norm`` one of ``'backward'``, ``'ortho'``, ``'forward'``; every ``np.fft`` function
is a lowering onto them, so the n-d forms and the 1-d ones share one rule:

* ``fftn`` / ``ifftn``: ``np.fft.fftn`` / ``np.fft.ifftn`` with no ``s``: the input's
  lengths are the transform's (the lowerings zero-pad or truncate first, as NumPy
  does). Both transforms are linear and their matrices symmetric, so in JAX's
  convention (the VJP is the *transpose*, docs/complex.md) the cotangent of the
  input is the same transform of the cotangent: ``fftn(ct)`` / ``ifftn(ct)``, its
  real part for a real input.
* ``rfftn``: ``np.fft.rfftn`` of a real input, the last axis keeping bins
  ``0 .. n//2``. Its transpose pads the cotangent back to ``n`` bins with zeros,
  transforms it (``fftn``) and keeps the real part (the input is real).
* ``irfftn``: ``np.fft.irfftn`` with ``s`` the output lengths, the input's last
  axis holding exactly ``s[-1] // 2 + 1`` bins (the lowerings resize it). NumPy
  reads the bins as one half of a Hermitian spectrum: every bin except 0 (and
  ``n / 2`` for even ``n``) stands for itself and its mirror image, and the
  imaginary parts of those one or two bins are ignored. The map is real-linear;
  its transpose is ``w * conj(rfftn(ct, norm=swapped))`` with ``w = 2`` on the
  doubled bins and 1 on the others (real there, so an ignored imaginary part
  gets no gradient). The swapped norm (``'backward'`` <-> ``'forward'``) gives
  ``irfftn``'s scale.

``hfft`` / ``ihfft`` are NumPy's own compositions (``irfft`` of the conjugate,
the conjugate of ``rfft``, with the norm swapped); ``fftshift`` / ``ifftshift`` are
rolls; ``fftfreq`` / ``rfftfreq`` are constants (a traced ``d`` divides them).

Values are NumPy's to the last bit: multi-axis transforms emit one NumPy call with
the axes in the user's order (NumPy transforms them one after the other, the last
first), and the up-front zero-padding and truncation only change lines a
one-dimensional transform leaves alone or maps to zeros. Axes named twice (NumPy
transforms those twice) become a chain of one-axis transforms in NumPy's order.
"""
from __future__ import annotations

import functools

import numpy as np

from ..ad.rules import ex, lowering, primitive, register_on_import
from ..errors import UnsupportedOperationError
from ..ir.core import AType, Value
from ._batch import along
from .movement import lower_roll
from .shape import slice_along

F = "fft"
NORMS = ("backward", "ortho", "forward")
_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


# -- type rules ---------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _out_dtype(dtype: np.dtype, inverse_real: bool) -> np.dtype:
    """The dtype NumPy's transform gives an input of ``dtype`` (one-element probe)."""
    probe = np.ones(1, dtype)
    return (np.fft.irfft(probe, n=1) if inverse_real else np.fft.fft(probe)).dtype


def _check_axes(what, t: AType, axes):
    if t.ndim == 0 or not axes or any(not 0 <= a < t.ndim for a in axes):
        raise ValueError(f"{what}: axes {axes} do not fit an array of shape {t.shape}")


def _fft_infer(what):
    def infer(t: AType, *, axes, norm="backward") -> AType:
        _check_axes(what, t, axes)
        return AType(t.shape, _out_dtype(t.dtype, False), False)
    infer.__name__ = f"infer_{what}"
    return infer


def _rfftn_infer(t: AType, *, axes, norm="backward") -> AType:
    _check_axes("rfftn", t, axes)
    if t.dtype.kind == "c":
        raise TypeError(f"rfftn takes a real array, got {t.dtype}")
    shape = list(t.shape)
    shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return AType(tuple(shape), _out_dtype(t.dtype, False), False)


def _irfftn_infer(t: AType, *, axes, s, norm="backward") -> AType:
    _check_axes("irfftn", t, axes)
    shape = list(t.shape)
    for a, n in zip(axes, s):
        shape[a] = n
    if t.shape[axes[-1]] != s[-1] // 2 + 1:
        raise ValueError(f"irfftn: {t.shape[axes[-1]]} bins on axis {axes[-1]} do not make "
                         f"{s[-1]} values")
    return AType(tuple(shape), _out_dtype(t.dtype, True), False)


# -- rules --------------------------------------------------------------------------------

def _linear_jvp(name):
    """The JVP of a linear transform: the transform of the tangent."""
    def jvp(b, t, out, x, **params):
        return None if t[0] is None else b.emit(name, t[0], **params)
    return jvp


def _self_transpose(name):
    """The VJP of a linear transform whose matrix is symmetric: the same transform of
    ``ct`` (its real part for a real input)."""
    def vjp(b, ct, out, x, **params):
        return (b.fit(b.emit(name, ct, **params), x),)
    return vjp


def _rfftn_vjp(b, ct, out, x, *, axes, norm="backward"):
    """The transpose of "fftn, then keep bins 0 .. n//2": the cotangent padded back to
    ``n`` bins with zeros, transformed; its real part (the input is real)."""
    full = resize(b, ct, axes[-1], b.type_of(x).shape[axes[-1]])
    return (b.real(b.fftn(full, axes=axes, norm=norm)),)


def hermitian_weights(n: int, m: int, dtype) -> np.ndarray:
    """How often each of the ``m = n // 2 + 1`` bins of a length-``n`` real signal's
    spectrum counts: 1 for bin 0 and (``n`` even) bin ``n / 2``, else 2."""
    w = np.full(m, 2.0, dtype)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w


def _irfftn_vjp(b, ct, out, x, *, axes, s, norm="backward"):
    """The transpose of the Hermitian inverse: ``w * conj(rfftn(ct))`` with the norm
    swapped (it gives irfftn's scale) and ``w`` the :func:`hermitian_weights`."""
    t = b.type_of(x)
    last = axes[-1]
    spectrum = b.conj(b.rfftn(ct, axes=axes, norm=_SWAPPED[norm]))
    real = np.finfo(b.type_of(spectrum).dtype).dtype  # float32 for complex64
    shape = tuple(t.shape[last] if i == last else 1 for i in range(t.ndim))
    w = hermitian_weights(s[-1], t.shape[last], real).reshape(shape)
    weighted = b.mul(spectrum, b.const(w)) if (w != 1).any() else spectrum
    return (b.fit(weighted, x),)


def _ex(shape, axes, norm="backward", **params):
    return ex(shape, axes=axes, norm=norm, **params)


_C_EXAMPLES = [_ex((4,), (0,)), _ex((2, 3), (1,), "ortho"), _ex((3, 2), (0, 1), "forward"),
               _ex((2, 3, 2), (2, 0)), _ex((1,), (0,))]

primitive("fftn", emit="np.fft.fftn({0}, axes={axes}, norm={norm})", infer=_fft_infer("fftn"),
          vjp=_self_transpose("fftn"), jvp=_linear_jvp("fftn"), family=F,
          examples=_C_EXAMPLES, batch=along("fftn", "axes"))
primitive("ifftn", emit="np.fft.ifftn({0}, axes={axes}, norm={norm})",
          infer=_fft_infer("ifftn"), vjp=_self_transpose("ifftn"), jvp=_linear_jvp("ifftn"),
          family=F, examples=_C_EXAMPLES, batch=along("ifftn", "axes"))
primitive("rfftn", emit="np.fft.rfftn({0}, axes={axes}, norm={norm})", infer=_rfftn_infer,
          vjp=_rfftn_vjp, jvp=_linear_jvp("rfftn"), family=F,
          examples=[_ex((4,), (0,)), _ex((5,), (0,), "ortho"), _ex((2, 3), (0, 1), "forward"),
                    _ex((3, 4), (1, 0)), _ex((2, 1), (1,)), _ex((2, 2), (0,))],
          batch=along("rfftn", "axes"))
# the examples' last axis holds s[-1] // 2 + 1 bins: even and odd lengths, 1 and 2
primitive("irfftn", emit="np.fft.irfftn({0}, s={s}, axes={axes}, norm={norm})",
          infer=_irfftn_infer, vjp=_irfftn_vjp, jvp=_linear_jvp("irfftn"), family=F,
          examples=[_ex((3,), (0,), s=(4,)), _ex((3,), (0,), "ortho", s=(5,)),
                    _ex((2, 2), (0, 1), "forward", s=(2, 3)), _ex((3, 2), (1, 0), s=(2, 4)),
                    _ex((1,), (0,), s=(1,)), _ex((2,), (0,), s=(2,)),
                    _ex((2, 3), (1,), s=(4,))],
          batch=along("irfftn", "axes"))


# -- lowerings: arguments as NumPy reads them ----------------------------------------------

def _norm(norm) -> str:
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise ValueError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or '
                         '"forward".')
    return norm


def _axis(axis, ndim: int, what: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"np.fft.{what}: an axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of "
                                      f"dimension {ndim}")
    return int(axis) % ndim


def _length(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"np.fft.{what}: a length must be an int, got {n!r}")
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return int(n)


def _no_out(out, what):
    if out is not None:
        raise UnsupportedOperationError(f"np.fft.{what}(out=...) is not supported",
                                        hint="assign the result instead")


def _array(b, a, what):
    x = b.const(a)
    if b.type_of(x).ndim == 0:
        raise UnsupportedOperationError(f"np.fft.{what} of a 0-d value", hint="pass an array")
    return x


def resize(b, x, axis: int, n: int):
    """``x`` truncated or zero-padded to length ``n`` along ``axis`` (NumPy's ``n=``)."""
    t = b.type_of(x)
    size = t.shape[axis]
    if n < size:
        return slice_along(b, x, axis, 0, n)
    if n > size:
        width = tuple((0, n - size) if i == axis else (0, 0) for i in range(t.ndim))
        return b.pad(x, pad_width=width)
    return x


def _cook(b, x, s, axes, what, invreal=False):
    """``(s, axes)`` as NumPy's n-d functions read them: ints, axes non-negative."""
    shape = b.type_of(x).shape
    if axes is None:
        axes = range(-len(s), 0) if s is not None else range(len(shape))
    axes = [_axis(a, len(shape), what) for a in _sequence(axes, what)]
    if s is None:
        s = [shape[a] for a in axes]
        if invreal and axes:
            s[-1] = (shape[axes[-1]] - 1) * 2
    else:
        s = _sequence(s, what)
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        s = [shape[a] if n == -1 else n for n, a in zip(s, axes)]
    if not axes:
        raise UnsupportedOperationError(f"np.fft.{what} over no axes", hint="name an axis")
    return [_length(n, what) for n in s], axes


def _sequence(v, what):
    if isinstance(v, (int, np.integer)):
        raise TypeError(f"np.fft.{what}: s and axes must be sequences of ints, got {v!r}")
    return list(v)


def _complex(b, x, s, axes, norm, prim):
    """The complex transform ``prim`` ('fftn' / 'ifftn') of ``x`` resized to ``s``."""
    if len(set(axes)) < len(axes):  # an axis transformed twice: NumPy's loop, last first
        for n, a in reversed(list(zip(s, axes))):
            x = b.emit(prim, resize(b, x, a, n), axes=(a,), norm=norm)
        return x
    for n, a in zip(s, axes):
        x = resize(b, x, a, n)
    return b.emit(prim, x, axes=tuple(axes), norm=norm)


def _real_input(b, x, what):
    if b.type_of(x).dtype.kind == "c":
        raise TypeError(f"np.fft.{what} takes a real array, got {b.type_of(x).dtype} "
                        "(NumPy refuses complex input)")
    return x


def _forward_real(b, x, s, axes, norm, what):
    """``np.fft.rfftn``: ``rfft`` along the last axis, then ``fft`` along the others."""
    _real_input(b, x, what)
    if len(set(axes)) < len(axes):
        x = b.rfftn(resize(b, x, axes[-1], s[-1]), axes=(axes[-1],), norm=norm)
        return _complex(b, x, s[:-1], axes[:-1], norm, "fftn") if len(axes) > 1 else x
    for n, a in zip(s, axes):
        x = resize(b, x, a, n)
    return b.rfftn(x, axes=tuple(axes), norm=norm)


def _inverse_real(b, x, s, axes, norm, what):
    """``np.fft.irfftn``: ``ifft`` along all but the last axis, then ``irfft`` of that
    one (its input resized to ``s[-1] // 2 + 1`` bins)."""
    if len(set(axes)) < len(axes):
        for n, a in zip(s[:-1], axes[:-1]):
            x = b.ifftn(resize(b, x, a, n), axes=(a,), norm=norm)
        s, axes = s[-1:], axes[-1:]
    for n, a in zip(s[:-1], axes[:-1]):
        x = resize(b, x, a, n)
    x = resize(b, x, axes[-1], s[-1] // 2 + 1)
    return b.irfftn(x, axes=tuple(axes), s=tuple(s), norm=norm)


def _one_axis(b, a, n, axis, what, invreal=False):
    x = _array(b, a, what)
    axis = _axis(axis, b.type_of(x).ndim, what)
    if n is None:
        n = b.type_of(x).shape[axis]
        n = (n - 1) * 2 if invreal else n
    return x, [_length(n, what)], [axis]


def fft(b, a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.fft``: the one-dimensional discrete Fourier transform along ``axis``."""
    _no_out(out, "fft")
    x, s, axes = _one_axis(b, a, n, axis, "fft")
    return _complex(b, x, s, axes, _norm(norm), "fftn")


def ifft(b, a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.ifft``: the inverse of ``fft``."""
    _no_out(out, "ifft")
    x, s, axes = _one_axis(b, a, n, axis, "ifft")
    return _complex(b, x, s, axes, _norm(norm), "ifftn")


def rfft(b, a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.rfft``: the transform of a real signal, bins ``0 .. n // 2``."""
    _no_out(out, "rfft")
    x, s, axes = _one_axis(b, a, n, axis, "rfft")
    return _forward_real(b, x, s, axes, _norm(norm), "rfft")


def irfft(b, a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.irfft``: the real signal of ``n`` values (default ``2 (m - 1)``) whose
    ``rfft`` the ``m`` bins are."""
    _no_out(out, "irfft")
    x, s, axes = _one_axis(b, a, n, axis, "irfft", invreal=True)
    return _inverse_real(b, x, s, axes, _norm(norm), "irfft")


def hfft(b, a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.hfft``: the real spectrum of a Hermitian signal, NumPy's
    ``irfft(conj(a), n, axis, norm=swapped)``."""
    _no_out(out, "hfft")
    x, s, axes = _one_axis(b, a, n, axis, "hfft", invreal=True)
    return _inverse_real(b, b.conj(x), s, axes, _SWAPPED[_norm(norm)], "hfft")


def ihfft(b, a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.ihfft``: the inverse of ``hfft``, NumPy's ``conj(rfft(a, n, axis,
    norm=swapped))``."""
    _no_out(out, "ihfft")
    x, s, axes = _one_axis(b, a, n, axis, "ihfft")
    return b.conj(_forward_real(b, x, s, axes, _SWAPPED[_norm(norm)], "ihfft"))


def _nd(what, transform, default_axes=None, invreal=False):
    def lower(b, a, s=None, axes=default_axes, norm=None, out=None):
        _no_out(out, what)
        x = _array(b, a, what)
        s, axes = _cook(b, x, s, axes, what, invreal)
        return transform(b, x, s, axes, _norm(norm), what)
    lower.__name__ = what
    lower.__doc__ = f"``np.fft.{what}(a, s=None, axes={default_axes}, norm=None)``."
    return lower


def _complex_nd(prim):
    def transform(b, x, s, axes, norm, what):
        return _complex(b, x, s, axes, norm, prim)
    return transform


fftn = _nd("fftn", _complex_nd("fftn"))
ifftn = _nd("ifftn", _complex_nd("ifftn"))
fft2 = _nd("fft2", _complex_nd("fftn"), (-2, -1))
ifft2 = _nd("ifft2", _complex_nd("ifftn"), (-2, -1))
rfftn = _nd("rfftn", _forward_real)
rfft2 = _nd("rfft2", _forward_real, (-2, -1))
irfftn = _nd("irfftn", _inverse_real, invreal=True)
irfft2 = _nd("irfft2", _inverse_real, (-2, -1), invreal=True)


def _shift(sign, what):
    def lower(b, x, axes=None):
        x = b.const(x)
        shape = b.type_of(x).shape
        if not shape:
            return x
        one = isinstance(axes, (int, np.integer))
        axes = range(len(shape)) if axes is None else [axes] if one else axes
        axes = [_axis(a, len(shape), what) for a in axes]
        shift = [sign * (shape[a] // 2) for a in axes]
        return lower_roll(b, x, shift[0] if one else tuple(shift), axes[0] if one else tuple(axes))
    return lower


fftshift = _shift(1, "fftshift")
fftshift.__name__, fftshift.__doc__ = "fftshift", "``np.fft.fftshift``: bin 0 to the middle."
ifftshift = _shift(-1, "ifftshift")
ifftshift.__name__, ifftshift.__doc__ = "ifftshift", "``np.fft.ifftshift``: its inverse."


def _frequencies(n: int, rfft: bool) -> np.ndarray:
    """The integer bin numbers ``np.fft.fftfreq`` / ``rfftfreq`` scale by ``1 / (n d)``."""
    if rfft:
        return np.arange(0, n // 2 + 1)
    return np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])


def _freq(fn, rfft: bool):
    def lower(b, n, d=1.0, device=None):
        if device not in (None, "cpu"):
            raise UnsupportedOperationError(f"np.fft.{fn.__name__}(device={device!r}) is not "
                                            "supported", hint="leave device unset")
        if isinstance(n, Value):
            raise UnsupportedOperationError(f"np.fft.{fn.__name__} of a length computed at "
                                            "run time", hint="pass a Python int")
        if not isinstance(d, Value):
            return b.const(fn(n, d))
        scale = b.div(b.const(1.0), b.mul(b.const(n), d))
        return b.mul(b.const(_frequencies(int(n), rfft)), scale)
    lower.__name__ = fn.__name__
    lower.__doc__ = (f"``np.fft.{fn.__name__}(n, d=1.0)``: a constant; a traced spacing ``d`` "
                     "scales the bin numbers as NumPy does (``k * (1 / (n * d))``).")
    return lower


def _register():
    pairs = {np.fft.fft: fft, np.fft.ifft: ifft, np.fft.rfft: rfft, np.fft.irfft: irfft,
             np.fft.hfft: hfft, np.fft.ihfft: ihfft, np.fft.fftn: fftn, np.fft.ifftn: ifftn,
             np.fft.fft2: fft2, np.fft.ifft2: ifft2, np.fft.rfftn: rfftn,
             np.fft.irfftn: irfftn, np.fft.rfft2: rfft2, np.fft.irfft2: irfft2,
             np.fft.fftshift: fftshift, np.fft.ifftshift: ifftshift,
             np.fft.fftfreq: _freq(np.fft.fftfreq, False),
             np.fft.rfftfreq: _freq(np.fft.rfftfreq, True)}
    for obj, lower in pairs.items():
        lowering(obj)(lower)


register_on_import("numpy.fft", _register)
