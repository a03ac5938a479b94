"""Helpers for the control-flow tests: lift a function on its arguments' types, then
compare the interpreted IR, the generated code and the optimised IR with Python.

Test modules reach them through the ``flow`` fixture (pytest runs in importlib
mode, so test modules cannot import conftest).
"""
from types import SimpleNamespace

import numpy as np
import pytest

import ad_compiler  # noqa: F401  (registers primitives and structured ops)
from ad_compiler.codegen import compile_function
from ad_compiler.frontend import Static, lift
from ad_compiler.ir.core import AType
from ad_compiler.ir.interp import interpret
from ad_compiler.ir.verifier import verify
from ad_compiler.passes.pipeline import optimize


def spec(a):
    """The lift spec of a runtime argument: arrays and floats are inputs, others static."""
    if isinstance(a, np.ndarray):
        return AType(a.shape, a.dtype)
    if isinstance(a, np.generic):
        return AType((), a.dtype)
    if isinstance(a, float):
        return AType((), np.dtype(np.float64), True)
    return a


def _rebuild(tree, outputs):
    if isinstance(tree, Static):
        return tree.value
    if isinstance(tree, int):
        return outputs[tree]
    if isinstance(tree, dict):
        return {k: _rebuild(v, outputs) for k, v in tree.items()}
    return type(tree)(_rebuild(v, outputs) for v in tree)


def assert_same(got, want, rtol):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol)
        return
    if want is None or isinstance(want, (str, bool)) or type(want) is int:
        assert got == want, (got, want)
        return
    if isinstance(want, float) and not isinstance(want, np.floating):
        assert isinstance(got, float) or np.asarray(got).dtype == np.float64, (got, type(got))
    else:
        assert np.asarray(got).dtype == np.asarray(want).dtype, (got, want)
        assert np.shape(got) == np.shape(want), (got, want)
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64),
                               np.asarray(want, dtype=np.float64), rtol=rtol, atol=rtol)


def check(fn, *args, rtol=None, want=None):
    """Lift ``fn`` for ``args``; its three executions must agree with ``fn(*args)``.

    Returns the lifted function (to inspect its ops)."""
    lifted = lift(fn, tuple(spec(a) for a in args))
    verify(lifted.function)
    inputs = [a for a in args if isinstance(spec(a), AType)]
    want = fn(*args) if want is None else want
    dtypes = {np.asarray(a).dtype for a in inputs}
    rtol = rtol or (1e-5 if np.dtype("float32") in dtypes else 1e-12)
    compiled = compile_function(lifted.function)
    optimised = verify(optimize(lifted.function))
    for outputs in (interpret(lifted.function, *inputs), list(compiled.fn(*inputs)),
                    interpret(optimised, *inputs)):
        assert_same(_rebuild(lifted.out_tree, outputs), want, rtol)
    return lifted


def prims(lifted) -> list:
    """Every op's primitive, regions included."""
    return [op.prim for op in lifted.function.body.walk()]


@pytest.fixture
def flow():
    return SimpleNamespace(check=check, prims=prims, spec=spec, assert_same=assert_same)


@pytest.fixture(params=["float64", "float32"])
def dtype(request):
    return np.dtype(request.param)
