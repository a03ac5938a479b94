"""Elementwise mathematical functions beyond arithmetic: inverse trigonometric and
hyperbolic functions, logarithms and exponentials of other bases, two-argument
functions (``arctan2``, ``hypot``, ``logaddexp`` ...), rounding, and their
``math`` module spellings on Python floats.

The invariants of :mod:`.elementwise` hold here too: types follow NumPy exactly
(``_infer.elementwise`` runs the template), VJPs fit cotangents to their inputs,
JVPs return the output's type, and rules emit registered primitives only, so
every adjoint is differentiable again.

Derivatives at the edges NumPy defines:

* ``hypot`` at ``(0, 0)`` has gradient ``(0, 0)``, as ``abs`` has at 0 (``hypot(x,
  0)`` is ``|x|``); ``arctan2`` at ``(0, 0)``, where it jumps, has gradient 0 as the
  step functions (``floor``, ``sign``) have at their jumps;
* ``fmax``/``fmin`` split a tie 50/50 as ``maximum`` does, and give the whole
  gradient to the operand that is not NaN;
* ``copysign(x, y)`` at ``x == 0`` has derivative 0 (it is ``|x|`` or ``-|x|``);
* ``nan_to_num`` passes the gradient where the input is kept and none where it
  replaced a NaN or an infinity;
* ``sinc`` at 0 has the exact derivatives of every order (``sinc_derivative``,
  whose derivative is the next one);
* ``trunc``, ``rint``, ``round``, ``fix`` are step functions: no gradient.
"""
from __future__ import annotations

import math

import numpy as np

from ..ad.rules import ex, lowering, method, primitive
from ..errors import UnsupportedOperationError
from ._infer import elementwise
from .elementwise import (BINARY_EXAMPLES, UNARY_EXAMPLES, _extremum, _max_weights, _maybe,
                          _min_weights, binary, expand_like, unary)

F = "elementwise"
LN2, LN10 = math.log(2.0), math.log(10.0)


def _one(b):
    return b.const(1)


def _one_minus_square(b, x):
    """``1 - x**2`` as ``(1 - x) * (1 + x)``: exact near ``|x| = 1``."""
    return b.mul(b.sub(_one(b), x), b.add(_one(b), x))


def _safe(b, v):
    """``v`` with its zeros replaced by 1 (a denominator where the result is known)."""
    return b.where(b.equal(v, b.const(0)), _one(b), v)


# -- trigonometric and hyperbolic ---------------------------------------------------

unary("tan", "np.tan({0})", lambda b, g, out, x: b.mul(g, b.add(_one(b), b.square(out))),
      aliases=(np.tan,))
unary("arcsin", "np.arcsin({0})",
      lambda b, g, out, x: b.div(g, b.sqrt(_one_minus_square(b, x))),
      domain="unit", aliases=(np.arcsin,))
unary("arccos", "np.arccos({0})",
      lambda b, g, out, x: b.neg(b.div(g, b.sqrt(_one_minus_square(b, x)))),
      domain="unit", aliases=(np.arccos,))
unary("arctan", "np.arctan({0})",
      lambda b, g, out, x: b.div(g, b.add(_one(b), b.square(x))),
      aliases=(np.arctan,))
unary("sinh", "np.sinh({0})", lambda b, g, out, x: b.mul(g, b.cosh(x)),
      aliases=(np.sinh,))
unary("cosh", "np.cosh({0})", lambda b, g, out, x: b.mul(g, b.sinh(x)),
      aliases=(np.cosh,))
def _complex(x) -> bool:
    return x.type.dtype.kind == "c"


def _arcsinh_scale(b, g, out, x):
    """d arcsinh(x) = 1 / sqrt(x**2 + 1): as hypot(x, 1) for real x (no overflow for
    large |x|); for complex z the principal sqrt(1 + z**2) (hypot is a modulus)."""
    root = b.sqrt(b.add(_one(b), b.square(x))) if _complex(x) else b.hypot(x, _one(b))
    return b.div(g, root)


def _arccosh_scale(b, g, out, x):
    """d arccosh(x) = 1 / (sqrt(x - 1) sqrt(x + 1)): NumPy's principal branch also for
    complex z, where sqrt((z - 1)(z + 1)) may take the other sign; one sqrt for real
    x > 1, where both are the same."""
    if _complex(x):
        root = b.mul(b.sqrt(b.sub(x, _one(b))), b.sqrt(b.add(x, _one(b))))
    else:
        root = b.sqrt(b.mul(b.sub(x, _one(b)), b.add(x, _one(b))))
    return b.div(g, root)


unary("arcsinh", "np.arcsinh({0})", _arcsinh_scale, aliases=(np.arcsinh,))
unary("arccosh", "np.arccosh({0})", _arccosh_scale,
      domain="above_one", aliases=(np.arccosh,))
unary("arctanh", "np.arctanh({0})", lambda b, g, out, x: b.div(g, _one_minus_square(b, x)),
      domain="unit", aliases=(np.arctanh,))


