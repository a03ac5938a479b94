"""Algebraic simplification: drop multiplies/divides by ones, make broadcasts implicit."""
from __future__ import annotations

import numpy as np

from ad_compiler.passes.dce import dce
from ad_compiler.passes.simplify import simplify


def _producer(v):
    return v.producer.prim if v.producer is not None else "arg"


# -- multiplying by one ---------------------------------------------------------------

def test_docstring_seed_times_cos_is_cos(ir):
    b, (x,) = ir.new(("x", ir.arr(3, dtype="float32")))
    out = b.sum(b.sin(x), hint="out")
    dout = b.ones_like(out, hint="dout")                       # f32[]
    spread = b.broadcast_to(dout, shape=(3,), hint="b")
    fn = ir.finish(b, b.mul(spread, b.cos(x), hint="dx"))
    new = ir.run(simplify, fn)
    assert _producer(new.outputs[0]) == "cos"
    assert ir.prims(dce(new)) == ["cos"]


def test_ones_pass_through_shape_ops_and_casts(ir):
    b, (x, y) = ir.new(("x", ir.arr(2, 3, dtype="float32")), ("y", ir.arr(3, 2)))
    ones = b.transpose(b.reshape(b.ones_like(x), shape=(3, 2)), axes=(1, 0))
    wide = b.cast(b.transpose(ones, axes=(1, 0)), dtype=np.dtype("float64"))
    fn = ir.finish(b, b.mul(y, wide), b.div(y, wide))
    new = ir.run(simplify, fn)
    assert new.outputs == [new.args[1], new.args[1]]
    assert ir.prims(dce(new)) == []


def test_constant_one_of_any_number_kind(ir):
    b, (x, n) = ir.new(("x", ir.arr(3)), ("n", ir.arr(3, dtype="int64")))
    fn = ir.finish(b, b.mul(x, b.const(1.0)), b.mul(b.const(1), x), b.mul(n, b.const(1)),
                   b.mul(x, b.const(np.ones(3, np.float32))), b.div(x, b.const(np.float64(1))))
    new = ir.run(simplify, fn)
    assert new.outputs == [new.args[0], new.args[0], new.args[1], new.args[0], new.args[0]]


