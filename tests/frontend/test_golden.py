"""Golden text of the lifted IR for two small functions.

The expected text is literal except for line numbers, which are read from this
file (lines tagged ``# L:<key>``), so the goldens check that names come from the
user's variables and each op carries the line of the statement that made it.
"""
import re

import numpy as np

import ad_compiler.ops  # noqa: F401
from ad_compiler import nn
from ad_compiler.frontend import Static, lift
from ad_compiler.ir.core import AType
from ad_compiler.ir.verifier import verify
from ad_compiler.nn import Parameter

F32 = np.dtype("float32")


def lines_by_key() -> dict:
    with open(__file__) as f:
        return {m.group(1): i for i, line in enumerate(f, 1)
                if (m := re.search(r"# L:(\w+)$", line.rstrip()))}


def expected(template: str) -> str:
    return template.strip("\n").format(file=__file__, **lines_by_key())


# -- golden 1: a function calling a method of a module-level object ----------------
class Model:
    def predict(self, x, w, b):
        h = x @ w  # L:h
        h = h + b  # L:bias
        y = np.tanh(h)  # L:y
        return y


MODEL = Model()


def loss(x, w, b, target):  # L:def_loss
    pred = MODEL.predict(x, w, b)
    err = pred - target  # L:err
    total = np.sum(err * err, axis=1)  # L:total
    return total.mean(), pred.shape  # L:ret


GOLDEN_LOSS = """
func loss(%x: f32[2,3], %w: f32[3,4], %b: f32[4], %target: f32[2,4]) {{
  %h = matmul %x, %w                        # f32[2,4]  @{file}:{h}
  %h_1 = add %h, %b                         # f32[2,4]  @{file}:{bias}
  %pred = tanh %h_1                         # f32[2,4]  @{file}:{y}
  %err = sub %pred, %target                 # f32[2,4]  @{file}:{err}
  %errerr = mul %err, %err                  # f32[2,4]  @{file}:{total}
  %total = sum %errerr {{axis=1, keepdims=False}}  # f32[2]  @{file}:{total}
  %mean_total = mean %total {{axis=None, keepdims=False}}  # f32[]  @{file}:{ret}
  return %mean_total
}}
"""


def test_golden_function_with_method_call():
    lifted = lift(loss, (AType((2, 3), F32), AType((3, 4), F32), AType((4,), F32),
                         AType((2, 4), F32)))
    verify(lifted.function)
    assert str(lifted.function) == expected(GOLDEN_LOSS)
    assert lifted.out_tree == (0, (Static(2), Static(4)))
    assert (lifted.function.loc.file, lifted.function.loc.line) == (__file__,
                                                                     lines_by_key()["def_loss"])


# -- golden 2: a Cell with a Parameter, a static if and a sub-Cell ------------------
class Gate(nn.Cell):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.w = Parameter(np.ones((3,), np.float32), name="gate.w")

    def construct(self, x):
        if self.scale != 1:
            x = x * self.scale  # L:scaled
        gated = x * self.w  # L:gated
        return gated


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.gate = Gate(scale=2)
        self.bias = Parameter(np.zeros((3,), np.float32), name="bias")

    def construct(self, x):
        y = self.gate(x)  # L:call
        y = y + self.bias - self.gate.w  # L:out
        return {"y": y, "bias": self.bias}


GOLDEN_BLOCK = """
func Block(%x: f32[4,3], %gate_w: f32[3], %bias: f32[3]) {{
  %c_value = const {{value=2}}                # int  @{file}:{scaled}
  %x_1 = mul %x, %c_value                   # f32[4,3]  @{file}:{scaled}
  %y = mul %x_1, %gate_w                    # f32[4,3]  @{file}:{gated}
  %add_y_bias = add %y, %bias               # f32[4,3]  @{file}:{out}
  %y_1 = sub %add_y_bias, %gate_w           # f32[4,3]  @{file}:{out}
  return %y_1, %bias
}}
"""


def test_golden_cell_with_parameters():
    block = Block()
    lifted = lift(block, (AType((4, 3), F32),))
    verify(lifted.function)
    assert str(lifted.function) == expected(GOLDEN_BLOCK)
    assert lifted.params == [block.gate.w, block.bias]  # first read first, each once
    assert lifted.out_tree == {"y": 0, "bias": 1}
    assert lifted.n_inputs == 1
