"""The fast path of a cache hit: every argument mix (ints and bools by value, Tensors,
tuples and lists) is checked by a generated guard that takes the function's own parameters."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.api.fastpath import MISS, fast_key
from tests.finite_differences import central


def _probe(g, args):
    """What the hot guard makes of ``args``: the gradient, or MISS."""
    (guard,) = [gd for gd in g._fast.values() if gd.call is g._hot]
    return guard.probe(args)


def rosenbrock(x, n, squared):
    s = 0.0
    for i in range(n - 1):
        term = 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
        s = s + (term if squared else np.sqrt(term))
    return s


X = np.array([0.5, 1.2, -0.3, 0.8])


@pytest.mark.parametrize("n, squared", [(4, True), (3, True), (4, False), (2, True)])
def test_ints_and_bools_by_value(n, squared):
    g = ms.grad(rosenbrock)
    for _ in range(3):  # compile, then two hits through the guard
        want = central(lambda v: rosenbrock(v, n, squared), X)
        np.testing.assert_allclose(g(X, n, squared), want, rtol=1e-6, atol=1e-6)
    assert g._hot is g._fast[fast_key((X, n, squared))].call   # the guard runs
    assert _probe(g, (X, n, squared)) is not MISS


def test_another_value_misses_the_guard_and_compiles_its_own():
    g = ms.grad(rosenbrock)
    first = g(X, 4, True)
    assert _probe(g, (X, 3, True)) is MISS
    assert _probe(g, (X, 4, 1)) is MISS    # 1 == True, but an int is not a bool
    np.testing.assert_allclose(g(X, 3, True), central(lambda v: rosenbrock(v, 3, True), X),
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g(X, 4, True), first)


def test_a_differentiated_int_position_stays_an_error():
    from ad_compiler.errors import GradRuntimeError
    g = ms.grad(rosenbrock, grad_position=(0, 1))
    for _ in range(2):   # never served by a guard
        with pytest.raises(GradRuntimeError, match="constant with no gradient"):
            g(X, 4, True)


# -- the guard takes the function's own parameters (no *args tuple, no **kwargs dict) --

def scaled(x, y=2.0):
    return np.sum(np.sin(x) * y)


def _error(call):
    with pytest.raises(TypeError) as info:
        call()
    return type(info.value), str(info.value)


def test_the_guard_is_named_after_the_function_and_takes_its_parameters():
    g = ms.grad(scaled)
    g(X)
    assert g._hot.__name__ == "scaled"
    assert list(g._hot.__code__.co_varnames[:2]) == ["x", "y"]


@pytest.mark.parametrize("args", [(), (X, 2.0, 3.0), (X, 2.0, 3.0, 4.0)])
def test_a_wrong_number_of_inputs_is_the_same_error_hot_or_cold(args):
    cold = _error(lambda: ms.grad(scaled)(*args))
    g = ms.grad(scaled)
    g(X, 2.0)   # the guard of (array, float) is hot
    assert _error(lambda: g(*args)) == cold
    assert "scaled" in cold[1]


def test_a_default_parameter_given_or_not_takes_its_own_signature():
    g = ms.grad(scaled)
    for _ in range(2):
        np.testing.assert_allclose(g(X), 2.0 * np.cos(X))
        np.testing.assert_allclose(g(X, 3.0), 3.0 * np.cos(X))   # misses the 1-input guard
        np.testing.assert_allclose(g(X), 2.0 * np.cos(X))


def fn(ndarray, type, MISS):   # parameter names the guard's own code reads
    return np.sum(ndarray * type * MISS)


def test_parameter_names_the_guard_reads_are_not_shadowed():
    g = ms.grad(fn, grad_position=(0, 1, 2))
    a, b, c = X, X + 1.0, X + 2.0
    for _ in range(3):
        got = g(a, b, c)
        for i, want in enumerate((b * c, a * c, a * b)):
            np.testing.assert_allclose(got[i], want)
    assert g._hot.__name__ == "call"   # the *args form


def star(*xs):
    return np.sum(xs[0] * xs[1])


def test_a_variadic_function_keeps_the_args_form():
    g = ms.grad(star, grad_position=(0, 1))
    for _ in range(2):
        dx, dy = g(X, X + 1.0)
        np.testing.assert_allclose(dx, X + 1.0)
        np.testing.assert_allclose(dy, X)
    assert g._hot.__name__ == "call"


# -- any argument mix: Tensors, tuples and lists, constants by value --------------

def mixed(x, pair, items, scale, label):
    a, b = pair
    s = np.sum(x * a) + b * b
    for v in items:
        s = s + np.sum(v * v) * scale
    return s if label == "sum" else -s


T32 = ms.Tensor(np.array([0.5, -1.5, 2.0], dtype=np.float32))
MIXES = {
    "tensor, tuple of floats, list of arrays": (T32, (1.5, 0.25), [X, X[:2]], 3, "sum"),
    "array, tuple of a tensor and a float": (X[:3], (T32, 2.0), [X], 2, "neg"),
    "bool and None constants": (X, (0.5, -1.0), [X[1:]], True, None),
}


def _shape_of(result):
    """The structure and leaf types of a result (values aside)."""
    if isinstance(result, (tuple, list)):
        return type(result), [_shape_of(r) for r in result]
    return type(result), getattr(result, "dtype", None), np.shape(result)


def _leaves(result):
    if isinstance(result, (tuple, list)):
        return [v for r in result for v in _leaves(r)]
    return [] if result is None else [result.asnumpy() if isinstance(result, ms.Tensor)
                                      else np.asarray(result)]


def _cold_then_hits(g, args):
    """The first call's result, after checking that the guard of its signature runs and
    that two more calls (hits) return the same structure, types and values."""
    cold = g(*args)
    assert g._hot is not g._miss, "the guard of this signature runs"
    for _ in range(2):
        _same(g(*args), cold)
    return cold


@pytest.mark.parametrize("mix", list(MIXES), ids=list(MIXES))
@pytest.mark.parametrize("make", [lambda: ms.grad(mixed, grad_position=(0, 1, 2)),
                                  lambda: ms.GradOperation(get_all=True)(mixed),
                                  lambda: ms.grad(mixed, grad_position=1)],
                         ids=["grad-positions", "gradop-all", "grad-one"])
def test_a_hit_returns_what_the_general_path_returns(mix, make):
    args = MIXES[mix]
    g = make()
    _cold_then_hits(g, args)
    assert g._fast[fast_key(args)].probe(args) is not MISS


def test_a_tensor_hit_returns_tensors_of_the_input_dtype():
    g = ms.grad(lambda_free_loss, grad_position=(0, 1))
    x, w = ms.Tensor(np.array([0.5, -1.0], np.float32)), (0.5, 2.0)
    for _ in range(3):
        dx, (dw0, dw1) = g(x, w)
        assert type(dx) is ms.Tensor and dx.dtype == ms.float32
        assert type(dw0) is float and type(dw1) is float
        xs = x.asnumpy().astype(np.float64)
        np.testing.assert_allclose(dx.asnumpy(), w[0] * np.cos(xs) * w[1], rtol=1e-6)
        np.testing.assert_allclose(dw0, np.sum(np.sin(xs)) * w[1], rtol=1e-6)
        np.testing.assert_allclose(dw1, np.sum(np.sin(xs)) * w[0], rtol=1e-6)
    assert g._hot is not g._miss


def lambda_free_loss(x, w):
    return np.sum(np.sin(x)) * w[0] * w[1]


def test_a_parameter_takes_the_general_path():
    p = ms.Parameter(ms.Tensor(np.array([0.5, -1.0], np.float32)), name="p")
    g = ms.grad(lambda_free_loss)
    for _ in range(2):
        assert type(g(p, (1.0, 2.0))) is ms.Tensor
    assert g._hot is g._miss


def with_aux(x, pair, scale):
    a, b = pair
    loss = np.sum(np.sin(x) * a) * b * scale
    return loss, [x * 2.0, a], b


@pytest.mark.parametrize("mix", list(MIXES)[:2], ids=list(MIXES)[:2])
@pytest.mark.parametrize("make", [lambda: ms.value_and_grad(mixed, grad_position=(0, 1)),
                                  lambda: ms.GradOperation(get_all=True, sens_param=False)(mixed),
                                  lambda: ms.value_and_grad(mixed, grad_position=1)],
                         ids=["value_and_grad", "gradop", "value_and_grad-one"])
def test_value_and_grad_hits_return_what_the_general_path_returns(mix, make):
    _cold_then_hits(make(), MIXES[mix])


@pytest.mark.parametrize("x", [X, ms.Tensor(X.astype(np.float32))], ids=["array", "tensor"])
@pytest.mark.parametrize("with_value", [False, True])
def test_has_aux_hits_return_what_the_general_path_returns(x, with_value):
    make = ms.value_and_grad if with_value else ms.grad
    g = make(with_aux, grad_position=(0, 1), has_aux=True)
    cold = _cold_then_hits(g, (x, (0.5, 2.0), 3))
    xs = np.asarray(x.asnumpy() if isinstance(x, ms.Tensor) else x, dtype=np.float64)
    (dx, (da, db)) = cold[1] if with_value else cold[0]
    np.testing.assert_allclose(np.asarray(dx.asnumpy() if isinstance(dx, ms.Tensor) else dx),
                               np.cos(xs) * 0.5 * 2.0 * 3, rtol=1e-6)
    np.testing.assert_allclose(da, np.sum(np.sin(xs)) * 6.0, rtol=1e-6)


# -- Parameters: read at each call, their gradients as Tensors, written ones set first --

def _net(batchnorm=False):
    from ad_compiler import nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.d1 = nn.Dense(3, 4, weight_init="normal")
            self.bn = nn.BatchNorm1d(4) if batchnorm else None
            self.d2 = nn.Dense(4, 2, weight_init="normal")

        def construct(self, x):
            h = self.d1(x)
            if self.bn is not None:
                h = self.bn(h)
            return self.d2(ms.ops.tanh(h))
    ms.set_seed(3)
    return Net()


XS = ms.Tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3).astype(np.float32))
YS = ms.Tensor(np.linspace(0.5, -0.5, 8).reshape(4, 2).astype(np.float32))


def _forward(net):
    from ad_compiler import nn
    loss_fn = nn.MSELoss()

    def forward_fn(x, y):
        out = net(x)
        return loss_fn(out, y), out
    return forward_fn


def _same(a, b):
    assert _shape_of(a) == _shape_of(b)
    for u, v in zip(_leaves(a), _leaves(b)):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("make", [
    lambda net, ps: ms.value_and_grad(_forward(net), None, ps, has_aux=True),
    lambda net, ps: ms.value_and_grad(_forward(net), 0, ps, has_aux=True),
    lambda net, ps: ms.GradOperation(get_by_list=True)(net, ps),
    lambda net, ps: ms.GradOperation(get_all=True, get_by_list=True)(net, ps),
], ids=["value_and_grad-weights", "value_and_grad-input-and-weights", "gradop-by-list",
        "gradop-all-and-list"])
def test_weight_gradients_on_a_hit_are_the_general_paths(make):
    net = _net()
    params = net.trainable_params()
    g = make(net, params)
    args = (XS,) if isinstance(g, ms.api.grad.GradFunction) and g.fn is net else (XS, YS)
    cold = g(*args)
    assert g._hot is not g._miss, "the guard runs"
    _same(g(*args), cold)
    params[0].set_data(params[0].asnumpy() * 2.0)   # read at each call
    changed = g(*args)
    fresh = make(net, params)(*args)                 # a new gradient function: general path
    _same(changed, fresh)


def test_a_frozen_weight_gets_zeros_after_a_hit():
    net = _net()
    params = net.trainable_params()
    g = ms.GradOperation(get_by_list=True)(net, params)
    g(XS)
    g(XS)
    params[1].requires_grad = False
    grads = g(XS)
    assert np.all(grads[1].asnumpy() == 0) and np.any(grads[0].asnumpy() != 0)


def test_moving_statistics_are_updated_once_per_hit():
    hot_net, cold_net = _net(batchnorm=True), _net(batchnorm=True)
    hot_net.set_train()
    cold_net.set_train()
    g = ms.value_and_grad(_forward(hot_net), None, hot_net.trainable_params(), has_aux=True)
    for _ in range(3):
        hot = g(XS, YS)
        cold = ms.value_and_grad(_forward(cold_net), None, cold_net.trainable_params(),
                                 has_aux=True)(XS, YS)
        _same(hot, cold)
    assert g._hot is not g._miss
    for a, b in zip(hot_net.get_parameters(), cold_net.get_parameters()):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert np.any(hot_net.bn.moving_mean.asnumpy() != 0)


# -- keyword inputs: a hit binds them as the general path does (api/keywords.py) --

@pytest.mark.parametrize("call", [lambda g: g(X, y=3.0), lambda g: g(x=X, y=3.0),
                                  lambda g: g(y=3.0, x=X)],
                         ids=["y-by-keyword", "both", "reversed"])
def test_a_keyword_call_gives_the_positional_calls_result_hot_or_cold(call):
    positional = ms.grad(scaled, grad_position=(0, 1))(X, 3.0)
    cold = call(ms.grad(scaled, grad_position=(0, 1)))
    g = ms.grad(scaled, grad_position=(0, 1))
    g(X, 3.0)   # the guard of (array, float) is hot
    hot = call(g)
    for got in (cold, hot):
        np.testing.assert_allclose(got[0], 3.0 * np.cos(X))
        assert got[1] == pytest.approx(np.sum(np.sin(X)))
        _same(got, positional)


@pytest.mark.parametrize("call", [lambda g: g(X, z=1.0), lambda g: g(X, 2.0, x=X)],
                         ids=["unknown", "twice"])
def test_a_bad_keyword_is_pythons_error_hot_or_cold(call):
    cold = _error(lambda: call(ms.grad(scaled)))
    g = ms.grad(scaled)
    g(X, 2.0)
    hot = _error(lambda: call(g))
    assert hot[1] == cold[1]
    assert "scaled() got" in cold[1]


def ignores_t(x, s, t):
    return np.sum(x) + s   # t is not read: its gradient is a folded zero


def test_a_float_gradient_is_a_float_on_a_hit_also_when_it_is_a_folded_zero():
    g = ms.value_and_grad(ignores_t, grad_position=(0, 1, 2))
    cold = g(X, 0.5, 2.0)
    hot = g(X, 0.5, 2.0)
    assert g._hot is not g._miss
    assert type(hot[1][1]) is float and type(hot[1][2]) is float
    _same(hot, cold)


# -- the guard's shortcuts: each still notices every change --------------------------

def times_n(x, n):
    return np.sum(np.sin(x)) * n


def test_an_int_is_the_same_object_or_an_equal_int():
    g = ms.grad(times_n)
    big = int("1000")   # an int object of its own (only -5..256 are shared)
    cold = g(X, big)
    assert _probe(g, (X, 1000)) is not MISS     # another object, the same value
    assert _probe(g, (X, 999 + int("2"))) is MISS
    assert _probe(g, (X, 1000.0)) is MISS       # equal, but a float
    small = ms.grad(times_n)
    small(X, 1)
    assert _probe(small, (X, 1)) is not MISS
    assert _probe(small, (X, True)) is MISS     # True == 1 and True is not 1; a bool
    _same(g(X, big), cold)


def uses_pair(x, pair):
    (a, flag), b = pair
    return np.sum(np.sin(x) * a) * b if flag else np.sum(x) * b


def test_items_of_nested_tuples_are_each_checked():
    g = ms.grad(uses_pair, grad_position=(0, 1))
    args = (X, ((0.5, True), 2.0))
    cold = _cold_then_hits(g, args)
    for other in [((0.5, False), 2.0), ((0.5, 1), 2.0), ((1, True), 2.0), ((0.5, True), 2),
                  ((0.5, True, 1.0), 2.0), [(0.5, True), 2.0], ((0.5, True),)]:
        assert _probe(g, (X, other)) is MISS, other
    assert _probe(g, (X, ((-1.5, True), 3.0))) is not MISS   # new float values: the same code
    _same(g(*args), cold)


class Several(ms.nn.Cell):
    def __init__(self):
        super().__init__()
        self.n = 3
        self.on = True
        self.scale = 0.5
        self.w = ms.Parameter(ms.Tensor(np.array([1.0, 2.0, 3.0, 4.0])), name="w")
        self.bias = np.array([0.1, 0.2, 0.3, 0.4])

    def construct(self, x):
        y = x * self.w + self.bias
        if self.on:
            y = y * self.scale
        return np.sum(y ** self.n)


@pytest.mark.parametrize("change", ["n", "on", "scale", "w", "bias", "del bias"])
def test_a_change_of_any_captured_value_is_seen_by_the_combined_checks(change):
    net = Several()
    g = ms.grad(net)
    x = ms.Tensor(np.array([0.5, 1.2, -0.3, 0.8]))
    _cold_then_hits(g, (x,))
    assert _probe(g, (x,)) is not MISS
    # written past Cell.__setattr__, so that only the guard's checks can notice
    new = {"n": 2, "on": False, "scale": 2.0, "w": ms.Parameter(ms.Tensor(np.ones(4)), name="w2"),
           "bias": np.zeros(3)}
    if change == "del bias":
        object.__delattr__(net, "bias")
        assert _probe(g, (x,)) is MISS
        return
    object.__setattr__(net, change, new[change])
    assert _probe(g, (x,)) is MISS
    if change == "bias":
        return   # a new shape: the general path says the operands do not broadcast
    w = np.asarray(net.w.asnumpy(), np.float64)
    scale = net.scale if net.on else 1.0
    want = central(lambda v: np.sum(((v * w + net.bias) * scale) ** net.n), x.asnumpy())
    np.testing.assert_allclose(g(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


def twice(x):
    y = np.sin(x)
    return np.sum(y), y, y


@pytest.mark.parametrize("x", [X, ms.Tensor(X)], ids=["array", "tensor"])
def test_forward_values_on_a_hit_are_new_tensors_as_on_the_general_path(x):
    g = ms.value_and_grad(twice, has_aux=True)
    cold = _cold_then_hits(g, (x,))
    for got in (cold, g(x)):
        (loss, a, b), _ = got
        if isinstance(x, ms.Tensor):
            assert type(a) is ms.Tensor and type(b) is ms.Tensor and a is not b
        np.testing.assert_allclose(np.asarray(loss.asnumpy() if isinstance(loss, ms.Tensor)
                                              else loss), np.sum(np.sin(X)))
    assert g(x)[0][1] is not g(x)[0][1]
