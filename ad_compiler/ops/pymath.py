"""The ``math`` module's functions: computed by ``math`` itself, differentiated by NumPy's rules.

``math.sqrt(x)`` in user code is the primitive ``math_sqrt``, emitted as
``math.sqrt(x)``: the value is the one Python computes, to the last bit (NumPy's
``np.sqrt``, ``np.tanh`` ... may differ from ``math``'s by an ulp, and a float32
input would be computed in float32), and the compiled code raises where the call
would (``ValueError: math domain error`` for ``math.sqrt(-1.0)``, ``OverflowError:
math range error`` for ``math.exp(1000.0)``, ``TypeError`` for ``math.trunc`` of a
``np.float32``). Its input is the one-element value the user passed (a Python
float or int, a NumPy scalar, a 0-d array); its result is a Python float
(``floor``/``ceil``/``trunc``: a Python int)::

    %sqrt = math_sqrt %x                  # float        sqrt = math.sqrt(x)

The derivative rules are those of the NumPy primitive of the same function
(``sqrt``), applied to the inputs and the result as ``np.float64`` numbers: an
adjoint never divides Python floats (``0.5 / sqrt`` at ``sqrt == 0`` is ``inf`` as
in NumPy, not a ``ZeroDivisionError``). Under ``vmap`` the examples' numbers are
an array, and the NumPy primitive computes them.
"""
from __future__ import annotations

import math

import numpy as np

from ..ad.rules import PRIMITIVES, ex, lowering, primitive, register_lowering
from ..ir.core import AType

_F64 = np.dtype(np.float64)
_PYFLOAT = AType((), _F64, True)
_PYINT = AType((), np.dtype(np.int64), True)

#: math function -> (NumPy primitive with the same derivative, sample domain)
UNARY = {
    "acos": ("arccos", "unit"), "acosh": ("arccosh", "above_one"), "asin": ("arcsin", "unit"),
    "asinh": ("arcsinh", "real"), "atan": ("arctan", "real"), "atanh": ("arctanh", "unit"),
    "cbrt": ("cbrt", "nonzero"), "cos": ("cos", "real"), "cosh": ("cosh", "real"),
    "degrees": ("rad2deg", "real"), "exp": ("exp", "real"), "exp2": ("exp2", "real"),
    "expm1": ("expm1", "real"), "fabs": ("fabs", "real"), "log": ("log", "positive"),
    "log10": ("log10", "positive"), "log1p": ("log1p", "positive"), "log2": ("log2", "positive"),
    "radians": ("deg2rad", "real"), "sin": ("sin", "real"), "sinh": ("sinh", "real"),
    "sqrt": ("sqrt", "positive"), "tan": ("tan", "real"), "tanh": ("tanh", "real"),
}
#: two-argument functions, as UNARY
BINARY = {"atan2": ("arctan2", "real"), "copysign": ("copysign", "nonzero"),
          "fmod": ("fmod", "nonzero"), "pow": ("pow", "positive")}
#: functions that return a Python int (step functions: no derivative)
INTEGRAL = ("ceil", "floor", "trunc")


def _check_numbers(types) -> None:
    for t in types:
        if t.shape != () or t.dtype.kind not in "fiub":
            raise ValueError(f"math functions take one-element real numbers, got {t}")


def _number_infer(*types, checked=True):
    """A Python float; ``checked=False`` marks a recomputation in an adjoint, which may be
    dropped when unused (the forward call already raised or did not: rules.must_run)."""
    _check_numbers(types)
    return _PYFLOAT


def _int_infer(t, *, checked=True):
    _check_numbers((t,))
    return _PYINT


def _float64(b, v):
    """``v`` as an ``np.float64`` number (a strong float64 0-d value)."""
    t = b.type_of(v)
    if t.weak:
        return b.npscalar(v, dtype=_F64)
    return v if t.dtype == _F64 else b.cast(v, dtype=_F64)


def _delegate_vjp(twin: str):
    def vjp(b, ct, out, *xs, checked=True):
        rule = PRIMITIVES[twin].vjp
        cts = rule(b, _float64(b, ct), _float64(b, out), *(_float64(b, x) for x in xs))
        return tuple(None if c is None else b.fit(c, x) for c, x in zip(cts, xs))
    return vjp


def _delegate_jvp(twin: str):
    def jvp(b, tangents, out, *xs, checked=True):
        rule = PRIMITIVES[twin].jvp
        t = rule(b, tuple(None if t is None else _float64(b, t) for t in tangents),
                 _float64(b, out), *(_float64(b, x) for x in xs))
        return None if t is None else b.pyfloat(t)
    return jvp


def _twin_batch(twin: str):
    """Under vmap the numbers of the examples are an array: the NumPy twin computes them."""
    def batch(b, axes, *xs, checked=True):
        rule = PRIMITIVES[twin].batch_rule
        return rule(b, axes, *(x if ax is not None or b.type_of(x).weak
                               else b.cast(x, dtype=_F64) for x, ax in zip(xs, axes)))
    return batch


def _on_floats(name: str, d):
    """The VJP and JVP of ``math.<name>`` from ``d(b, out, x)``, its derivative in Python-float
    arithmetic that never raises where the forward call did not (``math.cos`` of the finite
    ``x`` ``math.sin`` took): scalar code's adjoint stays on Python floats."""
    def vjp(b, ct, out, x, checked=True):
        return (b.fit(b.mul(ct, d(b, out, x)), x),)

    def jvp(b, tangents, out, x, checked=True):
        return None if tangents[0] is None else b.pyfloat(_float64(b, b.mul(tangents[0], d(b, out, x))))
    return vjp, jvp


