"""Loss formulas pinned to MindSpore 2.x's source: CrossEntropyLoss with label
smoothing, ignore_index and class weights together (ops.nll_loss's inner function
weights only the target term; the smoothing term averages over every sample), and
BCELoss's 1e-12 inside the logarithms. Values are worked out by hand here;
gradients against central finite differences in float64."""
import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn
from tests.finite_differences import central


def test_cross_entropy_smoothing_ignore_index_weight_mean_by_hand():
    x = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [0.0, 0.0, 1.0]])
    y = np.array([1, 2, 0], np.int32)             # the last sample is ignored
    w = np.array([0.5, 2.0, 3.0])
    eps, c = 0.3, 3
    loss = nn.CrossEntropyLoss(weight=ms.Tensor(w), ignore_index=0, label_smoothing=eps)

    def lsm(row):
        m = max(row)
        z = math.log(sum(math.exp(v - m) for v in row)) + m
        return [v - z for v in row]
    lp0, lp1 = lsm(x[0]), lsm(x[1])
    nll = (-2.0 * lp0[1] - 3.0 * lp1[2]) / (2.0 + 3.0)     # weighted mean over kept targets
    smooth = (-sum(lp0) - sum(lp1) + 0.0) / 3               # unweighted, over all 3 samples
    want = (1 - eps) * nll + eps / c * smooth
    assert float(loss(x, y)) == pytest.approx(want, rel=1e-12)

    g = ms.grad(lambda x: loss(x, y))(x)
    np.testing.assert_allclose(g, central(lambda x: float(loss(x, y)), x), rtol=1e-6, atol=1e-8)
    assert np.all(g[2] == 0.0)                      # an ignored sample gets no gradient


@pytest.mark.parametrize("reduction", ["sum", "none"])
def test_cross_entropy_smoothing_other_reductions_ignore_class_weights(reduction):
    x = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])
    y = np.array([1, 2], np.int32)
    w = np.array([0.5, 2.0, 3.0])
    got = nn.CrossEntropyLoss(weight=ms.Tensor(w), reduction=reduction, label_smoothing=0.3)(x, y)
    lp = x - np.log(np.exp(x).sum(1, keepdims=True))
    per = 0.7 * -w[y] * lp[[0, 1], y] + 0.1 * -lp.sum(1)
    np.testing.assert_allclose(got, per.sum() if reduction == "sum" else per, rtol=1e-12)


def test_bce_adds_1e_12_inside_the_logs():
    x = np.array([0.0, 1.0, 0.25, 1e-13])
    y = np.array([1.0, 0.0, 1.0, 1.0])
    got = nn.BCELoss(reduction="none")(x, y)
    want = [-math.log(1e-12), -math.log(1e-12), -math.log(0.25 + 1e-12), -math.log(1.1e-12)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    loss = nn.BCELoss(reduction="sum")
    xs = np.array([0.2, 0.7, 0.5])
    ys = np.array([1.0, 0.0, 0.3])
    np.testing.assert_allclose(ms.grad(lambda v: loss(v, ys))(xs),
                               central(lambda v: float(loss(v, ys)), xs), rtol=1e-7)


def test_bce_float32_at_the_edges_is_finite():
    x = np.array([0.0, 1.0, 0.5], np.float32)
    y = np.array([1.0, 0.0, 1.0], np.float32)
    out = nn.BCELoss()(ms.Tensor(x), ms.Tensor(y))
    assert out.dtype == ms.float32 and np.isfinite(float(out))
