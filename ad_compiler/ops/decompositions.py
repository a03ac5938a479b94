"""``np.linalg``: inverses, solves, determinants and the decompositions, with closed-form rules.

Every primitive works on stacks of matrices (leading axes are batch axes, as in
NumPy) and keeps float32 as float32; integer inputs give float64, as NumPy's
``linalg`` does.

**Several results.** The IR's values are arrays (or lists of one element type),
so a function with several results (``eigh``, ``svd``, ``qr``, ``slogdet``,
``lstsq``) is one primitive with a static ``part`` param: ``eigh(x, part=1)`` is
``np.linalg.eigh(x)[1]``. The lowering of ``np.linalg.eigh`` returns the tuple
``(eigh(x, part=0), eigh(x, part=1))``. Each component has its own VJP and JVP,
so a result the user never reads is removed with its computation, and a
gradient flows only through the components used (the eigenvalues' adjoint does
not need the spectrum to be simple; the eigenvectors' does). The price is that
a decomposition whose several components are used is computed once per
component in the forward pass (an adjoint asking for a component the forward
pass already computed shares it through CSE).

**Triangles.** ``np.linalg.cholesky``, ``eigh`` and ``eigvalsh`` read one
triangle of their input (the lower one by default) and ignore the other. The
derivative is that of the same computation: the cotangent is zero in the
triangle not read, and the off-diagonal entries read count twice (each stands
for two entries of the symmetric matrix). For a symmetric input built in the
function (``a + a.T``) the chain rule gives the usual symmetric gradient.

**Degenerate spectra.** The eigenvectors' (and singular vectors') adjoints
divide by eigenvalue gaps, through the primitive ``gap_divide(a, w, sign)`` =
``F * (a + sign * a^T)`` with ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal.
Where two eigenvalues coincide (to rounding) the quotient is 0/0 and its limit
is not determined by the values at hand. The entry is 0 when its numerator is
exactly 0 (no cotangent flows through that pair of vectors: the loss reads
only eigenvectors of simple eigenvalues); otherwise the adjoint raises
:class:`~ad_compiler.errors.GradValueError` at run time. That includes losses
which do not depend on the basis of the eigenspace (``v @ diag(f(w)) @ v.T``)
and are differentiable there: their derivative is a limit the per-component
adjoints cannot form, so it is refused rather than returned wrong.

Rules, with ``'`` the matrix transpose of a batch (Giles, "An extended
collection of matrix derivative results", 2008; Townsend, "Differentiating the
singular value decomposition", 2016; Murray, "Differentiation of the Cholesky
decomposition", 2016; Walter and Lehmann, "Algorithmic differentiation of linear
algebra functions", 2012):

* ``inv``: ``dY = -Y dA Y``; ``Ā = -Y' Ȳ Y'``;
* ``solve``: ``dX = solve(A, dB - dA X)``; ``B̄ = solve(A', X̄)``, ``Ā = -B̄ X'``;
* ``det`` / ``slogdet``: ``Ā = d̄ det inv(A)'`` / ``l̄ inv(A)'``;
* ``cholesky``: ``dL = L Φ(L⁻¹ dA L⁻'))``, Φ the lower triangle with half the diagonal;
* ``eigh``: ``dw = diag(V' dA V)``, ``dV = V (F ∘ (V' dA V))``;
* ``svd`` (``full_matrices=False``): Townsend's formulas, the terms with
  ``I - U U'`` / ``I - V V'`` only where the matrix is not square; they divide by
  the singular values through ``recip_nonzero``, which raises ``GradValueError``
  on a zero singular value (the vectors of a rank-deficient non-square matrix
  have no derivative);
* ``qr`` (``mode='reduced'``, ``m >= n``): ``C = Q' dA R⁻¹``,
  ``Ω = tril(C, -1) - tril(C, -1)'``, ``dQ = Q (Ω - C) + dA R⁻¹``, ``dR = (C - Ω) R``;
* ``pinv`` (constant, full rank): Golub and Pereyra's derivative;
* ``lstsq``: ``x = pinv(A) b`` for full-rank ``A`` (a rank-deficient ``A`` is a
  run-time error: the solution is not differentiable there).
"""
from __future__ import annotations

from functools import reduce

import numpy as np

