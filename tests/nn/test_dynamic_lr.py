"""nn.dynamic_lr: each list against its closed form (vectorised here, independently of
the loop in the module), MindSpore's documented examples, errors, and use by an optimizer."""
import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn

STEPS, PER = 23, 3
EPOCH = np.arange(STEPS) // PER


@pytest.mark.parametrize("stair", [False, True])
def test_exponential(stair):
    e = np.floor(EPOCH / 4) if stair else EPOCH / 4
    got = nn.exponential_decay_lr(0.2, 0.7, STEPS, PER, 4, is_stair=stair)
    np.testing.assert_allclose(got, 0.2 * 0.7 ** e, rtol=1e-14)
    assert len(got) == STEPS and all(type(r) is float for r in got)


@pytest.mark.parametrize("stair", [False, True])
def test_natural_exp(stair):
    e = np.floor(EPOCH / 4) * 4 if stair else EPOCH
    np.testing.assert_allclose(nn.natural_exp_decay_lr(0.2, 0.3, STEPS, PER, 4, stair),
                               0.2 * np.exp(-0.3 * e), rtol=1e-14)


@pytest.mark.parametrize("stair", [False, True])
def test_inverse(stair):
    r = np.floor(EPOCH / 4) if stair else EPOCH / 4
    np.testing.assert_allclose(nn.inverse_decay_lr(0.2, 0.5, STEPS, PER, 4, stair),
                               0.2 / (1 + 0.5 * r), rtol=1e-14)


def test_cosine():
    e = np.minimum(EPOCH, 5)
    np.testing.assert_allclose(nn.cosine_decay_lr(0.01, 0.1, STEPS, PER, 5),
                               0.01 + 0.045 * (1 + np.cos(np.pi * e / 5)), rtol=1e-14)


@pytest.mark.parametrize("update", [False, True])
def test_polynomial(update):
    if update:
        d = 3 * np.maximum(np.ceil(EPOCH / 3), 1)
        e = EPOCH
    else:
        d, e = 3, np.minimum(EPOCH, 3)
    want = 0.09 * (1 - e / d) ** 2.0 + 0.01
    np.testing.assert_allclose(nn.polynomial_decay_lr(0.1, 0.01, STEPS, PER, 3, 2.0, update),
                               want, rtol=1e-14)


def test_warmup():
    np.testing.assert_allclose(nn.warmup_lr(0.1, STEPS, PER, 4),
                               0.1 * np.minimum(EPOCH, 4) / 4, rtol=1e-14)


def test_piecewise():
    got = nn.piecewise_constant_lr([2, 5, 5, 7], [0.1, 0.05, 0.5, 0.01])
    assert got == [0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01]


def test_mindspore_documented_examples():
    """The outputs printed in MindSpore's docstrings."""
    assert nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True) == pytest.approx(
        [0.1, 0.1, 0.1, 0.1, 0.016529888822158657, 0.016529888822158657], rel=1e-15)
    assert nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, True) == pytest.approx(
        [0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333, 0.028571428571428574])
    assert nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5) == pytest.approx(
        [0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01, 0.01])
    assert nn.warmup_lr(0.1, 6, 2, 2) == [0.0, 0.0, 0.05, 0.05, 0.1, 0.1]


@pytest.mark.parametrize("call, exc", [
    (lambda: nn.exponential_decay_lr(1, 0.9, 6, 2, 1), TypeError),       # lr must be a float
    (lambda: nn.exponential_decay_lr(0.1, 0.9, 6.0, 2, 1), TypeError),   # total_step an int
    (lambda: nn.exponential_decay_lr(0.1, 0.9, 0, 2, 1), ValueError),
    (lambda: nn.exponential_decay_lr(0.1, -0.9, 6, 2, 1), ValueError),
    (lambda: nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1, is_stair=1), TypeError),
    (lambda: nn.cosine_decay_lr(0.1, 0.1, 6, 2, 1), ValueError),
    (lambda: nn.cosine_decay_lr(0, 0.1, 6, 2, 1), TypeError),
    (lambda: nn.piecewise_constant_lr([2, 1], [0.1, 0.2]), ValueError),
    (lambda: nn.piecewise_constant_lr([2], [0.1, 0.2]), ValueError),
    (lambda: nn.piecewise_constant_lr(2, [0.1]), TypeError),
    (lambda: nn.warmup_lr(0.1, 6, 2, 0), ValueError),
])
def test_errors(call, exc):
    with pytest.raises(exc):
        call()


def test_optimizer_takes_one_rate_per_step():
    w = ms.Parameter(np.array([1.0, -2.0], np.float32), name="w")
    rates = nn.piecewise_constant_lr([1, 3], [0.5, 0.1])
    opt = nn.SGD([w], learning_rate=rates)
    g = np.array([1.0, 2.0], np.float32)
    expected = w.asnumpy().astype(np.float64)
    for r in rates:
        opt((g,))
        expected = expected - r * g
        np.testing.assert_allclose(w.asnumpy(), expected, rtol=1e-6)
    with pytest.raises(RuntimeError, match="3 entries"):
        opt((g,))
    assert nn.dynamic_lr.warmup_lr is nn.warmup_lr