# -- exponentials and logarithms -------------------------------------------------------

unary("log1p", "np.log1p({0})", lambda b, g, out, x: b.div(g, b.add(_one(b), x)),
      domain="positive", aliases=(np.log1p,))
unary("expm1", "np.expm1({0})", lambda b, g, out, x: b.mul(g, b.add(out, _one(b))),
      aliases=(np.expm1,))
unary("log2", "np.log2({0})", lambda b, g, out, x: b.div(g, b.mul(x, b.const(LN2))),
      domain="positive", aliases=(np.log2,))
unary("log10", "np.log10({0})", lambda b, g, out, x: b.div(g, b.mul(x, b.const(LN10))),
      domain="positive", aliases=(np.log10,))
unary("exp2", "np.exp2({0})", lambda b, g, out, x: b.mul(g, b.mul(out, b.const(LN2))),
      aliases=(np.exp2,))
# d cbrt(x) = 1 / (3 cbrt(x)**2): infinite at 0, as the function's slope is
unary("cbrt", "np.cbrt({0})", lambda b, g, out, x: b.div(g, b.mul(b.square(out), b.const(3))),
      domain="nonzero", aliases=(np.cbrt,))
unary("reciprocal", "np.reciprocal({0})",
      lambda b, g, out, x: b.neg(b.mul(g, b.square(out))),
      domain="nonzero", aliases=(np.reciprocal,))


# -- sign and angle units ------------------------------------------------------------

# fabs'(0) = sign(0) = 0, as abs; its own primitive: np.fabs of an int is a float
unary("fabs", "np.fabs({0})", lambda b, g, out, x: b.mul(g, b.sign(x)),
      examples=[*UNARY_EXAMPLES, ex(np.array([-1.0, 0.0, 2.0]))], aliases=(np.fabs,))
# NumPy and math multiply by pi/180 and 180/pi: the derivative is that constant
unary("deg2rad", "np.deg2rad({0})", lambda b, g, out, x: b.mul(g, b.const(math.pi / 180.0)),
      aliases=(np.deg2rad, np.radians))
unary("rad2deg", "np.rad2deg({0})", lambda b, g, out, x: b.mul(g, b.const(180.0 / math.pi)),
      aliases=(np.rad2deg, np.degrees))


# -- sinc: exact at 0 to every order ------------------------------------------------------

unary("sinc", "np.sinc({0})", lambda b, g, out, x: b.mul(g, b.sinc_derivative(x, order=1)),
      aliases=(np.sinc,))
unary("sinc_derivative", "rt.sinc_derivative({0}, {order})",
      lambda b, g, out, x, *, order: b.mul(g, b.sinc_derivative(x, order=order + 1)),
      examples=[ex((3,), order=1), ex((2, 3), order=2), ex((4,), order=3), ex(float, order=1),
                ex(np.array([0.0, 0.1, -0.3, 1.0, 2.5]), order=1)])


# -- two-argument functions ------------------------------------------------------------

def _arctan2_scales(b, out, y, x):
    """``(x, -y) / r**2`` with ``r = hypot(y, x)`` (divided twice: no underflow of
    ``r**2``); 0 at the origin, where arctan2 jumps."""
    r = _safe(b, b.hypot(y, x))
    return b.div(b.div(x, r), r), b.neg(b.div(b.div(y, r), r))


def _hypot_scales(b, out, x, y):
    """``(x, y) / hypot``; ``(0, 0)`` at the origin, as abs'(0) = 0."""
    r = _safe(b, out)
    return b.div(x, r), b.div(y, r)


def _logaddexp_scales(b, out, x, y, scale=None):
    """``exp(x) / (exp(x) + exp(y))`` is ``sigmoid(x - y)``: exact where one input is
    infinite; ``scale`` is ln 2 for the base-2 form."""
    def weight(u, v):
        d = b.sub(u, v)
        return b.sigmoid(d if scale is None else b.mul(d, b.const(scale)))
    return weight(x, y), weight(y, x)


def _fmod_scales(b, out, x, y):
    """``fmod(x, y) = x - n y`` with ``n`` the integer ``(x - fmod) / y`` (rounded: the
    quotient is exact, whatever the rounding of ``x / y``)."""
    n = b.rint(b.div(b.sub(x, out), y))
    return _one(b), b.neg(n)


def _float_power_scales(b, out, x, y):
    """As ``pow``, in float64: ``y x**(y-1)`` and ``out log(x)`` (0 where ``x <= 0``)."""
    safe_x = b.where(b.greater(x, b.const(0)), x, _one(b))
    return b.mul(y, b.float_power(x, b.sub(y, _one(b)))), b.mul(out, b.log(safe_x))


def _copysign_scales(b, out, x, y):
    """``|x|`` or ``-|x|``: ``sign(x) * sign(out)``, 0 at ``x == 0``; constant in ``y``."""
    return b.mul(b.sign(x), b.sign(out)), None


