"""The compiled-gradient cache: one compilation per signature, weakly held, thread-safe.

Compilations are counted by wrapping ``build_entry`` (the function that lifts,
differentiates and compiles ``fn`` for one signature). Each test differentiates
functions or Cells created inside it, so no other test has warmed their cache.
"""
from __future__ import annotations

import gc
import threading
import time
import weakref

import numpy as np
import pytest

import ad_compiler.api.compiler as compiler_module
import ad_compiler.api.grad as grad_module
from ad_compiler import Parameter, Tensor, nn, ops
from ad_compiler.ops import GradOperation, grad


class Counter:
    def __init__(self):
        self.calls = []
        self.delay = 0.0
        self._lock = threading.Lock()

    @property
    def count(self):
        return len(self.calls)


@pytest.fixture
def compiles(monkeypatch):
    """Counts calls of ``build_entry``; ``delay`` seconds are spent in each (to widen races)."""
    counter = Counter()
    original = compiler_module.build_entry

    def counting_build_entry(fn, *args, **kwargs):
        with counter._lock:
            counter.calls.append(fn)
        if counter.delay:
            time.sleep(counter.delay)
        return original(fn, *args, **kwargs)

    monkeypatch.setattr(compiler_module, "build_entry", counting_build_entry)
    monkeypatch.setattr(grad_module, "build_entry", counting_build_entry)
    return counter


def make_poly():
    def poly(x, y):
        return np.sum(x ** 2 * np.sin(y))
    return poly


def poly_dx(x, y):
    return 2 * x * np.sin(y)


def test_second_call_with_the_same_signature_does_not_compile(api, compiles):
    poly = make_poly()
    gradient_function = grad(poly)
    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    api.assert_grad(gradient_function(x, y), poly_dx(x, y), x)
    assert compiles.count == 1
    x2, y2 = np.array([-1.0, 3.0]), np.array([0.25, 1.5])   # new values, same signature
    api.assert_grad(gradient_function(x2, y2), poly_dx(x2, y2), x2)
    api.assert_grad(gradient_function(x, y), poly_dx(x, y), x)
    assert compiles.count == 1


def test_new_shape_or_dtype_compiles_again(api, compiles):
    poly = make_poly()
    gradient_function = grad(poly)
    calls = [
        (np.array([1.0, 2.0]), np.array([0.5, -0.5]), 1),                       # first
        (np.ones((2, 2)), np.full((2, 2), 0.3), 2),                               # new shape
        (np.array([1.0, 2.0], np.float32), np.array([0.5, -0.5], np.float32), 3),  # new dtype
        (Tensor(np.array([1.0, 2.0])), Tensor(np.array([0.5, -0.5])), 4),       # new kind
        (np.array([3.0, 4.0]), np.array([0.1, 0.2]), 4),                         # first again
        (np.ones((2, 2)), np.full((2, 2), -0.7), 4),                              # second again
    ]
    for x, y, expected_count in calls:
        api.assert_grad(gradient_function(x, y), poly_dx(api.f64(x), api.f64(y)), x)
        assert compiles.count == expected_count, (np.shape(x), api.f64(x).dtype)


def test_a_new_gradient_function_of_the_same_fn_hits_the_cache(api, compiles):
    poly = make_poly()
    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    for _ in range(3):
        api.assert_grad(grad(poly)(x, y), poly_dx(x, y), x)
    assert compiles.count == 1


