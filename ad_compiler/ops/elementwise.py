"""Elementwise primitives: arithmetic, transcendental, activations, comparisons.

Each declaration holds the codegen template, the type rule, the VJP and the JVP.

Invariants:

* types follow NumPy exactly (``_infer.elementwise`` runs the template on
  one-element samples), so float32 stays float32 next to Python numbers;
* a VJP returns cotangents of exactly its inputs' types: broadcasting
  primitives reduce with ``b.fit(ct, x)`` (resolved at compile time);
* a JVP returns a tangent of exactly the output's type (:func:`expand_like`),
  even when only one input of a broadcasting primitive has a tangent;
* rules emit only registered primitives, with weak Python-number constants
  (``b.const(1.0)``), so an adjoint is again differentiable IR.

For a one-input primitive the VJP and the JVP are the same linear map,
``g -> g * f'(x)``; :func:`unary` declares it once as ``scale(b, g, out, x)``, and
:func:`binary` a two-input one from its partial derivatives.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..ad import rules
from ..ad.batching import to_front
from ..ad.rules import ex, family_batch, lowering, method, primitive
from ..ir.core import AType
from ._batch import broadcasting
from ._infer import elementwise, same_type

F = "elementwise"
family_batch(F, broadcasting)  # batched inputs aligned, then NumPy broadcasts

UNARY_EXAMPLES = (ex((3,)), ex((2, 3)), ex(float))
BINARY_EXAMPLES = (ex((3,), (3,)), ex((2, 3), (3,)), ex((2, 1), (1, 3)), ex((), (2,)),
                   ex(float, (2,)), ex((2,), float))


def _const_infer(*, value):
    return AType.of(value)


primitive("const", emit="{value}", infer=_const_infer, nondiff=True, family=F)


# -- helpers shared by the rules ---------------------------------------------

def expand_like(b, t, like):
    """Tangent ``t`` broadcast and cast to the type of ``like`` (the inverse of ``b.fit``)."""
    if t is None:
        return None
    target, tt = b.type_of(like), b.type_of(t)
    if tt.dynamic or target.dynamic:  # run-time lengths (ir/dims.py): a no-op if equal
        t = b.broadcast_like(t, like)
    elif tt.shape != target.shape:
        t = b.broadcast_to(t, shape=target.shape)
    if not target.weak and (tt.dtype != target.dtype or tt.weak):
        t = b.cast(t, dtype=target.dtype)
    return t


def tangent_sum(b, like, *terms):
    """The sum of the non-None ``terms``, typed like ``like``; None if all are None."""
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = b.add(out, t)
    return expand_like(b, out, like)


def _times(b, t, factor):
    """``t * factor`` with None (a zero tangent) propagated."""
    return None if t is None else b.mul(t, factor)


def _maybe(t, fn):
    """``fn(t)``, or None for a zero tangent ``t``."""
    return None if t is None else fn(t)


def unary(name, emit, scale, *, examples=UNARY_EXAMPLES, domain="real", aliases=()):
    """Declare a one-input elementwise primitive; ``scale(b, g, out, x, **params)`` is g*f'(x)."""
    def vjp(b, ct, out, x, **params):
        return (scale(b, ct, out, x, **params),)

    def jvp(b, t, out, x, **params):
        # expand_like: a Python-float tangent of np.log(1.5) (an np.float64) gets its type
        return None if t[0] is None else expand_like(b, scale(b, t[0], out, x, **params), out)

    return primitive(name, emit=emit, infer=elementwise(name), vjp=vjp, jvp=jvp, family=F,
                     examples=examples, domain=domain, aliases=aliases)


def binary(name, emit, scales, *, examples=BINARY_EXAMPLES, domain="real", aliases=()):
    """Declare a two-input broadcasting primitive; ``scales(b, out, x, y)`` gives
    ``(df/dx, df/dy)`` (None for no derivative), each at the output's shape or
    broadcastable to it."""
    def vjp(b, ct, out, x, y):
        dx, dy = scales(b, out, x, y)
        return (None if dx is None else b.fit(b.mul(ct, dx), x),
                None if dy is None else b.fit(b.mul(ct, dy), y))

    def jvp(b, t, out, x, y):
        dx, dy = scales(b, out, x, y)
        return tangent_sum(b, out, None if dx is None else _times(b, t[0], dx),
                           None if dy is None else _times(b, t[1], dy))

    return primitive(name, emit=emit, infer=elementwise(name), vjp=vjp, jvp=jvp, family=F,
                     examples=examples, domain=domain, aliases=aliases)


