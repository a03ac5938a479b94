"""Fuzz recipes of the products, scans, order statistics and NaN-ignoring reductions.

Merged into ``recipes.RECIPES`` at import (see that module's docstring); every
recipe here belongs to the ``reduce`` feature.
"""
from __future__ import annotations

from .recipes import Reject, _reduction


def _small(g):
    """An array whose products stay moderate: ``np.tanh(x) + 1.1`` (0.1 to 2.1 in size)."""
    x = g.arr()
    return x, f"(np.tanh({x}) * 0.8 + 1.1)"


def _prod(method=False, ops=None):
    def recipe(g):
        x, safe = _small(g)
        axis = g.axis(x)
        keep = g.choice(["True", "False"])
        if ops:
            return f"ops.{ops}(keep_dims={keep})({safe}, {'()' if axis == 'None' else axis})" \
                if ops == "ReduceProd" else f"ops.prod({safe}, {axis}, {keep})"
        if method:
            return f"{safe}.prod(axis={axis}, keepdims={keep})"
        return f"np.prod({safe}, axis={axis}, keepdims={keep})"
    return recipe


def _scan(fn, method=False, ops=None):
    def recipe(g):
        x, safe = _small(g)
        arg = safe if fn == "cumprod" else x
        nd = g.val(x).ndim
        axis = g.choice([str(i) for i in range(nd)] + [str(-1)] + ([] if ops else ["None"]))
        if ops == "CumSum":
            return f"ops.CumSum({g.choice(['False', 'True'])}, {g.choice(['False', 'True'])})" \
                   f"({arg}, {axis})"
        if ops:
            return f"ops.{fn}({arg}, {axis})"
        if method:
            return f"{arg}.{fn}(axis={axis})" if axis != "None" else f"{arg}.{fn}()"
        return f"np.{fn}({arg}, axis={axis})"
    return recipe


def _quantile(fn, q_values):
    def recipe(g):
        x = g.arr()
        axis = g.axis(x)
        keep = g.choice(["", ", keepdims=True"])
        q = g.choice(q_values)
        q_arg = "" if fn == "median" else f", {q}"
        return f"np.{fn}({x}{q_arg}, axis={axis}{keep})"
    return recipe


def _average(g):
    x = g.arr()
    shape = g.val(x).shape
    if g.coin() or not shape:
        w = g.same_shape(x) if shape else g.flt()
        axis = g.axis(x)
        return f"np.average({x}, axis={axis}, weights=np.abs({w}) + 0.5)"
    axis = g.choice(range(len(shape)))
    w = ", ".join(g.lit(0.2, 2.0) for _ in range(shape[axis]))
    keep = g.choice(["", ", keepdims=True"])
    return f"np.average({x}, axis={axis - g.choice([0, len(shape)])}, weights=[{w}]{keep})"


def _ops_reduce(call):
    def recipe(g):
        x = g.arr()
        return call.format(x=x, axis=g.axis(x), keep=g.choice(["True", "False"]))
    return recipe


def _logsumexp(g):
    x = g.arr()
    axis = g.axis(x, allow_none=False)
    return f"ops.logsumexp({x}, {g.choice([axis, '()'])}, {g.choice(['True', 'False'])})"


def _ops_class(name):
    def recipe(g):
        x = g.arr()
        axis = g.axis(x, allow_none=False)
        return f"ops.{name}({g.choice(['True', 'False'])})({x}, {g.choice([axis, '()'])})"
    return recipe


def _ms_quantile(g):
    x = g.arr()
    if g.val(x).ndim == 0:
        raise Reject
    return f"ops.quantile({x}, {g.choice(['0.25', '0.5', '[0.1, 0.9]'])}, " \
           f"{g.axis(x, allow_none=False)}, {g.choice(['True', 'False'])})"


def _ms_median(g):
    x = g.arr()
    axis = g.axis(x, allow_none=False)
    return f"ops.median({x}, {axis}, {g.choice(['True', 'False'])})[0]"


RECIPES = {
    "numpy.prod": _prod(),
    "method.prod": _prod(method=True),
    "numpy.cumsum": _scan("cumsum"),
    "method.cumsum": _scan("cumsum", method=True),
    "numpy.cumprod": _scan("cumprod"),
    "method.cumprod": _scan("cumprod", method=True),
    "numpy.ptp": _reduction("ptp"),
    "numpy.average": _average,
    "numpy.nansum": _reduction("nansum"),
    "numpy.nanmean": _reduction("nanmean"),
    "numpy.nanmax": _reduction("nanmax"),
    "numpy.nanmin": _reduction("nanmin"),
    "numpy.median": _quantile("median", [""]),
    "numpy.quantile": _quantile("quantile", ["0.3", "0.5", "[0.25, 0.75]", "1.0"]),
    "numpy.percentile": _quantile("percentile", ["30", "50", "[10, 90]", "0"]),
    "ad_compiler.ops.operations.prod": _prod(ops="prod"),
    "ad_compiler.ops.operations.ReduceProd": _prod(ops="ReduceProd"),
    "ad_compiler.ops.operations.cumsum": _scan("cumsum", ops="cumsum"),
    "ad_compiler.ops.operations.cumprod": _scan("cumprod", ops="cumprod"),
    "ad_compiler.ops.operations.CumSum": _scan("cumsum", ops="CumSum"),
    "ad_compiler.ops.operations.amax": _ops_reduce("ops.amax({x}, {axis}, {keep})"),
    "ad_compiler.ops.operations.amin": _ops_reduce("ops.amin({x}, {axis}, {keep})"),
    "ad_compiler.ops.operations.std":
        _ops_reduce("ops.std(np.tanh({x}) * 0.8 + {x}, {axis}, 0, {keep})"),
    "ad_compiler.ops.operations.var": _ops_reduce("ops.var({x}, {axis}, 1, {keep})"),
    "ad_compiler.ops.operations.nansum": _ops_reduce("ops.nansum({x}, {axis}, {keep})"),
    "ad_compiler.ops.operations.nanmean": _ops_reduce("ops.nanmean({x}, {axis}, {keep})"),
    "ad_compiler.ops.operations.quantile": _ms_quantile,
    "ad_compiler.ops.operations.logsumexp": _logsumexp,
    "ad_compiler.ops.operations.median": _ms_median,
    "ad_compiler.ops.operations.ReduceMax": _ops_class("ReduceMax"),
    "ad_compiler.ops.operations.ReduceMin": _ops_class("ReduceMin"),
}

FEATURES = {key: "reduce" for key in RECIPES}
