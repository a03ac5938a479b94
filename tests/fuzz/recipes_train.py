"""Recipes of the training ops: ``ops.cast``, ``ops.ones_like``, ``ops.shape`` ..."""
from .recipes import NOT_GENERATED


def _fmt(fmt, min_nd=1):
    def recipe(g):
        return fmt.format(x=g.arr(min_nd=min_nd))
    return recipe


RECIPES = {
    "ad_compiler.ops.operations.cast": _fmt("ops.cast({x}, np.float64)"),
    "ad_compiler.ops.creation.Cast": _fmt("ops.Cast()({x}, np.float64)"),
    "ad_compiler.ops.operations.ones_like": _fmt("{x} * ops.ones_like({x})"),
    "ad_compiler.ops.creation.OnesLike": _fmt("{x} * ops.OnesLike()({x})"),
    "ad_compiler.ops.operations.zeros_like": _fmt("{x} + ops.zeros_like({x})"),
    "ad_compiler.ops.creation.ZerosLike": _fmt("{x} + ops.ZerosLike()({x})"),
    "ad_compiler.ops.creation.shape": _fmt("{x} * ops.shape({x})[-1]"),
    "ad_compiler.ops.creation.Shape": _fmt("{x} * ops.Shape()({x})[0]"),
    "ad_compiler.ops.operations.argmax": _fmt("{x} * ops.argmax({x}, -1, True)"),
}

NOT_GENERATED["ad_compiler.ops.creation.assign"] = "writes a Parameter (tests/nn/test_effects.py)"
