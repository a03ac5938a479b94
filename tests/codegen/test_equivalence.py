"""Generated functions agree with the reference interpreter, bit for bit and type for type."""
from __future__ import annotations

import math

import numpy as np
import pytest


def test_elementwise_chain(ir):
    b, (x, y) = ir.new(("x", ir.arr(5)), ("y", ir.arr(5)))
    z = b.mul(x, b.sin(y), hint="z")
    out = b.add(b.cos(z), b.neg(x), hint="out")
    fn = ir.finish(b, out, z)
    ir.check(fn, ir.rng.normal(size=5), ir.rng.normal(size=5))


def test_broadcasting_and_shapes(ir):
    b, (x, y) = ir.new(("x", ir.arr(2, 1)), ("y", ir.arr(1, 3)))
    s = b.add(x, y, hint="s")                                  # (2, 3)
    col = b.sum(s, axis=0, keepdims=False, hint="col")          # (3,)
    row = b.sum(s, axis=-1, keepdims=True, hint="row")          # (2, 1)
    wide = b.broadcast_to(col, shape=(4, 3), hint="wide")
    flat = b.reshape(wide, shape=(-1,), hint="flat")
    total = b.sum(s, axis=None, keepdims=False, hint="total")   # NumPy scalar
    fn = ir.finish(b, row, flat, total)
    ir.check(fn, ir.rng.normal(size=(2, 1)), ir.rng.normal(size=(1, 3)))


def test_float32_stays_float32(ir):
    b, (x,) = ir.new(("x", ir.arr(4, dtype="float32")))
    y = b.mul(x, b.const(2.0), hint="y")                       # weak 2.0: stays f32
    z = b.add(y, b.ones_like(x), hint="z")
    wide = b.cast(z, dtype=np.dtype("float64"), hint="wide")
    fn = ir.finish(b, z, wide, b.zeros_like(x))
    compiled = ir.check(fn, ir.rng.normal(size=4).astype(np.float32))
    assert compiled.fn(np.ones(4, np.float32))[0].dtype == np.float32


def test_python_float_arguments(ir):
    from ad_compiler.ir.core import AType
    b, (a, x) = ir.new(("a", AType.of(1.5)), ("x", ir.arr(3)))
    scaled = b.mul(a, x, hint="scaled")
    square = b.mul(a, a, hint="square")                        # stays a Python float
    fn = ir.finish(b, scaled, square)
    compiled = ir.check(fn, 1.5, ir.rng.normal(size=3))
    assert type(compiled.fn(2.0, np.ones(3))[1]) is float


CONSTANTS = [2, 2.0, True, -3, -0.0, 1e300, math.inf, -math.inf, math.nan, complex(1, -2),
             complex(0, math.inf), np.float32(1.25), np.int64(7), np.float64(0.5), np.bool_(True),
             np.arange(6, dtype=np.float32).reshape(2, 3), np.array(3, dtype=np.int8)]


def test_constants_of_every_kind(ir):
    b, _ = ir.new()
    fn = ir.finish(b, *(b.const(c, hint="k") for c in CONSTANTS))
    compiled = ir.check(fn)
    assert np.signbit(compiled.fn()[4])                          # -0.0 keeps its sign


def test_int_and_float_constants_promote_differently(ir):
    b, (n,) = ir.new(("n", ir.arr(3, dtype="int64")))
    fn = ir.finish(b, b.mul(n, b.const(2)), b.mul(n, b.const(2.0)))
    compiled = ir.check(fn, np.arange(3))
    ints, floats = compiled.fn(np.arange(3))
    assert ints.dtype == np.int64 and floats.dtype == np.float64


def test_numpy_constants_are_not_recreated_per_call(ir):
    weights = np.ones((2, 2), np.float32)
    b, _ = ir.new()
    fn = ir.finish(b, b.const(weights, hint="w"), b.const(np.float32(3), hint="s"))
    compiled = ir.check(fn)
    assert compiled.fn()[0] is weights and compiled.fn()[0] is compiled.fn()[0]
    # read where used under their namespace names, never rebuilt or copied
    assert "return (w_value, s_value)" in compiled.source


def test_params_with_dtypes_axes_and_arrays(ir):
    b, (x,) = ir.new(("x", ir.arr(2, 3)))
    half = b.cast(x, dtype=np.dtype("float16"), hint="half")
    flags = b.cast(x, dtype=np.dtype("bool"), hint="flags")
    both = b.sum(x, axis=(0, 1), keepdims=True, hint="both")
    flat = b.reshape(x, shape=np.array([3, 2]), hint="flat")    # an array param: an entry
    fn = ir.finish(b, half, flags, both, flat)
    compiled = ir.check(fn, ir.rng.normal(size=(2, 3)))
    assert "np.float16" in compiled.source and "np.bool" in compiled.source
    assert "flat = x.reshape(flat_shape)" in compiled.source


def test_unused_results_are_emitted_and_harmless(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    b.sin(x, hint="unused")
    b.const(np.zeros(3), hint="dead")
    fn = ir.finish(b, b.cos(x))
    compiled = ir.check(fn, ir.rng.normal(size=3))
    assert "unused = np.sin(x)" in compiled.source


def test_outputs_may_be_arguments_or_repeated(ir):
    b, (x, y) = ir.new(("x", ir.arr(2)), ("y", ir.arr(2)))
    fn = ir.finish(b, y, x, y)
    compiled = ir.check(fn, np.ones(2), np.zeros(2))
    assert compiled.source.endswith("    return (y, x, y)\n")


def test_op_missing_a_template_param_is_an_internal_error(ir):
    from ad_compiler.codegen import to_source
    from ad_compiler.errors import IRError
    from ad_compiler.ir.core import Op, Value
    b, (x,) = ir.new(("x", ir.arr(3)))
    out = Value(x.type, "total")
    b.add_op(Op("sum", [x], {}, [out]))                        # built by hand: no params
    fn = ir.finish(b, out)
    with pytest.raises(IRError, match="'sum' op with 1 inputs and params \\[\\]"):
        to_source(fn)
