"""Recipes of the sums of products ``collect_terms`` rewrites (docs/optimizations.md,
"Like terms"), of ``x ** 2`` as a product and of a reciprocal times a value.

Their gradients accumulate equal terms, terms that cancel when multiplied out and
terms with a common factor or coefficient; a shape the cancellation would change
(a broadcast partner) is among them. Keys start with ``pattern.``; they belong to
the ``algebra`` feature.
"""
from __future__ import annotations


def cancelling_terms(g):
    x = g.arr()
    y, z = g.partner(x), g.partner(x)
    return g.choice([f"{x} * {y} * (1 - {z}) - (1 - {x}) * {y} * {z}",
                     f"({x} * (1 - {z}) - (1 - {x}) * {z}) * {y}",
                     f"{x} * {z} - {z} * {x} + {y}",
                     f"{y} * np.log(np.exp({x}) + 1.0) - {y} * {x}"])


def like_terms(g):
    x = g.arr()
    y = g.partner(x)
    return g.choice([f"np.sin({x}) * {x} * {x} * {y}", f"{x} * {x} * {x} + 2.0 * {x} * {y}",
                     f"np.exp(-{x} * {x}) * np.sin({x}) * {x}",
                     f"({x} + {y}) * ({x} - {y}) * 0.5"])


def square_and_reciprocal(g):
    x = g.arr()
    y = g.partner(x)
    return g.choice([f"{x} ** 2 + {x} * {x} * {y}", f"np.sin({y}) / (1 + {x} * {x})",
                     f"{x} ** 3 / (1 + {x} ** 2)", f"3.0 / (2.0 + {x} ** 2) * {y}"])


RECIPES = {f"pattern.{f.__name__}": f for f in (cancelling_terms, like_terms,
                                                square_and_reciprocal)}
FEATURES = {k: "algebra" for k in RECIPES}
