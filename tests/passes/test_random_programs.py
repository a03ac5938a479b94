"""Property test: on random straight-line programs, optimising an adjoint and compiling
it change no value, and the generated code never writes into its arguments.

Each program is drawn from a seeded generator, so a failure names a reproducible
seed: ``random_program(seed)`` rebuilds it.
"""
from __future__ import annotations

import numpy as np
import pytest

from ad_compiler.ad.reverse import vjp_function
from ad_compiler.codegen import compile_function
from ad_compiler.ir.interp import interpret
from ad_compiler.ir.verifier import verify
from ad_compiler.passes.pipeline import optimize

OPS = ("add", "sub", "mul", "div", "neg", "exp", "sin", "cos", "tanh", "sum", "reshape",
       "broadcast_to")
ARG_SHAPES = [(2, 3), (3,), (2, 1), (), (1, 3)]
N_PROGRAMS = 20


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _partner(rng, pool, x):
    """A value whose shape broadcasts with ``x``'s (``x`` itself always does)."""
    fits = [v for v in pool if _broadcasts(v.type.shape, x.type.shape)]
    return _pick(rng, fits)


def _broadcasts(s, t) -> bool:
    try:
        np.broadcast_shapes(s, t)
        return True
    except ValueError:
        return False


def _reduce(b, rng, x):
    if x.type.ndim == 0:
        return b.sum(x)
    axis = _pick(rng, [None, int(rng.integers(x.type.ndim)), tuple(range(x.type.ndim))])
    return b.sum(x, axis=axis, keepdims=bool(rng.integers(2)))


def _reshape(b, rng, x):
    shape = x.type.shape
    return b.reshape(x, shape=_pick(rng, [shape[::-1], (-1,), (1,) + shape]))


def _broadcast(b, rng, x):
    shape = x.type.shape
    if len(shape) >= 3 or x.type.size > 8:
        return b.reshape(x, shape=(-1,))     # keeps shapes small
    wider = tuple(4 if d == 1 else d for d in shape)
    return b.broadcast_to(x, shape=_pick(rng, [(2,) + shape, wider]))


def _emit(b, rng, op, pool):
    x = _pick(rng, pool)
    if op in ("add", "sub", "mul"):
        return b.emit(op, x, _partner(rng, pool, x))
    if op == "div":   # a denominator in [1, 3]
        return b.div(x, b.add(b.cos(_partner(rng, pool, x)), b.const(2.0)))
    if op == "exp":   # bounded exponent: values stay finite through chains
        return b.exp(b.tanh(x))
    if op == "sum":
        return _reduce(b, rng, x)
    if op == "reshape":
        return _reshape(b, rng, x)
    if op == "broadcast_to":
        return _broadcast(b, rng, x)
    return b.emit(op, x)


def random_program(seed, ir):
    """(function, wrt, seeds, with_outputs) drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    dtype = _pick(rng, ["float64", "float32"])
    shapes = [_pick(rng, ARG_SHAPES) for _ in range(2)]
    b, args = ir.new(*[(name, ir.arr(*s, dtype=dtype)) for name, s in zip("xy", shapes)])
    pool = list(args)
    for _ in range(int(rng.integers(5, 11))):
        pool.append(_emit(b, rng, _pick(rng, OPS), pool))
    outputs = [pool[-1], _pick(rng, pool)]
    fn = ir.finish(b, *outputs)
    wrt = _pick(rng, [[0], [1], [0, 1]])
    seeds = [_pick(rng, ["ones", "arg"]) for _ in outputs]
    return fn, wrt, seeds, bool(rng.integers(2))


def _same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    np.testing.assert_array_equal(got, want, strict=True)


def test_the_programs_cover_every_op(ir):
    seen = set()
    for seed in range(N_PROGRAMS):
        seen.update(ir.prims(random_program(seed, ir)[0]))
    assert set(OPS) <= seen


@pytest.mark.parametrize("seed", range(N_PROGRAMS))
def test_optimized_and_compiled_adjoints_agree(ir, seed):
    fn, wrt, seeds, with_outputs = random_program(seed, ir)
    grad = verify(vjp_function(fn, wrt, seeds, with_outputs=with_outputs))
    inputs = ir.sample(grad, seed)
    want = interpret(grad, *inputs)
    opt = optimize(grad)
    for got, w in zip(interpret(opt, *inputs), want, strict=True):
        _same(got, w)
    for f in (grad, opt):
        got = _run_compiled(f, inputs)
        for g, w in zip(got, want, strict=True):
            _same(g, w)
    for g in got:                            # the optimised code returns fresh arrays
        assert not any(np.shares_memory(g, a) for a in inputs if isinstance(a, np.ndarray))


def _run_compiled(fn, inputs):
    """Run the generated code of ``fn``; buffer reuse must never write into an argument."""
    saved = [np.copy(a) for a in inputs]
    got = compile_function(fn).fn(*inputs)
    for a, s in zip(inputs, saved):
        np.testing.assert_array_equal(a, s, strict=True)
    return got