# -- arithmetic ---------------------------------------------------------------

primitive(
    "add", emit="{0} + {1}", infer=elementwise("add"), family=F,
    vjp=lambda b, ct, out, x, y: (b.fit(ct, x), b.fit(ct, y)),
    jvp=lambda b, t, out, x, y: tangent_sum(b, out, t[0], t[1]),
    examples=BINARY_EXAMPLES, aliases=(np.add, operator.add),
)

primitive(
    "sub", emit="{0} - {1}", infer=elementwise("sub"), family=F,
    # -fit(ct): when y was broadcast, the negation runs on the reduced cotangent
    vjp=lambda b, ct, out, x, y: (b.fit(ct, x), b.neg(b.fit(ct, y))),
    jvp=lambda b, t, out, x, y: tangent_sum(b, out, t[0], _maybe(t[1], b.neg)),
    examples=BINARY_EXAMPLES, aliases=(np.subtract, operator.sub),
)

primitive(
    "mul", emit="{0} * {1}", infer=elementwise("mul"), family=F,
    vjp=lambda b, ct, out, x, y: (b.fit(b.mul(ct, y), x), b.fit(b.mul(ct, x), y)),
    jvp=lambda b, t, out, x, y: tangent_sum(b, out, _times(b, t[0], y), _times(b, t[1], x)),
    examples=BINARY_EXAMPLES, aliases=(np.multiply, operator.mul),
)


def _div_dy(b, g, out, y):
    """``g * d(x/y)/dy = -g * out / y`` (no x needed: out already holds x/y)."""
    return b.neg(b.div(b.mul(g, out), y))


primitive(
    "div", emit="{0} / {1}", infer=elementwise("div"), family=F, domain="nonzero",
    vjp=lambda b, ct, out, x, y: (b.fit(b.div(ct, y), x), b.fit(_div_dy(b, ct, out, y), y)),
    jvp=lambda b, t, out, x, y: tangent_sum(
        b, out, _maybe(t[0], lambda g: b.div(g, y)), _maybe(t[1], lambda g: _div_dy(b, g, out, y))),
    examples=BINARY_EXAMPLES, aliases=(np.divide, np.true_divide, operator.truediv),
)


def _pow_dx(b, out, x, y):
    return b.mul(y, b.pow(x, b.sub(y, b.const(1))))


def _pow_dy(b, out, x, y):
    # d(x**y)/dy = out * log(x); where x <= 0 the real power has no such
    # derivative (x < 0) or it is 0 (x == 0, y > 0): log(1) = 0 there, no NaN.
    # A complex x (principal log) has the derivative wherever x != 0.
    inside = b.not_equal(x, b.const(0)) if b.type_of(x).dtype.kind == "c" else \
        b.greater(x, b.const(0))
    safe_x = b.where(inside, x, b.const(1))
    return b.mul(out, b.log(safe_x))


primitive(
    "pow", emit="{0} ** {1}", infer=elementwise("pow"), family=F, domain="positive",
    vjp=lambda b, ct, out, x, y: (b.fit(b.mul(ct, _pow_dx(b, out, x, y)), x),
                                  b.fit(b.mul(ct, _pow_dy(b, out, x, y)), y)),
    jvp=lambda b, t, out, x, y: tangent_sum(
        b, out, _maybe(t[0], lambda g: b.mul(g, _pow_dx(b, out, x, y))),
        _maybe(t[1], lambda g: b.mul(g, _pow_dy(b, out, x, y)))),
    examples=BINARY_EXAMPLES,
)


