"""Recipes for Python's own semantics (ad_compiler/ops/pymath.py, reductions of 0-d arrays).

``math`` functions get arguments that may leave their domain: the generator keeps a
statement only if it runs on the first input, so the second input (the cache check)
may make ``math.sqrt`` raise ``ValueError: math domain error``; the oracle then
expects the compiled call to raise the same exception (``check_second_input``).
A function of an array item (``math.log(x[0])``) gets an ``np.float32`` under the
float32 check, which ``math`` computes in double, as Python does.
"""
from __future__ import annotations

_LEAVING = ("sqrt", "log", "log1p", "log2", "log10", "acos", "asin", "acosh", "atanh")


def _leaving_domain(g):
    """``math.f(s)`` on a plain float: may raise at another input."""
    return f"math.{g.choice(_LEAVING)}({g.flt()})"


def _of_item(g):
    """``math.f`` of an array item (a NumPy scalar, float32 under the float32 check)."""
    x = g.arr()
    f = g.choice(("sqrt(abs({0}) + 0.5)", "tanh({0})", "exp(math.tanh({0}))", "sin({0})",
                  "log1p(abs({0}))", "atan({0})"))
    return "math." + f.format(f"{x}[0]" if g.val(x).ndim == 1 else f"{x}[0, 0]")


def _python_int(g):
    """``math.floor`` / ``math.ceil`` / ``math.trunc`` give Python ints."""
    return f"{g.num()} * math.{g.choice(('floor', 'ceil', 'trunc'))}({g.flt()} * 3.0)"


def _reduce_0d(g):
    """A ufunc reduction of a 0-d array over axis 0 or -1 (NumPy reduces nothing)."""
    fn = g.choice(("sum", "prod", "max", "min", "amax", "amin"))
    return f"np.{fn}(np.asarray({g.flt()}) * 2.0, axis={g.choice(('0', '-1'))})"


def _two_args(g):
    s, t = g.flt(), g.flt()
    return g.choice((f"math.pow(abs({s}) + 0.5, {t})", f"math.atan2({s}, {t})",
                     f"math.hypot({s}, {t}, 0.5)", f"math.log(abs({s}) + 0.5, 3.0)",
                     f"math.copysign({s}, {t})"))


RECIPES = {
    "pattern.math_leaving_domain": _leaving_domain,
    "pattern.math_of_item": _of_item,
    "pattern.math_python_int": _python_int,
    "pattern.math_two_arguments": _two_args,
    "pattern.reduce_0d_axis": _reduce_0d,
}
FEATURES = {"pattern.math_leaving_domain": "scalar", "pattern.math_of_item": "scalar",
            "pattern.math_python_int": "scalar", "pattern.math_two_arguments": "scalar",
            "pattern.reduce_0d_axis": "reduce"}
