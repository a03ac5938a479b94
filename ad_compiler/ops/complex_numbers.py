"""Complex numbers: ``real``, ``imag``, ``conj``, ``angle``, ``np.sign`` of complex values,
complex numbers built from real ones (``complex(a, b)``, ``np.complex128(x)``), and which
primitives take complex values.

The convention is JAX's (docs/complex.md). A cotangent ``ct`` of a value ``w``
pairs with a change ``dw`` as ``Re(sum(ct * dw))`` (no conjugation), so a VJP is
the *transpose* of the derivative, not its Hermitian adjoint:

* a holomorphic primitive keeps its real-valued rule unchanged, ``ct * f'(z)``
  (``mul``: ``ct * y``; ``matmul``: ``ct @ y.T``);
* ``conj``: ``conj(ct)``; ``real``: ``ct`` as a complex number; ``imag``:
  ``-1j * ct``; ``abs``: ``ct * conj(sign(z))`` (0 at ``z = 0``);
* a real input that meets complex values gets the real part of its cotangent
  (``ad/reverse.py`` and ``Builder.fit`` project it).

For a real-valued ``L`` the gradient of ``z = x + iy`` is then
``dL/dx - i dL/dy`` (``grad(lambda z: abs(z)**2)(1+2j) == 2-4j``, as JAX and
autograd give). Forward mode is the real-linear derivative: tangents are
complex, ``jvp`` of ``conj`` is ``conj(t)``, of ``abs`` ``Re(conj(sign(z)) t)``.

:data:`COMPLEX` lists the primitives whose rules were checked on complex values
(tests/ops/test_complex.py checks each against complex finite differences, first
and second order); any other primitive that meets a complex value is a located
:class:`~ad_compiler.errors.GradTypeError` (``api/compiler.py``), never a guess.
"""
from __future__ import annotations

import numpy as np

from ..ad.batching import to_front
from ..ad.rules import attribute, ex, lowering, method, primitive
from ..ir.core import AType
from ._batch import broadcasting
from ._infer import run_infer

F = "complex"
_EXAMPLES = (ex((3,)), ex((2, 3)), ex(float))


def conj_if_complex(b, v):
    """``conj(v)`` for the rules that hold for real and complex values; ``v`` itself
    (no op) when real."""
    return b.conj(v) if b.type_of(v).dtype.kind == "c" else v


def real_if_complex(b, v):
    """``real(v)``: the real tangent of a real result computed through complex values."""
    return b.real(v) if b.type_of(v).dtype.kind == "c" else v


def _real_vjp(b, ct, out, x):
    xt = b.type_of(x)
    return (b.cast(ct, dtype=xt.dtype) if xt.dtype.kind == "c" else ct,)


def _imag_vjp(b, ct, out, x):
    return (b.mul(ct, b.const(-1j)) if b.type_of(x).dtype.kind == "c" else None,)


def _imag_jvp(b, t, out, x):
    return None if t[0] is None or b.type_of(x).dtype.kind != "c" else b.imag(t[0])


# np.real / np.imag of an array are views into it (of a real array, np.real is the array)
primitive("real", emit="np.real({0})", infer=run_infer("real"), family=F, view=True,
          vjp=_real_vjp, jvp=lambda b, t, out, x: None if t[0] is None else b.real(t[0]),
          examples=_EXAMPLES, batch=broadcasting("real"))
primitive("imag", emit="np.imag({0})", infer=run_infer("imag"), family=F, view=True,
          vjp=_imag_vjp, jvp=_imag_jvp, examples=_EXAMPLES, batch=broadcasting("imag"))
# the method form: a Python number stays a Python number ((1+2j).conjugate() is a complex,
# np.conj(1+2j) an np.complex128: lower_conj adds that cast)
primitive("conj", emit="{0}.conjugate()", infer=run_infer("conj"), family=F,
          vjp=lambda b, ct, out, x: (b.fit(b.conj(ct), x),),
          jvp=lambda b, t, out, x: None if t[0] is None else b.conj(t[0]),
          examples=_EXAMPLES, batch=broadcasting("conj"))


