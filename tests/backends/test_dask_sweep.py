"""Every lowered function on Dask arrays (tests/backends/dask_sweep.py), and the run-time
helpers that build their adjoints lazily.

The sweep builds each gradient under a scheduler that raises on any compute and
compares it, computed, with NumPy's; no function may compute on the client or differ,
and what Dask cannot do is a located error. docs/backends.md lists the outcome.
The helpers' own checks compare with central finite differences of plain NumPy.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the dask extra is not installed: "
                         "pip install '.[dask]'")
dask = pytest.importorskip("dask")

import ad_compiler as ms  # noqa: E402
from ad_compiler import ops  # noqa: E402
from ad_compiler.errors import GradRuntimeError  # noqa: E402
from tests.backends import dask_sweep  # noqa: E402
from tests.finite_differences import central  # noqa: E402


@pytest.fixture(scope="module")
def results():
    return dask_sweep.sweep()


def test_no_function_computes_on_the_client_or_differs(results):
    bad = [(c.spelling, c.outcome, c.detail) for c in results
           if c.outcome in (dask_sweep.COMPUTE, dask_sweep.WRONG)]
    assert not bad
    assert sum(c.outcome == dask_sweep.LAZY for c in results) > 300


def test_what_dask_cannot_do_is_located_and_names_the_backend(results):
    """An error case is a GradRuntimeError/GradTypeError at the user's line naming dask
    (the sweep's ``error``); anything else would be ``wrong``."""
    errors = [c for c in results if c.outcome == dask_sweep.ERROR]
    assert errors and all(c.detail for c in errors)


def test_the_page_lists_the_sweep(results):
    with open(dask_sweep.PAGE, encoding="utf-8") as fh:
        page = dask_sweep.page_section(fh.read())
    made_with = re.search(r"\(dask ([^)]+)\)", page)[1]
    if made_with != dask_sweep.environment():
        pytest.skip(f"docs/backends.md lists the outcomes with dask {made_with}, this is "
                    f"dask {dask_sweep.environment()}")
    assert page == dask_sweep.render(results), (
        "docs/backends.md is out of date: run `python -m tests.backends.dask_sweep "
        "--write` and read the diff")


# -- the helpers made lazy -------------------------------------------------------------------

def _refuse(*args, **kwargs):
    raise AssertionError("a Dask graph was computed while the gradient was being built")


def _lazy_grad(fn, *args):
    """The gradient by the first argument, built with no compute, then computed."""
    with dask.config.set(scheduler=_refuse):
        g = ms.grad(fn)(*args)
    assert isinstance(g, da.Array)
    with dask.config.set(scheduler="sync"):
        return g.compute()


def _data(shape, chunks, low=0.5, high=1.5):
    x = np.random.default_rng(len(shape)).uniform(low, high, shape)
    return x, da.from_array(x, chunks=chunks)


@pytest.mark.parametrize("axis", [0, 1])
def test_cumprod_uses_a_lazy_recurrence(axis):
    def f(x):
        return np.sum(np.cumprod(x, axis=axis) * np.arange(12.0).reshape(4, 3))
    xn, xd = _data((4, 3), (2, 3))
    np.testing.assert_allclose(_lazy_grad(f, xd), central(f, xn), rtol=1e-6)


@pytest.mark.parametrize("axis,reverse", [(0, False), (0, True), (1, False), (1, True)])
def test_recurrence_by_blocks_and_by_slices_agree_with_numpys(axis, reverse):
    """The Dask form (per block, the axis in one chunk) and the form of block-less
    backends (CuPy: one slice per step) give NumPy's recurrence, also with ``a``
    broadcast along the other axis."""
    from ad_compiler import runtime
    r = np.random.default_rng(3)
    a, b = r.uniform(-1, 1, (5, 3)), r.uniform(-1, 1, (5, 3))
    a = a[:, :1] if axis == 0 else a[:1]
    expected = runtime.linear_recurrence(np.broadcast_to(a, b.shape), b, axis, reverse)
    lazy = runtime.linear_recurrence(da.from_array(a, chunks=2), da.from_array(b, chunks=(2, 2)),
                                     axis, reverse)
    with dask.config.set(scheduler="sync"):
        np.testing.assert_allclose(lazy.compute(), expected, rtol=1e-12)
    sliced = runtime._linear_recurrence_by_slices(np.broadcast_to(a, b.shape), b, axis, reverse)
    np.testing.assert_allclose(sliced, expected, rtol=1e-12)


@pytest.mark.parametrize("offset,axis1,axis2", [(0, 0, 1), (1, 0, 1), (-1, 1, 2), (2, 2, 0)])
def test_diagonal_adjoint_is_a_lazy_mask(offset, axis1, axis2):
    def f(x):
        d = np.diagonal(x, offset, axis1, axis2)
        return np.sum(d * np.linspace(1.0, 2.0, d.shape[-1]))
    xn, xd = _data((3, 4, 5), (2, 4, 5))
    np.testing.assert_allclose(_lazy_grad(f, xd), central(f, xn), rtol=1e-6)


def test_sinc_and_erf_float32_stay_lazy_and_float32():
    def f(x):
        return np.sum(np.sinc(x) * ops.erf(x))
    xn, xd = _data((6,), 3, -1.5, 1.5)
    g = _lazy_grad(f, xd.astype(np.float32))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, central(f, xn), rtol=1e-4, atol=1e-5)


def test_average_checks_its_weights_when_computed():
    def f(x, w):
        return np.sum(np.average(x, axis=1, weights=w))
    xn, xd = _data((4, 3), (2, 3))
    w = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(_lazy_grad(f, xd, w), central(lambda v: f(v, w), xn), rtol=1e-6)
    zero_sum = da.from_array(np.array([1.0, -1.0, 0.0]), chunks=2)
    with dask.config.set(scheduler=_refuse):
        g = ms.grad(f)(xd, zero_sum)                  # built: nothing is computed yet
    with dask.config.set(scheduler="sync"), pytest.raises(ZeroDivisionError, match="sum to zero"):
        g.compute()


def test_allclose_of_dask_arrays_is_cast_lazily():
    """np.allclose of Dask arrays is a lazy 0-d array where NumPy gives a Python bool;
    its cast is ``rt.cast`` (``np.asarray`` would compute it)."""
    def f(x):
        return np.sum(x * x) + 1.0 * np.allclose(x, x)
    xn, xd = _data((4,), 2)
    np.testing.assert_allclose(_lazy_grad(f, xd), 2 * xn)


# -- what computes is refused at the user's line ------------------------------------------

def sorts(x):
    y = x * 2.0
    return np.sum(np.sort(y, axis=0) * np.arange(3.0))


def medians(x):
    y = x * 2.0
    return ops.median(y, axis=0)[0].sum()


@pytest.mark.parametrize("fn,line,what", [(sorts, 2, "numpy.argsort` function is not implemented"),
                                          (medians, 2, "written with NumPy's own operations")])
def test_a_function_dask_would_compute_is_a_located_error(fn, line, what):
    _, xd = _data((4, 3), (2, 3))
    with dask.config.set(scheduler=_refuse), pytest.raises(GradRuntimeError) as e:
        ms.grad(fn)(xd)
    assert "dask backend" in str(e.value) and what in str(e.value)
    assert e.value.loc.line == fn.__code__.co_firstlineno + line