def _pow_scalar_scale(b, g, out, x, *, exponent):
    """``g * p * x**(p-1)`` with the exponent known statically: no log, no ``x ** 1``."""
    if exponent == 0:
        return None
    if exponent == 1:
        return g
    base = x if exponent == 2 else b.pow_scalar(x, exponent=exponent - 1)
    return b.mul(g, b.mul(base, b.const(exponent)))


unary("pow_scalar", "{0} ** {exponent}", _pow_scalar_scale, domain="positive",
      examples=[ex((3,), exponent=2), ex((2, 3), exponent=3), ex((3,), exponent=0.5),
                ex((3,), exponent=-1.5), ex((3,), exponent=1), ex((3,), exponent=0),
                ex(float, exponent=2)])


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


@lowering(np.power, operator.pow, pow)
def lower_pow(b, x, y):
    """``x ** p`` with a static number ``p`` is ``pow_scalar`` (cheaper, no log in the adjoint)."""
    if type(y) is int and y == 2:  # x * x: twice as fast as x ** 2 on Python floats
        return b.square(b.const(x))
    if _is_number(y):  # kept as given: a NumPy scalar exponent promotes as in NumPy
        return b.pow_scalar(b.const(x), exponent=y)
    return b.pow(b.const(x), b.const(y))


# -- one-input functions ----------------------------------------------------------

unary("neg", "-{0}", lambda b, g, out, x: b.neg(g), aliases=(np.negative, operator.neg))
unary("exp", "np.exp({0})", lambda b, g, out, x: b.mul(g, out), aliases=(np.exp,))
unary("log", "np.log({0})", lambda b, g, out, x: b.div(g, x), domain="positive",
      aliases=(np.log,))
unary("sin", "np.sin({0})", lambda b, g, out, x: b.mul(g, b.cos(x)), aliases=(np.sin,))
unary("cos", "np.cos({0})", lambda b, g, out, x: b.neg(b.mul(g, b.sin(x))),
      aliases=(np.cos,))
unary("tanh", "np.tanh({0})",
      lambda b, g, out, x: b.mul(g, b.sub(b.const(1), b.square(out))),
      aliases=(np.tanh,))
# 1 / (1 + exp(-x)) is exact for every x: exp overflows to inf only where the
# result is 0 anyway; the tanh form would lose relative precision for x << 0.
unary("sigmoid", "1 / (1 + np.exp(-{0}))",
      lambda b, g, out, x: b.mul(b.mul(g, out), b.sub(b.const(1), out)))
# relu'(0) = 0: strict comparison
unary("relu", "np.maximum({0}, 0)",
      lambda b, g, out, x: b.where(b.greater(x, b.const(0)), g, b.const(0)))
unary("sqrt", "np.sqrt({0})", lambda b, g, out, x: b.div(b.mul(g, b.const(0.5)), out),
      domain="positive", aliases=(np.sqrt,))
unary("square", "{0} * {0}", lambda b, g, out, x: b.mul(g, b.mul(x, b.const(2))),
      aliases=(np.square,))


def _abs_scale(b, out, x):
    """d|x|: ``sign(x)``; of a complex ``x``, ``conj(x) / |x|`` (0 at 0, as sign(0)), made
    of differentiable ops so that second derivatives see it change."""
    if b.type_of(x).dtype.kind != "c":
        return b.sign(x)
    safe = b.where(b.equal(out, b.const(0)), b.const(1), out)
    return b.div(b.conj(x), safe)


def _abs_jvp(b, t, out, x):
    """``t * sign(x)``; of a complex ``x``, ``Re(t * conj(x) / |x|)`` (|x| is real)."""
    if t[0] is None:
        return None
    scaled = b.mul(t[0], _abs_scale(b, out, x))
    return expand_like(b, b.real(scaled) if b.type_of(x).dtype.kind == "c" else scaled, out)


# abs'(0) = sign(0) = 0; of a complex z the cotangent is ct * conj(z) / |z| (ops/complex_numbers.py)
primitive("abs", emit="np.abs({0})", infer=elementwise("abs"), family=F,
          vjp=lambda b, ct, out, x: (b.mul(ct, _abs_scale(b, out, x)),),
          jvp=_abs_jvp, examples=[*UNARY_EXAMPLES, ex(np.array([-1.0, 0.0, 2.0]))],
          aliases=(np.abs, abs, operator.abs))


