"""Recipes for masks computed in the function (``np.nonzero`` and its spellings, masks
combined with ``&``/``|``/``^``/``~`` and ``np.logical_*``) and for
``map``/``filter``/``sorted``/``list``/``tuple`` on run-time values.

Each keeps its result's shape static (a masked selection is reduced in the same
expression), so later statements never meet a data-dependent length.
"""
from __future__ import annotations

from .recipes import Reject


def _masked(fmt):
    """``fmt`` with ``{x}`` an array and ``{c}`` a condition on it."""
    def recipe(g):
        x = g.arr()
        return fmt.format(x=x, c=f"{x} > {g.lit()}", s=g.flt())
    return recipe


def _rows(fmt):
    def recipe(g):
        x = g.arr()
        return fmt.format(x=x, s=g.flt(), n=g.val(x).shape[0], k=g.rng.randint(0, 1))
    return recipe


def _sorted(g):
    a, b, c = g.num(), g.num(), g.num()
    keys = g.rng.sample([0, 1, 2, 1], 3)
    reverse = g.choice(["True", "False"])
    return (f"sum(map(lambda p, w: p[1] * w, sorted([({keys[0]}, {a}), ({keys[1]}, {b}), "
            f"({keys[2]}, {c})], key=lambda p: p[0], reverse={reverse}), "
            f"({g.lit()}, {g.lit()}, {g.lit()})))")


def _filter(g):
    x = g.arr()
    n = g.val(x).shape[0]
    if n < 2:
        raise Reject
    j = g.rng.randint(0, n - 1)
    return f"sum(map(lambda k: {x}[k] * {g.flt()}, filter(lambda k: k != {j}, range({n}))))"


def _combined(fmt):
    """``np.where`` of two conditions combined by ``fmt`` (``{0} & {1}`` ...)."""
    def recipe(g):
        x = g.num()
        y = g.partner(x)
        test = fmt.format(f"({x} > {g.lit()})", f"({y} < {g.lit()})")
        return f"np.where({test}, {x}, {g.partner(x)})"
    return recipe


def _combined_mask(fmt):
    """A selection by two masks combined by ``fmt``, reduced."""
    def recipe(g):
        x = g.arr()
        test = fmt.format(f"({x} > {g.lit()})", f"({x} < {g.lit(0.0, 2.0)})")
        return f"np.sum({x}[{test}] ** 2) * {g.flt()}"
    return recipe


RECIPES = {
    "numpy.nonzero": _masked("np.sum({x}[np.nonzero({c})] ** 2) * {s}"),
    "method.nonzero": _masked("np.sum(np.tanh({x}[({c}).nonzero()]) * {s})"),
    "numpy.flatnonzero": _masked("np.sum(np.sin({x}).ravel()[np.flatnonzero({c})])"),
    "builtins.map": _rows("sum(map(lambda r: np.tanh(r) * {s}, {x}))"),
    "builtins.filter": _filter,
    "builtins.sorted": _sorted,
    "builtins.list": _rows("np.stack(list({x})[::-1]) * {s}"),
    "builtins.tuple": _rows("tuple({x})[-1] * {s}"),
    "_operator.and_": _combined_mask("{0} & {1}"),
    "_operator.or_": _combined_mask("{0} | {1}"),
    "_operator.xor": _combined("{0} ^ {1}"),
    "_operator.invert": _combined_mask("~{0} & {1}"),
    "numpy.bitwise_and": _combined("np.bitwise_and({0}, {1})"),
    "numpy.bitwise_or": _combined("np.bitwise_or({0}, {1})"),
    "numpy.bitwise_xor": _combined("np.bitwise_xor({0}, {1})"),
    "numpy.invert": _combined("np.invert({0}) | {1}"),
    "numpy.logical_and": _combined_mask("np.logical_and({0}, {1})"),
    "numpy.logical_or": _combined("np.logical_or({0}, {1})"),
    "numpy.logical_xor": _combined("np.logical_xor({0}, {1})"),
    "numpy.logical_not": _combined_mask("np.logical_not({0}) & {1}"),
}

FEATURES = {"numpy.nonzero": "masks", "method.nonzero": "masks", "numpy.flatnonzero": "masks",
            "builtins.map": "iterables", "builtins.filter": "iterables",
            "builtins.sorted": "iterables", "builtins.list": "iterables",
            "builtins.tuple": "iterables",
            **{k: "masks" for k in ("_operator.and_", "_operator.or_", "_operator.invert",
                                    "numpy.logical_and", "numpy.logical_not")},
            **{k: "nondiff" for k in ("_operator.xor", "numpy.bitwise_and", "numpy.bitwise_or",
                                      "numpy.bitwise_xor", "numpy.invert", "numpy.logical_or",
                                      "numpy.logical_xor")}}
