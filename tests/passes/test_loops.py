"""simplify_loops: unchanged carried values become invariants, dead ones go."""
from __future__ import annotations

import numpy as np

import ad_compiler  # noqa: F401
from ad_compiler.ir.builder import Builder
from ad_compiler.ir.control import build_for, build_while
from ad_compiler.ir.core import AType, Function, Value
from ad_compiler.ir.interp import interpret
from ad_compiler.ir.verifier import verify
from ad_compiler.passes.loops import simplify_loops

F64 = AType((3,), np.dtype(np.float64))


def _loop_fn(body, n_init):
    b = Builder()
    x = Value(F64, "x")
    b.block.args = [x]
    init = [x] * n_init
    results = build_for(b, b.const(4), init, lambda b, i, c: (body(b, c, x), []))
    return b, results


def _check(fn):
    verify(fn)
    before = str(fn)
    new = verify(simplify_loops(fn))
    assert str(fn) == before                      # pure
    x = np.array([0.1, 0.2, 0.3])
    for got, want in zip(interpret(new, x), interpret(fn, x)):
        np.testing.assert_array_equal(got, want)
    return new


def _loop(fn):
    return next(op for op in fn.body.ops if op.prim == "for")


def test_a_value_yielded_unchanged_becomes_the_initial_value():
    b, (k, h) = _loop_fn(lambda b, c, x: [c[0], b.mul(c[1], c[0])], 2)
    b.block.results = [h, k]
    new = _check(Function("f", b.block))
    assert _loop(new).params["n_carried"] == 1
    assert new.outputs[1] is new.args[0]


def test_a_dead_carried_value_is_dropped_with_its_computation():
    b, (loss, h) = _loop_fn(lambda b, c, x: [b.add(c[0], b.sin(c[1])), b.tanh(c[1])], 2)
    b.block.results = [h]                         # the loss is not used after the loop
    new = _check(Function("f", b.block))
    loop = _loop(new)
    assert loop.params["n_carried"] == 1
    assert [op.prim for op in loop.regions[0].ops] == ["tanh"]


def test_a_value_only_the_condition_reads_stays():
    b = Builder()
    x = Value(F64, "x")
    b.block.args = [x]
    count, h = build_while(
        b, [b.const(0.0), x],
        lambda b, c: b.less(c[0], b.const(3.0)),
        lambda b, c: ([b.add(c[0], b.const(1.0)), b.mul(c[1], b.const(2.0))], []))
    b.block.results = [h]
    new = _check(Function("f", b.block))
    assert next(op for op in new.body.ops if op.prim == "while").params["n_carried"] == 2



def test_a_carried_value_yielded_from_a_deeply_nested_region_stays():
    # h' = h * (k if c else ...), the 'k' yielded three ifs deep: k is used
    from ad_compiler.ir.control import build_if

    def body(b, c, x):
        k, h = c
        cond = b.greater(b.sum(h), b.const(0.0))

        def nest(depth):
            if depth == 0:
                return lambda b: [k]
            return lambda b: build_if(b, cond, nest(depth - 1), lambda b: [b.sin(h)])
        kept = nest(3)(b)[0]
        return [b.cos(h), b.mul(h, kept)]
    b, (k, h) = _loop_fn(body, 2)
    b.block.results = [h]
    new = _check(Function("f", b.block))
    assert _loop(new).params["n_carried"] == 2
