"""Scalar operands: one-element constants meeting arrays become 0-d arrays of their dtype.

``ir.run`` checks every rewrite bit for bit against the unrewritten function on
random inputs, float32 included, so a constant converted differently from
NumPy's own conversion of a Python number fails here.
"""
from __future__ import annotations

import numpy as np
import pytest

from ad_compiler.passes.cse import cse
from ad_compiler.passes.dce import dce
from ad_compiler.passes.operands import scalar_operands

from .conftest import arr


def _consts(fn):
    return [op.params["value"] for op in fn.body.walk() if op.prim == "const"
            and any(op.result is i for use in fn.body.walk() for i in use.inputs)]


def _operand(v, i):
    """The value of the constant feeding input ``i`` of ``v``'s op."""
    return v.producer.inputs[i].producer.params["value"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("value", [1, 0.1, -0.2, 3.0])
@pytest.mark.parametrize("prim", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_python_number_becomes_0d_array_of_the_array_dtype(ir, prim, value, dtype):
    b, (x,) = ir.new(("x", arr(4, dtype=dtype)))
    out = b.emit(prim, b.const(value), x)
    fn = ir.run(scalar_operands, ir.finish(b, out))
    c = _operand(fn.outputs[0], 0)
    assert isinstance(c, np.ndarray) and c.shape == () and c.dtype == np.dtype(dtype)
    assert fn.outputs[0].type == out.type


def test_one_element_array_constant_becomes_0d(ir):
    b, (x,) = ir.new(("x", arr(2, 3)))
    out = b.mul(x, b.const(np.array([[-0.5]])))
    fn = ir.run(scalar_operands, ir.finish(b, out))
    c = _operand(fn.outputs[0], 1)
    assert c.shape == () and c == -0.5


@pytest.mark.parametrize("case", ["promotes", "widens", "scalar partner", "int partner",
                                  "bool constant", "pow"])
def test_left_alone(ir, case):
    dtype, shape, const, prim = "float64", (3,), 2.0, "mul"
    if case == "promotes":     # f64[1] * f32[3] is f64[3]: the array's dtype is not the result's
        dtype, const = "float32", np.array([2.0])
    elif case == "widens":     # f64[1,1] * f64[3] is f64[1,3]
        const = np.array([[2.0]])
    elif case == "scalar partner":
        shape = ()
    elif case == "int partner":
        dtype, const = "int64", 2
    elif case == "bool constant":
        const = True
    elif case == "pow":
        prim = "pow"
    b, (x,) = ir.new(("x", arr(*shape, dtype=dtype)))
    out = b.emit(prim, x, b.const(const))
    fn = ir.run(scalar_operands, ir.finish(b, out))
    assert _operand(fn.outputs[0], 1) is const


def test_equal_constants_share_one_array_and_cse_merges_them(ir):
    b, (x, y) = ir.new(("x", arr(3)), ("y", arr(3)))
    one = b.const(1.0)
    out = b.add(b.sub(one, x), b.sub(b.const(1), y))
    fn = dce(cse(ir.run(scalar_operands, ir.finish(b, out))))
    consts = _consts(fn)
    assert len(consts) == 1 and consts[0].shape == () and consts[0] == 1.0
    assert not consts[0].flags.writeable  # shared by every call: never written
