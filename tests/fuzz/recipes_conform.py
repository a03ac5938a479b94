"""Recipes for ``ms.hessian`` inside the differentiated function: the Hessian of a
scalar helper, inlined as IR and differentiated again (third derivatives)."""
from __future__ import annotations

from .recipes import RARE


def _hessian(g):
    x = g.arr()
    return f"np.sum(ms.hessian({g.smooth_helper()})({x}), axis=0)"


RECIPES = {"ad_compiler.api.hessian.hessian": _hessian}

#: one product per input element, each a gradient inlined: costly, drawn less often
RARE.add("ad_compiler.api.hessian.hessian")
