"""Reverse mode through if / for / while, on IR built with the builder.

Each gradient is compared with central finite differences in float64 of the
interpreted forward function; the generated code must agree with the interpreted
adjoint, and float32 inputs must get float32 gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler  # noqa: F401  (registers primitives and structured ops)
from ad_compiler.ad.reverse import vjp_function
from ad_compiler.codegen import compile_function
from ad_compiler.ir.builder import Builder
from ad_compiler.ir.control import build_for, build_if, build_while
from ad_compiler.ir.core import AType, Function, Value
from ad_compiler.ir.interp import interpret
from ad_compiler.ir.verifier import verify
from ad_compiler.passes.pipeline import optimize
from tests.finite_differences import central, central_at


def arr(*shape, dtype="float64"):
    return AType(tuple(shape), np.dtype(dtype))


def total(b, v):
    return b.sum(v, axis=None, keepdims=False, hint="total")


def rnn(b, x, w):
    n = b.const(5, hint="n")
    (h,) = build_for(b, n, [x], lambda b, i, c: (
        [b.tanh(b.add(b.matmul(w, c[0]), x), hint="h")], []), hints=["h"])
    return [total(b, b.mul(h, h))]


def branchy(b, x, w):
    cond = b.greater(total(b, x), b.const(0.0))
    (r,) = build_if(b, cond, lambda b: [b.mul(b.sin(x), b.matmul(w, x))],
                    lambda b: [b.neg(b.exp(x))], hints=["r"])
    return [total(b, r)]


def growing(b, x, w):
    def keep_going(b, c):
        return b.less(total(b, b.abs(c[0])), b.const(6.0))
    (z,) = build_while(b, [b.add(b.abs(x), b.const(0.1))], keep_going,
                       lambda b, c: ([b.add(b.mul(c[0], b.const(1.3)), b.sin(c[0]))], []),
                       hints=["z"])
    return [total(b, b.mul(z, x))]


def nested(b, x, w):
    outer_n, inner_n = b.const(3), b.const(2)

    def inner(b, j, c):
        return [b.add(c[0], b.mul(b.sin(c[0]), x))], []

    def outer(b, i, c):
        (s,) = build_for(b, inner_n, [c[0]], inner)
        return [b.tanh(b.matmul(w, s))], []
    (h,) = build_for(b, outer_n, [x], outer)
    return [total(b, h)]


def stacked(b, x, w):
    n = b.const(4)
    h, hs = build_for(b, n, [x], lambda b, i, c: (
        [b.sin(b.matmul(w, c[0]))], [b.mul(c[0], c[0])]))
    ys = b.stack_list(hs, axis=0, length=4)
    return [b.add(total(b, ys), total(b, h))]


def empty_loop(b, x, w):
    (h,) = build_for(b, b.const(0), [x], lambda b, i, c: ([b.exp(c[0])], []))
    return [total(b, b.mul(h, x))]


CASES = {"rnn": rnn, "if": branchy, "while": growing, "nested": nested,
         "stacked": stacked, "empty": empty_loop}


def build(case, dtype):
    b = Builder()
    x, w = Value(arr(3, dtype=dtype), "x"), Value(arr(3, 3, dtype=dtype), "w")
    b.block.args = [x, w]
    b.block.results = CASES[case](b, x, w)
    return verify(Function(case, b.block))


def inputs(dtype="float64", sign=1.0):
    rng = np.random.default_rng(7)
    x = sign * (np.abs(rng.standard_normal(3)) * 0.5 + 0.1)
    w = rng.standard_normal((3, 3)) * 0.4
    return x.astype(dtype), w.astype(dtype)


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_matches_finite_differences(case, sign):
    fn = build(case, "float64")
    grad = verify(optimize(verify(vjp_function(fn, [0, 1], ["ones"]))))
    args = inputs(sign=sign)
    expected = [central_at(lambda *a: interpret(fn, *a)[0], args, k) for k in range(len(args))]
    interpreted = interpret(grad, *args)
    compiled = compile_function(grad).fn(*args)
    for e, i, c in zip(expected, interpreted, compiled):
        np.testing.assert_allclose(i, e, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(c, i, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("case", sorted(CASES))
def test_float32_stays_float32(case):
    fn = build(case, "float32")
    grad = optimize(vjp_function(fn, [0, 1], ["ones"]))
    for g in compile_function(grad).fn(*inputs("float32")):
        assert g.dtype == np.float32


def test_backward_sweep_reads_the_tape_instead_of_recomputing():
    grad = optimize(vjp_function(build("rnn", "float64"), [0, 1], ["ones"]))
    source = compile_function(grad).source
    backward = source.split(" - 1, -1, -1)")[1]
    assert "np.tanh" not in backward and "_tape[" in backward


def test_a_long_scalar_loop_compiles_and_runs():
    b = Builder()
    x = Value(AType((), np.dtype(np.float64), True), "x")
    b.block.args = [x]
    (s,) = build_for(b, b.const(10_000), [x], lambda b, i, c: (
        [b.add(b.mul(c[0], b.const(0.9999)), b.const(0.001))], []))
    b.block.results = [b.mul(s, x)]
    fn = verify(Function("long", b.block))
    (dx,) = compile_function(optimize(vjp_function(fn, [0], ["ones"]))).fn(0.5)
    assert dx == pytest.approx(central(lambda x: interpret(fn, x)[0], 0.5), rel=1e-6)