from ..ad.rules import ex, lowering, primitive
from ..errors import UnsupportedOperationError
from ..ir.builder import fit
from ..ir.core import AType
from ..ad.batching import materialize
from ._batch import batch_solve, example_ndim, leading
from ._infer import as_float, promote
from .linalg import swap_last

F = "linalg"
_T = swap_last

# NumPy's named result tuples (``np.linalg.eigh(a).eigenvalues``), found by calling
_EighResult = type(np.linalg.eigh(np.eye(1)))
_SVDResult = type(np.linalg.svd(np.eye(1)))
_QRResult = type(np.linalg.qr(np.eye(1)))
_SlogdetResult = type(np.linalg.slogdet(np.eye(1)))


# -- helpers over batches of matrices ------------------------------------------------------

def _mm(b, *values):
    return reduce(b.matmul, values)


def _dtype(b, v):
    return b.type_of(v).dtype


def _mask(b, v, n: int, kind: str):
    """A constant (n, n) matrix of ``v``'s dtype: ``eye``, ``lower``/``upper`` (strict
    triangles), ``half`` (strict lower triangle plus half the diagonal)."""
    eye = np.eye(n)
    value = {"eye": eye, "lower": np.tril(np.ones((n, n)), -1),
             "upper": np.triu(np.ones((n, n)), 1),
             "half": np.tril(np.ones((n, n)), -1) + 0.5 * eye}[kind]
    return b.const(value.astype(_dtype(b, v)))


def _col(b, w):
    """``w[..., :, None]``."""
    return b.reshape(w, shape=b.type_of(w).shape + (1,))


def _row(b, w):
    """``w[..., None, :]``."""
    shape = b.type_of(w).shape
    return b.reshape(w, shape=shape[:-1] + (1,) + shape[-1:])


def _scalar(b, s):
    """A batch of scalars ``s[..., None, None]``, to scale a batch of matrices."""
    return b.reshape(s, shape=b.type_of(s).shape + (1, 1))


def _diag_part(b, m):
    """``diagonal(m, axis1=-2, axis2=-1)`` as ``sum(m * I, -1)``."""
    n = b.type_of(m).shape[-1]
    return b.sum(b.mul(m, _mask(b, m, n, "eye")), axis=b.type_of(m).ndim - 1)


def _trace_product(b, x, y):
    """``trace(x' y)`` per matrix of the batch."""
    nd = b.type_of(x).ndim
    return b.sum(b.mul(x, y), axis=(nd - 2, nd - 1))


def _symmetric(b, t, lower: bool):
    """The symmetric matrix a function reading only one triangle of ``t`` sees."""
    n = b.type_of(t).shape[-1]
    strict = b.mul(t, _mask(b, t, n, "lower" if lower else "upper"))
    diag = b.mul(t, _mask(b, t, n, "eye"))
    return b.add(b.add(strict, diag), _T(b, strict))


def _onto_triangle(b, g, lower: bool):
    """The cotangent of the triangle read, given ``g``, that of the symmetric matrix."""
    n = b.type_of(g).shape[-1]
    strict = b.mul(b.add(g, _T(b, g)), _mask(b, g, n, "lower" if lower else "upper"))
    return b.add(strict, b.mul(g, _mask(b, g, n, "eye")))


def _square_infer(name):
    def check(t: AType) -> AType:
        if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
            raise ValueError(f"np.linalg.{name}: expects square matrices (..., n, n), got {t}")
        return as_float(AType(t.shape, t.dtype, False))
    return check


def _matrices(name, t: AType) -> AType:
    if t.ndim < 2:
        raise ValueError(f"np.linalg.{name}: expects matrices (..., m, n), got {t}")
    return as_float(AType(t.shape, t.dtype, False))


def _with_shape(t: AType, shape) -> AType:
    return AType(tuple(shape), t.dtype, False)


def _sum_terms(b, terms):
    terms = [v for v in terms if v is not None]
    return reduce(b.add, terms) if terms else None


# -- inv, det, slogdet ----------------------------------------------------------------------

primitive(
    "inv", emit="np.linalg.inv({0})", infer=_square_infer("inv"), family=F,
    vjp=lambda b, ct, out, x: (b.neg(_mm(b, _T(b, out), ct, _T(b, out))),),
    jvp=lambda b, t, out, x: b.neg(_mm(b, out, t[0], out)),
    examples=[ex((3, 3)), ex((2, 2, 2))], domain="wellcond", aliases=(np.linalg.inv,),
    batch=leading("inv"),
)


