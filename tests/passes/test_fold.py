"""Constant folding: small all-constant ops become constants; nothing else does."""
from __future__ import annotations

import numpy as np

from ad_compiler.ir.interp import interpret
from ad_compiler.passes.dce import dce
from ad_compiler.passes.fold import MAX_ELEMENTS, fold


def _consts(fn):
    return [op.params["value"] for op in fn.body.ops if op.prim == "const"]


def test_seed_chain_becomes_one_constant(ir):
    # the docstring's example: neg -> div of a seed, then a reshape
    b, _ = ir.new()
    dout = b.const(1.0, hint="dout")
    neg = b.neg(dout)
    div = b.div(neg, b.const(4, hint="c4"), hint="div")
    fn = ir.finish(b, b.reshape(b.cast(div, dtype=np.dtype("float32")), shape=(1,)))
    out = ir.run(fold, fn)
    assert set(ir.prims(out)) == {"const"}
    assert ir.prims(dce(out)) == ["const"]
    (value,) = _consts(dce(out))
    assert value.dtype == np.float32 and value.tolist() == [-0.25]


def test_folded_arrays_are_read_only(ir):
    b, _ = ir.new()
    fn = ir.finish(b, b.neg(b.const(np.arange(3.0))))
    (value,) = _consts(dce(ir.run(fold, fn)))
    assert isinstance(value, np.ndarray) and not value.flags.writeable


def test_ops_reading_arguments_are_kept(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    two = b.add(b.const(1.0), b.const(1.0), hint="two")
    fn = ir.finish(b, b.mul(b.sin(x), two))
    out = ir.run(fold, fn)
    assert ir.prims(dce(out)) == ["const", "sin", "mul"]
    assert _consts(dce(out)) == [2.0]


def test_copy_is_never_folded(ir):
    # a copy exists to hand out new memory: folding it would hand out a shared constant
    b, _ = ir.new()
    fn = ir.finish(b, b.copy(b.const(np.ones(2))))
    assert ir.prims(dce(ir.run(fold, fn))) == ["const", "copy"]


def test_broadcast_to_is_never_folded(ir):
    # the result is larger than the input: it stays symbolic, for simplify
    b, _ = ir.new()
    fn = ir.finish(b, b.broadcast_to(b.const(np.float64(1.0)), shape=(3,)))
    assert ir.prims(dce(ir.run(fold, fn))) == ["const", "broadcast_to"]


def test_large_results_are_not_baked_in(ir):
    big = np.arange(MAX_ELEMENTS + 1, dtype=np.float64)
    b, _ = ir.new()
    small = b.neg(b.const(big[:MAX_ELEMENTS]), hint="small")
    fn = ir.finish(b, b.neg(b.const(big), hint="large"), small)
    out = ir.run(fold, fn)
    large, folded = (v.producer for v in out.outputs)
    assert large.prim == "neg" and folded.prim == "const"
    assert ir.prims(dce(out)).count("neg") == 1


def test_a_fold_that_fails_leaves_the_op(ir):
    # Python's 1.0 / 0.0 raises: the op stays, and raises when it runs, as before
    b, _ = ir.new()
    fn = ir.finish(b, b.div(b.const(1.0), b.const(0.0)))
    out = fold(fn)
    assert ir.prims(dce(out)) == ["const", "const", "div"]
    for f in (fn, out):
        try:
            interpret(f)
        except ZeroDivisionError:
            continue
        raise AssertionError("1.0 / 0.0 should raise")


def test_folds_inside_regions_too(ir):
    from ad_compiler.ir.control import build_if
    b, (x,) = ir.new(("x", ir.arr(3)))
    cond = b.greater(b.sum(x), b.const(0.0))
    (r,) = build_if(b, cond, lambda b: [b.mul(x, b.neg(b.const(2.0)))], lambda b: [x])
    out = ir.run(fold, ir.finish(b, r))
    then = next(op for op in out.body.ops if op.prim == "if").regions[0]
    assert [op.prim for op in then.ops] == ["const", "const", "mul"]
    assert then.ops[1].params["value"] == -2.0


def test_constant_factors_merge_when_one_is_a_power_of_two():
    import numpy as np
    import ad_compiler  # noqa: F401
    from ad_compiler.ir.builder import Builder
    from ad_compiler.ir.core import AType, Function, Value
    from ad_compiler.ir.interp import interpret
    from ad_compiler.ir.verifier import verify
    from ad_compiler.passes.fold import fold

    def build(c1, c2):
        b = Builder()
        x = Value(AType((5,), np.dtype(np.float64)), "x")
        b.block.args = [x]
        b.block.results = [b.mul(b.const(c1), b.mul(x, b.const(c2)))]
        return verify(Function("f", b.block))

    x = np.random.default_rng(0).standard_normal(5) * 1e3
    merged = verify(fold(build(100.0, 2)))
    out = merged.outputs[0].producer                      # the old inner mul is left to DCE
    assert out.prim == "mul" and out.inputs[0] is merged.args[0]
    assert out.inputs[1].producer.params["value"] == 200.0
    np.testing.assert_array_equal(interpret(merged, x)[0], 100.0 * (x * 2))  # bit for bit
    kept = verify(fold(build(3.0, 5.0)))                  # 3 * (x * 5) may round twice
    assert kept.outputs[0].producer.inputs[1].producer.prim == "mul"
