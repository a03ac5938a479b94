"""Shared helpers of the public-API tests: finite differences, result checks, the seeds' Net.

Expected gradients never come from ad_compiler itself: they are central finite
differences, in float64, of plain-NumPy reference functions written next to each
test, or closed forms derived by hand.

Test modules reach these helpers through the ``api`` fixture (pytest runs in
importlib mode, so test modules cannot import conftest).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, Tensor, nn, ops
from tests.finite_differences import central_at

EPS = 1e-6
TOL = {np.dtype("float64"): dict(rtol=1e-6, atol=1e-7),
       np.dtype("float32"): dict(rtol=1e-4, atol=1e-5),
       np.dtype("float16"): dict(rtol=2e-3, atol=2e-3)}


@pytest.fixture
def api():
    return sys.modules[__name__]


# -- values -------------------------------------------------------------------------

def f64(v):
    """A Tensor / ndarray / NumPy scalar / Python float as float64 (floats stay floats)."""
    if isinstance(v, float):
        return v
    if isinstance(v, Tensor):
        v = v.asnumpy()
    return np.array(v, dtype=np.float64)


def leaves(tree) -> list:
    """The leaves of a (nested) tuple/list/dict, in order."""
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in leaves(t)]
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in leaves(v)]
    return [tree]


def objective(fn, args, sens=None) -> float:
    """``<sens, fn(*args)>`` summed over the output leaves (``sens`` defaults to ones)."""
    outs = leaves(fn(*args))
    weights = [None] * len(outs) if sens is None else leaves(sens)
    assert len(weights) == len(outs), "sens does not match the reference output"
    total = 0.0
    for o, w in zip(outs, weights):
        o = np.asarray(o, dtype=np.float64)
        total += float(np.sum(o if w is None else o * f64(w)))
    return total


def fd_grad(fn, args, i, sens=None):
    """Central finite difference of ``objective(fn, args, sens)`` w.r.t. ``args[i]``.

    ``fn`` is a plain-NumPy reference; ``args`` are converted to float64 first.
    The result has the shape of ``args[i]`` (a Python float for a float argument).
    """
    return central_at(lambda *a: objective(fn, a, sens), [f64(a) for a in args], i, EPS)


def fd_grads(fn, args, positions=None, sens=None) -> tuple:
    positions = range(len(args)) if positions is None else positions
    return tuple(fd_grad(fn, args, i, sens) for i in positions)


# -- checks -------------------------------------------------------------------------

def assert_values(got, want, dtype=np.float64, what=""):
    np.testing.assert_allclose(f64(got), np.asarray(want, dtype=np.float64),
                               err_msg=what, **TOL.get(np.dtype(dtype), TOL[np.dtype("float64")]))


def assert_grad(got, want, like, what=""):
    """``got`` is a gradient for the input ``like``: same type, dtype, shape; values ``want``.

    Tensor (or Parameter) in -> plain Tensor out; ndarray in -> ndarray out; NumPy
    scalar in -> the same NumPy scalar type; Python float in -> Python float out.
    """
    if isinstance(like, Tensor):
        assert type(got) is Tensor, f"{what}: expected a Tensor, got {type(got).__name__}"
        arr, dtype = got.asnumpy(), like.asnumpy().dtype
    elif type(like) is float:
        assert type(got) is float, f"{what}: expected a Python float, got {type(got).__name__}"
        assert_values(got, want, np.float64, what)
        return
    elif isinstance(like, np.generic):
        assert type(got) is type(like), f"{what}: expected {type(like).__name__}, got {type(got).__name__}"
        arr, dtype = np.asarray(got), like.dtype
    else:
        assert type(got) is np.ndarray, f"{what}: expected an ndarray, got {type(got).__name__}"
        arr, dtype = got, like.dtype
    assert arr.dtype == dtype, f"{what}: dtype {arr.dtype}, expected {dtype}"
    assert arr.shape == np.shape(f64(like)), f"{what}: shape {arr.shape}, expected {np.shape(like)}"
    assert_values(arr, want, dtype if dtype.kind == "f" else np.float64, what)


def assert_structure(got, want, what="result"):
    """``got`` has exactly the nesting of ``want`` (tuple vs list vs dict vs leaf).

    ``want`` leaves are :class:`Leaf` objects, checked by :func:`assert_grad`.
    """
    if isinstance(want, Leaf):
        assert_grad(got, want.values, want.like, what)
        return
    assert type(got) is type(want), f"{what}: expected a {type(want).__name__}, got {type(got).__name__}: {got!r}"
    if isinstance(want, dict):
        assert list(got) == list(want), f"{what}: keys {list(got)}, expected {list(want)}"
        for k in want:
            assert_structure(got[k], want[k], f"{what}[{k!r}]")
        return
    assert len(got) == len(want), f"{what}: {len(got)} entries, expected {len(want)}: {got!r}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert_structure(g, w, f"{what}[{i}]")


class Leaf:
    """An expected gradient in :func:`assert_structure`: its values and the input it is for."""

    def __init__(self, values, like):
        self.values, self.like = values, like

    def __repr__(self):
        return f"Leaf({np.shape(self.values)})"


# -- the seeds' network ----------------------------------------------------------------

class Net(nn.Cell):
    """The GradOperation seeds' Net: ``matmul(x * z, y)`` with a Parameter ``z``."""

    def __init__(self, z=1.0):
        super().__init__()
        self.matmul = ops.MatMul()
        self.z = Parameter(Tensor(np.array([z], np.float32)), name='z')

    def construct(self, x, y):
        x = x * self.z
        out = self.matmul(x, y)
        return out


def net_ref(x, y, z):
    """Net in plain NumPy, with the Parameter as an argument."""
    return (x * z) @ y


def net_inputs():
    """The seeds' x and y (float32 Tensors)."""
    x = Tensor([[0.5, 0.6, 0.4], [1.2, 1.3, 1.1]], dtype=ms.float32)
    y = Tensor([[0.01, 0.3, 1.1], [0.1, 0.2, 1.3], [2.1, 1.2, 3.3]], dtype=ms.float32)
    return x, y


def rng(seed=0):
    return np.random.default_rng(seed)