# -- maximum / minimum: ties split the gradient 50/50 ------------------------------

def _max_weights(b, x, y):
    """How much of max(x, y)'s derivative goes to x and to y: 1/0, 0/1, or 1/2 each at a tie."""
    if b.type_of(x).dtype.kind == "c" or b.type_of(y).dtype.kind == "c":
        return _complex_weights(b, x, y, b.greater)
    half = b.const(0.5)
    half_sign = b.mul(b.sign(b.sub(x, y)), half)
    return b.add(half, half_sign), b.sub(half, half_sign)


def _complex_weights(b, x, y, beats):
    """NumPy's maximum (``beats``: greater) or minimum (less) of complex values:
    lexicographic (real parts, then imaginary parts), a NaN operand wins (the first
    when both are NaN); real weights (float32 for complex64)."""
    types = [t for t in (b.type_of(x), b.type_of(y)) if not t.weak] or [b.type_of(x)]
    real = np.dtype(np.finfo(np.result_type(*(t.dtype for t in types))).dtype)
    x_wins = b.logical_or(beats(x, y), b.not_equal(x, x))
    tie = b.cast(b.equal(x, y), dtype=real)
    wx = b.add(b.cast(x_wins, dtype=real), b.mul(tie, b.const(0.5)))
    return wx, b.sub(b.const(1.0), wx)


def _min_weights(b, x, y):
    if b.type_of(x).dtype.kind == "c" or b.type_of(y).dtype.kind == "c":
        return _complex_weights(b, x, y, b.less)
    wx, wy = _max_weights(b, x, y)
    return wy, wx


def _extremum(name, weights, aliases):
    ties = ex(np.array([1.0, 2.0, -1.0]), np.array([1.0, 0.5, -1.0]))
    binary(name, f"np.{name}({{0}}, {{1}})", lambda b, out, x, y: weights(b, x, y),
           examples=[*BINARY_EXAMPLES, ties], aliases=aliases)


_extremum("maximum", _max_weights, (np.maximum,))
_extremum("minimum", _min_weights, (np.minimum,))


@lowering(np.clip)
def lower_clip(b, a, a_min=None, a_max=None):
    """``np.clip`` as maximum/minimum, so a value exactly at a bound splits its gradient."""
    out = b.const(a)
    if a_min is not None:
        out = b.maximum(out, b.const(a_min))
    if a_max is not None:
        out = b.minimum(out, b.const(a_max))
    return out


# -- selection and gradient blocking ----------------------------------------------------

def _where_jvp(b, t, out, cond, x, y):
    if t[1] is None and t[2] is None:
        return None
    tx = b.const(0) if t[1] is None else t[1]
    ty = b.const(0) if t[2] is None else t[2]
    return expand_like(b, b.where(cond, tx, ty), out)


primitive(
    "where", emit="np.where({0}, {1}, {2})", infer=elementwise("where"), family=F,
    vjp=lambda b, ct, out, cond, x, y: (
        None, b.fit(b.where(cond, ct, b.const(0)), x), b.fit(b.where(cond, b.const(0), ct), y)),
    jvp=_where_jvp,
    examples=[ex(np.array([True, False, True]), (3,), (3,)),
              ex(np.array([[True], [False]]), (2, 3), (3,)),
              ex(np.array([True, False]), float, (2,))],
)


_ONE_ARGUMENT = object()


@lowering(np.where)
def lower_where(b, condition, x=_ONE_ARGUMENT, y=_ONE_ARGUMENT):
    """``np.where(c, x, y)``; ``np.where(c)`` is ``np.nonzero(c)``."""
    if x is _ONE_ARGUMENT and y is _ONE_ARGUMENT:
        return rules.find_lowering(np.nonzero)(b, condition)
    if x is _ONE_ARGUMENT or y is _ONE_ARGUMENT:
        raise TypeError("np.where() takes 1 or 3 arguments: either both or neither of "
                        "x and y should be given")
    return b.where(b.const(condition), b.const(x), b.const(y))


