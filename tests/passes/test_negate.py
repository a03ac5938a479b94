"""Negation pushing: ``neg`` moves outward until it cancels or becomes a subtraction.

The unused ``neg`` ops a rewrite leaves behind are DCE's job, so op lists are
compared after ``dce``.
"""
from __future__ import annotations

import numpy as np
import pytest

from ad_compiler.ir.interp import interpret
from ad_compiler.passes.dce import dce
from ad_compiler.passes.negate import negate


def _negated(ir, build, *types):
    """``build(b, *args)`` -> outputs; returns (fn, negate(fn) after DCE)."""
    b, args = ir.new(*[(f"a{i}", t) for i, t in enumerate(types)])
    fn = ir.finish(b, *build(b, *args))
    return fn, dce(ir.run(negate, fn))


def _outer(v):
    """The output's op and the ops of its inputs: ``("neg", ["mul"])``."""
    op = v.producer
    return op.prim, [i.producer.prim if i.producer else "arg" for i in op.inputs]


A3 = (3,)

REWRITES = [
    ("mul(neg a, b) -> neg mul(a, b)", lambda b, x, y: [b.mul(b.neg(x), y)], ("neg", ["mul"])),
    ("mul(a, neg b) -> neg mul(a, b)", lambda b, x, y: [b.mul(x, b.neg(y))], ("neg", ["mul"])),
    ("div(neg a, b) -> neg div(a, b)", lambda b, x, y: [b.div(b.neg(x), y)], ("neg", ["div"])),
    ("neg(neg a) -> a", lambda b, x, y: [b.sin(b.neg(b.neg(x)))], ("sin", ["arg"])),
    ("add(a, neg b) -> sub(a, b)", lambda b, x, y: [b.add(x, b.neg(y))], ("sub", ["arg", "arg"])),
    ("add(neg a, b) -> sub(b, a)", lambda b, x, y: [b.add(b.neg(x), y)], ("sub", ["arg", "arg"])),
    ("sub(a, neg b) -> add(a, b)", lambda b, x, y: [b.sub(x, b.neg(y))], ("add", ["arg", "arg"])),
]


@pytest.mark.parametrize("build, expected", [r[1:] for r in REWRITES], ids=[r[0] for r in REWRITES])
def test_each_rewrite(ir, build, expected):
    fn, new = _negated(ir, build, ir.arr(2, 3), ir.arr(2, 3))
    assert _outer(new.outputs[0]) == expected
    assert ir.prims(new).count("neg") == expected[0].count("neg")


def test_operand_order_of_the_subtraction(ir):
    fn, new = _negated(ir, lambda b, x, y: [b.add(b.neg(x), y)], ir.arr(3), ir.arr(3))
    assert new.outputs[0].producer.inputs == [new.args[1], new.args[0]]


def test_a_chain_of_negations_collapses(ir):
    # d(cos)/dx * -1 * -1 ... : each pushed-out neg is absorbed by the next consumer
    def build(b, x, y):
        t = b.mul(b.neg(b.sin(x)), y)            # neg mul
        u = b.div(t, b.cos(y))                   # neg div
        return [b.sub(x, u)]                     # sub(x, neg u) -> add
    fn, new = _negated(ir, build, ir.arr(2, 3), ir.arr(2, 3))
    assert "neg" not in ir.prims(new)
    assert ir.prims(new) == ["sin", "mul", "cos", "div", "add"]


def test_two_negated_operands_keep_one_negation(ir):
    # -a + -b -> (-a) - b: exact for signed zeros, where -(a + b) would not be
    fn, new = _negated(ir, lambda b, x, y: [b.add(b.neg(x), b.neg(y))], ir.arr(2, 3), ir.arr(2, 3))
    assert ir.prims(new) == ["neg", "sub"]


def test_reductions_of_a_negation_subtract_from_zero(ir):
    # sum(-a) with a = [1, -1] is +0; -(sum a) would be -0, 0.0 - sum(a) is +0
    fn, new = _negated(ir, lambda b, x, y: [b.sum(b.neg(x), axis=0)], ir.arr(2, 3), ir.arr(2, 3))
    assert ir.prims(new) == ["sum", "const", "sub"]


def test_broadcasting_operands(ir):
    fn, new = _negated(ir, lambda b, x, y: [b.mul(b.neg(x), y), b.add(x, b.neg(y))],
                       ir.arr(3), ir.arr(2, 3))
    assert [v.type for v in new.outputs] == [v.type for v in fn.outputs]
    # the neg stays on the smaller operand (3 elements, not 6); the add absorbs its own
    assert [_outer(v)[0] for v in new.outputs] == ["mul", "sub"]


