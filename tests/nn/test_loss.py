"""Losses against formulas written out element by element."""
import math

import numpy as np
import pytest

from ad_compiler import dtype as mstype
from ad_compiler import nn
from ad_compiler.tensor import Tensor

LOGITS = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
ONE_HOT = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], np.float32)
CLASSES = np.array([2, 0])


def _per_sample_ce(logits, probs):
    """-sum_k p_k * log(softmax(l)_k), one sample at a time, in float64."""
    out = []
    for row, p in zip(logits.astype(np.float64), probs):
        log_z = math.log(sum(math.exp(v) for v in row))
        out.append(-sum(pk * (v - log_z) for v, pk in zip(row, p)))
    return np.array(out)


# ---------------------------------------------------------------- MSELoss
@pytest.mark.parametrize("reduction, expected", [
    ("mean", (1.0 + 4.0 + 0.0 + 0.25) / 4),
    ("sum", 1.0 + 4.0 + 0.0 + 0.25),
    ("none", [[1.0, 4.0], [0.0, 0.25]]),
])
def test_mse_loss(reduction, expected):
    logits = Tensor([[1.0, 2.0], [3.0, 4.5]])
    labels = Tensor([[0.0, 0.0], [3.0, 4.0]])
    out = nn.MSELoss(reduction)(logits, labels)
    assert type(out) is Tensor and out.dtype == mstype.float32
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-7)
    assert out.shape == np.shape(expected)


def test_mse_default_is_mean_and_works_on_ndarrays():
    out = nn.MSELoss()(np.array([1.0, 3.0]), np.array([0.0, 0.0]))
    assert float(out) == 5.0


# ---------------------------------------------------------------- SoftmaxCrossEntropyWithLogits
def test_cross_entropy_default_is_per_sample():
    out = nn.SoftmaxCrossEntropyWithLogits()(Tensor(LOGITS), Tensor(ONE_HOT))
    assert type(out) is Tensor and out.shape == (2,) and out.dtype == mstype.float32
    np.testing.assert_allclose(out.asnumpy(), _per_sample_ce(LOGITS, ONE_HOT), rtol=1e-6)


def test_cross_entropy_closed_form():
    # Two equal logits: the loss is log(2) whichever class is the label.
    out = nn.SoftmaxCrossEntropyWithLogits()(Tensor([[0.0, 0.0]]), Tensor([[1.0, 0.0]]))
    np.testing.assert_allclose(out.asnumpy(), [math.log(2.0)], rtol=1e-6)


@pytest.mark.parametrize("reduction, reduce", [("mean", np.mean), ("sum", np.sum)])
def test_cross_entropy_reductions(reduction, reduce):
    out = nn.SoftmaxCrossEntropyWithLogits(reduction=reduction)(Tensor(LOGITS), Tensor(ONE_HOT))
    assert out.shape == ()
    np.testing.assert_allclose(float(out), reduce(_per_sample_ce(LOGITS, ONE_HOT)), rtol=1e-6)


def test_cross_entropy_sparse_labels_equal_one_hot():
    sparse = nn.SoftmaxCrossEntropyWithLogits(sparse=True)(Tensor(LOGITS), Tensor(CLASSES))
    np.testing.assert_allclose(sparse.asnumpy(), _per_sample_ce(LOGITS, ONE_HOT), rtol=1e-6)
    assert sparse.dtype == mstype.float32
    mean = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")(LOGITS, CLASSES)
    np.testing.assert_allclose(float(mean), _per_sample_ce(LOGITS, ONE_HOT).mean(), rtol=1e-6)


def test_cross_entropy_soft_labels_and_large_logits():
    logits = np.array([[1000.0, 1001.0, 999.0]])
    probs = np.array([[0.2, 0.5, 0.3]])
    out = nn.SoftmaxCrossEntropyWithLogits()(Tensor(logits), Tensor(probs))
    np.testing.assert_allclose(out.asnumpy(), _per_sample_ce(logits - 1000.0, probs), rtol=1e-12)


@pytest.mark.parametrize("cls", [nn.MSELoss, lambda r: nn.SoftmaxCrossEntropyWithLogits(reduction=r)])
def test_bad_reduction_is_value_error(cls):
    with pytest.raises(ValueError):
        cls("average")


def test_loss_repr():
    assert repr(nn.MSELoss()) == "MSELoss<reduction=mean>"
    assert repr(nn.SoftmaxCrossEntropyWithLogits(sparse=True)) == (
        "SoftmaxCrossEntropyWithLogits<sparse=True, reduction=none>")
