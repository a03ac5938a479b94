"""Recipes of complex linear algebra, NumPy's orderings of complex values, ``np.sign`` of
complex values, and complex numbers built from real values (``complex(a, b)``,
``np.complex128(x)``, ``1j * np.sum(x)``); feature ``complex`` (docs/complex.md).

Matrices are built as in recipes_linalg.py, complex: a small complex term (at most
0.1 in magnitude) plus a diagonal ``3, 6, 9 ...``, so the spectra stay simple and the
matrices well conditioned; a Hermitian one is ``s s^H / 2`` plus that diagonal.
Eigenvectors and singular vectors come back to real numbers through ``|v| ** 2``,
which does not depend on their free phases. Every recipe ends in real values.
"""
from __future__ import annotations

import numpy as np

from .recipes_complex import _complex


def _diag(n: int, like: str) -> str:
    return f"np.arange(3.0, {3 * n + 1}.0, 3.0, dtype={like}.dtype)"


def _small(g) -> tuple[str, str, int, int]:
    """A complex (m, n) matrix of entries at most 0.1 in magnitude, and the array it is
    made of (constants take its dtype: float32 inputs keep complex64 values)."""
    inputs = g.visible(lambda v: isinstance(v, np.ndarray) and v.dtype.kind == "c"
                       and v.ndim == 2)
    if inputs and g.coin(0.5):
        z = g.choice(inputs)
        m, n = g.val(z).shape
        return f"(0.1 * {z} / (1.0 + np.abs({z})))", z, m, n
    x = g.arr(2, 2)
    m, n = g.val(x).shape
    return f"(0.05 * (np.tanh({x}) + 1j * np.sin({x})))", x, m, n


def _matrix(g, tall=False) -> str:
    s, x, m, n = _small(g)
    if tall and m < n:
        s, (m, n) = f"{s}.T", (n, m)
    return f"({s} + np.eye({m}, {n}, dtype={x}.dtype) * {_diag(n, x)})"


def _hermitian(g) -> str:
    s, x, m, _ = _small(g)
    return f"({s} @ np.conj({s}).T * 0.5 + np.eye({m}, dtype={x}.dtype) * {_diag(m, x)})"


def _square(g) -> str:
    s, x, m, _ = _small(g)
    return f"({s} @ {s}.T + np.eye({m}, dtype={x}.dtype) * {_diag(m, x)})"


def _one_of(make, *templates):
    """A recipe: one of ``templates`` applied to the value ``make(g)`` builds."""
    def recipe(g):
        value = make(g)
        return g.choice(templates).format(value)
    return recipe


def _norm(g):
    z = _complex(g)
    if g.coin():
        ord_ = g.choice(["", ", 1", ", 2", ", np.inf", ", 3.0", ", 0.5"])
        return f"np.linalg.norm({z}.ravel(){ord_})"
    ord_ = g.choice(["", ", 'fro'", ", 'nuc'", ", 2", ", 1", ", np.inf", ", -np.inf"])
    return f"np.linalg.norm(np.atleast_2d({z}){ord_})"


def _scalar(g) -> str:
    """A 0-d real value: a float, or a reduction of an array."""
    return g.choice([g.flt(), f"np.sum({g.arr()})", f"np.mean({g.arr()})"])


def _builtin_complex(g):
    a, b = _scalar(g), _scalar(g)
    return g.choice([f"np.abs(complex({a}, {b}) * {g.num()} + 1.0)",
                     f"np.real(complex({a}, {b}) * np.exp(1j * {g.num()}))",
                     f"np.imag(complex({a}) * (1.5 + 0.5j))"])


def _complex128(g):
    """complex128 values of float32 inputs come back to the input's dtype (the fuzzer
    keeps float32 programs float32 unless feature mixed_dtype is on)."""
    x = g.arr(0)
    return g.choice([f"np.real(np.complex128({x}) * (0.5 - 1j) * {g.partner(x)})",
                     f"np.abs(np.complex128({x}) + 2j)"]) + f".astype({x}.dtype)"


def _complex64(g):
    """np.complex64 rounds to float32 precision, a staircase finite differences cannot
    judge: it gets values float32 holds exactly (whole numbers)."""
    x = g.num()
    return f"np.real(np.complex64(np.floor({x})) * (1.5 - 1j) * {g.partner(x)})"


def _times_scalar(g):
    x = g.num()
    return g.choice([f"np.abs({x} + 1j * np.sum({g.arr()}))",
                     f"np.imag((0.5 - 1j) * np.mean({g.arr()}) * {x})"])


RECIPES = {
    "pattern.complex_eigh": _one_of(
        _hermitian, "np.linalg.eigh({0})[0]", "np.abs(np.linalg.eigh({0})[1]) ** 2",
        "np.abs(np.linalg.eigh({0}, UPLO='U')[1]) ** 2", "np.linalg.eigvalsh({0})"),
    "pattern.complex_svd": _one_of(
        _matrix, "np.linalg.svd({0}, compute_uv=False)",
        "np.abs(np.linalg.svd({0}, full_matrices=False)[0]) ** 2",
        "np.abs(np.linalg.svd({0}, full_matrices=False)[2]) ** 2"),
    "pattern.complex_qr": _one_of(
        lambda g: _matrix(g, tall=True), "np.real(np.linalg.qr({0})[0])",
        "np.imag(np.linalg.qr({0})[1])", "np.abs(np.linalg.qr({0})[1] + 1.0)"),
    "pattern.complex_cholesky": _one_of(
        _hermitian, "np.real(np.linalg.cholesky({0}))",
        "np.imag(np.linalg.cholesky({0}, upper=True))"),
    "pattern.complex_determinants": _one_of(
        _square, "np.linalg.slogdet({0})[1]", "np.imag(np.linalg.slogdet({0})[0])",
        "np.abs(np.linalg.det({0}))", "np.abs(np.linalg.inv({0}))",
        "np.real(np.linalg.pinv({0}) * 1j)"),
    "pattern.complex_norm": _norm,
    "pattern.complex_orders": _one_of(
        _complex, "np.real(np.sort({0}, axis=None))", "np.abs(np.max({0}))",
        "np.imag(np.min({0}))", "np.abs(np.amax({0}) - np.amin({0}))",
        "np.real(np.sort(np.atleast_1d({0}))) * 2.0"),
    "pattern.complex_spread": _one_of(
        _complex, "np.std({0})", "np.var({0})", "np.std(np.atleast_1d({0}), axis=0)"),
    "pattern.complex_sign": _one_of(
        _complex, "np.real(np.sign({0}) * (0.5 - 1j))", "np.imag(np.sign({0}))"),
    "pattern.complex_times_scalar": _times_scalar,
    "builtins.complex": _builtin_complex,
    "numpy.complex128": _complex128,
    "numpy.complex64": _complex64,
}
FEATURES = dict.fromkeys(RECIPES, "complex")
