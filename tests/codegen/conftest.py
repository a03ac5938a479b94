"""Fixtures for codegen tests: building small IR functions and checking generated code.

``check(fn, *args)`` is the oracle test: the compiled function must return, for
each output, a value of the same Python type, dtype, shape and bits as the
reference interpreter.
"""
from __future__ import annotations

import ast
from types import SimpleNamespace

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers the primitives)
from ad_compiler.codegen import STRUCTURAL_EMIT, compile_function
from ad_compiler.ir import interp, verifier
from ad_compiler.ir.core import Block, Op, Value
from ad_compiler.testing import arr, finish, new_function


def same(got, want) -> None:
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want, strict=True)


def check(fn, *args):
    """Compile ``fn``, run it and the interpreter on ``args``; return the Compiled."""
    compiled = compile_function(fn)
    got = compiled.fn(*args)
    want = interp.interpret(fn, *args)
    assert isinstance(got, tuple) and len(got) == len(want), compiled.source
    for g, w in zip(got, want):
        same(g, w)
    return compiled


@pytest.fixture
def ir():
    """Helpers to build and check IR functions (see the module docstring)."""
    return SimpleNamespace(new=new_function, finish=finish, check=check, arr=arr,
                           rng=np.random.default_rng(0))


# -- a structural op, for tests only: ``test_if p {then} {else}`` ----------------

def _emit_test_if(op, ctx):
    then, other = op.regions
    body = ctx.block(then) + ctx.bind(op.results, then.results)
    orelse = ctx.block(other) + ctx.bind(op.results, other.results)
    test = ast.Name(id=ctx.name(op.inputs[0]), ctx=ast.Load())
    return [ast.If(test=test, body=body or [ast.Pass()], orelse=orelse)]


def _eval_test_if(op, env, run_block):
    return run_block(op.regions[0] if env[id(op.inputs[0])] else op.regions[1], env)


def build_test_if(b, pred, then_fn, else_fn, hint="r", loc=None):
    """Append a ``test_if`` op; ``then_fn(b)`` / ``else_fn(b)`` emit a region, return its yield."""
    loc = loc or b.loc
    regions = []
    for make in (then_fn, else_fn):
        region = Block()
        with b.inside(region):
            region.results.append(make(b))
        regions.append(region)
    out = Value(regions[0].results[0].type, hint)
    b.add_op(Op("test_if", [pred], {}, [out], regions, loc))
    return out


@pytest.fixture
def test_if(monkeypatch):
    """Registers ``test_if`` with codegen, the interpreter and the verifier."""
    monkeypatch.setitem(STRUCTURAL_EMIT, "test_if", _emit_test_if)
    monkeypatch.setitem(interp.STRUCTURAL_EVAL, "test_if", _eval_test_if)
    monkeypatch.setattr(verifier, "STRUCTURAL", verifier.STRUCTURAL | {"test_if"})
    return build_test_if
