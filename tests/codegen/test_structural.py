"""Ops with regions plug into codegen through STRUCTURAL_EMIT (a test-only ``test_if`` here)."""
from __future__ import annotations

import pytest

from ad_compiler.codegen import EmitContext, to_source
from ad_compiler.errors import SourceLoc
from ad_compiler.ir.core import AType, Block, Function, Op, Value

BRANCHES = '''\
def g(p, x):
    # model.py:7: if p:
    if p:
        # model.py:8: r = np.sin(x)
        r_1 = np.sin(x)
        r = r_1
    else:
        # model.py:10: r = -x
        r_2 = -x
        r = r_2
    # model.py:11: return r * x
    out = r * x
    return (out,)
'''


def at(line, text):
    return SourceLoc("/src/model.py", line, 4, "    " + text)


def branches(ir, test_if):
    b, (p, x) = ir.new(("p", AType.of(True)), ("x", ir.arr(3)))

    def then(b):
        with b.at(at(8, "r = np.sin(x)")):
            return b.sin(x, hint="r")

    def other(b):
        with b.at(at(10, "r = -x")):
            return b.neg(x, hint="r")

    with b.at(at(7, "if p:")):
        r = test_if(b, p, then, other)
    with b.at(at(11, "return r * x")):
        out = b.mul(r, x, hint="out")
    return ir.finish(b, out, name="g")


def test_nested_blocks_golden(ir, test_if):
    assert to_source(branches(ir, test_if))[0] == BRANCHES


@pytest.mark.parametrize("p", [True, False])
def test_nested_blocks_run_like_the_interpreter(ir, test_if, p):
    ir.check(branches(ir, test_if), p, ir.rng.normal(size=3))


def test_regions_nest(ir, test_if):
    b, (p, q, x) = ir.new(("p", AType.of(True)), ("q", AType.of(True)), ("x", ir.arr(2)))
    inner = lambda b: test_if(b, q, lambda b: b.cos(x), lambda b: x, hint="inner")  # noqa: E731
    outer = test_if(b, p, inner, lambda b: b.neg(x), hint="outer")
    fn = ir.finish(b, outer)
    for flags in [(True, True), (True, False), (False, True)]:
        compiled = ir.check(fn, *flags, ir.rng.normal(size=2))
    assert "        if q:\n            cos_x = np.cos(x)\n" in compiled.source
    assert "        else:\n            inner = x\n" in compiled.source


def test_region_arguments_are_named(ir, test_if):
    # a structural op sees its regions' arguments already named, like any value
    b, (x,) = ir.new(("x", ir.arr(2)))
    region = Block(args=[Value(ir.arr(2), "x")])
    op = Op("test_if", [x], {}, [], [region, Block()])
    b.add_op(op)
    ctx = EmitContext(ir.finish(b))
    assert ctx.name(region.args[0]) == "x_1"


def test_op_with_regions_and_no_emitter_is_an_error(ir):
    b, (x,) = ir.new(("x", ir.arr(2)))
    b.add_op(Op("no_such_loop", [x], {}, [], [Block()]))
    with pytest.raises(KeyError, match="no_such_loop"):
        to_source(Function("f", b.block))