def _det_infer(t):
    return _with_shape(_square_infer("det")(t), t.shape[:-2])


primitive(
    "det", emit="np.linalg.det({0})", infer=_det_infer, family=F,
    vjp=lambda b, ct, out, x: (b.mul(_scalar(b, b.mul(ct, out)), _T(b, b.inv(x))),),
    jvp=lambda b, t, out, x: b.mul(out, _trace_product(b, _T(b, b.inv(x)), t[0])),
    examples=[ex((3, 3)), ex((2, 2, 2))], domain="wellcond", aliases=(np.linalg.det,),
    batch=leading("det"),
)
primitive("slogdet_sign", emit="np.linalg.slogdet({0})[0]", infer=_det_infer, family=F,
          nondiff=True, examples=[ex((3, 3))], domain="wellcond", batch=leading("slogdet_sign"))
primitive(
    "slogdet", emit="np.linalg.slogdet({0})[1]", infer=_det_infer, family=F,
    vjp=lambda b, ct, out, x: (b.mul(_scalar(b, ct), _T(b, b.inv(x))),),
    jvp=lambda b, t, out, x: _trace_product(b, _T(b, b.inv(x)), t[0]),
    examples=[ex((3, 3)), ex((2, 2, 2))], domain="wellcond",
    batch=leading("slogdet"),
)


@lowering(np.linalg.slogdet)
def lower_slogdet(b, a):
    """``(sign, logabsdet)``; the sign is piecewise constant (no derivative)."""
    a = b.const(a)
    return _SlogdetResult(b.slogdet_sign(a), b.slogdet(a))


# -- solve ----------------------------------------------------------------------------------

def _solve_infer(a: AType, rhs: AType) -> AType:
    _square_infer("solve")(a)
    n = a.shape[-1]
    dtype = as_float(promote(a, rhs)).dtype
    if rhs.ndim == 1:
        if rhs.shape[0] != n:
            raise ValueError(f"np.linalg.solve: {a} and {rhs} do not match")
        return AType(a.shape[:-1], dtype, False)
    if rhs.shape[-2] != n:
        raise ValueError(f"np.linalg.solve: {a} and {rhs} do not match")
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    return AType(tuple(batch) + rhs.shape[-2:], dtype, False)


def _as_columns(b, v, vector: bool):
    return _col(b, v) if vector else v


def _solve_vjp(b, ct, out, a, rhs):
    vector = b.type_of(rhs).ndim == 1
    g_rhs = b.solve(_T(b, a), _as_columns(b, ct, vector))
    g_a = b.neg(b.matmul(g_rhs, _T(b, _as_columns(b, out, vector))))
    if vector:
        g_rhs = b.reshape(g_rhs, shape=b.type_of(ct).shape)
    return b.fit(g_a, a), b.fit(g_rhs, rhs)


def _solve_jvp(b, t, out, a, rhs):
    vector = b.type_of(rhs).ndim == 1
    if t[0] is None:
        return b.solve(a, t[1])
    moved = b.neg(b.matmul(t[0], _as_columns(b, out, vector)))
    if t[1] is not None:
        moved = b.add(moved, _as_columns(b, t[1], vector))
    dx = b.solve(a, moved)
    return b.reshape(dx, shape=b.type_of(out).shape) if vector else dx


primitive(
    "solve", emit="np.linalg.solve({0}, {1})", infer=_solve_infer, family=F,
    vjp=_solve_vjp, jvp=_solve_jvp, domain="wellcond", aliases=(np.linalg.solve,),
    examples=[ex((3, 3), (3,)), ex((3, 3), (3, 2)), ex((2, 3, 3), (3,)),
              ex((2, 3, 3), (3, 2)), ex((3, 3), (2, 3, 1))],
    batch=batch_solve,
)


# -- cholesky -------------------------------------------------------------------------------

def _cholesky_parts(b, out, upper):
    """``L`` (lower) and ``inv(L)`` of the result."""
    low = _T(b, out) if upper else out
    return low, b.inv(low)


def _cholesky_vjp(b, ct, out, x, *, upper=False):
    low, inv_low = _cholesky_parts(b, out, upper)
    ct_low = _T(b, ct) if upper else ct
    n = b.type_of(x).shape[-1]
    phi = b.mul(b.matmul(_T(b, low), ct_low), _mask(b, x, n, "half"))
    g = _mm(b, _T(b, inv_low), phi, inv_low)
    return (_onto_triangle(b, g, lower=not upper),)