class GradNetWrtX(nn.Cell):
    """Seed 003: the GradOperation is applied to ``self.net`` on every call."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad_op = ops.GradOperation()

    def construct(self, x, y):
        gradient_function = self.grad_op(self.net)
        return gradient_function(x, y)


def test_gradoperation_created_inside_construct_hits_the_cache(api, compiles):
    net = api.Net(z=1.5)
    x, y = api.net_inputs()
    grad_net = GradNetWrtX(net)
    dx = api.fd_grad(api.net_ref, (x, y, net.z), 0)
    for _ in range(4):
        api.assert_grad(grad_net(x, y), dx, x)
    assert compiles.count == 1
    api.assert_grad(GradNetWrtX(net)(x, y), dx, x)   # a new wrapper of the same net
    assert compiles.count == 1


def test_parameters_are_read_at_call_time(api, compiles):
    net = api.Net(z=1.0)
    x, y = api.net_inputs()
    gradient_function = GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())
    gradient_function(x, y)
    net.z.set_data(Tensor(np.array([-2.5], np.float32)))
    (dx, dy), (dz,) = gradient_function(x, y)
    args = (x, y, net.z)
    api.assert_grad(dx, api.fd_grad(api.net_ref, args, 0), x)
    api.assert_grad(dy, api.fd_grad(api.net_ref, args, 1), y)
    api.assert_grad(dz, api.fd_grad(api.net_ref, args, 2), net.z)
    assert compiles.count == 1


def test_parameter_assignment_is_seen(api):
    net = api.Net(z=1.0)
    x, y = api.net_inputs()
    gradient_function = GradOperation()(net)
    gradient_function(x, y)
    net.z = Parameter(Tensor(np.array([3.0], np.float32)), name="z")
    api.assert_grad(gradient_function(x, y), api.fd_grad(api.net_ref, (x, y, net.z), 0), x)


def test_the_cache_holds_functions_weakly():
    f = lambda x: x * x  # noqa: E731  (a lambda on purpose)
    alive = weakref.ref(f)
    gradient_function = grad(f)
    gradient_function(np.array([1.0, 2.0]))
    del f, gradient_function
    gc.collect()
    assert alive() is None, "the compiled gradient keeps the lambda alive"


def test_the_cache_holds_cells_weakly(api):
    net = api.Net()
    x, y = api.net_inputs()
    alive = weakref.ref(net)
    GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())(x, y)
    GradNetWrtX(net)(x, y)
    del net
    gc.collect()
    assert alive() is None, "the compiled gradient keeps the Cell alive"


@pytest.mark.parametrize("shared", [True, False], ids=["one gradient function", "one per thread"])
def test_concurrent_first_calls_compile_once(api, compiles, shared):
    poly = make_poly()
    compiles.delay = 0.05
    n = 8
    barrier = threading.Barrier(n)
    shared_function = grad(poly)
    r = api.rng(31)
    inputs = [(r.uniform(-1, 1, 3), r.uniform(-1, 1, 3)) for _ in range(n)]
    results, errors = [None] * n, []

    def worker(i):
        try:
            gradient_function = shared_function if shared else grad(poly)
            barrier.wait()
            results[i] = gradient_function(*inputs[i])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert compiles.count == 1
    for (x, y), g in zip(inputs, results):
        api.assert_grad(g, poly_dx(x, y), x)


def three_args(x, y, z):
    return np.sin(x) * y + z ** 2


def three_args_ref(x, y, z):
    return np.sin(x) * y + z ** 2


@pytest.mark.parametrize("make,positions,bare", [
    (lambda f: grad(f), (0,), True),
    (lambda f: grad(f, 2), (2,), True),
    (lambda f: grad(f, (1,)), (1,), True),
    (lambda f: grad(f, (2, 0)), (2, 0), False),
    (lambda f: GradOperation()(f), (0,), True),
    (lambda f: GradOperation(get_all=True)(f), (0, 1, 2), False),
], ids=["grad", "grad-2", "grad-(1,)", "grad-(2,0)", "GradOperation", "GradOperation-get_all"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_repeated_calls_keep_structure_types_and_values(api, make, positions, bare, dtype):
    """Hits (not only first calls) return the same structure, types and fresh values."""
    gradient_function = make(three_args)
    r = api.rng(41)
    previous = []
    for _ in range(3):
        args = tuple(r.uniform(-1, 1, (2, 3)).astype(dtype) for _ in range(3))
        want = tuple(api.Leaf(api.fd_grad(three_args_ref, args, p), args[p]) for p in positions)
        got = gradient_function(*args)
        api.assert_structure(got, want[0] if bare else want)
        for g in api.leaves(got):
            assert g.flags.writeable
            assert not any(np.shares_memory(g, p) for p in previous)
        previous += api.leaves(got)


def one_arg(x):
    return np.exp(x)


def test_get_all_with_one_input_stays_a_one_tuple_on_hits(api):
    gradient_function = GradOperation(get_all=True)(one_arg)
    for x in (np.array([0.1, 0.2]), np.array([-0.3, 0.4])):
        api.assert_structure(gradient_function(x), (api.Leaf(np.exp(x), x),))


def test_parameters_read_at_call_time_with_ndarray_inputs(api):
    class Scale(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(Tensor(np.array([2.0, 3.0])), name="w")

        def construct(self, x):
            return np.sin(x) * self.w

    net = Scale()
    gradient_function = grad(net)
    x = np.array([0.5, -0.25])
    for w in ([2.0, 3.0], [-1.0, 0.5], [4.0, 4.0]):
        net.w.set_data(Tensor(np.array(w)))
        api.assert_grad(gradient_function(x), np.cos(x) * np.array(w), x)


def mixed(x, s):
    return np.sum(np.sin(x) * s)


def test_alternating_signatures_each_get_their_own_gradient(api, compiles):
    """The guarded fast path serves the signature used last; any other signature
    (shape, dtype, ndarray against float, arity) must miss it, not reuse it."""
    gradient_function = grad(mixed, (0, 1))
    a = np.array([0.1, 0.2, 0.3])
    b32 = np.array([[0.5, -0.5]], dtype=np.float32)
    other = np.dtype(np.float64, metadata={"note": 1})  # an equal dtype, another object
    assert other == a.dtype and a.astype(other).dtype is not a.dtype
    calls = [(a, 2.0), (b32, np.array(3.0, np.float32)), (a, 2.0), (a, np.array([1.0, 2.0, 3.0])),
             (a.astype(other), 2.0), (a, 2.0), (b32, np.array(3.0, np.float32))]
    for x, s in calls * 2:
        dx, ds = gradient_function(x, s)
        api.assert_grad(dx, np.cos(x) * s, x)
        assert dx.dtype == np.result_type(x.dtype, np.asarray(s).dtype if not isinstance(s, float)
                                          else x.dtype)
        np.testing.assert_allclose(np.sum(ds), np.sum(np.sin(x)), rtol=1e-6)
    assert compiles.count == 3  # (a, float), (b32, 0-d f32), (a, f64[3])
    with pytest.raises(TypeError):
        gradient_function(a)
