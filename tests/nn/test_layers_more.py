"""Normalisation, embedding, dropout and activation layers, initializers, CellDict.

Values are checked against NumPy formulas written here, gradients (inputs and
Parameters) against float64 central differences of the eager forward pass.
"""
import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn, ops
from ad_compiler.common import initializer as init
from ad_compiler.errors import UnsupportedOperationError
from ad_compiler.tensor import Tensor
from tests.finite_differences import central

RNG = np.random.default_rng(11)


class Weighted(nn.Cell):
    """``sum(net(x) * r)``: a scalar whose gradient is the VJP of ``net`` with ``r``."""

    def __init__(self, net, r):
        super().__init__()
        self.net = net
        self.r = r

    def construct(self, x):
        return np.sum(self.net(x) * self.r)


def _check_grads(net, x, atol=1e-6):
    """Compiled gradients w.r.t. x and every trainable Parameter vs central differences."""
    out = np.asarray(net(x)) if not isinstance(net(x), Tensor) else net(x).asnumpy()
    loss = Weighted(net, RNG.standard_normal(out.shape))
    params = loss.trainable_params()
    _, gparams = ms.grad(loss, 0, params)(x)
    ms.check_grad(loss, (x,), atol=atol, rtol=1e-5)  # (np.allclose's rtol)
    for p, g in zip(params, gparams):
        data = p.asnumpy().copy()

        def at(v):
            p.set_data(v)
            return float(np.asarray(loss(x)))
        assert np.allclose(np.asarray(g), central(at, data), atol=atol), p.name
        p.set_data(data)


def _f64(cell):
    for p in cell.get_parameters():
        p._data = p._data.astype(np.float64)  # float64 Parameters for the difference check
    return cell


# ------------------------------------------------------------------ activations
ACTIVATIONS = [
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.LeakyReLU(), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.LeakyReLU(0.05), lambda x: np.where(x > 0, x, 0.05 * x)),
    (nn.ELU(), lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.GELU(False), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.LogSoftmax(), lambda x: x - np.log(np.sum(np.exp(x), -1, keepdims=True))),
    (nn.Identity(), lambda x: x),
]


@pytest.mark.parametrize("cell,ref", ACTIVATIONS, ids=lambda c: type(c).__name__)
def test_activation_values_and_gradients(cell, ref):
    x = RNG.uniform(-8, 8, (3, 4)) + 0.01  # away from the kinks at 0 and 6
    assert np.allclose(cell(x), ref(x))
    _check_grads(cell, x)


@pytest.mark.parametrize("cell,ref", ACTIVATIONS, ids=lambda c: type(c).__name__)
def test_activation_float32_stays_float32(cell, ref):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    g = ms.grad(Weighted(cell, np.ones((2, 3), np.float32)))(x)
    assert g.dtype == np.float32 and cell(x).dtype == np.float32


def test_activation_derivatives_at_the_kinks():
    x = np.array([0.0, 6.0, 0.0])
    g = ms.grad(lambda v: np.sum(ops.relu6(v)))(x)
    assert g.tolist() == [0.0, 0.0, 0.0]
    assert ms.grad(lambda v: np.sum(ops.leaky_relu(v, 0.2)))(x).tolist() == [0.2, 1.0, 0.2]
    assert ms.grad(lambda v: np.sum(ops.elu(v, 1.5)))(x).tolist() == [1.5, 1.0, 1.5]


def test_elu_gradient_finite_for_large_inputs():
    g = ms.grad(lambda v: np.sum(ops.elu(v)))(np.array([800.0, -800.0]))
    assert g.tolist() == [1.0, 0.0]


def test_activation_defaults_and_get_activation():
    assert nn.LeakyReLU().alpha == 0.2 and nn.ELU().alpha == 1.0 and nn.GELU().approximate
    assert isinstance(nn.get_activation("gelu"), nn.GELU)
    assert isinstance(nn.get_activation("relu6"), nn.ReLU6)


