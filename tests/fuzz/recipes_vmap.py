"""Recipes for ``ms.vmap`` / ``ops.vmap`` (one object): a helper of one example mapped
over an array's leading or trailing axis inside the differentiated function, so the
fuzzer checks the batched code's values and its gradient (vmap inlines as IR)."""
from __future__ import annotations


def _vmap(g):
    x = g.arr()
    helper = g.smooth_helper(elementwise=g.coin(0.5))
    spelling = g.choice(["ms.vmap", "ms.ops.vmap"])
    axes = g.choice(["", ", in_axes=0", ", in_axes=-1", ", in_axes=(0,), out_axes=0"])
    return f"{spelling}({helper}{axes})({x})"


RECIPES = {"ad_compiler.api.vmap.vmap": _vmap}
