"""Recipes of the training extras (Dense's input check, ops.Assign in compiled code)."""
from .recipes import NOT_GENERATED

RECIPES: dict = {}

NOT_GENERATED["ad_compiler.nn.layers.check_dense_input"] = (
    "a shape check inside nn.Dense.construct; the layer recipes call Dense")
NOT_GENERATED["ad_compiler.ops.creation.Assign"] = "writes a Parameter (tests/nn/test_effects.py)"
NOT_GENERATED["ad_compiler.nn.pooling._AvgPool2d"] = (
    "nn.AvgPool2d's configured pooling (tests/nn/test_pool_options.py)")