# The output carries no derivative: nondiff makes the AD passes treat it as a
# constant; the explicit rules say the same to anything that calls them.
primitive("stop_gradient", view=True, emit="{0}", infer=same_type, nondiff=True, family=F,
          vjp=lambda b, ct, out, x: (None,), jvp=lambda b, t, out, x: None)


# -- piecewise constant: no derivative ------------------------------------------------

# np.sign of complex values (z / |z|) is ``complex_sign`` (ops/complex_numbers.py)
primitive("sign", emit="np.sign({0})", infer=elementwise("sign"), nondiff=True, family=F,
          examples=[ex((3,))])
primitive("floor", emit="np.floor({0})", infer=elementwise("floor"), nondiff=True, family=F,
          examples=[ex((3,))], aliases=(np.floor,))
primitive("ceil", emit="np.ceil({0})", infer=elementwise("ceil"), nondiff=True, family=F,
          examples=[ex((3,))], aliases=(np.ceil,))
# x // y is a step function of both: no gradient
primitive("floor_divide", emit="{0} // {1}", infer=elementwise("floor_divide"), nondiff=True,
          family=F, examples=[ex((3,), (3,))], aliases=(np.floor_divide, operator.floordiv))

# x % y = x - y * (x // y): d/dx = 1, d/dy = -(x // y) (away from the jumps)
primitive(
    "mod", emit="{0} % {1}", infer=elementwise("mod"), family=F, domain="positive",
    vjp=lambda b, ct, out, x, y: (b.fit(ct, x), b.fit(b.neg(b.mul(ct, b.floor_divide(x, y))), y)),
    jvp=lambda b, t, out, x, y: tangent_sum(
        b, out, t[0], None if t[1] is None else b.neg(b.mul(t[1], b.floor_divide(x, y)))),
    examples=[ex((3,), (3,))], aliases=(np.mod, np.remainder, operator.mod))


@lowering(np.asarray)
def lower_asarray(b, a, dtype=None, **_ignored):
    """``np.asarray(x)`` of a value is the value itself (cast to ``dtype`` if given),
    of a nested list of values their stack; of compile-time data, the array itself."""
    from ..ir.builder import holds_value
    from ..ir.core import Value
    if isinstance(a, (list, tuple)) and holds_value(a):
        a = b.const(a)   # a (nested) list of values: their stack
    if not isinstance(a, Value):
        return b.const(np.asarray(a, dtype=dtype))
    t = b.type_of(a)
    dtype = t.dtype if dtype is None else np.dtype(dtype)
    if dtype != t.dtype or t.shape == ():
        # a Python number or a NumPy scalar becomes a 0-d array (a 0-d array stays itself)
        return b.cast(a, dtype=dtype)
    return a


@lowering(np.array, np.copy)
def lower_array(b, a, dtype=None, *, copy=True, **_ignored):
    """``np.array(x)`` and ``np.copy(x)`` are a new array (``copy=True``), as
    ``x.copy()`` is; of a 0-d value, a 0-d array (``x.copy()`` of a NumPy scalar is one)."""
    from ..ir.core import Value
    out = lower_asarray(b, a, dtype)
    fresh = isinstance(a, Value) and (out is a or a.type.shape == ())
    if fresh and copy is not None and copy is not False:
        return b.copy(out)
    return out


_COMPARISONS = (
    ("equal", "==", np.equal, operator.eq), ("not_equal", "!=", np.not_equal, operator.ne),
    ("less", "<", np.less, operator.lt), ("less_equal", "<=", np.less_equal, operator.le),
    ("greater", ">", np.greater, operator.gt),
    ("greater_equal", ">=", np.greater_equal, operator.ge),
)
for _name, _op, _np_fn, _py_fn in _COMPARISONS:
    primitive(_name, emit=f"{{0}} {_op} {{1}}", infer=elementwise(_name), nondiff=True,
              family=F, examples=BINARY_EXAMPLES, aliases=(_np_fn, _py_fn))
del _name, _op, _np_fn, _py_fn