def _cholesky_jvp(b, t, out, x, *, upper=False):
    low, inv_low = _cholesky_parts(b, out, upper)
    n = b.type_of(x).shape[-1]
    inner = _mm(b, inv_low, _symmetric(b, t[0], lower=not upper), _T(b, inv_low))
    d_low = b.matmul(low, b.mul(inner, _mask(b, x, n, "half")))
    return _T(b, d_low) if upper else d_low


def _cholesky_infer(t, *, upper=False):
    return _square_infer("cholesky")(t)


primitive(
    "cholesky", emit="np.linalg.cholesky({0}, upper={upper})", infer=_cholesky_infer,
    vjp=_cholesky_vjp, jvp=_cholesky_jvp, family=F, domain="spd",
    examples=[ex((3, 3), upper=False), ex((2, 3, 3), upper=False), ex((3, 3), upper=True)],
    batch=leading("cholesky"),
)


@lowering(np.linalg.cholesky)
def lower_cholesky(b, a, upper=False):
    return b.cholesky(b.const(a), upper=bool(upper))


# -- eigenvalue gaps --------------------------------------------------------------------------

def _gap_infer(a: AType, w: AType, *, sign=0) -> AType:
    if a.ndim < 2 or a.shape[:-1] != w.shape or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"gap_divide: expects (..., n, n) and (..., n), got {a} and {w}")
    return AType(a.shape, promote(a, w).dtype, False)


def _gap_vjp(b, ct, out, a, w, *, sign=0):
    weighted = b.mul(ct, b.gap_divide(out, w))
    nd = b.type_of(out).ndim
    g_w = b.sub(b.sum(weighted, axis=nd - 1), b.sum(weighted, axis=nd - 2))
    return b.gap_divide(ct, w, sign=-sign), g_w


def _gap_jvp(b, t, out, a, w, *, sign=0):
    terms = [b.gap_divide(t[0], w, sign=sign) if t[0] is not None else None]
    if t[1] is not None:
        moved = b.sub(_row(b, t[1]), _col(b, t[1]))  # dw[j] - dw[i]
        terms.append(b.neg(b.mul(moved, b.gap_divide(out, w))))
    return _sum_terms(b, terms)


primitive(
    "gap_divide", emit="rt.gap_divide({0}, {1}, {sign})", infer=_gap_infer, family=F,
    vjp=_gap_vjp, jvp=_gap_jvp, domain="spd",
    examples=[ex((3, 3), (3,), sign=0), ex((3, 3), (3,), sign=-1),
              ex((3, 3), (3,), sign=1)],
    batch=leading("gap_divide"),
)


# -- eigh, eigvalsh ---------------------------------------------------------------------------

def _uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"UPLO argument must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


def _eigh_infer(t, *, UPLO="L", part=0):
    out = _square_infer("eigh")(t)
    return _with_shape(out, t.shape[:-1]) if part == 0 else out


def _values_vjp(b, ct, x, UPLO):
    vectors = b.eigh(x, UPLO=UPLO, part=1)
    g = b.matmul(b.mul(vectors, _row(b, ct)), _T(b, vectors))
    return _onto_triangle(b, g, _uplo(UPLO))


def _values_jvp(b, t, x, UPLO):
    vectors = b.eigh(x, UPLO=UPLO, part=1)
    moved = b.matmul(_symmetric(b, t, _uplo(UPLO)), vectors)
    return b.sum(b.mul(vectors, moved), axis=b.type_of(x).ndim - 2)


def _eigh_vjp(b, ct, out, x, *, UPLO="L", part=0):
    if part == 0:
        return (_values_vjp(b, ct, x, UPLO),)
    values = b.eigh(x, UPLO=UPLO, part=0)
    k = b.gap_divide(b.matmul(_T(b, out), ct), values, sign=-1)
    g = b.mul(_mm(b, out, k, _T(b, out)), b.const(0.5))
    return (_onto_triangle(b, g, _uplo(UPLO)),)


def _eigh_jvp(b, t, out, x, *, UPLO="L", part=0):
    if part == 0:
        return _values_jvp(b, t[0], x, UPLO)
    values = b.eigh(x, UPLO=UPLO, part=0)
    moved = _mm(b, _T(b, out), _symmetric(b, t[0], _uplo(UPLO)), out)
    return b.matmul(out, b.gap_divide(moved, values))


