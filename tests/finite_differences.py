"""Central finite differences in float64, the reference the tests check gradients against
(``ms.check_grad`` where it expresses the check; these where a test needs the array: a
closed form, a plain-NumPy reference, a Parameter's data, a Jacobian).

A complex input follows docs/complex.md: the gradient of a real ``L`` at ``z = x + iy`` is
``dL/dx - i dL/dy``, each partial by its own central difference.
"""
from __future__ import annotations

import numpy as np

H = 1e-6


def central(f, x, h=H):
    """The gradient of the scalar function ``f`` at ``x`` (an array, a Python float or a
    complex array), each element by ``(f(x + h e) - f(x - h e)) / 2h``; float64 (complex128)."""
    if isinstance(x, float):
        return (float(f(x + h)) - float(f(x - h))) / (2 * h)
    x = np.array(x, dtype=np.result_type(x, np.float64))
    steps = (h, 1j * h) if x.dtype.kind == "c" else (h,)
    g = np.zeros(x.shape, x.dtype)
    for i in np.ndindex(x.shape):
        for step in steps:
            hi, lo = x.copy(), x.copy()
            hi[i] += step
            lo[i] -= step
            d = (float(np.real(f(hi))) - float(np.real(f(lo)))) / (2 * h)
            g[i] += d if step == h else -1j * d
    return g


def central_at(f, args, i, h=H):
    """The gradient of the scalar ``f(*args)`` w.r.t. ``args[i]`` (the others fixed)."""
    args = list(args)
    return central(lambda v: f(*args[:i], v, *args[i + 1:]), args[i], h)


def jacobian(f, x, h=H):
    """``d f(x) / d x`` of an array-valued ``f`` at the float64 array ``x``, shape
    ``f(x).shape + x.shape``."""
    x = np.array(x, dtype=np.float64)
    jac = np.zeros(np.shape(f(x)) + x.shape)
    for i in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += h
        lo[i] -= h
        jac[(...,) + i] = (np.asarray(f(hi), np.float64) - np.asarray(f(lo), np.float64)) / (2 * h)
    return jac


def jacobian_at(f, args, i, h=H):
    """``d f(*args) / d args[i]`` (the others fixed), shape ``f(*args).shape + args[i].shape``."""
    args = list(args)
    return jacobian(lambda v: f(*args[:i], v, *args[i + 1:]), args[i], h)


def directional(f, xs, ts, h=H):
    """``(f(*(x + h t)) - f(*(x - h t))) / 2h`` in float64 (complex128 for a complex output),
    the derivative of ``f`` at ``xs`` along the tangents ``ts``; a ``None`` tangent keeps its
    input fixed."""
    def moved(sign):
        return [x if t is None else x + sign * h * t for x, t in zip(xs, ts)]
    hi, lo = np.asarray(f(*moved(1))), np.asarray(f(*moved(-1)))
    wide = np.complex128 if np.iscomplexobj(hi) else np.float64
    return (hi.astype(wide) - lo.astype(wide)) / (2 * h)