def test_exact_gelu_and_erf():
    x = RNG.uniform(-4, 4, (2, 5))
    erf = np.vectorize(math.erf)
    exact = nn.GELU(approximate=False)
    assert np.allclose(exact(x), 0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-14)
    assert np.allclose(ops.gelu(x), exact(x))            # ops.gelu's default is 'none'
    _check_grads(exact, x)
    g = ms.grad(lambda v: np.sum(ops.erf(v)))(x)
    assert np.allclose(g, 2 / math.sqrt(math.pi) * np.exp(-x * x))
    g32 = ms.grad(lambda v: np.sum(ops.erf(v)))(x.astype(np.float32))
    assert g32.dtype == np.float32
    with pytest.raises(ValueError):
        ops.gelu(x, "fast")


# ------------------------------------------------------------------ BatchNorm
def _bn_ref(x, gamma, beta, eps=1e-5):
    axis = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axis, keepdims=True), x.var(axis, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)


def test_batchnorm2d_parameters_and_defaults():
    bn = nn.BatchNorm2d(3)
    assert [(p.name, p.shape, p.requires_grad) for p in bn.get_parameters()] == [
        ("mean", (3,), False), ("variance", (3,), False), ("gamma", (3,), True),
        ("beta", (3,), True)]
    assert (bn.eps, bn.momentum, bn.training) == (1e-5, 0.9, False)
    assert bn.moving_variance.asnumpy().tolist() == [1, 1, 1]
    assert bn.gamma.dtype == ms.float32

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm2d(2)
    assert [p.name for p in Net().get_parameters()] == [
        "bn.moving_mean", "bn.moving_variance", "bn.gamma", "bn.beta"]


def test_batchnorm2d_train_mode_value_and_gradients():
    bn = _f64(nn.BatchNorm2d(3, gamma_init=init.Normal(1.0), beta_init="normal")).set_train()
    x = RNG.standard_normal((4, 3, 2, 3))
    assert np.allclose(bn(x).asnumpy(), _bn_ref(x, bn.gamma.asnumpy(), bn.beta.asnumpy()))
    _check_grads(bn, x)


def test_batchnorm2d_eval_mode_uses_moving_statistics():
    bn = _f64(nn.BatchNorm2d(2))
    bn.moving_mean.set_data(np.array([1.0, -2.0]))
    bn.moving_variance.set_data(np.array([4.0, 0.25]))
    x = RNG.standard_normal((3, 2, 2, 2))
    expected = (x - np.array([1.0, -2.0]).reshape(1, 2, 1, 1)) / np.sqrt(
        np.array([4.0, 0.25]).reshape(1, 2, 1, 1) + 1e-5)
    assert np.allclose(bn(x).asnumpy(), expected)
    _check_grads(bn, x)
    assert bn.moving_mean.asnumpy().tolist() == [1.0, -2.0]  # eval: no update


def test_batchnorm_moving_statistics_after_several_steps():
    bn = _f64(nn.BatchNorm1d(3, momentum=0.8)).set_train()
    mean, var = np.zeros(3), np.ones(3)
    for _ in range(4):
        x = RNG.standard_normal((5, 3)) * 2 + 1
        bn(x)
        mean = 0.8 * mean + 0.2 * x.mean(0)
        var = 0.8 * var + 0.2 * x.var(0, ddof=1)   # unbiased for the moving variance
    assert np.allclose(bn.moving_mean.asnumpy(), mean)
    assert np.allclose(bn.moving_variance.asnumpy(), var)


class BNNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 4)
        self.bn = nn.BatchNorm1d(4, momentum=0.7)

    def construct(self, x):
        return np.sum(np.tanh(self.bn(self.fc(x))))


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "GradOperation"])
def test_compiled_gradient_updates_moving_statistics_once_per_call(transform):
    net = BNNet().set_train()
    params = net.trainable_params()
    fn = {"grad": lambda: ms.grad(net, None, params),
          "value_and_grad": lambda: ms.value_and_grad(net, 0, params),
          "GradOperation": lambda: ms.ops.GradOperation(get_by_list=True)(net, params)}[transform]()
    mean, var = np.zeros(4), np.ones(4)
    for _ in range(3):
        x = RNG.standard_normal((6, 3)).astype(np.float32)
        h = x @ net.fc.weight.asnumpy().T + net.fc.bias.asnumpy()
        fn(x)
        mean = 0.7 * mean + 0.3 * h.mean(0)
        var = 0.7 * var + 0.3 * h.var(0, ddof=1)
    assert net.bn.moving_mean.dtype == ms.float32
    assert np.allclose(net.bn.moving_mean.asnumpy(), mean, atol=1e-5)
    assert np.allclose(net.bn.moving_variance.asnumpy(), var, atol=1e-5)


