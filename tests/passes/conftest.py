"""Fixtures for per-pass tests: build a small Function, run one pass, check the contract.

``ir.run(pass_, fn)`` checks what every pass promises and returns the new Function
for the test to inspect:

* the input is unchanged (passes are pure: ``str(fn)`` is the same afterwards);
* the output passes the verifier;
* on random inputs the output computes exactly what the input computes: same
  Python type, dtype, shape and bits (the rewrites are exact, so no tolerance).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers the primitives and structured ops)
from ad_compiler.ir.core import AType, Function, ListType
from ad_compiler.ir.interp import interpret
from ad_compiler.ir.verifier import verify
from ad_compiler.testing import arr, finish
from ad_compiler.testing import new_function as new

WEAK_FLOAT = AType.of(1.0)
WEAK_INT = AType.of(1)


def prims(fn) -> list:
    """The primitive names of every op, regions included, in order."""
    return [op.prim for op in fn.body.walk()]


def _sample_one(t, rng):
    if isinstance(t, ListType):
        raise TypeError("list arguments are not sampled")
    if t.weak:
        return t.python_type(rng.normal()) if t.dtype.kind == "f" else t.python_type(
            rng.integers(-3, 4))
    if t.dtype.kind == "b":
        return rng.random(t.shape) < 0.5
    if t.dtype.kind in "iu":
        return rng.integers(-3, 4, size=t.shape).astype(t.dtype)
    value = rng.normal(size=t.shape).astype(t.dtype)
    return value[()] if t.shape == () else value


def sample(fn, seed=0) -> list:
    """Random inputs of ``fn``'s argument types (0-d args as NumPy scalars, as callers pass)."""
    rng = np.random.default_rng(seed)
    return [_sample_one(a.type, rng) for a in fn.args]


def same(got, want) -> None:
    """Same Python type, dtype, shape and bits (so -0.0 differs from 0.0)."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert type(got) is type(want), (type(got), type(want))
    np.testing.assert_array_equal(got, want, strict=True)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (got, want)


def run(pass_, fn, *args, seeds=(0, 1)):
    """Apply ``pass_`` to ``fn`` and check the contract (module docstring)."""
    before = str(fn)
    out = pass_(fn)
    assert str(fn) == before, f"{pass_.__name__} mutated its input"
    verify(out)
    for inputs in ([list(args)] if args else [sample(fn, s) for s in seeds]):
        want = interpret(fn, *inputs)
        got = interpret(out, *inputs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    return out


@pytest.fixture
def ir():
    """Helpers to build IR and check passes (see the module docstring)."""
    return SimpleNamespace(new=new, finish=finish, run=run, prims=prims, same=same,
                           sample=sample, arr=arr, WEAK_FLOAT=WEAK_FLOAT, WEAK_INT=WEAK_INT)
