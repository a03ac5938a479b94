"""Optimizer trajectories over several steps against MindSpore's update formulas,
written out here in NumPy; groups, weight-decay rules, learning-rate forms, errors."""
import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn

RNG = np.random.default_rng(1)
STEPS = 4


def _params():
    w = ms.Parameter(RNG.normal(size=(3, 2)).astype(np.float32), name="fc.weight")
    b = ms.Parameter(RNG.normal(size=(2,)).astype(np.float32), name="bn.gamma")
    return [w, b]


GRADS = [[RNG.normal(size=(3, 2)).astype(np.float32), RNG.normal(size=(2,)).astype(np.float32)]
         for _ in range(STEPS)]


def _run(opt, params):
    out = []
    for g in GRADS:
        assert opt(tuple(ms.Tensor(a) for a in g)) is not None
        out.append([p.asnumpy().copy() for p in params])
    return out


def _reference(params, update, decays=(0.0, 0.0)):
    """``update(p, g, t, state)`` applied in float64 (t counts from 0)."""
    ps = [p.asnumpy().astype(np.float64) for p in params]
    states = [{} for _ in ps]
    out = []
    for t, gs in enumerate(GRADS):
        for i, (g, wd) in enumerate(zip(gs, decays)):
            ps[i] = update(ps[i], g + wd * ps[i], t, states[i])
        out.append([p.copy() for p in ps])
    return out


def _compare(got, want):
    for a_step, b_step in zip(got, want):
        for a, b in zip(a_step, b_step):
            assert a.dtype == np.float32
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


def _sgd(lr, m=0.0, damp=0.0, nesterov=False):
    def update(p, g, t, s):
        if m == 0:
            return p - lr * g
        s["v"] = g if t == 0 else m * s["v"] + (1 - damp) * g
        return p - lr * (g + m * s["v"] if nesterov else s["v"])
    return update


@pytest.mark.parametrize("kw", [{}, {"momentum": 0.9}, {"momentum": 0.9, "dampening": 0.3},
                                {"momentum": 0.8, "nesterov": True}])
def test_sgd(kw):
    params = _params()
    want = _reference(params, _sgd(0.1, kw.get("momentum", 0.0), kw.get("dampening", 0.0),
                                   kw.get("nesterov", False)))
    _compare(_run(nn.SGD(params, **kw), params), want)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum(nesterov):
    def update(p, g, t, s):
        s["v"] = 0.9 * s.get("v", 0.0) + g
        return p - 0.05 * (g + 0.9 * s["v"] if nesterov else s["v"])
    params = _params()
    want = _reference(params, update)
    _compare(_run(nn.Momentum(params, 0.05, 0.9, use_nesterov=nesterov), params), want)


def _adam_moments(g, s, b1=0.9, b2=0.999):
    s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g * g
    return s["m"], s["v"]


def test_adam_bias_correction_outside_eps():
    def update(p, g, t, s):
        m, v = _adam_moments(g, s)
        lr_t = 0.01 * math.sqrt(1 - 0.999 ** (t + 1)) / (1 - 0.9 ** (t + 1))
        return p - lr_t * m / (np.sqrt(v) + 1e-8)
    params = _params()
    want = _reference(params, update)
    _compare(_run(nn.Adam(params, learning_rate=0.01), params), want)


def test_adam_weight_decay_skips_gamma_and_beta():
    params = _params()
    want = _reference(params, lambda p, g, t, s: p - 0.01 * math.sqrt(1 - 0.999 ** (t + 1))
                      / (1 - 0.9 ** (t + 1)) * _adam_moments(g, s)[0]
                      / (np.sqrt(s["v"]) + 1e-8), decays=(0.1, 0.0))
    _compare(_run(nn.Adam(params, learning_rate=0.01, weight_decay=0.1), params), want)


def test_adam_weight_decay_optimizer_has_no_bias_correction():
    def make(wd):
        def update(p, g, t, s):
            m, v = _adam_moments(g, s)
            return p - 0.01 * (m / (np.sqrt(v) + 1e-6) + wd * p)
        return update
    params = _params()
    w_want = _reference(params, make(0.05))
    b_want = _reference(params, make(0.0))   # the 'gamma' Parameter is not decayed
    got = _run(nn.AdamWeightDecay(params, learning_rate=0.01, weight_decay=0.05), params)
    _compare([[s[0]] for s in got], [[s[0]] for s in w_want])
    _compare([[s[1]] for s in got], [[s[1]] for s in b_want])