primitive(
    "eigh", emit="np.linalg.eigh({0}, UPLO={UPLO})[{part}]", infer=_eigh_infer, family=F,
    vjp=_eigh_vjp, jvp=_eigh_jvp, domain="spd",
    examples=[ex((3, 3), UPLO="L", part=0), ex((3, 3), UPLO="L", part=1),
              ex((2, 3, 3), UPLO="L", part=1), ex((3, 3), UPLO="U", part=1),
              ex((2, 3, 3), UPLO="U", part=0)],
    batch=leading("eigh"),
)
primitive(
    "eigvalsh", emit="np.linalg.eigvalsh({0}, UPLO={UPLO})",
    infer=lambda t, *, UPLO="L": _eigh_infer(t), family=F,
    vjp=lambda b, ct, out, x, *, UPLO="L": (_values_vjp(b, ct, x, UPLO),),
    jvp=lambda b, t, out, x, *, UPLO="L": _values_jvp(b, t[0], x, UPLO),
    domain="spd", examples=[ex((3, 3), UPLO="L"), ex((2, 3, 3), UPLO="U")],
    batch=leading("eigvalsh"),
)


@lowering(np.linalg.eigh)
def lower_eigh(b, a, UPLO="L"):
    """``(w, v)``: the eigenvalues (ascending) and the eigenvectors (columns)."""
    a = b.const(a)
    _uplo(UPLO)
    return _EighResult(b.eigh(a, UPLO=UPLO, part=0), b.eigh(a, UPLO=UPLO, part=1))


@lowering(np.linalg.eigvalsh)
def lower_eigvalsh(b, a, UPLO="L"):
    _uplo(UPLO)
    return b.eigvalsh(b.const(a), UPLO=UPLO)


# -- svd --------------------------------------------------------------------------------------

primitive(
    "recip_nonzero", emit="rt.reciprocal_nonzero({0})", infer=lambda t: t, family=F,
    vjp=lambda b, ct, out, s: (b.neg(b.mul(ct, b.mul(out, out))),),
    jvp=lambda b, t, out, s: b.neg(b.mul(t[0], b.mul(out, out))),
    domain="positive", examples=[ex((3,)), ex((2, 3))],
    batch=leading("recip_nonzero"),
)


def _svd_infer(t, *, part=1):
    t = _matrices("svd", t)
    m, n = t.shape[-2:]
    k = min(m, n)
    return _with_shape(t, t.shape[:-2] + ((m, k), (k,), (k, n))[part])


def _svd_parts(b, x):
    return b.svd(x, part=0), b.svd(x, part=1), b.svd(x, part=2)


def _values_of_svd_vjp(b, ct, x):
    u, _, vt = _svd_parts(b, x)
    return b.matmul(b.mul(u, _row(b, ct)), vt)


def _svd_vjp(b, ct, out, x, *, part=1):
    if part == 1:
        return (_values_of_svd_vjp(b, ct, x),)
    u, s, vt = _svd_parts(b, x)
    m, n = b.type_of(x).shape[-2:]
    squares = b.mul(s, s)
    if part == 0:  # U (F o (U'Ū - Ū'U)) S V' + (I - UU') Ū S⁻¹ V'
        k = b.gap_divide(b.matmul(_T(b, u), ct), squares, sign=-1)
        g = _mm(b, u, b.mul(k, _row(b, s)), vt)
        if m > n:
            rest = b.sub(ct, _mm(b, u, _T(b, u), ct))
            g = b.add(g, b.matmul(rest, b.mul(vt, _col(b, b.recip_nonzero(s)))))
        return (g,)
    # part 2 (V'): U S (F o (V'V̄ - V̄'V)) V' + U S⁻¹ V̄' (I - VV')
    k = b.gap_divide(b.matmul(vt, _T(b, ct)), squares, sign=-1)
    g = _mm(b, u, b.mul(_col(b, s), k), vt)
    if n > m:
        rest = b.sub(ct, _mm(b, ct, _T(b, vt), vt))
        g = b.add(g, b.matmul(b.mul(u, _row(b, b.recip_nonzero(s))), rest))
    return (g,)


