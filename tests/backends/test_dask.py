"""Gradients of Dask arrays: built lazily on the client, computed on a real cluster.

Every gradient here is built under a scheduler that raises on any compute (building
a gradient must never compute), checked to be lazy, then computed on a
``distributed.LocalCluster`` (2 worker processes, 1 thread each) from data generated
on the workers, and compared with the same gradient of the computed NumPy data and
with central finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the dask extra is not installed: "
                         "pip install '.[dask]'")
dask = pytest.importorskip("dask")

import ad_compiler as ms  # noqa: E402
from ad_compiler.errors import GradTypeError  # noqa: E402
from tests.finite_differences import central  # noqa: E402


def _refuse_compute(*args, **kwargs):
    raise AssertionError("a Dask graph was computed while the gradient was being built")


@pytest.fixture
def no_compute():
    """Any compute inside the block fails the test."""
    with dask.config.set(scheduler=_refuse_compute):
        yield


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def logistic(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def mlp(W1, b1, W2, X, Y):
    h = np.tanh(X @ W1 + b1)
    z = h @ W2
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def rnn(Wh, Wx, X):
    h = X[:, 0] @ Wx
    for t in range(1, X.shape[1]):
        h = np.tanh(h @ Wh + X[:, t] @ Wx)
    return np.sum(h * h) / X.shape[0]


def slicing(a, b):
    y = a[1:, ::2] * b[None, :]
    y = y + a[:-1, 1::2] * 0.5
    return np.sum(y ** 2) + np.sum(a[:, 0:1] * 0.5)


def _computed(values):
    return [v.compute() if hasattr(v, "compute") else v for v in values]


def _check(fn, args, positions, client, fd=False):
    """Gradients of ``fn`` for Dask ``args``: lazy when built, equal to NumPy's gradients
    of the computed data once computed on the cluster (and to central differences)."""
    with dask.config.set(scheduler=_refuse_compute):
        grads = ms.grad(fn, grad_position=positions)(*args)
    grads = grads if len(positions) > 1 else (grads,)
    assert all(isinstance(g, da.Array) for g in grads), [type(g) for g in grads]
    data = client.gather(client.compute(list(args))) if client else _computed(args)
    computed = client.gather(client.compute(list(grads))) if client else _computed(grads)
    expected = ms.grad(fn, grad_position=positions)(*data)
    expected = expected if len(positions) > 1 else (expected,)
    for g, e, p in zip(computed, expected, positions):
        assert type(g) is np.ndarray and g.dtype == data[p].dtype
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
        if fd and data[p].size <= 200:   # the data's own gradient: compared with NumPy's
            def f(v, p=p):
                return fn(*data[:p], v, *data[p + 1:])
            np.testing.assert_allclose(g, central(f, data[p]), rtol=1e-5, atol=1e-7)
    return grads


def test_logistic_regression_on_a_cluster(client):
    rs = da.random.RandomState(0)            # the data is generated on the workers
    X = rs.normal(size=(4000, 8), chunks=(1000, 8))
    y = (rs.uniform(size=4000, chunks=1000) > 0.5).astype(np.float64)
    w = np.linspace(-0.5, 0.5, 8)
    _check(logistic, (w, X, y), (0,), client, fd=True)


def test_mlp_on_a_cluster(client):
    r = np.random.default_rng(1)
    X = da.random.RandomState(1).normal(size=(600, 8), chunks=(150, 8))
    labels = np.eye(3)[r.integers(0, 3, 600)]
    Y = da.from_array(labels, chunks=(150, 3))
    W1, b1, W2 = r.normal(size=(8, 5)), r.normal(size=5), r.normal(size=(5, 3))
    _check(mlp, (W1, b1, W2, X, Y), (0, 1, 2), client, fd=True)


def test_rnn_loop_on_a_cluster(client):
    r = np.random.default_rng(2)
    X = da.random.RandomState(2).normal(size=(200, 4, 6), chunks=(50, 4, 6))
    Wh, Wx = r.normal(size=(5, 5)) * 0.4, r.normal(size=(6, 5)) * 0.4
    _check(rnn, (Wh, Wx, X), (0, 1, 2), client, fd=True)


def test_slicing_and_broadcasting_on_a_cluster(client):
    a = da.random.RandomState(3).normal(size=(12, 10), chunks=(4, 5))
    b = da.random.RandomState(4).normal(size=5, chunks=5)
    grads = _check(slicing, (a, b), (0, 1), client, fd=True)
    assert grads[0].chunks == a.chunks   # the adjoint of slicing writes into zeros_like(a)


def test_repeated_gather_adds_every_occurrence(no_compute):
    """The adjoint of ``x[[0, 0, 2]]`` adds twice into row 0 (``np.add.at``, which Dask
    lacks: the scatter is done in rounds of unique positions)."""
    def gather(x):
        return np.sum(x[[0, 0, 2, 0]] ** 2)
    x = da.from_array(np.arange(12.0).reshape(6, 2) / 7, chunks=2)
    g = ms.grad(gather)(x)
    assert isinstance(g, da.Array)
    with dask.config.set(scheduler="sync"):
        got, xn = g.compute(), x.compute()
    np.testing.assert_allclose(got, central(gather, xn), rtol=1e-6)
    np.testing.assert_allclose(got[0], 3 * 2 * xn[0])


def test_an_unreached_input_gets_lazy_zeros_of_its_chunks(no_compute):
    def f(a, b):
        return np.sum(a * 2.0)
    a = da.ones((8, 6), chunks=(4, 3))
    b = da.ones((10,), chunks=5)
    ga, gb = ms.grad(f, grad_position=(0, 1))(a, b)
    assert isinstance(ga, da.Array) and isinstance(gb, da.Array)
    assert gb.chunks == b.chunks
    with dask.config.set(scheduler="sync"):
        np.testing.assert_array_equal(gb.compute(), np.zeros(10))
        np.testing.assert_array_equal(ga.compute(), np.full((8, 6), 2.0))


def test_value_and_grad_keeps_the_value_lazy(no_compute):
    X = da.from_array(np.linspace(-1, 1, 40).reshape(10, 4), chunks=5)
    w = np.array([0.5, -0.25, 0.125, 1.0])
    value, g = ms.value_and_grad(lambda w, X: np.sum(np.tanh(X @ w) ** 2))(w, X)
    assert isinstance(value, da.Array) and isinstance(g, da.Array)
    with dask.config.set(scheduler="sync"):
        Xn = X.compute()
        assert float(value.compute()) == pytest.approx(np.sum(np.tanh(Xn @ w) ** 2), rel=1e-12)
        np.testing.assert_allclose(g.compute(), central(lambda v: np.sum(np.tanh(Xn @ v) ** 2), w),
                                   rtol=1e-6)


def test_float32_stays_float32(no_compute):
    X = da.from_array(np.linspace(-1, 1, 40, dtype=np.float32).reshape(10, 4), chunks=5)
    g = ms.grad(lambda X: np.sum(np.sin(X) * X))(X)
    assert isinstance(g, da.Array) and g.dtype == np.float32
    with dask.config.set(scheduler="sync"):
        Xn = X.compute()
        np.testing.assert_allclose(g.compute(), np.cos(Xn) * Xn + np.sin(Xn), rtol=1e-6)


def test_vjp_with_a_dask_cotangent(no_compute):
    X = da.from_array(np.linspace(-1, 1, 12).reshape(4, 3), chunks=2)
    out, vjp_fn = ms.vjp(lambda X: np.tanh(X) * 2.0, X)
    ct = da.ones((4, 3), chunks=2)
    (g,) = vjp_fn(ct)
    assert isinstance(out, da.Array) and isinstance(g, da.Array)
    with dask.config.set(scheduler="sync"):
        np.testing.assert_allclose(g.compute(), 2.0 / np.cosh(X.compute()) ** 2, rtol=1e-12)


def test_the_backend_is_part_of_the_cache_key():
    """The same shapes and dtype as NumPy and as Dask arrays compile two gradients:
    the NumPy one reuses buffers and returns arrays, the Dask one stays lazy."""
    def f(x):
        return np.sum(np.exp(x) * x)
    gf = ms.grad(f)
    xn = np.linspace(0, 1, 6)
    xd = da.from_array(xn, chunks=3)
    gn = gf(xn)
    gd = gf(xd)
    assert type(gn) is np.ndarray and isinstance(gd, da.Array)
    assert len(gf._entries) == 2
    with dask.config.set(scheduler="sync"):
        np.testing.assert_allclose(gd.compute(), gn, rtol=1e-12)
    assert type(gf(xn)) is np.ndarray   # the NumPy entry is still NumPy's


def test_unknown_chunk_sizes_are_a_clear_error():
    x = da.from_array(np.arange(10.0), chunks=5)
    masked = x[x > 3]             # shape (nan,)
    with pytest.raises(GradTypeError, match="unknown shape") as e:
        ms.grad(lambda v: np.sum(v * v))(masked)
    assert "compute_chunk_sizes" in e.value.hint


def test_transforms_that_assemble_numpy_results_refuse_dask_arrays(no_compute):
    x = da.from_array(np.arange(4.0), chunks=2)
    for call in (lambda: ms.jvp(lambda v: v * v, x, x),
                 lambda: ms.jacrev(lambda v: v * v)(x),
                 lambda: ms.jacfwd(lambda v: v * v)(x),
                 lambda: ms.hessian(lambda v: np.sum(v ** 3))(x)):
        with pytest.raises(GradTypeError, match="does not take dask arrays"):
            call()


def test_the_generated_source_is_the_same_readable_code_without_buffer_reuse():
    X = da.from_array(np.ones((8, 3)), chunks=4)
    w = np.ones(3)
    src = ms.adjoint_source(logistic, w, X, da.ones(8, chunks=4))
    assert "out=" not in src and "np.asarray" not in src
    assert "dw = " in src


def test_what_dask_cannot_do_is_an_error_at_the_users_line(no_compute):
    """Dask has no n-d fancy indexing (the forward value needs it): the generated code's failure is reported at the
    user's line, with the backend's own message, not as a traceback from inside it."""
    def xent(logits, labels):
        logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
        return -np.mean(np.take_along_axis(logp, labels[:, None], axis=1))
    x = da.from_array(np.linspace(-1, 1, 12).reshape(4, 3), chunks=2)
    with pytest.raises(ms.errors.GradRuntimeError, match="dask backend cannot run") as e:
        ms.value_and_grad(xent)(x, np.array([0, 2, 1, 0]))
    assert e.value.loc.line == xent.__code__.co_firstlineno + 2
    assert "np.take_along_axis(logp" in e.value.loc.text


def test_a_cast_is_the_arrays_own_astype(no_compute):
    """``np.asarray(x, dtype)`` would compute a Dask array: casts of arrays are written
    ``x.astype(dtype, copy=False)`` (passes/backend.py), and float32 data cast up to
    float64 gets a float32 gradient, lazily."""
    def f(x, w):
        return np.sum(np.tanh(x.astype(np.float64) @ w))
    x = da.from_array(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), chunks=2)
    w = np.array([0.5, -1.0, 0.25])
    gx, gw = ms.grad(f, grad_position=(0, 1))(x, w)
    assert isinstance(gx, da.Array) and gx.dtype == np.float32
    assert isinstance(gw, da.Array) and gw.dtype == np.float64
    assert "np.asarray" not in ms.adjoint_source(f, x, w, grad_position=(0, 1))
    with dask.config.set(scheduler="sync"):
        x64 = x.compute().astype(np.float64)
        np.testing.assert_allclose(gw.compute(), central(lambda v: f(x64, v), w), rtol=1e-6)
        np.testing.assert_allclose(gx.compute(), (1 - np.tanh(x64 @ w)[:, None] ** 2) * w,
                                   rtol=1e-6)