def test_adagrad():
    def update(p, g, t, s):
        s["a"] = s.get("a", 0.1) + g * g
        return p - 0.01 * g / np.sqrt(s["a"])
    params = _params()
    want = _reference(params, update)
    _compare(_run(nn.Adagrad(params, learning_rate=0.01), params), want)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop(centered):
    def update(p, g, t, s):
        s["ms"] = 0.9 * s.get("ms", 1.0) + 0.1 * g * g
        s["mg"] = 0.9 * s.get("mg", 0.0) + 0.1 * g
        denom = s["ms"] + 1e-10 - (s["mg"] ** 2 if centered else 0.0)
        s["mom"] = 0.5 * s.get("mom", 0.0) + 0.01 * g / np.sqrt(denom)
        return p - s["mom"]
    params = _params()
    want = _reference(params, update)
    _compare(_run(nn.RMSProp(params, learning_rate=0.01, momentum=0.5, centered=centered),
                  params), want)


# ---------------------------------------------------------------- learning rates
def test_learning_rate_list_per_step_and_past_the_end():
    rates = [0.1, 0.05, 0.02, 0.01]
    params = _params()
    want = _reference(params, lambda p, g, t, s: p - rates[t] * g)
    opt = nn.SGD(params, learning_rate=ms.Tensor(np.array(rates, np.float32)))
    _compare(_run(opt, params), want)
    with pytest.raises(RuntimeError, match="learning-rate list"):
        opt(tuple(ms.Tensor(g) for g in GRADS[0]))


@pytest.mark.parametrize("schedule, formula", [
    (nn.ExponentialDecayLR(0.1, 0.5, 2), lambda t: 0.1 * 0.5 ** (t / 2)),
    (nn.ExponentialDecayLR(0.1, 0.5, 2, is_stair=True), lambda t: 0.1 * 0.5 ** (t // 2)),
    (nn.PolynomialDecayLR(0.1, 0.01, 3, 2.0), lambda t: 0.09 * (1 - min(t, 3) / 3) ** 2 + 0.01),
    (nn.CosineDecayLR(0.01, 0.1, 3),
     lambda t: 0.01 + 0.045 * (1 + math.cos(math.pi * min(t, 3) / 3))),
    (nn.WarmUpLR(0.1, 2), lambda t: 0.1 * min(t, 2) / 2),
])
def test_schedules(schedule, formula):
    for t in range(6):
        assert abs(float(schedule(ms.Tensor(np.int32(t)))) - formula(t)) < 1e-7
    params = _params()
    want = _reference(params, lambda p, g, t, s: p - np.float32(formula(t)) * g)
    _compare(_run(nn.SGD(params, learning_rate=schedule), params), want)


# ---------------------------------------------------------------- groups and errors
def test_groups_lr_weight_decay_and_order():
    w, b = _params()
    groups = [{"params": [w], "weight_decay": 0.1, "lr": 0.2}, {"params": [b]},
              {"order_params": [b, w]}]
    opt = nn.SGD(groups, learning_rate=0.05, weight_decay=0.01)
    assert [p.name for p in opt.parameters] == ["bn.gamma", "fc.weight"]
    w0, b0 = w.asnumpy().astype(np.float64), b.asnumpy().astype(np.float64)
    gw, gb = GRADS[0]
    opt((ms.Tensor(gb), ms.Tensor(gw)))
    # in a group the decay applies even to 'gamma'
    np.testing.assert_allclose(w.asnumpy(), w0 - 0.2 * (gw + 0.1 * w0), rtol=1e-6)
    np.testing.assert_allclose(b.asnumpy(), b0 - 0.05 * (gb + 0.01 * b0), rtol=1e-6)


def test_update_replaces_the_value_in_place_of_the_parameter():
    params = _params()
    held = params[0].asnumpy()
    before = held.copy()
    nn.SGD(params)(tuple(ms.Tensor(g) for g in GRADS[0]))
    np.testing.assert_array_equal(held, before)      # an array taken earlier is not changed
    assert not np.array_equal(params[0].asnumpy(), before)


def test_errors():
    params = _params()
    with pytest.raises(TypeError, match="Parameter"):
        nn.Adam([ms.Tensor(np.ones(2, np.float32))])
    with pytest.raises(RuntimeError, match="1 gradients for 2"):
        nn.Adam(params)((ms.Tensor(GRADS[0][0]),))
    with pytest.raises(ValueError):
        nn.SGD(params, nesterov=True)
    with pytest.raises(ValueError):
        nn.Adam(params, beta1=1.0)
    with pytest.raises(ValueError):
        nn.SGD(params, learning_rate=-1.0)


def test_parameters_and_state_names():
    params = _params()
    opt = nn.Adam(params)
    assert isinstance(opt.parameters, ms.ParameterTuple)
    assert [p.name for p in opt.moment1] == ["moment1.fc.weight", "moment1.bn.gamma"]
    assert abs(float(opt.get_lr()) - 1e-3) < 1e-9
