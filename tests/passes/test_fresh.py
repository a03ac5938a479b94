"""Fresh outputs: a ``copy`` wherever a returned array could share memory, nowhere else."""
from __future__ import annotations

import numpy as np
import pytest

from ad_compiler.ir.control import build_if
from ad_compiler.ir.interp import interpret
from ad_compiler.passes.fresh import fresh_outputs

SHARED = {
    "argument": lambda b, x, y: [x],
    "reshape of an argument": lambda b, x, y: [b.reshape(x, shape=(3, 2))],
    "transpose of an argument": lambda b, x, y: [b.transpose(x, axes=(1, 0))],
    "view of a view of an argument": lambda b, x, y: [b.expand_dims(b.reshape(x, shape=(6,)),
                                                                    axis=0)],
    "cast of an argument": lambda b, x, y: [b.cast(x, dtype=np.dtype("float64"))],
    "constant": lambda b, x, y: [b.const(np.ones((2, 3)))],
    "0-d constant": lambda b, x, y: [b.const(np.float64(1.0))],
    "broadcast_to of an argument": lambda b, x, y: [b.broadcast_to(y, shape=(2, 3))],
    "broadcast_to of a new array": lambda b, x, y: [b.broadcast_to(b.sin(y), shape=(2, 3))],
    "reshape of a broadcast_to": lambda b, x, y: [b.reshape(b.broadcast_to(b.sin(y), shape=(2, 3)),
                                                            shape=(6,))],
}

FRESH = {
    "new array": lambda b, x, y: [b.sin(x)],
    "broadcasting arithmetic": lambda b, x, y: [b.add(x, y)],
    "reshape of a new array": lambda b, x, y: [b.reshape(b.exp(x), shape=(6,))],
    "reduction": lambda b, x, y: [b.sum(x, axis=0)],
    "0-d reduction": lambda b, x, y: [b.sum(x)],
    "copy of an argument": lambda b, x, y: [b.copy(x)],
    "two different new arrays": lambda b, x, y: [b.sin(x), b.cos(x)],
}


def _fn(ir, build):
    b, (x, y) = ir.new(("x", ir.arr(2, 3)), ("y", ir.arr(3)))
    return ir.finish(b, *build(b, x, y))


def _copies(fn):
    return sum(op.prim == "copy" for op in fn.body.ops)


def _arrays(values):
    return [v for v in values if isinstance(v, (np.ndarray, np.generic))]


def _assert_no_sharing(fn, new, inputs):
    """No output shares memory with an input, a constant, or another output."""
    outs = _arrays(interpret(new, *inputs))
    consts = [op.params["value"] for op in fn.body.walk() if op.prim == "const"]
    for i, out in enumerate(outs):
        for other in _arrays(inputs) + _arrays(consts) + outs[i + 1:]:
            assert not np.shares_memory(out, other)
        assert not isinstance(out, np.ndarray) or out.flags.writeable


@pytest.mark.parametrize("build", SHARED.values(), ids=SHARED.keys())
def test_shared_outputs_are_copied(ir, build):
    fn = _fn(ir, build)
    new = ir.run(fresh_outputs, fn)
    assert _copies(new) == 1 and new.outputs[0].producer.prim == "copy"
    assert new.outputs[0].type == fn.outputs[0].type
    _assert_no_sharing(fn, new, ir.sample(fn))


@pytest.mark.parametrize("build", FRESH.values(), ids=FRESH.keys())
def test_fresh_outputs_are_left_alone(ir, build):
    fn = _fn(ir, build)
    new = ir.run(fresh_outputs, fn)
    assert str(new) == str(fn)
    _assert_no_sharing(fn, new, ir.sample(fn))


def test_duplicates_are_copied_after_the_first(ir):
    fn = _fn(ir, lambda b, x, y: [b.sin(x)] * 3)
    new = ir.run(fresh_outputs, fn)
    first, second, third = new.outputs
    assert first.producer.prim == "sin" and _copies(new) == 2
    assert second.producer.inputs == [first] and third.producer.inputs == [first]
    _assert_no_sharing(fn, new, ir.sample(fn))


def test_an_argument_returned_twice_gets_two_copies(ir):
    fn = _fn(ir, lambda b, x, y: [x, x])
    new = ir.run(fresh_outputs, fn)
    assert _copies(new) == 2 and new.outputs[0] is not new.outputs[1]
    _assert_no_sharing(fn, new, ir.sample(fn))


def test_python_numbers_are_not_copied(ir):
    b, (k, x) = ir.new(("k", ir.WEAK_FLOAT), ("x", ir.arr(3)))
    fn = ir.finish(b, k, b.const(2.0), k)
    new = ir.run(fresh_outputs, fn)
    assert _copies(new) == 0 and new.outputs[0] is new.args[0]


def _branches(ir, then_fn, else_fn):
    b, (x,) = ir.new(("x", ir.arr(3)))
    (r,) = build_if(b, b.greater(b.sum(x), b.const(0.0)),
                    lambda b: [then_fn(b, x)], lambda b: [else_fn(b, x)])
    return ir.finish(b, r)


def test_an_if_that_may_yield_an_argument_is_copied(ir):
    fn = _branches(ir, lambda b, x: b.sin(x), lambda b, x: b.reshape(x, shape=(3,)))
    new = ir.run(fresh_outputs, fn, np.ones(3))
    ir.run(fresh_outputs, fn, -np.ones(3))
    assert new.outputs[0].producer.prim == "copy"


def test_an_if_with_new_arrays_in_both_branches_is_not(ir):
    fn = _branches(ir, lambda b, x: b.sin(x), lambda b, x: b.cos(x))
    assert _copies(ir.run(fresh_outputs, fn)) == 0
