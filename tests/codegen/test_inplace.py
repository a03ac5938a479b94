"""Buffer reuse in generated code: in place only where nothing can observe it."""
from __future__ import annotations

import re

import numpy as np

from ad_compiler.ad.rules import derive_inplace
from ad_compiler.codegen import compile_function, to_source as emit
from ad_compiler.passes.reuse import reuse_buffers
from tests.finite_differences import central


def to_source(fn, **options):
    """The source of ``fn`` after the buffer-reuse pass, as the pipeline leaves it."""
    return emit(reuse_buffers(fn), **options)


def test_dead_temporaries_are_written_in_place(ir):
    b, (x, y) = ir.new(("x", ir.arr(3)), ("y", ir.arr(3)))
    t = b.exp(b.mul(x, y, hint="t"), hint="e")
    u = b.add(t, b.const(1.0), hint="u")
    fn = ir.finish(b, b.mul(u, y, hint="out"))
    src, _ = to_source(fn, comments=False)
    # each value keeps its own name: the buffer's name is dead after the op
    assert src == ("def f(x, y):\n"
                   "    t = x * y\n"
                   "    e = np.exp(t, out=t)\n"
                   "    e += 1.0\n"
                   "    u = e\n"
                   "    u *= y\n"
                   "    out = u\n"
                   "    return (out,)\n")
    ir.check(fn, np.array([0.5, 1.0, -2.0]), np.array([2.0, -1.0, 0.25]))


def test_arguments_are_never_overwritten(ir):
    b, (x, y) = ir.new(("x", ir.arr(4)), ("y", ir.arr(4)))
    fn = ir.finish(b, b.add(b.neg(x), b.sin(y)))
    xv, yv = np.arange(4.0), np.linspace(0, 1, 4)
    before = xv.copy(), yv.copy()
    compile_function(reuse_buffers(fn)).fn(xv, yv)
    np.testing.assert_array_equal(xv, before[0])
    np.testing.assert_array_equal(yv, before[1])
    assert not re.search(r"out=x\b|\bx \+=", to_source(fn)[0])


def test_a_live_view_keeps_its_buffer(ir):
    b, (x,) = ir.new(("x", ir.arr(2, 3)))
    t = b.mul(x, b.const(2.0), hint="t")
    r = b.reshape(t, shape=(3, 2), hint="r")      # a view of t, used after exp
    e = b.exp(t, hint="e")
    fn = ir.finish(b, e, b.cos(r))
    src = to_source(fn)[0]
    assert "e = np.exp(t)" in src
    ir.check(fn, np.arange(6.0).reshape(2, 3) / 6)


def test_outputs_and_broadcast_targets_are_not_reused(ir):
    b, (x, y) = ir.new(("x", ir.arr(3)), ("y", ir.arr(2, 3)))
    s = b.sin(x, hint="s")                         # returned: must stay intact
    wide = b.add(s, y, hint="wide")                # (3,) + (2, 3): s cannot hold it
    fn = ir.finish(b, s, b.tanh(wide))
    src = to_source(fn)[0]
    assert "wide = s + y" in src and "np.tanh(wide, out=wide)" in src
    ir.check(fn, np.array([0.1, 0.2, 0.3]), np.ones((2, 3)))


def test_a_cast_to_another_dtype_is_a_buffer_a_same_dtype_cast_is_a_view(ir):
    b, (x, m) = ir.new(("x", ir.arr(3)), ("m", ir.arr(3, dtype="bool")))
    mask = b.cast(m, dtype=np.dtype("float64"), hint="mask")     # a new array: reusable
    same = b.cast(x, dtype=np.dtype("float64"), hint="same")     # x itself at run time
    fn = ir.finish(b, b.mul(mask, x, hint="out"), b.exp(same, hint="e"))
    src = to_source(fn)[0]
    assert "    mask *= x\n    out = mask\n" in src and "e = np.exp(same)" in src
    xv = np.array([0.1, 0.2, 0.3])
    ir.check(fn, xv, np.array([True, False, True]))
    compile_function(reuse_buffers(fn)).fn(xv, np.array([True, False, True]))
    np.testing.assert_array_equal(xv, [0.1, 0.2, 0.3])


