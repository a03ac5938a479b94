"""Recipes for the elementwise math functions (ad_compiler/ops/elementwise_math.py).

Each argument is made safe for its function's domain: ``unit`` keeps it inside
(-0.9, 0.9) for arcsin/arccos/arctanh, ``above1`` at 1.5 or more for arccosh,
``pos`` at 0.5 or more for logarithms, cbrt and reciprocals, ``bounded`` inside
(-1, 1) where a large argument would overflow (sinh, exp2 ...).
"""
from __future__ import annotations

from .recipes import _binary

_ARRAY_DOMAIN = {"": "{0}", "pos": "(np.abs({0}) + 0.5)", "bounded": "np.tanh({0})",
                 "unit": "(np.tanh({0}) * 0.9)", "above1": "(np.abs({0}) + 1.5)"}
_FLOAT_DOMAIN = {"": "{0}", "pos": "(abs({0}) + 0.5)", "bounded": "math.tanh({0})",
                 "unit": "(math.tanh({0}) * 0.9)", "above1": "(abs({0}) + 1.5)"}


def _unary(fmt, domain=""):
    return lambda g: fmt.format(_ARRAY_DOMAIN[domain].format(g.num()))


def _on_float(fmt, domain=""):
    return lambda g: fmt.format(_FLOAT_DOMAIN[domain].format(g.flt()))


def _two_floats(fmt, safe_second=False):
    def recipe(g):
        y = g.flt()
        return fmt.format(g.flt(), f"({y} * {y} + 0.5)" if safe_second else y)
    return recipe


#: function -> (domain, NumPy name, MindSpore ops names, math name)
_UNARY = {
    "tan": ("bounded", "tan", ("tan",), None),
    "arcsin": ("unit", "arcsin", ("asin", "arcsin"), "asin"),
    "arccos": ("unit", "arccos", ("acos", "arccos"), "acos"),
    "arctan": ("", "arctan", ("atan", "arctan"), "atan"),
    "sinh": ("bounded", "sinh", ("sinh",), "sinh"),
    "cosh": ("bounded", "cosh", ("cosh",), "cosh"),
    "arcsinh": ("", "arcsinh", ("asinh", "arcsinh"), "asinh"),
    "arccosh": ("above1", "arccosh", ("acosh", "arccosh"), "acosh"),
    "arctanh": ("unit", "arctanh", ("atanh", "arctanh"), "atanh"),
    "log1p": ("pos", "log1p", ("log1p",), "log1p"),
    "expm1": ("bounded", "expm1", ("expm1",), "expm1"),
    "log2": ("pos", "log2", ("log2",), None),
    "log10": ("pos", "log10", ("log10",), None),
    "exp2": ("bounded", "exp2", ("exp2",), "exp2"),
    "cbrt": ("pos", "cbrt", (), "cbrt"),
    "reciprocal": ("pos", "reciprocal", ("reciprocal",), None),
    "sinc": ("", "sinc", ("sinc",), None),
    "fabs": ("", "fabs", (), None),
    "absolute": ("", None, ("absolute",), None),
    "deg2rad": ("", "deg2rad", ("deg2rad",), "radians"),
    "radians": ("", "radians", (), None),
    "rad2deg": ("", "rad2deg", ("rad2deg",), "degrees"),
    "degrees": ("", "degrees", (), None),
    "nan_to_num": ("", "nan_to_num", ("nan_to_num",), None),
    # step functions: the value only
    "trunc": ("", "trunc", ("trunc",), "trunc"),
    "fix": ("", "fix", (), None),
    "rint": ("", "rint", (), None),
    "sign": ("", None, ("sign",), None),
    "floor": ("", None, ("floor",), None),
    "ceil": ("", None, ("ceil",), None),
}

#: function -> (second argument kept away from 0, MindSpore ops names, math name)
_BINARY = {
    "arctan2": (False, ("atan2", "arctan2"), "atan2"),
    "hypot": (False, ("hypot",), None),
    "logaddexp": (False, ("logaddexp",), None),
    "logaddexp2": (False, ("logaddexp2",), None),
    "fmod": (True, ("fmod",), "fmod"),
    "remainder": (True, ("remainder",), None),
    "copysign": (False, ("copysign",), "copysign"),
    "fmax": (False, ("fmax",), None),
    "fmin": (False, ("fmin",), None),
}

_STEP = ("trunc", "fix", "rint", "sign", "floor", "ceil", "round")

RECIPES: dict = {}
FEATURES: dict = {}

for _fn, (_domain, _np_name, _ops_names, _math_name) in _UNARY.items():
    if _np_name:
        RECIPES[f"numpy.{_np_name}"] = _unary(f"np.{_np_name}({{0}})", _domain)
    for _op in _ops_names:
        RECIPES[f"ad_compiler.ops.operations.{_op}"] = _unary(f"ops.{_op}({{0}})", _domain)
    if _math_name:
        RECIPES[f"math.{_math_name}"] = _on_float(f"math.{_math_name}({{0}})", _domain)
    if _fn in _STEP:
        FEATURES.update({k: "nondiff" for k in (f"numpy.{_np_name}", f"math.{_math_name}",
                                                *(f"ad_compiler.ops.operations.{o}"
                                                  for o in _ops_names))})

for _fn, (_safe, _ops_names, _math_name) in _BINARY.items():
    if _fn != "remainder":  # numpy.remainder has its recipe in recipes.py
        RECIPES[f"numpy.{_fn}"] = _binary(f"np.{_fn}({{0}}, {{1}})", safe_second=_safe)
    for _op in _ops_names:
        RECIPES[f"ad_compiler.ops.operations.{_op}"] = _binary(f"ops.{_op}({{0}}, {{1}})",
                                                               safe_second=_safe)
    if _math_name:
        RECIPES[f"math.{_math_name}"] = _two_floats(f"math.{_math_name}({{0}}, {{1}})", _safe)

RECIPES.update({
    "numpy.float_power":
        lambda g: f"np.float_power(np.abs({g.num()}) + 0.5, {g.choice(['2', '1.5', '-0.5'])})",
    "ad_compiler.ops.operations.float_power":
        lambda g: f"ops.float_power(np.abs({g.num()}) + 0.5, np.tanh({g.num()}))",
    "numpy.round": lambda g: f"np.round({g.num()}, {g.choice(['0', '1', '2'])})",
    "numpy.around": lambda g: f"np.around({g.num()}, 1)",
    "method.round": lambda g: f"{g.arr()}.round({g.choice(['', '1'])})",
    "ad_compiler.ops.operations.round": lambda g: f"ops.round({g.num()}, decimals=1)",
})
FEATURES.update({k: "nondiff" for k in ("numpy.round", "numpy.around", "method.round",
                                        "ad_compiler.ops.operations.round")})
FEATURES = {k: v for k, v in FEATURES.items() if k in RECIPES}