def _svd_jvp(b, t, out, x, *, part=1):
    u, s, vt = _svd_parts(b, x)
    m, n = b.type_of(x).shape[-2:]
    dp = _mm(b, _T(b, u), t[0], _T(b, vt))
    if part == 1:
        return _diag_part(b, dp)
    squares = b.mul(s, s)
    if part == 0:  # U (F o (dP S + S dP')) + (I - UU') dA V S⁻¹
        du = b.matmul(u, b.gap_divide(b.mul(dp, _row(b, s)), squares, sign=1))
        if m > n:
            rest = b.sub(b.matmul(t[0], _T(b, vt)), b.matmul(u, dp))
            du = b.add(du, b.mul(rest, _row(b, b.recip_nonzero(s))))
        return du
    # d(V') = -(F o (S dP + dP' S)) V' + S⁻¹ U' dA (I - VV')
    dvt = b.neg(b.matmul(b.gap_divide(b.mul(_col(b, s), dp), squares, sign=1), vt))
    if n > m:
        rest = b.sub(b.matmul(_T(b, u), t[0]), b.matmul(dp, vt))
        dvt = b.add(dvt, b.mul(rest, _col(b, b.recip_nonzero(s))))
    return dvt


primitive(
    "svd", emit="np.linalg.svd({0}, full_matrices=False)[{part}]", infer=_svd_infer, family=F,
    vjp=_svd_vjp, jvp=_svd_jvp, domain="wellcond",
    examples=[ex((3, 3), part=1), ex((3, 3), part=0), ex((3, 3), part=2), ex((4, 2), part=0),
              ex((4, 2), part=2), ex((2, 4), part=0), ex((2, 4), part=2),
              ex((2, 3, 2), part=1), ex((2, 2, 3), part=0)],
    batch=leading("svd"),
)
primitive(
    "svdvals", emit="np.linalg.svd({0}, compute_uv=False)", infer=lambda t: _svd_infer(t),
    family=F, domain="wellcond",
    vjp=lambda b, ct, out, x: (_values_of_svd_vjp(b, ct, x),),
    jvp=lambda b, t, out, x: _svd_jvp(b, t, out, x, part=1),
    examples=[ex((3, 3)), ex((4, 2)), ex((2, 2, 3))], aliases=(np.linalg.svdvals,),
    batch=leading("svdvals"),
)


@lowering(np.linalg.svd)
def lower_svd(b, a, full_matrices=True, compute_uv=True, hermitian=False):
    """``(U, S, Vh)`` with ``full_matrices=False``; ``S`` alone with ``compute_uv=False``."""
    a = b.const(a)
    if hermitian:
        raise UnsupportedOperationError("np.linalg.svd(..., hermitian=True) is not supported",
                                        hint="use np.linalg.eigh for a symmetric matrix")
    if not compute_uv:
        return b.svdvals(a)
    m, n = b.type_of(a).shape[-2:]
    if full_matrices and m != n:
        raise UnsupportedOperationError(
            "np.linalg.svd of a non-square matrix needs full_matrices=False to be "
            "differentiated (the completed bases are not unique)",
            hint="call np.linalg.svd(a, full_matrices=False)")
    return _SVDResult(*_svd_parts(b, a))


# -- qr ---------------------------------------------------------------------------------------

def _qr_infer(t, *, part=0):
    t = _matrices("qr", t)
    m, n = t.shape[-2:]
    k = min(m, n)
    return _with_shape(t, t.shape[:-2] + ((m, k), (k, n))[part])


def _qr_parts(b, x):
    m, n = b.type_of(x).shape[-2:]
    if m < n:
        raise UnsupportedOperationError(
            f"the derivative of np.linalg.qr of a wide matrix ({m}x{n}) is not supported",
            hint="differentiate the QR decomposition of a square or tall matrix "
                 "(for instance of a.T)")
    q, r = b.qr(x, part=0), b.qr(x, part=1)
    return q, r, b.inv(r)


def _qr_vjp(b, ct, out, x, *, part=0):
    q, r, inv_r = _qr_parts(b, x)
    n = b.type_of(x).shape[-1]
    m = b.matmul(_T(b, q), ct) if part == 0 else b.neg(b.matmul(ct, _T(b, r)))
    c = b.sub(b.mul(b.sub(m, _T(b, m)), _mask(b, x, n, "lower")), m)
    g = b.matmul(q, c)
    if part == 0:
        g = b.add(ct, g)
    return (b.matmul(g, _T(b, inv_r)),)


