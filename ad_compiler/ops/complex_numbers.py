"""Complex numbers: ``real``, ``imag``, ``conj``, ``angle`` and which primitives take them.

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

from ..ad.rules import attribute, ex, lowering, method, primitive
from ._batch import broadcasting
from ._infer import run_infer

F = "complex"
_EXAMPLES = (ex((3,)), ex((2, 3)), ex(float))


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


def _keeps_complex(op) -> bool:
    """Complex inputs give a complex result: a cast to a real dtype, or complex values
    written into a real array, drop the imaginary part (NumPy's ComplexWarning), which
    ``np.real`` says explicitly."""
    return op.result.type.dtype.kind == "c" or not any(
        getattr(v.type, "dtype", None) is not None and v.type.dtype.kind == "c"
        for v in op.inputs)


#: primitive -> True, or ``ok(op) -> bool``: the rules hold for complex values (not
#: ``sign``: z / |z| of a complex z is no step function, its derivative is not 0)
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
), True) | dict.fromkeys(("cast", "npscalar", "pyfloat", "index_add", "index_sub", "index_set",
                        "scatter_add"), _keeps_complex)