def test_a_growing_negation_moves_only_where_every_use_absorbs_it(ir):
    # s * -q, q a row of sums: pushed out when an add takes it (then a sub, no neg at
    # all); kept on the small q when the product is also returned or exponentiated
    def build(b, s, q, a):
        absorbed = b.add(a, b.mul(s, b.neg(q)))
        d = b.div(b.mul(s, b.neg(q)), a)         # a mul into a div into a sub: absorbed too
        through = b.sub(a, d)
        product = b.mul(s, b.neg(q))
        return [absorbed, through, product, b.add(a, product), b.exp(b.mul(b.neg(q), s))]
    fn, new = _negated(ir, build, ir.arr(2, 3), ir.arr(2, 1), ir.arr(2, 3))
    assert [_outer(v)[0] for v in new.outputs] == ["sub", "add", "mul", "add", "exp"]
    assert _outer(new.outputs[2]) == ("mul", ["arg", "neg"])
    assert all(v.type.shape == (2, 1) for op in new.body.walk() if op.prim == "neg"
               for v in op.results)


def test_float32_with_python_numbers(ir):
    fn, new = _negated(ir, lambda b, x, k: [b.mul(b.neg(x), k), b.add(b.neg(k), x)],
                       ir.arr(3, dtype="float32"), ir.WEAK_FLOAT)
    assert [str(v.type) for v in new.outputs] == ["f32[3]", "f32[3]"]
    assert [_outer(v)[0] for v in new.outputs] == ["neg", "sub"]


def test_weak_operands_are_left_alone(ir):
    # pushing -k out of k * x would negate the whole array instead of one number
    fn, new = _negated(ir, lambda b, x, k: [b.mul(b.neg(k), x), b.div(b.neg(k), x),
                                            b.mul(x, b.neg(k))],
                       ir.arr(3), ir.WEAK_FLOAT)
    assert [_outer(v) for v in new.outputs] == [("mul", ["neg", "arg"]), ("div", ["neg", "arg"]),
                                                ("mul", ["arg", "neg"])]


def test_scalar_code_pushes_negations_too(ir):
    fn, new = _negated(ir, lambda b, x, k: [b.add(x, b.mul(b.neg(k), x))],
                       ir.WEAK_FLOAT, ir.WEAK_FLOAT)
    assert ir.prims(new) == ["mul", "sub"]


def test_ops_that_negation_does_not_commute_with_stay(ir):
    fn, new = _negated(ir, lambda b, x, y: [b.sin(b.neg(x)), b.sub(b.neg(x), y),
                                            b.div(x, b.neg(y)), b.exp(b.neg(x))],
                       ir.arr(3), ir.arr(3))
    assert [_outer(v) for v in new.outputs] == [("sin", ["neg"]), ("sub", ["neg", "arg"]),
                                                ("div", ["arg", "neg"]), ("exp", ["neg"])]


# -- "these rewrites change no bit of the result" ----------------------------------------

def _bits_after_reciprocal(ir, build, *inputs):
    """Interpret ``1 / build(...)`` before and after negate: a zero's sign shows as +-inf."""
    b, args = ir.new(*[(f"a{i}", ir.arr(*np.shape(v))) for i, v in enumerate(inputs)])
    fn = ir.finish(b, b.div(b.const(1.0), build(b, *args)))
    new = negate(fn)
    with np.errstate(divide="ignore"):
        return interpret(fn, *inputs)[0], interpret(new, *inputs)[0]


def test_zero_sign_of_neg_add_neg(ir):
    # -a + -b is +0 where a == -b, but -(a + b) is -0
    want, got = _bits_after_reciprocal(ir, lambda b, x, y: b.add(b.neg(x), b.neg(y)),
                                       np.array([1.0, 2.0]), np.array([-1.0, 3.0]))
    np.testing.assert_array_equal(got, want)


def test_zero_sign_of_sum_neg(ir):
    # sum([-1, 1]) is +0, but -sum([1, -1]) is -0
    want, got = _bits_after_reciprocal(ir, lambda b, x: b.sum(b.neg(x), axis=0, keepdims=True),
                                       np.array([1.0, -1.0]))
    np.testing.assert_array_equal(got, want)


def test_zero_sign_kept_where_the_rewrite_is_exact(ir):
    # mul/div/sub rewrites are exact for zeros too: (-a) * b == -(a * b) bit for bit
    x = np.array([0.0, -0.0, 2.0, -2.0])
    y = np.array([-3.0, 3.0, 0.0, -0.0])
    for build in (lambda b, u, v: b.mul(b.neg(u), v), lambda b, u, v: b.add(u, b.neg(v)),
                  lambda b, u, v: b.sub(u, b.neg(v)), lambda b, u, v: b.add(b.neg(u), v)):
        want, got = _bits_after_reciprocal(ir, build, x, y)
        np.testing.assert_array_equal(got, want)


def test_a_negated_slice_update_becomes_a_subtracting_update(ir):
    def build(b, x, y):
        part = b.emit("getitem", y, index=(slice(1, 3),))
        return [b.emit("index_add", x, b.neg(part), index=(slice(0, 2),))]
    fn, new = _negated(ir, build, ir.arr(5), ir.arr(5))
    assert new.outputs[0].producer.prim == "index_sub"
    assert "neg" not in ir.prims(new)
