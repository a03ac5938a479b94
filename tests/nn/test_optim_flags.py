"""Adam's flags (use_amsgrad, use_nesterov, use_lazy/use_offload, use_locking) and the
RMSProp / Adam checks MindSpore 2.x makes: trajectories against the formulas over
several steps, written out here in float64."""
import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn

# a large gradient first, then small ones: v decreases, so AMSGrad's max(vhat, v) matters
GRADS = [np.array([3.0, -2.0, 0.5]), np.array([0.1, 0.2, -0.1]), np.array([-0.3, 0.05, 0.2]),
         np.array([0.2, -0.1, 0.1]), np.array([0.01, 0.3, -0.2])]


def _trajectory(opt, w):
    out = []
    for g in GRADS:
        opt((ms.Tensor(g.astype(np.float32)),))
        out.append(w.asnumpy().copy())
    return out


def _adam_reference(p, lr, b1, b2, eps, amsgrad=False, nesterov=False):
    m = v = vhat = np.zeros_like(p)
    out = []
    for t, g in enumerate(GRADS, start=1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        if amsgrad:
            vhat = np.maximum(vhat, v)
            p = p - lr_t * m / (np.sqrt(vhat) + eps)
        else:
            num = b1 * m + (1 - b1) * g if nesterov else m
            p = p - lr_t * num / (np.sqrt(v) + eps)
        out.append(p)
    return out


@pytest.mark.parametrize("flags", [{"use_amsgrad": True}, {"use_nesterov": True}, {},
                                   {"use_amsgrad": True, "use_nesterov": True}])
def test_adam_trajectories(flags):
    start = np.array([0.5, -1.0, 2.0])
    w = ms.Parameter(start.astype(np.float32), name="w")
    opt = nn.Adam([w], learning_rate=0.1, beta1=0.8, beta2=0.9, eps=1e-3, **flags)
    got = _trajectory(opt, w)
    # ApplyAdamWithAmsgrad has no Nesterov variant: with use_amsgrad, use_nesterov is unused
    nesterov = flags.get("use_nesterov", False) and not flags.get("use_amsgrad", False)
    want = _adam_reference(start, 0.1, 0.8, 0.9, 1e-3, flags.get("use_amsgrad", False), nesterov)
    for a, b in zip(got, want):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_amsgrad_differs_from_adam_once_v_decreases():
    """The trajectories above would agree if the max never mattered: make sure it does."""
    a = _adam_reference(np.zeros(3), 0.1, 0.8, 0.9, 1e-3, amsgrad=True)
    b = _adam_reference(np.zeros(3), 0.1, 0.8, 0.9, 1e-3)
    assert np.abs(a[-1] - b[-1]).max() > 1e-3


def test_amsgrad_state_vhat():
    w = ms.Parameter(np.zeros(3, np.float32), name="w")
    opt = nn.Adam([w], learning_rate=0.1, beta2=0.9, use_amsgrad=True)
    _trajectory(opt, w)
    v = np.zeros(3)
    vmax = np.zeros(3)
    for g in GRADS:
        v = 0.9 * v + 0.1 * g * g
        vmax = np.maximum(vmax, v)
    assert [p.name for p in opt.vhat] == ["vhat.w"]
    np.testing.assert_allclose(opt.vhat[0].asnumpy(), vmax, rtol=1e-5)
    np.testing.assert_allclose(opt.moment2[0].asnumpy(), v, rtol=1e-5)
    with pytest.raises(AttributeError, match="vhat"):
        nn.Adam([w]).vhat


def test_lazy_and_offload_are_dense_adam():
    start = np.array([0.5, -1.0, 2.0])
    for kw in ({"use_lazy": True}, {"use_offload": True}):
        w = ms.Parameter(start.astype(np.float32), name="w")
        got = _trajectory(nn.Adam([w], learning_rate=0.1, **kw), w)
        np.testing.assert_allclose(got[-1], _adam_reference(start, 0.1, 0.9, 0.999, 1e-8)[-1],
                                   rtol=1e-5)


@pytest.mark.parametrize("kw, exc", [
    ({"use_amsgrad": 1}, TypeError), ({"use_nesterov": "yes"}, TypeError),
    ({"use_locking": None}, TypeError), ({"beta1": 0.0}, ValueError), ({"beta2": 1.0}, ValueError),
    ({"beta1": "0.9"}, TypeError), ({"use_lazy": True, "use_offload": True}, ValueError),
    ({"use_amsgrad": True, "use_lazy": True}, ValueError), ({"use_fancy": True}, TypeError),
])
def test_adam_argument_errors(kw, exc):
    w = ms.Parameter(np.zeros(3, np.float32), name="w")
    with pytest.raises(exc, match="Adam"):
        nn.Adam([w], **kw)


def test_rmsprop_mean_square_starts_at_one():
    """MindSpore's RMSProp clones its mean-square accumulator with init='ones'."""
    w = ms.Parameter(np.zeros(3, np.float32), name="w")
    opt = nn.RMSProp([w], learning_rate=0.1, decay=0.5)
    g = GRADS[0]
    opt((ms.Tensor(g.astype(np.float32)),))
    s = 0.5 * 1.0 + 0.5 * g * g
    np.testing.assert_allclose(w.asnumpy(), -0.1 * g / np.sqrt(s + 1e-10), rtol=1e-6)


class _HalvingDecay(nn.Cell):
    """A dynamic weight decay: 0.1 * 0.5**step."""

    def construct(self, global_step):
        return ms.Tensor(np.float32(0.1 * 0.5 ** float(np.asarray(global_step))))


def test_dynamic_weight_decay_cell():
    start = np.array([0.5, -1.0, 2.0])
    w = ms.Parameter(start.astype(np.float32), name="fc.weight")
    g_ = ms.Parameter(np.ones(3, np.float32), name="bn.gamma")      # not decayed, as MindSpore
    opt = nn.SGD([w, g_], learning_rate=0.1, weight_decay=_HalvingDecay())
    p, q = start.copy(), np.ones(3)
    for t, g in enumerate(GRADS):
        opt((ms.Tensor(g.astype(np.float32)), ms.Tensor(g.astype(np.float32))))
        p = p - 0.1 * (g + 0.1 * 0.5 ** t * p)
        q = q - 0.1 * g
        np.testing.assert_allclose(w.asnumpy(), p, rtol=1e-5)
        np.testing.assert_allclose(g_.asnumpy(), q, rtol=1e-5)


def test_grad_centralization_of_a_conv_group():
    rng = np.random.default_rng(0)
    w0 = rng.normal(size=(2, 16, 3, 3))
    conv_w = ms.Parameter(w0.astype(np.float32), name="conv1.weight")
    small = ms.Parameter(rng.normal(size=(2, 3, 3, 3)).astype(np.float32), name="conv2.weight")
    fc = ms.Parameter(rng.normal(size=(4, 16)).astype(np.float32), name="fc.weight")
    opt = nn.Momentum([{"params": [conv_w, small], "grad_centralization": True,
                        "weight_decay": 0.01}, {"params": [fc]}], 0.1, 0.9)
    grads = [rng.normal(size=p.shape) for p in (conv_w, small, fc)]
    small0, fc0 = small.asnumpy().copy(), fc.asnumpy().copy()
    opt(tuple(ms.Tensor(g.astype(np.float32)) for g in grads))
    g = grads[0] + 0.01 * w0
    g = g - g.mean(axis=(1, 2, 3), keepdims=True)     # axis 1 has 16 channels: centralized
    np.testing.assert_allclose(conv_w.asnumpy(), w0 - 0.1 * g, rtol=1e-5, atol=1e-6)
    # 3 input channels (not a multiple of 16): MindSpore leaves the gradient alone
    np.testing.assert_allclose(small.asnumpy(), small0 - 0.1 * (grads[1] + 0.01 * small0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fc.asnumpy(), fc0 - 0.1 * grads[2], rtol=1e-5, atol=1e-6)


def test_grad_centralization_errors():
    fc = ms.Parameter(np.zeros((2, 16), np.float32), name="fc.weight")
    with pytest.raises(ValueError, match="convolution layers only"):
        nn.SGD([{"params": [fc], "grad_centralization": True}])
    with pytest.raises(TypeError, match="grad_centralization must be a bool"):
        nn.SGD([{"params": [fc], "grad_centralization": 1}])
