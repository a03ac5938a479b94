"""Dead-code elimination: ops nothing uses go; everything the outputs need stays."""
from __future__ import annotations

from ad_compiler.ir.control import build_for, build_if
from ad_compiler.ir.core import ListType
from ad_compiler.passes.dce import dce


def test_docstring_dead_sin_goes(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    b.sin(x, hint="a")
    fn = ir.finish(b, b.cos(x, hint="b"))
    assert ir.prims(ir.run(dce, fn)) == ["cos"]


def test_dead_chains_go_transitively(ir):
    b, (x, y) = ir.new(("x", ir.arr(3)), ("y", ir.arr(3)))
    b.exp(b.mul(b.sin(x), y))                       # sin <- mul <- exp: all dead
    b.const(2.0)
    fn = ir.finish(b, b.tanh(y))
    assert ir.prims(ir.run(dce, fn)) == ["tanh"]


def test_everything_the_outputs_depend_on_stays(ir):
    b, (x, y) = ir.new(("x", ir.arr(2, 3)), ("y", ir.arr(3)))
    s = b.sin(x)
    c = b.cos(s)                                    # a diamond: s feeds c and m
    m = b.mul(s, c)
    t = b.sum(b.add(m, y), axis=0)
    fn = ir.finish(b, t, x, b.zeros_like(y))        # an argument as an output, a nondiff op
    new = ir.run(dce, fn)
    assert ir.prims(new) == ir.prims(fn)
    assert new.outputs[1] is new.args[0]


def test_a_function_with_nothing_dead_is_unchanged(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    fn = ir.finish(b, b.exp(b.neg(x)))
    assert str(ir.run(dce, fn)) == str(fn)


def test_values_captured_by_a_region_stay(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    captured = b.exp(x, hint="captured")            # used only inside the then-branch
    cond = b.greater(b.sum(x), b.const(0.0))

    def then(b):
        b.sin(x)                                    # dead inside the region
        return [b.mul(captured, x)]
    (r,) = build_if(b, cond, then, lambda b: [x])
    new = ir.run(dce, ir.finish(b, r))
    assert ir.prims(new) == ["exp", "sum", "const", "greater", "if", "mul"]


def test_an_unused_if_goes_with_its_condition(ir):
    b, (x,) = ir.new(("x", ir.arr(3)))
    cond = b.greater(b.sum(x), b.const(0.0))
    build_if(b, cond, lambda b: [b.sin(x)], lambda b: [b.cos(x)])
    fn = ir.finish(b, b.neg(x))
    assert ir.prims(ir.run(dce, fn)) == ["neg"]


def _loop(ir):
    """``for i < 3: h = h * x``, stacking ``sin(h)`` each iteration."""
    b, (x, h0) = ir.new(("x", ir.arr(3)), ("h0", ir.arr(3)))
    h, hs = build_for(b, b.const(3), [h0],
                      lambda b, i, carried: ([b.mul(carried[0], x)], [b.sin(carried[0])]))
    return b, h, hs


def test_an_unread_stacked_list_goes_with_what_fed_it(ir):
    b, h, hs = _loop(ir)
    new = ir.run(dce, ir.finish(b, h))
    (loop,) = [op for op in new.body.ops if op.prim == "for"]
    assert len(loop.results) == 1 and len(loop.regions[0].results) == 1
    assert ir.prims(new) == ["const", "for", "mul"]


def test_a_read_stacked_list_stays(ir):
    b, h, hs = _loop(ir)
    new = ir.run(dce, ir.finish(b, hs))
    assert isinstance(new.outputs[0].type, ListType)
    assert ir.prims(new) == ["const", "for", "mul", "sin"]