@lowering(np.real)
@attribute("real")
def lower_real(b, x):
    return b.real(b.const(x))


@lowering(np.imag)
@attribute("imag")
def lower_imag(b, x):
    return b.imag(b.const(x))


@lowering(np.conj, np.conjugate)
def lower_conj(b, x):
    out = b.conj(b.const(x))
    t = b.type_of(out)
    return b.npscalar(out, dtype=t.dtype) if t.weak else out


@method("conj", "conjugate")
def lower_conj_method(b, x):
    return b.conj(x)


@lowering(np.angle)
def lower_angle(b, z, deg=False):
    """``np.angle``: ``arctan2(imag, real)`` (NumPy's own definition), times 180/pi
    with ``deg=True``."""
    z = b.const(z)
    out = b.arctan2(b.imag(z), b.real(z))
    return b.mul(out, b.const(180 / np.pi)) if deg else out


def _sign_slope(b, out, x):
    """``1 / (2 |z|)``, 0 at ``z = 0`` (where ``sign`` is 0, as ``abs`` takes it)."""
    size = b.abs(x)
    safe = b.where(b.equal(size, b.const(0)), b.const(1), size)
    return b.div(b.mul(b.abs(out), b.const(0.5)), safe)


def _sign_vjp(b, ct, out, x):
    """``s = z / |z|`` moves as ``ds = (dz - s^2 conj(dz)) / (2 |z|)`` (``dz`` along ``s``
    does not turn it); transposed: ``(ct - conj(ct s^2)) / (2 |z|)``."""
    turned = conj_if_complex(b, b.mul(ct, b.mul(out, out)))
    return (b.fit(b.mul(b.sub(ct, turned), _sign_slope(b, out, x)), x),)


def _sign_jvp(b, t, out, x):
    if t[0] is None:
        return None
    turned = b.mul(b.mul(out, out), conj_if_complex(b, t[0]))
    return b.mul(b.sub(t[0], turned), _sign_slope(b, out, x))


# NumPy 2's sign of a complex z: z / |z| (0 at 0); of a real x the same rules give 0
primitive("complex_sign", emit="np.sign({0})", infer=run_infer("complex_sign"), family=F,
          vjp=_sign_vjp, jvp=_sign_jvp, domain="nonzero", examples=_EXAMPLES,
          batch=broadcasting("complex_sign"))


@lowering(np.sign)
def lower_sign(b, x):
    """``np.sign``: a step function of real values (no derivative), ``z / |z|`` of complex."""
    x = b.const(x)
    return b.complex_sign(x) if b.type_of(x).dtype.kind == "c" else b.sign(x)


def _pycomplex_infer(re: AType, im: AType) -> AType:
    for t in (re, im):
        if t.shape != () or t.dtype.kind not in "fiub":
            raise ValueError(f"complex() needs 0-d real values, got {t}")
    return AType((), np.dtype(np.complex128), True)


def _pycomplex_jvp(b, t, out, re, im):
    if t[0] is None and t[1] is None:
        return None
    zero = b.const(0.0)
    return b.pycomplex(zero if t[0] is None else t[0], zero if t[1] is None else t[1])


def _pycomplex_batch(b, axes, re, im):
    """A batch of ``complex(re, im)``: the complex128 array ``re + 1j * im``."""
    re, im = (v if a is None else to_front(b, v, a) for v, a in zip((re, im), axes))
    whole = b.cast(re, dtype=np.dtype(np.complex128))
    return b.add(whole, b.mul(im, b.const(1j))), 0


# Python's complex(re, im) of one-element real values: a Python complex (``re + 1j im``
# pairs with a cotangent ct as Re(ct) dre - Im(ct) dim)
primitive("pycomplex", emit="complex({0}, {1})", infer=_pycomplex_infer, family=F,
          dynamic=False, vjp=lambda b, ct, out, re, im: (
              b.fit(b.real(ct), re), b.fit(b.neg(b.imag(ct)), im)),
          jvp=_pycomplex_jvp, examples=[ex(float, float), ex((), ()), ex((), float)],
          batch=_pycomplex_batch)