def _qr_jvp(b, t, out, x, *, part=0):
    q, r, inv_r = _qr_parts(b, x)
    n = b.type_of(x).shape[-1]
    g = b.matmul(t[0], inv_r)
    c = b.matmul(_T(b, q), g)
    low = b.mul(c, _mask(b, x, n, "lower"))
    omega = b.sub(low, _T(b, low))
    if part == 0:
        return b.add(b.matmul(q, b.sub(omega, c)), g)
    return b.matmul(b.sub(c, omega), r)


primitive(
    "qr", emit="np.linalg.qr({0})[{part}]", infer=_qr_infer, family=F,
    vjp=_qr_vjp, jvp=_qr_jvp, domain="wellcond",
    examples=[ex((3, 3), part=0), ex((3, 3), part=1), ex((4, 2), part=0), ex((4, 2), part=1),
              ex((2, 3, 2), part=0), ex((2, 3, 3), part=1)],
    batch=leading("qr"),
)


@lowering(np.linalg.qr)
def lower_qr(b, a, mode="reduced"):
    """``(Q, R)`` of ``mode='reduced'`` (``R`` alone for ``mode='r'``)."""
    a = b.const(a)
    if mode not in ("reduced", "r"):
        raise UnsupportedOperationError(
            f"np.linalg.qr(..., mode={mode!r}) is not supported", hint="use mode='reduced'")
    if mode == "r":
        return b.qr(a, part=1)
    return _QRResult(b.qr(a, part=0), b.qr(a, part=1))


# -- pinv, lstsq ------------------------------------------------------------------------------

def _pinv_infer(t, *, rcond=None):
    t = _matrices("pinv", t)
    return _with_shape(t, t.shape[:-2] + (t.shape[-1], t.shape[-2]))


def pinv_cotangent(b, ct, p, a):
    """Ā given P̄ = ``ct`` for ``P = pinv(A)`` of constant (full) rank."""
    pt, ctt = _T(b, p), _T(b, ct)
    first = b.neg(_mm(b, pt, ct, pt))
    second = b.matmul(b.sub(ctt, _mm(b, a, p, ctt)), b.matmul(p, pt))
    third = b.matmul(b.matmul(pt, p), b.sub(ctt, _mm(b, ctt, p, a)))
    return b.add(b.add(first, second), third)


def pinv_tangent(b, t, p, a):
    """dP given dA = ``t`` for ``P = pinv(A)`` of constant (full) rank."""
    tt = _T(b, t)
    first = b.neg(_mm(b, p, t, p))
    second = b.matmul(b.matmul(p, _T(b, p)), b.sub(tt, _mm(b, tt, a, p)))
    third = b.matmul(b.sub(tt, _mm(b, p, a, tt)), b.matmul(_T(b, p), p))
    return b.add(b.add(first, second), third)


primitive(
    "pinv", emit="np.linalg.pinv({0}, rcond={rcond})", infer=_pinv_infer, family=F,
    vjp=lambda b, ct, out, a, *, rcond=None: (pinv_cotangent(b, ct, out, a),),
    jvp=lambda b, t, out, a, *, rcond=None: pinv_tangent(b, t[0], out, a),
    domain="wellcond", examples=[ex((3, 3), rcond=None), ex((4, 2), rcond=None),
                                 ex((2, 4), rcond=1e-10), ex((2, 3, 2), rcond=None)],
    batch=leading("pinv"),
)


@lowering(np.linalg.pinv)
def lower_pinv(b, a, rcond=None, hermitian=False):
    """``np.linalg.pinv``; differentiable where the rank is constant (full rank)."""
    if hermitian:
        raise UnsupportedOperationError("np.linalg.pinv(..., hermitian=True) is not supported")
    return b.pinv(b.const(a), rcond=rcond)


def _lstsq_infer(a: AType, rhs: AType, *, rcond=None) -> AType:
    """``(m, n)`` and ``(m,)`` or ``(m, k)`` as NumPy; a stack ``(..., m, n)`` (vmap) takes
    a stack of column blocks ``(..., m, k)``."""
    stack = a.ndim > 2 and rhs.ndim == a.ndim and rhs.shape[:-2] == a.shape[:-2]
    if not (stack or a.ndim == 2 and rhs.ndim in (1, 2)) or \
            rhs.shape[a.ndim - 2] != a.shape[-2]:
        raise ValueError(f"np.linalg.lstsq: expects a (m, n) matrix and a (m,) or (m, k) "
                         f"right-hand side, got {a} and {rhs}")
    shape = a.shape[:-2] + (a.shape[-1],) + rhs.shape[a.ndim - 1:]
    return AType(shape, as_float(promote(a, rhs)).dtype, False)