def test_compiled_gradient_in_eval_mode_leaves_moving_statistics():
    net = BNNet()
    ms.grad(net)(RNG.standard_normal((6, 3)))
    assert net.bn.moving_mean.asnumpy().tolist() == [0, 0, 0, 0]


def test_batchnorm_update_inside_a_data_dependent_branch_is_refused():
    class Branchy(nn.Cell):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(2)

        def construct(self, x):
            if np.sum(x) > 0:
                return np.sum(self.bn(x))
            return np.sum(x)
    net = Branchy().set_train()
    with pytest.raises(UnsupportedOperationError, match="loop or a data-dependent branch"):
        ms.grad(net)(np.ones((3, 2)))


def test_batchnorm1d_3d_input_and_float32():
    bn = nn.BatchNorm1d(2).set_train()
    x = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    out = bn(x)
    assert out.dtype == ms.float32
    assert np.allclose(out.asnumpy(), _bn_ref(x, np.ones(2), np.zeros(2)), atol=1e-5)
    gx, gp = ms.grad(Weighted(bn, np.ones((4, 2, 3), np.float32)), 0, bn.trainable_params())(x)
    assert gx.dtype == np.float32 and all(g.dtype == ms.float32 for g in gp)


def test_batchnorm_use_batch_statistics_forced():
    bn = _f64(nn.BatchNorm1d(2, use_batch_statistics=True))   # eval mode, batch statistics
    x = RNG.standard_normal((6, 2))
    assert np.allclose(bn(x).asnumpy(), _bn_ref(x, np.ones(2), np.zeros(2)))


@pytest.mark.parametrize("shape", [(4, 3), (2, 5, 2, 2), (2, 3, 4)])
def test_batchnorm2d_wrong_input_is_a_value_error(shape):
    with pytest.raises(ValueError, match="BatchNorm2d"):
        nn.BatchNorm2d(3)(np.ones(shape))


def test_batchnorm_bad_arguments():
    with pytest.raises(ValueError):
        nn.BatchNorm2d(0)
    with pytest.raises(ValueError):
        nn.BatchNorm2d(2, momentum=1.5)


def test_ops_batch_norm_updates_running_statistics_eagerly():
    mean = ms.Parameter(np.zeros(2), name="m", requires_grad=False)
    var = ms.Parameter(np.ones(2), name="v", requires_grad=False)
    x = RNG.standard_normal((5, 2))
    out = ops.batch_norm(x, mean, var, np.ones(2), np.zeros(2), True, 0.1)
    assert np.allclose(out, _bn_ref(x, np.ones(2), np.zeros(2)))
    assert np.allclose(mean.asnumpy(), 0.1 * x.mean(0))
    assert np.allclose(var.asnumpy(), 0.9 + 0.1 * x.var(0, ddof=1))


# ------------------------------------------------------------------ LayerNorm, GroupNorm
def test_layernorm_defaults_value_and_gradients():
    ln = _f64(nn.LayerNorm((4,), gamma_init="normal", beta_init="uniform"))
    assert ln.epsilon == 1e-7 and [p.name for p in ln.trainable_params()] == ["gamma", "beta"]
    x = RNG.standard_normal((3, 4))
    g, b = ln.gamma.asnumpy(), ln.beta.asnumpy()
    m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    assert np.allclose(ln(x).asnumpy(), (x - m) / np.sqrt(v + 1e-7) * g + b)
    _check_grads(ln, x)


def test_layernorm_begin_axes():
    ln = _f64(nn.LayerNorm((3, 4), begin_norm_axis=1, begin_params_axis=1,
                           gamma_init=init.Uniform(1.0)))
    x = RNG.standard_normal((2, 3, 4))
    m, v = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    assert np.allclose(ln(x).asnumpy(), (x - m) / np.sqrt(v + 1e-7) * ln.gamma.asnumpy())
    _check_grads(ln, x)