# -- dtype and constants-like ---------------------------------------------------------

# np.asarray rather than .astype: a cast may meet a Python number (a tangent of
# a float argument fitted to a 0-d float32 output), which has no .astype.
def _is_inexact(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def _cast_infer(t, dtype):
    """``t`` as ``dtype``; a Python complex has no real value (``np.asarray(1j, float)``
    is Python's TypeError, where a complex array drops its imaginary part)."""
    if t.weak and t.dtype.kind == "c" and np.dtype(dtype).kind in "fiu":
        raise TypeError(f"a Python complex cannot be cast to {np.dtype(dtype)}: it has no "
                        "real value (np.real(z) is its real part)")
    return t.with_dtype(dtype)


def _cast_jvp(b, t, dtype):
    """The tangent cast alike; to a real dtype, a complex tangent's real part (as NumPy's
    cast, without its ComplexWarning)."""
    if t is None or not _is_inexact(dtype):
        return None
    if b.type_of(t).dtype.kind == "c" and np.dtype(dtype).kind == "f":
        t = b.real(t)
    return b.cast(t, dtype=dtype)


_CAST_RULES = dict(
    view=lambda op: op.inputs[0].type.dtype == op.result.type.dtype,
    family=F,
    infer=lambda t, *, dtype: _cast_infer(t, dtype),
    # a cast to an integer or bool dtype (int(v), astype(int)) is a step function:
    # no gradient flows through it
    vjp=lambda b, ct, out, x, *, dtype: (b.fit(ct, x) if _is_inexact(dtype) else None,),
    jvp=lambda b, t, out, x, *, dtype: _cast_jvp(b, t[0], dtype),
)

# np.asarray returns its input when the dtype already matches; another dtype is a copy
primitive("cast", emit="np.asarray({0}, dtype={dtype})", **_CAST_RULES,
          # float64 targets: finite differences cannot see through a float32 rounding
          # (the float32 check still casts float32 inputs up and expects float32 back)
          examples=[ex((2, 3), dtype=np.dtype("float64")), ex(float, dtype=np.dtype("float64"))])
# the cast of an array of another backend (a Dask or CuPy array, ad_compiler/backends.py):
# the array's own method, where np.asarray would compute a lazy array into a NumPy one.
# passes/backend.py turns casts of arrays into it; Python numbers have no .astype
primitive("astype", emit="{0}.astype({dtype}, copy=False)", **_CAST_RULES,
          examples=[ex((2, 3), dtype=np.dtype("float64"))])
# the cast of what the types call a Python number, for another backend: it may be the
# backend's 0-d array (np.allclose of Dask arrays is one), which np.asarray would compute
primitive("backend_cast", emit="rt.cast({0}, {dtype})", **_CAST_RULES,
          examples=[ex((2, 3), dtype=np.dtype("float64")), ex(float, dtype=np.dtype("float64"))])


@method("astype")
def lower_astype(b, x, dtype, copy=True):
    """``x.astype(dtype)``: a new array, as in NumPy, even of the same dtype
    (``copy=False`` then gives ``x`` itself)."""
    dtype = np.dtype(dtype)
    if b.type_of(x).dtype == dtype and not b.type_of(x).weak:
        return b.copy(x) if copy else x
    return b.cast(x, dtype=dtype)


# a fresh array where a result must not alias an input (reverse mode's outputs)
primitive("copy", emit="{0}.copy()", array_inputs=True, infer=lambda t: AType(t.shape, t.dtype, False),
          vjp=lambda b, ct, out, x: (b.fit(ct, x),),
          jvp=lambda b, t, out, x: expand_like(b, t[0], out),
          examples=[ex((2, 3)), ex(float)], family=F)


def _pyfloat_infer(t: AType) -> AType:
    if t.shape != () or t.dtype.kind not in "fiub":
        raise ValueError(f"float() needs a 0-d real value, got {t}")
    return AType((), np.dtype(np.float64), True)


# a Python float from a one-element value: keeps scalar code (and its adjoint) on
# Python floats instead of NumPy scalars
primitive("pyfloat", emit="float({0})", infer=_pyfloat_infer, family=F, dynamic=False,
          vjp=lambda b, ct, out, x: (b.fit(ct, x),),
          jvp=lambda b, t, out, x: b.pyfloat(t[0]),
          batch=lambda b, axes, x: (b.cast(to_front(b, x, axes[0]), dtype=np.float64), 0),
          examples=[ex(()), ex(float)])


def _npscalar_infer(t: AType, *, dtype) -> AType:
    if t.shape != ():
        raise ValueError(f"npscalar needs a Python number or a 0-d value, got {t}")
    return AType((), np.dtype(dtype), False)


def _npscalar_jvp(b, t, out, x, *, dtype):
    t = expand_like(b, t[0], out)
    return t if b.type_of(t).dtype == dtype else b.npscalar(t, dtype=dtype)


# the NumPy scalar a NumPy function gives for Python-number inputs (np.multiply(2.0, s)
# is an np.float64, a strong type: it makes a float32 array it meets float64), and
# np.complex128(v) of a 0-d v
primitive("npscalar", emit="{dtype}({0})", infer=_npscalar_infer, family=F, dynamic=False,
          impl=lambda x, *, dtype: np.dtype(dtype).type(x),
          vjp=lambda b, ct, out, x, *, dtype: (b.fit(ct, x),),
          jvp=_npscalar_jvp,
          batch=lambda b, axes, x, *, dtype: (b.cast(to_front(b, x, axes[0]), dtype=dtype), 0),
          examples=[ex(float, dtype=np.dtype("float64"))])


@method("copy")
def lower_copy(b, x, order="C"):
    return b.copy(x)


primitive("zeros_like", emit="np.zeros_like({0})", infer=same_type, nondiff=True, family=F,
          aliases=(np.zeros_like,))
primitive("ones_like", emit="np.ones_like({0})", infer=same_type, nondiff=True, family=F,
          aliases=(np.ones_like,))


# -- combining masks: logical and bitwise operations (no derivative) --------------------

_MASKS = (np.array([True, False, True, False]), np.array([True, True, False, False]))
_LOGICAL_EXAMPLES = [ex(*_MASKS), ex(np.array([6, 3, 0]), np.array([3, 5, 1])),
                     ex(np.array([[True], [False]]), _MASKS[0])]
_LOGICAL = (
    ("bitwise_and", "{0} & {1}", (np.bitwise_and, operator.and_)),
    ("bitwise_or", "{0} | {1}", (np.bitwise_or, operator.or_)),
    ("bitwise_xor", "{0} ^ {1}", (np.bitwise_xor, operator.xor)),
    ("logical_and", "np.logical_and({0}, {1})", (np.logical_and,)),
    ("logical_or", "np.logical_or({0}, {1})", (np.logical_or,)),
    ("logical_xor", "np.logical_xor({0}, {1})", (np.logical_xor,)),
)
for _name, _emit, _fns in _LOGICAL:
    primitive(_name, emit=_emit, infer=elementwise(_name), nondiff=True, family=F,
              examples=_LOGICAL_EXAMPLES, aliases=_fns)
del _name, _emit, _fns

primitive("invert", emit="np.invert({0})", infer=elementwise("invert"), nondiff=True, family=F,
          examples=[ex(_MASKS[0]), ex(np.array([6, -3]))], aliases=(np.invert,))


@lowering(operator.invert)
def lower_invert_operator(b, x):
    """``~x``: NumPy's invert of an array; of a Python bool or int, Python's ``-x - 1``
    (``~True`` is -2, where ``np.invert(True)`` is False)."""
    x = b.const(x)
    t = b.type_of(x)
    if not t.weak:
        return b.invert(x)
    if t.dtype.kind not in "biu":
        raise TypeError(f"bad operand type for unary ~: '{t.python_type.__name__}'")
    return b.sub(b.neg(b.add(x, b.const(0))), b.const(1), hint="invert")
primitive("logical_not", emit="np.logical_not({0})", infer=elementwise("logical_not"),
          nondiff=True, family=F, examples=[ex(_MASKS[0]), ex((3,))], aliases=(np.logical_not,))