def _batch_lstsq(b, axes, a, rhs, *, rcond=None):
    """np.linalg.lstsq for each example: a stack of matrices and of column blocks (an
    example's right-hand side vector a column)."""
    vector = example_ndim(rhs, axes[1]) == 1
    a, rhs = materialize(b, a, axes[0]), materialize(b, rhs, axes[1])
    if vector:
        rhs = b.reshape(rhs, shape=rhs.type.shape + (1,))
    out = b.lstsq(a, rhs, rcond=rcond)
    return (b.reshape(out, shape=out.type.shape[:-1]) if vector else out), 0


def _lstsq_vjp(b, ct, out, a, rhs, *, rcond=None):
    p = b.pinv(a, rcond=rcond)
    vector = b.type_of(rhs).ndim == 1
    ct_p = b.matmul(_as_columns(b, ct, vector), _T(b, _as_columns(b, rhs, vector)))
    g_rhs = b.matmul(_T(b, p), ct)
    return b.fit(pinv_cotangent(b, ct_p, p, a), a), b.fit(g_rhs, rhs)


def _lstsq_jvp(b, t, out, a, rhs, *, rcond=None):
    p = b.pinv(a, rcond=rcond)
    terms = [b.matmul(pinv_tangent(b, t[0], p, a), rhs) if t[0] is not None else None,
             b.matmul(p, t[1]) if t[1] is not None else None]
    return _sum_terms(b, terms)


primitive(
    "lstsq", emit="rt.lstsq({0}, {1}, {rcond})", infer=_lstsq_infer, family=F,
    vjp=_lstsq_vjp, jvp=_lstsq_jvp, domain="wellcond",
    examples=[ex((4, 2), (4,), rcond=None), ex((4, 2), (4, 3), rcond=None),
              ex((3, 3), (3,), rcond=None), ex((2, 3), (2,), rcond=1e-10),
              ex((2, 4, 2), (2, 4, 3), rcond=None)],
    batch=_batch_lstsq,
)


@lowering(np.linalg.lstsq)
def lower_lstsq(b, a, rhs, rcond=None):
    """``(x, residuals, rank, s)`` for a full-rank ``a`` (else a run-time error)."""
    a, rhs = b.const(a), b.const(rhs)
    if b.type_of(a).ndim != 2:  # the primitive takes stacks (vmap); NumPy's one matrix
        raise UnsupportedOperationError(
            f"np.linalg.lstsq expects a (m, n) matrix, got {b.type_of(a)}",
            hint="solve a stack of problems with ms.vmap(np.linalg.lstsq)")
    x = b.lstsq(a, rhs, rcond=rcond)
    m, n = b.type_of(a).shape
    if m > n:
        resid = b.sub(rhs, b.matmul(a, x))
        residuals = b.sum(b.mul(resid, resid), axis=0)
        if b.type_of(rhs).ndim == 1:
            residuals = b.reshape(residuals, shape=(1,))
    else:
        residuals = b.const(np.empty(0, dtype=b.type_of(x).dtype))
    return x, residuals, np.int32(min(m, n)), b.svdvals(a)


# -- matrix_power -----------------------------------------------------------------------------

@lowering(np.linalg.matrix_power)
def lower_matrix_power(b, a, n):
    """``a`` multiplied by itself ``n`` times (``n`` static), by NumPy's own squarings."""
    a = b.const(a)
    t = b.type_of(a)
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise UnsupportedOperationError(
            "np.linalg.matrix_power needs an exponent known at compile time (a Python int)")
    _square_infer("matrix_power")(t)
    n = int(n)
    if n == 0:
        return b.broadcast_to(b.const(np.eye(t.shape[-1], dtype=t.dtype)), shape=t.shape)
    if n < 0:
        a, n = b.inv(a), -n
    if n <= 3:
        return reduce(b.matmul, [a] * n)
    result = square = None
    while n > 0:
        square = a if square is None else b.matmul(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else b.matmul(result, square)
    return result