def test_scalars_are_not_buffers(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    total = b.sum(x, axis=None, keepdims=False, hint="total")   # a NumPy scalar at run time
    fn = ir.finish(b, b.exp(total))
    assert "out=total" not in to_source(fn)[0]
    ir.check(fn, np.array([0.1, 0.2, 0.3]))


def test_derived_forms():
    assert derive_inplace("{0} + {1}") == {0: "{0} += {1}", 1: "{1} += {0}"}
    assert derive_inplace("{0} / {1}") == {0: "{0} /= {1}",
                                           1: "np.true_divide({0}, {1}, out={1})"}
    assert derive_inplace("np.exp({0})") == {0: "np.exp({0}, out={0})"}
    assert derive_inplace("{0}.sum(axis={axis}, keepdims={keepdims})") == {}
    assert derive_inplace("{0} > {1}") == {}


def _accumulating_loop(ir, stack_it: bool):
    from ad_compiler.ir.control import build_for
    b, (x,) = ir.new(("x", ir.arr(3)))
    acc0 = b.zeros_like(x, hint="acc")

    def body(b, i, carried):
        nxt = b.add(carried[0], b.sin(x), hint="acc")
        return [nxt], ([nxt] if stack_it else [])
    results = build_for(b, b.const(4), [acc0], body)
    outs = [results[0]] + ([b.stack_list(results[1], axis=0, length=4)] if stack_it else [])
    return ir.finish(b, *outs)


def test_a_carried_accumulator_is_updated_in_place(ir):
    fn = _accumulating_loop(ir, stack_it=False)
    assert "        acc_2 += sin_x\n" in to_source(fn)[0]   # no new array per iteration
    ir.check(fn, np.array([0.1, 0.2, 0.3]))


def test_a_buffer_a_loop_result_may_hold_is_not_accumulated_into(ir):
    # r1 is the captured z (the first loop yields it); the second loop starts from z
    # and would add into it in place, changing r1 too
    from ad_compiler.ir.control import build_for
    b, (x,) = ir.new(("x", ir.arr(3)))
    z = b.zeros_like(x, hint="z")
    (r1,) = build_for(b, b.const(2), [x], lambda b, i, c: ([z], []))
    (r2,) = build_for(b, b.const(2), [z], lambda b, i, c: ([b.add(c[0], b.sin(x))], []))
    fn = ir.finish(b, b.add(r1, r2))
    ir.check(fn, np.array([0.1, 0.2, 0.3]))


def test_a_carried_buffer_whose_view_the_body_reads_is_not_overwritten(ir):
    # v is a view of the loop's initial buffer t; the body reads v while updating t:
    # adding into t in place would change what v shows on later iterations
    from ad_compiler.ir.control import build_for
    b, (x,) = ir.new(("x", ir.arr(3)))
    t = b.sin(x, hint="t")
    v = b.reshape(t, shape=(3,), hint="v")

    def body(b, i, c):
        acc, tt = c
        return [b.add(acc, b.getitem(v, i, index=("#0",))), b.add(tt, b.const(1.0))], []
    acc, tt = build_for(b, b.const(3), [b.zeros_like(x), t], body)
    fn = ir.finish(b, b.add(acc, tt))
    ir.check(fn, np.array([0.1, 0.2, 0.3]))


def test_a_carried_value_that_is_also_stacked_is_not_overwritten(ir):
    fn = _accumulating_loop(ir, stack_it=True)
    source = to_source(fn)[0]
    # each iteration's value goes into the list: the sum is written into the fresh sin
    # buffer, never into the carried one the list already holds
    assert "acc += " not in source and "sin_x += acc" in source
    ir.check(fn, np.array([0.1, 0.2, 0.3]))          # the stacked rows stay distinct


def _tape_holds_a_view(x):
    t = x * x
    v = t[:, 0]               # a view of t, taped by the outer loop on its first pass
    for i in range(1):
        for j in range(3):
            v = v * 0.9 + np.tanh(v)
    return np.sum(t * t) + np.sum(v * v)


def test_a_buffer_a_loop_tape_may_hold_is_not_overwritten():
    import ad_compiler as ms
    x = np.array([[-0.405, -0.75, -1.11], [1.30, 0.20, -1.50], [0.90, 0.71, 0.45]])
    g = ms.grad(_tape_holds_a_view)(x.copy())
    want = central(_tape_holds_a_view, x)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)


def test_a_value_written_into_a_buffer_of_the_same_quantity_keeps_its_name(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    dx = b.sin(x, hint="dx")
    fn = ir.finish(b, b.add(dx, b.cos(x, hint="dx"), hint="dx"))
    src = to_source(fn, comments=False)[0]
    assert "    dx += dx_1\n" in src, src
    ir.check(fn, np.array([0.1, 0.2, 0.3]))


def test_the_ir_text_shows_which_buffer_takes_a_result(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    t = b.mul(x, x, hint="t")
    fn = reuse_buffers(ir.finish(b, b.exp(t, hint="e")))
    assert "%e = exp %t {out=%t}" in str(fn)
    assert "e = np.exp(t, out=t)" in emit(fn)[0]