def _lower_numpy_complex(scalar_type):
    """``np.complex128(x)`` / ``np.complex64(x)``: a NumPy scalar of a 0-d ``x`` (a
    ``npscalar``), an array cast of an array (as NumPy's scalar types do)."""
    dtype = np.dtype(scalar_type)

    def lower(b, x=0.0):
        x = b.const(x)
        t = b.type_of(x)
        if t.shape == ():
            return b.npscalar(x, dtype=dtype)
        return x if t.dtype == dtype else b.cast(x, dtype=dtype)
    return lower


for _type in (np.complex128, np.complex64):
    lowering(_type)(_lower_numpy_complex(_type))


def _keeps_complex(op) -> bool:
    """Complex inputs give a complex result: ``float(z)``, ``np.float64(z)`` and complex
    values added into a real array (NumPy's UFuncTypeError for an array) are refused;
    ``np.real`` says what is meant."""
    return op.result.type.dtype.kind == "c" or not any(
        getattr(v.type, "dtype", None) is not None and v.type.dtype.kind == "c"
        for v in op.inputs)


#: primitive -> True, or ``ok(op) -> bool``: the rules hold for complex values (``sign`` of
#: a complex z is ``complex_sign``; ``gap_divide`` divides by gaps of real eigenvalues)
COMPLEX: dict = dict.fromkeys((
    # new here, and values without a derivative
    "real", "imag", "conj", "const", "stop_gradient", "zeros_like", "ones_like",
    "equal", "not_equal", "isnan", "isfinite", "isinf",
    # holomorphic elementwise: the real rule ct * f'(z) is the transpose
    "add", "sub", "mul", "div", "neg", "pow", "pow_scalar", "exp", "log", "sin", "cos", "tan",
    "tanh", "sinh", "cosh", "sqrt", "square", "reciprocal", "log1p", "expm1", "log2", "log10",
    "exp2", "arcsin", "arccos", "arctan", "arctanh", "arcsinh", "arccosh", "sigmoid",
    "abs", "where", "copy",
    # linear data movement and indexing
    "reshape", "broadcast_to", "transpose", "expand_dims", "squeeze", "slice_axis", "pad",
    "concat", "stack", "getitem", "gather", "tile", "repeat", "roll", "diagonal", "diagonal_put", "tril", "triu",
    "list_get", "stack_list", "unstack", "list_zeros", "list_add_at", "list_add",
    "sum_to", "broadcast_like", "reshape_like", "dim",
    # reductions, scans, products
    "sum", "mean", "prod", "cumsum", "cumprod", "matmul", "tensordot", "einsum", "cross",
    "inv", "det", "solve",
    # discrete Fourier transforms (ops/fft.py)
    "fftn", "ifftn", "rfftn", "irfftn",
    # Hermitian and complex linear algebra (ops/decompositions.py, ops/norms.py)
    "pinv", "lstsq", "slogdet", "slogdet_sign", "cholesky", "eigh", "eigvalsh", "svd", "svdvals",
    "qr", "norm", "recip_nonzero",
    # NumPy's complex semantics: |x - mean|, lexicographic order, z / |z|
    "std", "max", "min", "argsort", "argmax", "argmin", "complex_sign",
    "pycomplex",
    # lexicographic order (ops/elementwise.py), NumPy's median of complex values (its
    # lexicographic middle), rounding of both parts (no derivative)
    "maximum", "minimum", "less", "less_equal", "greater", "greater_equal", "median",
    "quantile_weights",
    "round", "rint",
    # a cast to a real dtype, or complex values written into a real array (a Python
    # complex there is a TypeError, ops/indexing.py), drop the imaginary part (NumPy's
    # ComplexWarning): ``real``
    "cast", "astype", "index_set",
), True) | dict.fromkeys(("npscalar", "pyfloat", "index_add", "index_sub", "scatter_add"),
                        _keeps_complex) | {
    "gap_divide": lambda op: op.inputs[1].type.dtype.kind != "c"}
