"""The whole pipeline on adjoints, and its debug switches (verify, print)."""
from __future__ import annotations

import numpy as np
import pytest

from ad_compiler.ad.reverse import vjp_function
from ad_compiler.errors import IRError
from ad_compiler.ir.core import Value
from ad_compiler.ir.interp import interpret
from ad_compiler.passes import pipeline
from ad_compiler.passes.pipeline import optimize


def _sin_sum(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    return ir.finish(b, b.sum(b.sin(x))), [0], ["ones"]


def _mlp_loss(ir):
    f32 = "float32"
    b, (x, w, bias) = ir.new(("x", ir.arr(4, 3, dtype=f32)), ("w", ir.arr(3, 2, dtype=f32)),
                             ("bias", ir.arr(2, dtype=f32)))
    h = b.tanh(b.add(b.matmul(x, w), bias))
    return ir.finish(b, b.mean(b.mul(h, h))), [1, 2], ["ones"]


def _broadcast_ratio(ir):
    b, (x, y) = ir.new(("x", ir.arr(2, 3)), ("y", ir.arr(3)))
    r = b.div(b.exp(x), b.add(b.cos(y), b.const(2.0)))
    col = b.sum(r, axis=0, keepdims=True)
    return ir.finish(b, b.sub(b.reshape(col, shape=(3,)), b.neg(y))), [0, 1], ["arg"]


def _shapes_and_aux(ir):
    b, (x, k) = ir.new(("x", ir.arr(2, 3)), ("k", ir.WEAK_FLOAT))
    t = b.transpose(b.mul(x, k), axes=(1, 0))
    wide = b.broadcast_to(b.sum(t, axis=1, keepdims=True), shape=(3, 4))
    aux = b.sin(x)
    outputs = (b.sum(b.square(wide)), aux, b.max(x, axis=1))
    return ir.finish(b, *outputs), [0, 1], ["ones", "none", "arg"]


FUNCTIONS = [_sin_sum, _mlp_loss, _broadcast_ratio, _shapes_and_aux]


@pytest.mark.parametrize("make", FUNCTIONS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("with_outputs", [False, True])
def test_optimize_preserves_adjoint_values(ir, make, with_outputs):
    fn, wrt, seeds = make(ir)
    grad = vjp_function(fn, wrt, seeds, with_outputs=with_outputs)
    before = str(grad)
    new = optimize(grad)
    assert str(grad) == before
    assert len(list(new.body.walk())) < len(list(grad.body.walk()))
    for seed in range(3):
        inputs = ir.sample(grad, seed)
        for got, want in zip(interpret(new, *inputs), interpret(grad, *inputs), strict=True):
            assert type(got) is type(want)
            np.testing.assert_array_equal(got, want, strict=True)


def test_the_adjoint_of_sum_sin_is_one_cos(ir):
    fn, wrt, seeds = _sin_sum(ir)
    new = optimize(vjp_function(fn, wrt, seeds))
    assert ir.prims(new) == ["cos"] and new.outputs[0].producer.inputs == new.args


def test_optimized_adjoints_return_fresh_arrays(ir):
    # d(x + 0)/dx is the seed itself: a constant, which must be handed out as a copy
    b, (x,) = ir.new(("x", ir.arr(3)))
    grad = vjp_function(ir.finish(b, b.add(x, b.const(0.0))), [0], ["ones"])
    new = optimize(grad)
    assert new.outputs[0].producer.prim == "copy"


def _broken(fn):
    """A pass that returns IR whose output is defined nowhere."""
    out = pipeline.dce(fn)
    out.body.results = [Value(fn.outputs[0].type, "ghost")]
    return out


def test_verify_switch_checks_after_each_pass(ir, monkeypatch):
    fn, wrt, seeds = _sin_sum(ir)
    grad = vjp_function(fn, wrt, seeds)
    # mid-pipeline: the error comes from the verifier, before the next pass trips over it
    passes = [_broken if p is pipeline.negate else p for p in pipeline.PIPELINE]
    monkeypatch.setenv("AD_COMPILER_VERIFY", "1")
    with pytest.raises(IRError, match=r"yielded value <Value ghost: f64\[3\]> is not defined"):
        optimize(grad, passes=passes)


def test_without_the_verify_switch_broken_ir_passes_silently(ir, monkeypatch):
    fn, wrt, seeds = _sin_sum(ir)
    monkeypatch.delenv("AD_COMPILER_VERIFY", raising=False)
    out = optimize(vjp_function(fn, wrt, seeds), passes=[pipeline.fold, _broken])
    assert out.outputs[0].hint == "ghost"


def test_print_switch_shows_the_ir_after_each_pass(ir, monkeypatch, capsys):
    fn, wrt, seeds = _sin_sum(ir)
    monkeypatch.setenv("AD_COMPILER_PRINT_IR", "1")
    optimize(vjp_function(fn, wrt, seeds))
    text = capsys.readouterr().out
    names = [p.__name__ for p in pipeline.PIPELINE]
    headers = [line for line in text.splitlines() if line.startswith("--- after ")]
    assert headers == [f"--- after {n} ---" for n in names]
    assert text.count("func f_grad(") == len(names)