def test_layernorm_errors():
    with pytest.raises(TypeError):
        nn.LayerNorm(4)
    with pytest.raises(ValueError):
        nn.LayerNorm((4,), begin_norm_axis=5)(np.ones((2, 4)))


def test_groupnorm_value_and_gradients():
    gn = _f64(nn.GroupNorm(2, 4, gamma_init="normal", beta_init="normal"))
    x = RNG.standard_normal((2, 4, 3))
    grouped = x.reshape(2, 2, -1)
    y = ((grouped - grouped.mean(-1, keepdims=True))
         / np.sqrt(grouped.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    expected = y * gn.gamma.asnumpy().reshape(1, 4, 1) + gn.beta.asnumpy().reshape(1, 4, 1)
    assert np.allclose(gn(x).asnumpy(), expected)
    _check_grads(gn, x)
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


# ------------------------------------------------------------------ Embedding
def test_embedding_lookup_and_scatter_add_gradient():
    emb = _f64(nn.Embedding(5, 3, padding_idx=1))
    assert emb.embedding_table.name == "embedding_table" and emb.embedding_table.shape == (5, 3)
    assert emb.embedding_table.asnumpy()[1].tolist() == [0, 0, 0]
    ids = np.array([[0, 1], [3, 0]], np.int32)
    table = emb.embedding_table.asnumpy()
    assert np.allclose(emb(ids).asnumpy(), table[ids])
    r = RNG.standard_normal((2, 2, 3))
    _, (g,) = ms.grad(Weighted(emb, r), 0, emb.trainable_params())(ids)
    expected = np.zeros((5, 3))
    expected[0] = r[0, 0] + r[1, 1]
    expected[3] = r[1, 0]             # row 1 (padding) gets nothing
    assert np.allclose(np.asarray(g), expected)


def test_embedding_argument_errors():
    with pytest.raises(TypeError):
        nn.Embedding(3.0, 2)
    with pytest.raises(ValueError):
        nn.Embedding(0, 2)
    with pytest.raises(ValueError):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_float_ids_are_a_type_error():
    with pytest.raises(TypeError):
        nn.Embedding(3, 2)(np.array([0.0, 1.0]))


# ------------------------------------------------------------------ Dropout
def test_dropout_eval_is_identity_and_train_scales_a_mask():
    drop = nn.Dropout(keep_prob=0.75)
    x = np.ones((200, 50))
    assert drop(x) is x and drop.p == pytest.approx(0.25)
    drop.set_train()
    np.random.seed(3)
    out = np.asarray(drop(x))
    assert set(np.unique(out).tolist()) == {0.0, 1 / 0.75}
    assert abs((out != 0).mean() - 0.75) < 0.02
    assert not np.array_equal(out, np.asarray(drop(x)))   # a new mask each call
    assert nn.Dropout(p=0.1).keep_prob == pytest.approx(0.9)


class DropNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(p=0.4)
        self.fc = nn.Dense(3, 2)

    def construct(self, x):
        return np.sum(self.fc(self.drop(x)) ** 2)


def test_dropout_in_train_mode_inside_a_gradient_draws_a_mask_per_call():
    net = _f64(DropNet()).set_train()
    x = RNG.standard_normal((50, 3))
    np.random.seed(5)
    eager = float(np.asarray(net(x)))
    mask = (np.random.RandomState(5).random_sample((50, 3)) < 0.6) / 0.6
    np.random.seed(5)
    value, (gx, (gw, gb)) = ms.value_and_grad(net, 0, net.trainable_params())(x)
    assert float(np.asarray(value)) == pytest.approx(eager)   # the same draws as eagerly
    w, b = net.fc.weight.asnumpy(), net.fc.bias.asnumpy()
    dout = 2 * ((x * mask) @ w.T + b)
    assert np.allclose(gx, dout @ w * mask)                    # through the mask
    assert np.allclose(np.asarray(gw), dout.T @ (x * mask))
    g1, g2 = ms.grad(net)(x), ms.grad(net)(x)
    assert not np.array_equal(g1, g2)                         # a new mask each call


def test_dropout_gradient_float32_and_second_order():
    f = ms.grad(lambda v: np.sum(ops.dropout(v, 0.5) ** 3))
    g = f(np.ones(40, np.float32))
    assert g.dtype == np.float32 and set(np.unique(g).tolist()) <= {0.0, 24.0}
    gg = ms.grad(f)(np.ones(40))
    assert set(np.unique(gg).tolist()) <= {0.0, 48.0} and gg.any()


def test_dropout_in_train_mode_under_jvp_is_refused_with_a_location():
    net = DropNet().set_train()
    x = np.ones((2, 3), np.float32)
    with pytest.raises(UnsupportedOperationError, match="random"):
        ms.jvp(net, (x,), (x,))


def test_dropout_in_eval_mode_inside_a_gradient_is_the_identity():
    assert ms.grad(Weighted(nn.Dropout(), np.arange(3.0)))(np.ones(3)).tolist() == [0, 1, 2]


@pytest.mark.parametrize("kwargs", [{"keep_prob": 0.0}, {"keep_prob": 1.5}, {"p": 1.0}])
def test_dropout_bad_probability(kwargs):
    with pytest.raises(ValueError):
        nn.Dropout(**kwargs)


# ------------------------------------------------------------------ initializers
@pytest.mark.parametrize("maker,check", [
    (init.Zero(), lambda a: np.all(a == 0)),
    (init.One(), lambda a: np.all(a == 1)),
    (init.Constant(2.5), lambda a: np.all(a == 2.5)),
    (init.Uniform(), lambda a: np.abs(a).max() <= 0.07),
    (init.Normal(), lambda a: abs(a.std() - 0.01) < 0.002),
    (init.TruncatedNormal(1.0, a=-0.5, b=0.5), lambda a: np.abs(a).max() <= 0.5),
    (init.XavierUniform(), lambda a: np.abs(a).max() <= math.sqrt(6 / (30 + 20))),
    (init.HeUniform(), lambda a: np.abs(a).max() <= math.sqrt(6 / 30)),
    (init.HeUniform(math.sqrt(5)), lambda a: np.abs(a).max() <= 1 / math.sqrt(30)),
    (init.HeNormal(), lambda a: abs(a.std() - math.sqrt(2 / 30)) < 0.03),
])
def test_initializers(maker, check):
    np.random.seed(0)
    t = init.initializer(maker, (20, 30), ms.float32)
    assert t.shape == (20, 30) and t.dtype == ms.float32 and check(t.asnumpy())


def test_initializer_names_and_layers():
    assert init.initializer("ones", [2]).asnumpy().tolist() == [1, 1]
    assert init.initializer("zeros", (2,), ms.float64).dtype == ms.float64
    fc = nn.Dense(4, 2, weight_init=init.Constant(0.5), bias_init="zeros")
    assert fc.weight.asnumpy().tolist() == [[0.5] * 4] * 2
    assert isinstance(ms.common.initializer.XavierUniform(), init.Initializer)
    with pytest.raises(ValueError, match="unknown initializer"):
        init.initializer("bogus", (2,))
    with pytest.raises(ValueError, match="shape"):
        nn.Dense(4, 2, weight_init=np.ones((4, 2)))


# ------------------------------------------------------------------ CellDict
def test_celldict():
    cd = nn.CellDict({"a": nn.Dense(2, 2), "b": nn.ReLU()})
    assert list(cd.keys()) == ["a", "b"] and len(cd) == 2 and "a" in cd
    assert [p.name for p in cd.trainable_params()] == ["a.weight", "a.bias"]
    assert isinstance(cd.pop("b"), nn.ReLU) and list(cd) == ["a"]
    with pytest.raises(TypeError):
        cd["c"] = 3


def test_celldict_cells_inside_a_compiled_construct():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellDict({"fc": nn.Dense(3, 2, weight_init="ones"), "act": nn.SiLU()})

        def construct(self, x):
            return np.sum(self.layers["act"](self.layers["fc"](x)))
    net = Net()
    x = RNG.standard_normal((2, 3))
    ms.check_grad(net, (x,), atol=1e-4, rtol=1e-5)