def _recomputed(b, name, x):
    return b.emit(f"math_{name}", x, checked=False, hint=name)


#: derivatives computed on Python floats: ``math.sin`` -> ``math.cos(x)`` ...
ON_FLOATS = {
    "sin": lambda b, out, x: _recomputed(b, "cos", x),
    "cos": lambda b, out, x: b.neg(_recomputed(b, "sin", x)),
    "tanh": lambda b, out, x: b.sub(b.const(1.0), b.mul(out, out)),
    "exp": lambda b, out, x: out,
}

_EXAMPLES = {1: [ex(float), ex(())], 2: [ex(float, float), ex((), float)]}

for _name, (_twin, _domain) in {**UNARY, **BINARY}.items():
    _arity = 2 if _name in BINARY else 1
    _fields = ", ".join(f"{{{i}}}" for i in range(_arity))
    _vjp, _jvp = _on_floats(_name, ON_FLOATS[_name]) if _name in ON_FLOATS else \
        (_delegate_vjp(_twin), _delegate_jvp(_twin))
    primitive(f"math_{_name}", emit=f"math.{_name}({_fields})", infer=_number_infer,
              vjp=_vjp, jvp=_jvp, batch=_twin_batch(_twin),
              examples=_EXAMPLES[_arity], domain=_domain, family="math", dynamic=False,
              raises=True)

def _integral_batch(twin: str):
    """Under vmap: the NumPy twin's whole numbers, as the ints the examples' calls give."""
    def batch(b, axes, x, checked=True):
        out, ax = _twin_batch(twin)(b, axes, x)
        return b.cast(out, dtype=np.dtype(np.int64)), ax
    return batch


for _name in INTEGRAL:
    # math.trunc needs __trunc__, which a 0-d array lacks (as in Python: a TypeError)
    primitive(f"math_{_name}", emit=f"math.{_name}({{0}})", infer=_int_infer, nondiff=True,
              examples=[ex(float)] + ([ex(())] if _name != "trunc" else []), family="math",
              dynamic=False, raises=True,
              batch=_integral_batch(_name))


def _named_lowering(name: str):
    """``math.<name>(...)``: the ``math_<name>`` primitive, its result named ``name``."""
    def lower(b, *args):
        return b.emit(f"math_{name}", *(b.const(a) for a in args), hint=name)
    lower.__name__ = f"lower_math_{name}"
    return lower


for _name in (*UNARY, *BINARY, *INTEGRAL):
    if _name != "log":
        register_lowering(getattr(math, _name), _named_lowering(_name))


@lowering(math.log)
def lower_log(b, x, base=None):
    """``math.log(x, base)`` is ``math.log(x) / math.log(base)``, as CPython computes it
    (a base of 1 divides by zero: ``ZeroDivisionError``, as in Python)."""
    out = b.emit("math_log", b.const(x), hint="log")
    return out if base is None else b.div(out, b.emit("math_log", b.const(base), hint="log"))


def _hypot_vjp(b, ct, out, *xs, checked=True):
    """``x_i / hypot`` for each coordinate; 0 at the origin (as ``abs'(0)``)."""
    r = _float64(b, out)
    safe = b.where(b.equal(r, b.const(0.0)), b.const(1.0), r)
    scale = b.div(_float64(b, ct), safe)
    return tuple(b.fit(b.mul(scale, _float64(b, x)), x) for x in xs)


def _hypot_jvp(b, tangents, out, *xs, checked=True):
    r = _float64(b, out)
    safe = b.where(b.equal(r, b.const(0.0)), b.const(1.0), r)
    terms = [b.mul(_float64(b, t), _float64(b, x)) for t, x in zip(tangents, xs) if t is not None]
    if not terms:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = b.add(total, t)
    return b.pyfloat(b.div(total, safe))


def _hypot_batch(b, axes, *xs, checked=True):
    """Under vmap: ``np.hypot`` folded over the coordinates."""
    rule = PRIMITIVES["hypot"].batch_rule
    xs = [x if ax is not None or b.type_of(x).weak else b.cast(x, dtype=_F64)
          for x, ax in zip(xs, axes)]
    out, ax = xs[0], axes[0]
    for x, x_ax in zip(xs[1:], axes[1:]):
        if ax is None and x_ax is None:
            out = b.emit("hypot", out, x)
        else:
            out, ax = rule(b, (ax, x_ax), out, x)
    return out, ax


primitive("math_hypot", emit=lambda srcs, **_: f"math.hypot({', '.join(srcs)})",
          impl=lambda *xs, checked=True: math.hypot(*xs),
          infer=_number_infer, vjp=_hypot_vjp, jvp=_hypot_jvp, family="math", dynamic=False,
          raises=True, batch=_hypot_batch,
          examples=[ex(float, float), ex(float, float, float), ex((), float)])


@lowering(math.hypot)
def lower_hypot(b, *coordinates):
    """``math.hypot(*coordinates)``: the Euclidean norm, computed by ``math.hypot`` itself."""
    if len(coordinates) < 2:  # math.hypot() is 0.0, math.hypot(x) is math.fabs(x) exactly
        return b.emit("math_fabs", b.const(coordinates[0]), hint="hypot") if coordinates else 0.0
    return b.emit("math_hypot", *(b.const(c) for c in coordinates), hint="hypot")