binary("arctan2", "np.arctan2({0}, {1})", _arctan2_scales, aliases=(np.arctan2,))
binary("hypot", "np.hypot({0}, {1})", _hypot_scales, aliases=(np.hypot,),
       examples=[*BINARY_EXAMPLES, ex(np.array([0.0, 3.0]), np.array([0.0, -4.0]))])
binary("logaddexp", "np.logaddexp({0}, {1})", _logaddexp_scales, aliases=(np.logaddexp,))
binary("logaddexp2", "np.logaddexp2({0}, {1})",
       lambda b, out, x, y: _logaddexp_scales(b, out, x, y, LN2), aliases=(np.logaddexp2,))
binary("fmod", "np.fmod({0}, {1})", _fmod_scales, domain="nonzero",
       aliases=(np.fmod,))
binary("float_power", "np.float_power({0}, {1})", _float_power_scales, domain="positive",
       aliases=(np.float_power,))
binary("copysign", "np.copysign({0}, {1})", _copysign_scales, domain="nonzero",
       aliases=(np.copysign,))


# -- fmax / fmin: maximum / minimum that skip NaN -------------------------------------------

def _is_nan(b, v):
    return b.not_equal(v, v)


def _skipping_nan(weights):
    """``weights`` (maximum's or minimum's: 1/0, 0/1, a tie 1/2 each), but all to x
    where y is NaN and all to y where only x is."""
    def nan_weights(b, x, y):
        wx, _ = weights(b, x, y)
        wx = b.where(_is_nan(b, y), _one(b), b.where(_is_nan(b, x), b.const(0), wx))
        return wx, b.sub(_one(b), wx)
    return nan_weights


_extremum("fmax", _skipping_nan(_max_weights), (np.fmax,))
_extremum("fmin", _skipping_nan(_min_weights), (np.fmin,))


# -- replacing non-finite values ---------------------------------------------------------

_NAN_TO_NUM = {"nan": 0.0, "posinf": None, "neginf": None}  # NumPy's defaults


def _nan_to_num_infer(t, *, nan=0.0, posinf=None, neginf=None):
    return elementwise("nan_to_num")(t, nan=nan, posinf=posinf, neginf=neginf)


def _kept(b, out, x):
    """Where ``nan_to_num`` kept its input: a replaced NaN or infinity differs from it."""
    return b.equal(out, x)


primitive(
    "nan_to_num", emit="np.nan_to_num({0}, nan={nan}, posinf={posinf}, neginf={neginf})",
    infer=_nan_to_num_infer, family=F,
    vjp=lambda b, ct, out, x, **p: (b.fit(b.where(_kept(b, out, x), ct, b.const(0)), x),),
    jvp=lambda b, t, out, x, **p: _maybe(
        t[0], lambda g: expand_like(b, b.where(_kept(b, out, x), g, b.const(0)), out)),
    examples=[ex((3,), **_NAN_TO_NUM), ex((2, 3), nan=1.5, posinf=2.0, neginf=None),
              ex(float, **_NAN_TO_NUM),
              # finite replacements: finite differences cannot see past a 1.8e308
              ex(np.array([1.0, np.nan, np.inf, -np.inf, -2.0]), nan=0.5, posinf=4.0, neginf=-3.0)],
)


@lowering(np.nan_to_num)
def lower_nan_to_num(b, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num(x)``; ``copy=False`` (writing into ``x``) is refused."""
    if not copy:
        raise UnsupportedOperationError(
            "np.nan_to_num(..., copy=False) writes into its input",
            hint="use the result of np.nan_to_num(x) (copy=True)")
    return b.nan_to_num(b.const(x), nan=nan, posinf=posinf, neginf=neginf)


# -- rounding: step functions, no derivative ------------------------------------------------

primitive("trunc", emit="np.trunc({0})", infer=elementwise("trunc"), nondiff=True, family=F,
          examples=[ex((3,))], aliases=(np.trunc, np.fix))
primitive("rint", emit="np.rint({0})", infer=elementwise("rint"), nondiff=True, family=F,
          examples=[ex((3,))], aliases=(np.rint,))


def _round_infer(t, *, decimals=0):
    return elementwise("round")(t, decimals=decimals)


primitive("round", emit="np.round({0}, {decimals})", infer=_round_infer, nondiff=True,
          family=F, examples=[ex((3,), decimals=0), ex((3,), decimals=2)])


@lowering(np.round, np.around)
def lower_round(b, a, decimals=0, out=None):
    """``np.round(x, decimals)`` (half to even, as NumPy); ``out=`` is refused."""
    if out is not None:
        raise UnsupportedOperationError("np.round(..., out=) writes into an array",
                                        hint="use the result of np.round(x, decimals)")
    return b.round(b.const(a), decimals=int(decimals))


@method("round")
def lower_round_method(b, x, decimals=0, out=None):
    return lower_round(b, x, decimals, out)
