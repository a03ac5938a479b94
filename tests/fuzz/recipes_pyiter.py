"""Recipes for masks computed in the function (``np.nonzero`` and its spellings) and
for ``map``/``filter``/``sorted``/``list``/``tuple`` on run-time values.

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


RECIPES = {
    "numpy.nonzero": _masked("np.sum({x}[np.nonzero({c})] ** 2) * {s}"),
    "method.nonzero": _masked("np.sum(np.tanh({x}[({c}).nonzero()]) * {s})"),
    "numpy.flatnonzero": _masked("np.sum(np.sin({x}).ravel()[np.flatnonzero({c})])"),
    "builtins.map": _rows("sum(map(lambda r: np.tanh(r) * {s}, {x}))"),
    "builtins.filter": _filter,
    "builtins.sorted": _sorted,
    "builtins.list": _rows("np.stack(list({x})[::-1]) * {s}"),
    "builtins.tuple": _rows("tuple({x})[-1] * {s}"),
}

FEATURES = {"numpy.nonzero": "masks", "method.nonzero": "masks", "numpy.flatnonzero": "masks",
            "builtins.map": "iterables", "builtins.filter": "iterables",
            "builtins.sorted": "iterables", "builtins.list": "iterables",
            "builtins.tuple": "iterables"}
