"""Training end to end: TrainOneStepCell and the 2.x functional loop match a NumPy
training loop written by hand, step by step, and decrease the loss."""
import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn, ops

RNG = np.random.default_rng(2)
X = RNG.normal(size=(16, 3)).astype(np.float32)
Y_REG = (X @ np.array([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
Y_CLS = np.argmax(X, axis=1).astype(np.int32)


def _numpy_linear_mse_steps(w, b, steps, lr):
    """SGD on mean((x w^T + b - y)^2), gradients written out by hand."""
    losses = []
    for _ in range(steps):
        r = X @ w.T + b - Y_REG
        losses.append(np.mean(r ** 2))
        gw = 2 * r.T @ X / r.size
        gb = 2 * r.sum(axis=0) / r.size
        w, b = w - lr * gw, b - lr * gb
    return losses, w, b


def test_train_one_step_cell_matches_numpy():
    net = nn.Dense(3, 1)
    w0, b0 = net.weight.asnumpy().copy(), net.bias.asnumpy().copy()
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))
    train.set_train()
    losses = [float(train(ms.Tensor(X), ms.Tensor(Y_REG))) for _ in range(20)]
    want, w, b = _numpy_linear_mse_steps(w0.astype(np.float64), b0.astype(np.float64), 20, 0.1)
    np.testing.assert_allclose(losses, want, rtol=1e-4)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-4, atol=1e-5)
    assert losses[-1] < 0.05 * losses[0]
    assert [p.name for p in net.trainable_params()] == ["weight", "bias"]


def test_sens_scales_the_gradients():
    net = nn.Dense(3, 1)
    w0, b0 = net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                                nn.SGD(net.trainable_params(), 0.1), sens=0.5)
    train(ms.Tensor(X), ms.Tensor(Y_REG))
    _, w, _ = _numpy_linear_mse_steps(w0, b0, 1, 0.05)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-5)


def _numpy_mlp_ce_steps(params, steps, lr, momentum):
    """Momentum on a Dense-ReLU-Dense network with mean cross entropy, by hand."""
    w1, b1, w2, b2 = params
    v = [np.zeros_like(p) for p in params]
    losses = []
    for _ in range(steps):
        h_pre = X @ w1.T + b1
        h = np.where(h_pre > 0, h_pre, 0)
        z = h @ w2.T + b2
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        n = len(X)
        losses.append(-np.mean(np.log(p[np.arange(n), Y_CLS])))
        dz = (p - np.eye(3)[Y_CLS]) / n
        gw2, gb2 = dz.T @ h, dz.sum(0)
        dh = (dz @ w2) * (h_pre > 0)
        gw1, gb1 = dh.T @ X, dh.sum(0)
        grads = [gw1, gb1, gw2, gb2]
        v = [momentum * vi + g for vi, g in zip(v, grads)]
        w1, b1, w2, b2 = [q - lr * vi for q, vi in zip((w1, b1, w2, b2), v)]
    return losses, [w1, b1, w2, b2]


def test_functional_loop_matches_numpy():
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(3)
    model = nn.SequentialCell(nn.Dense(3, 8, activation="relu"), nn.Dense(8, 3))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.Momentum(model.trainable_params(), learning_rate=0.1, momentum=0.9)
    start = [p.asnumpy().astype(np.float64) for p in optimizer.parameters]

    def forward_fn(data, label):
        logits = model(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    losses = []
    for _ in range(15):
        (loss, logits), grads = grad_fn(ms.Tensor(X), ms.Tensor(Y_CLS))
        optimizer(grads)
        losses.append(float(loss))
    assert logits.shape == (16, 3)
    want, final = _numpy_mlp_ce_steps(start, 15, 0.1, 0.9)
    np.testing.assert_allclose(losses, want, rtol=1e-4)
    for p, q in zip(optimizer.parameters, final):
        np.testing.assert_allclose(p.asnumpy(), q, rtol=1e-3, atol=1e-4)
    assert losses[-1] < 0.6 * losses[0]


def test_with_eval_cell_and_accuracy():
    net = nn.Dense(3, 3)
    loss, out, label = nn.WithEvalCell(net, nn.CrossEntropyLoss())(ms.Tensor(X), ms.Tensor(Y_CLS))
    assert out.shape == (16, 3) and label.shape == (16,)
    acc = float((ops.argmax(out, 1) == ms.Tensor(Y_CLS.astype(np.int64))).astype(ms.float32).mean())
    assert 0.0 <= acc <= 1.0 and float(loss) > 0


def test_training_cells_do_not_rename_parameters():
    net = nn.SequentialCell(nn.Dense(3, 2))
    nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.Adam(net.trainable_params()))
    assert [p.name for p in net.trainable_params()] == ["0.weight", "0.bias"]


def test_bad_training_arguments():
    net = nn.Dense(3, 1)
    with pytest.raises(TypeError):
        nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), object())
    with pytest.raises(TypeError):
        nn.WithLossCell(lambda x: x, nn.MSELoss())
    with pytest.raises(ValueError):
        ms.set_context(mode=3)


# ---------------------------------------------------------------- the ops training code uses
def test_ops_namespace_has_only_public_names():
    import types
    assert not [n for n in dir(ops) if isinstance(getattr(ops, n), types.ModuleType)]
    assert ops.shape(ms.Tensor(np.ones((2, 3), np.float32))) == (2, 3)


def test_creation_and_cast_ops():
    x = ms.Tensor(np.array([[1.5, -2.0]], np.float32))
    assert ops.cast(x, ms.int32).dtype == ms.int32
    assert ops.ones((2, 3)).dtype == ms.float32 and ops.zeros(4, ms.int32).shape == (4,)
    np.testing.assert_array_equal(ops.fill(ms.float32, (2,), 3.0).asnumpy(), [3.0, 3.0])
    np.testing.assert_array_equal(ops.ones_like(x).asnumpy(), [[1, 1]])
    np.testing.assert_array_equal(ops.zeros_like(x).asnumpy(), [[0, 0]])
    assert ops.argmax(x, 1).dtype == ms.int64 and int(ops.argmax(x, 1)[0]) == 0


def test_ops_compiled_gradients():
    def f(x):
        n = ops.shape(x)[0]
        y = ops.cast(x, ms.float64) * ops.ones_like(x) + ops.zeros_like(x)
        return np.sum(y * y) / n
    x = ms.Tensor(np.array([[1.0, 2.0], [3.0, -1.0]], np.float32))
    g = ms.grad(f)(x)
    assert g.dtype == ms.float32
    np.testing.assert_allclose(g.asnumpy(), x.asnumpy(), rtol=1e-6)   # d/dx sum(x^2)/2 = x


def test_assign_writes_a_parameter_eagerly_and_in_compiled_code():
    p = ms.Parameter(np.zeros(2, np.float32), name="p")
    ops.assign(p, ms.Tensor(np.array([1.0, 2.0], np.float32)))
    np.testing.assert_array_equal(p.asnumpy(), [1.0, 2.0])
    with pytest.raises(TypeError):
        ops.assign(ms.Tensor([1.0]), 2.0)

    def f(x):
        ops.assign(p, x)
        return np.sum(x)
    ms.grad(f)(np.array([3.0, 4.0], np.float32))
    np.testing.assert_array_equal(p.asnumpy(), [3.0, 4.0])   # written after the call
