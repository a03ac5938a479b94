"""Recipes of the discrete Fourier transforms (ad_compiler/ops/fft.py): every ``np.fft``
function and its MindSpore ``ops`` spelling, with the ``n``/``s``, ``axis``/``axes`` and
``norm`` arguments drawn at random (lengths that pad and that truncate, even and odd).

A transform reads a real array or a complex value (a complex input, or one built from
the real variables as in recipes_complex.py) and the recipe comes back to real numbers
in the same expression (``np.real``, ``np.abs(...) ** 2`` ...), so the variables stay
real. The recipes belong to the feature 'complex', as the other complex recipes do.
"""
from __future__ import annotations

import numpy as np

from .recipes import Reject
from .recipes_complex import _back_to_real

NORMS = ["", ", norm='ortho'", ", norm='forward'", ", norm='backward'"]


def _signal(g, real=False):
    """``(expression, shape)``: an array to transform (complex unless ``real``)."""
    if not real and g.coin(0.4):
        inputs = g.visible(lambda v: isinstance(v, np.ndarray) and v.dtype.kind == "c"
                           and v.ndim >= 1 and v.size > 0)
        if inputs:
            z = g.choice(inputs)
            return z, g.val(z).shape
    x = g.arr()
    shape = g.val(x).shape
    if real or g.coin(0.4):
        return x, shape
    y = g.partner(x)
    return g.choice([f"({x} * (0.5 - 1.5j))", f"np.exp(1j * {x})", f"({x} + 1j * {y})",
                     f"np.conj({x} - 0.5j)"]), shape


def _length(g, size, inverse_real=False):
    """An ``n=`` argument (or none): shorter, equal, longer, even and odd."""
    if inverse_real and size < 2:
        return g.choice([", n=1", ", n=3", ", n=4"])
    return g.choice(["", "", f", n={size}", f", n={max(size - 1, 1)}", f", n={size + 2}",
                     f", n={size + 3}"])


def _axis(g, shape, key="axis"):
    nd = len(shape)
    if nd == 1 or g.coin(0.4):
        return "", nd - 1
    a = g.choice(list(range(nd)) + [i - nd for i in range(nd)])
    return f", {key}={a}", a % nd


def _one_axis(fn, real_input=False, real_output=False, inverse_real=False):
    def recipe(g):
        x, shape = _signal(g, real_input)
        axis_arg, axis = _axis(g, shape, "dim" if fn.startswith("ops.") else "axis")
        out = f"{fn}({x}{_length(g, shape[axis], inverse_real)}{axis_arg}{g.choice(NORMS)})"
        return out if real_output else _back_to_real(g, out)
    return recipe


def _sizes(g, shape, axes):
    return tuple(g.choice([shape[a], max(shape[a] - 1, 1), shape[a] + 1, shape[a] + 2])
                 for a in axes)


def _many_axes(fn, two=False, real_input=False, real_output=False):
    def recipe(g):
        x, shape = _signal(g, real_input)
        nd = len(shape)
        if two and nd < 2:
            raise Reject
        choices = [None, (nd - 1,), tuple(range(nd))] + ([(1, 0), (0, 1), (-2, -1)]
                                                         if nd == 2 else [])
        axes = g.choice(choices) if not two else g.choice([None, (-2, -1), (1, 0), (0, 1)]
                                                         if nd == 2 else [None])
        key = "dim" if fn.startswith("ops.") else "axes"
        args = ""
        if axes is not None:
            args += f", {key}={axes}"
            if g.coin(0.5):
                args = f", s={_sizes(g, shape, axes)}" + args
        out = f"{fn}({x}{args}{g.choice(NORMS)})"
        return out if real_output else _back_to_real(g, out)
    return recipe


def _shift(fn):
    def recipe(g):
        key = "dim" if fn.startswith("ops.") else "axes"
        if g.coin(0.5):  # a real array moved around: it stays real
            x = g.arr()
            nd = g.val(x).ndim
            axes = g.choice(["", f", {key}=0", f", {key}=(-1,)"] + ([f", {key}=(1, 0)"]
                                                                   if nd == 2 else []))
            return f"{fn}({x}{axes})"
        z, _ = _signal(g)
        return _back_to_real(g, f"{fn}(np.fft.fft({z}){', ' + key + '=-1' if g.coin() else ''})")
    return recipe


def _freq(fn):
    def recipe(g):
        x = g.arr()
        n = g.val(x).shape[-1]
        d = g.choice(["", ", 0.5", f", abs({g.flt()}) + 0.5", ", d=2.0"])
        size = n if fn == "fftfreq" else 2 * (n - 1) + g.choice([0, 1])
        if size < 1:
            raise Reject
        return f"({x} * np.fft.{fn}({size}{d}).astype({x}.dtype))"
    return recipe


RECIPES = {
    "numpy.fft.fft": _one_axis("np.fft.fft"),
    "numpy.fft.ifft": _one_axis("np.fft.ifft"),
    "numpy.fft.rfft": _one_axis("np.fft.rfft", real_input=True),
    "numpy.fft.irfft": _one_axis("np.fft.irfft", real_output=True, inverse_real=True),
    "numpy.fft.hfft": _one_axis("np.fft.hfft", real_output=True, inverse_real=True),
    "numpy.fft.ihfft": _one_axis("np.fft.ihfft", real_input=True),
    "numpy.fft.fft2": _many_axes("np.fft.fft2", two=True),
    "numpy.fft.ifft2": _many_axes("np.fft.ifft2", two=True),
    "numpy.fft.fftn": _many_axes("np.fft.fftn"),
    "numpy.fft.ifftn": _many_axes("np.fft.ifftn"),
    "numpy.fft.rfft2": _many_axes("np.fft.rfft2", two=True, real_input=True),
    "numpy.fft.rfftn": _many_axes("np.fft.rfftn", real_input=True),
    "numpy.fft.irfft2": _many_axes("np.fft.irfft2", two=True, real_output=True),
    "numpy.fft.irfftn": _many_axes("np.fft.irfftn", real_output=True),
    "numpy.fft.fftshift": _shift("np.fft.fftshift"),
    "numpy.fft.ifftshift": _shift("np.fft.ifftshift"),
    "numpy.fft.fftfreq": _freq("fftfreq"),
    "numpy.fft.rfftfreq": _freq("rfftfreq"),
    "ad_compiler.ops.operations.fft": _one_axis("ops.fft"),
    "ad_compiler.ops.operations.ifft": _one_axis("ops.ifft"),
    "ad_compiler.ops.operations.rfft": _one_axis("ops.rfft", real_input=True),
    "ad_compiler.ops.operations.irfft": _one_axis("ops.irfft", real_output=True,
                                                  inverse_real=True),
    "ad_compiler.ops.operations.fft2": _many_axes("ops.fft2", two=True),
    "ad_compiler.ops.operations.ifft2": _many_axes("ops.ifft2", two=True),
    "ad_compiler.ops.operations.fftn": _many_axes("ops.fftn"),
    "ad_compiler.ops.operations.ifftn": _many_axes("ops.ifftn"),
    "ad_compiler.ops.operations.fftshift": _shift("ops.fftshift"),
    "ad_compiler.ops.operations.ifftshift": _shift("ops.ifftshift"),
}
FEATURES = dict.fromkeys(RECIPES, "complex")
