"""Common-subexpression elimination: one op per (primitive, inputs, params), in scope."""
from __future__ import annotations

import numpy as np

from ad_compiler.ir.control import build_if
from ad_compiler.ir.interp import interpret
from ad_compiler.passes.cse import cse


def test_repeated_ops_are_computed_once(ir):
    b, (x, y) = ir.new(("x", ir.arr(3)), ("y", ir.arr(3)))
    first = b.sin(b.cos(x))
    second = b.sin(b.cos(x))                      # the same chain: both levels merge
    fn = ir.finish(b, b.mul(first, second), b.mul(x, y), b.mul(x, y))
    new = ir.run(cse, fn)
    assert ir.prims(new) == ["cos", "sin", "mul", "mul"]
    assert new.outputs[1] is new.outputs[2]


def test_equal_constants_merge(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    fn = ir.finish(b, b.add(x, b.const(2.0)), b.mul(x, b.const(2.0)), b.sub(x, b.const(np.nan)),
                   b.div(x, b.const(np.nan)))
    new = ir.run(cse, fn)
    assert ir.prims(new).count("const") == 2


def test_different_params_stay_apart(ir):
    b, (x,) = ir.new(("x", ir.arr(2, 3)))
    fn = ir.finish(b, b.sum(x, axis=0), b.sum(x, axis=1), b.sum(x, axis=0, keepdims=True),
                   b.reshape(x, shape=(3, 2)), b.reshape(x, shape=(6,)),
                   b.cast(x, dtype=np.dtype("float32")), b.cast(x, dtype=np.dtype("float16")),
                   b.transpose(x, axes=(1, 0)), b.transpose(x, axes=None))
    new = ir.run(cse, fn)
    assert ir.prims(new) == ir.prims(fn)


def test_numbers_of_different_kinds_stay_apart(ir):
    # 1 == 1.0 == True in Python, but x * 1, x * 1.0 and x * True have different types
    b, (n,) = ir.new(("n", ir.arr(3, dtype="int64")))
    consts = [1, 1.0, True, np.float32(1), np.int64(1)]
    fn = ir.finish(b, *(b.mul(n, b.const(c)) for c in consts))
    new = ir.run(cse, fn)
    assert ir.prims(new).count("const") == len(consts)
    assert [str(v.type) for v in new.outputs] == ["i64[3]", "f64[3]", "i64[3]", "f64[3]", "i64[3]"]


def test_equal_arrays_that_are_different_objects_stay_apart(ir):
    # keyed by identity: an array's contents are not hashed
    w = np.ones(3)
    b, (x,) = ir.new(("x", ir.arr(3)))
    fn = ir.finish(b, b.mul(x, b.const(w)), b.mul(x, b.const(w)), b.mul(x, b.const(w.copy())))
    new = ir.run(cse, fn)
    assert ir.prims(new) == ["const", "mul", "const", "mul"]


def test_zero_and_negative_zero_stay_apart(ir):
    # 0.0 == -0.0 in Python, but 1 / (x * -0.0) is -inf where 1 / (x * 0.0) is +inf
    b, (x,) = ir.new(("x", ir.arr(2)))
    fn = ir.finish(b, *(b.div(b.const(1.0), b.mul(x, b.const(z))) for z in (0.0, -0.0)))
    new = cse(fn)
    with np.errstate(divide="ignore"):
        want, got = interpret(fn, np.ones(2)), interpret(new, np.ones(2))
    np.testing.assert_array_equal(want[1], [-np.inf, -np.inf])
    np.testing.assert_array_equal(got[1], want[1])


def _positive(b, x):
    return b.greater(b.sum(x), b.const(0.0))


def test_ops_with_regions_are_never_merged(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    cond = _positive(b, x)
    (r1,) = build_if(b, cond, lambda b: [b.cos(x)], lambda b: [x])
    (r2,) = build_if(b, cond, lambda b: [b.cos(x)], lambda b: [x])
    new = ir.run(cse, ir.finish(b, r1, r2))
    assert ir.prims(new).count("if") == 2
    # a value of one branch is out of scope in the other if: each keeps its cos
    assert ir.prims(new).count("cos") == 2


def test_an_outer_value_is_reused_inside_a_region(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    outer = b.cos(x)
    (r,) = build_if(b, _positive(b, x), lambda b: [b.mul(b.cos(x), x)], lambda b: [x])
    new = ir.run(cse, ir.finish(b, r, outer))
    assert ir.prims(new).count("cos") == 1
    (if_op,) = [op for op in new.body.ops if op.prim == "if"]
    assert if_op.regions[0].ops[0].inputs[0] is new.outputs[1]


def test_a_region_value_is_not_reused_after_the_region(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    (r,) = build_if(b, _positive(b, x), lambda b: [b.sin(x)], lambda b: [x])
    fn = ir.finish(b, r, b.sin(x))
    new = ir.run(cse, fn)   # the verifier would reject a use of the branch's sin
    assert ir.prims(new).count("sin") == 2