def test_divide_by_one_only_on_the_right(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    fn = ir.finish(b, b.div(b.ones_like(x), x, hint="recip"))
    assert _producer(ir.run(simplify, fn).outputs[0]) == "div"


def test_ones_of_a_wider_dtype_stay(ir):
    # f32 * f64 ones is f64: dropping the multiply would return an f32 array
    b, (x,) = ir.new(("x", ir.arr(3, dtype="float32")))
    fn = ir.finish(b, b.mul(x, b.const(np.ones(3))), b.div(x, b.const(np.float64(1.0))))
    new = ir.run(simplify, fn)
    assert [_producer(v) for v in new.outputs] == ["mul", "div"]
    assert [str(v.type) for v in new.outputs] == ["f64[3]", "f64[3]"]


def test_ones_of_a_larger_shape_stay(ir):
    b, (s,) = ir.new(("s", ir.arr()))
    fn = ir.finish(b, b.mul(s, b.const(np.ones((2, 2)))))
    new = ir.run(simplify, fn)
    assert _producer(new.outputs[0]) == "mul" and new.outputs[0].type.shape == (2, 2)


def test_weak_int_times_float_one_stays(ir):
    # 3 * 1.0 is the float 3.0, not the int 3
    b, (k,) = ir.new(("k", ir.WEAK_INT))
    fn = ir.finish(b, b.mul(k, b.const(1.0)))
    new = ir.run(simplify, fn, 3)
    assert _producer(new.outputs[0]) == "mul" and str(new.outputs[0].type) == "float"


def test_values_that_are_not_all_ones_stay(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    fn = ir.finish(b, b.mul(x, b.const(np.array([1.0, 1.0, 2.0]))),
                   b.mul(x, b.const(True)), b.mul(x, b.zeros_like(x)),
                   b.mul(x, b.neg(b.ones_like(x))))
    new = ir.run(simplify, fn)
    assert [_producer(v) for v in new.outputs] == ["mul"] * 4


# -- implicit broadcasting ---------------------------------------------------------------

def test_broadcast_operand_is_made_implicit(ir):
    b, (c, y) = ir.new(("c", ir.arr(3)), ("y", ir.arr(2, 3)))
    fn = ir.finish(b, b.mul(b.broadcast_to(c, shape=(2, 3)), y))
    new = ir.run(simplify, fn)
    out = new.outputs[0]
    assert out.producer.inputs == [new.args[0], new.args[1]] and out.type == fn.outputs[0].type
    assert ir.prims(dce(new)) == ["mul"]


def test_leading_one_reshape_and_one_element_chains(ir):
    b, (a, s, y) = ir.new(("a", ir.arr(3)), ("s", ir.arr()), ("y", ir.arr(2, 3)))
    row = b.reshape(a, shape=(1, 3))
    spread = b.broadcast_to(b.reshape(s, shape=(1, 1)), shape=(2, 3))
    fn = ir.finish(b, b.add(row, y), b.sub(y, spread), b.where(b.greater(y, b.const(0.0)), row, y))
    new = ir.run(simplify, fn)
    a_, _, y_ = new.args
    add, sub, where = (v.producer for v in new.outputs)
    assert add.inputs == [a_, y_] and where.inputs[1:] == [a_, y_]
    one = sub.inputs[1]                     # the one element, not its (2, 3) broadcast
    assert sub.inputs[0] is y_ and one.type.size == 1 and _producer(one) != "broadcast_to"
    assert [v.type for v in new.outputs] == [v.type for v in fn.outputs]


def test_broadcast_that_sets_the_output_shape_stays(ir):
    b, (a, c) = ir.new(("a", ir.arr(3)), ("c", ir.arr(3)))
    fn = ir.finish(b, b.add(b.broadcast_to(a, shape=(2, 3)), c),
                   b.mul(b.broadcast_to(a, shape=(2, 3)), b.broadcast_to(c, shape=(2, 3))))
    new = ir.run(simplify, fn)
    first, second = (v.producer for v in new.outputs)
    assert _producer(first.inputs[0]) == "broadcast_to"
    # one of the two may go, not both: (3,) * (3,) would be (3,)
    assert sorted(_producer(v) for v in second.inputs) == ["arg", "broadcast_to"]
    assert [v.type for v in new.outputs] == [v.type for v in fn.outputs]


def test_broadcast_of_a_python_number_keeps_its_dtype(ir):
    # broadcast_to(2.0) is an f64 array; the bare 2.0 would let x * 2.0 stay f32
    b, (x,) = ir.new(("x", ir.arr(3, dtype="float32")))
    fn = ir.finish(b, b.mul(x, b.broadcast_to(b.const(2.0), shape=(3,))))
    new = ir.run(simplify, fn)
    mul = new.outputs[0].producer
    assert _producer(mul.inputs[1]) == "broadcast_to" and str(new.outputs[0].type) == "f64[3]"


def test_reshape_that_moves_elements_is_not_a_broadcast(ir):
    b, (a, y) = ir.new(("a", ir.arr(2, 3)), ("y", ir.arr(3, 2)))
    fn = ir.finish(b, b.add(b.reshape(a, shape=(3, 2)), y))
    new = ir.run(simplify, fn)
    assert _producer(new.outputs[0].producer.inputs[0]) == "reshape"


def test_nothing_to_do_leaves_the_function_alone(ir):
    b, (x, y) = ir.new(("x", ir.arr(3)), ("y", ir.arr(3)))
    fn = ir.finish(b, b.add(b.mul(x, y), b.sin(x)))
    assert str(ir.run(simplify, fn)) == str(fn)
