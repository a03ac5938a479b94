"""MindSpore 2.x losses: values against NumPy closed forms written here, compiled
gradients against float64 central differences, reductions and error types."""
import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 3))
P = RNG.uniform(0.1, 0.9, size=(4, 3))
IDX = np.array([0, 2, 1, 2], np.int32)


def _check_grad(loss, x, *rest):
    """The loss's derivative w.r.t. ``x`` (the targets held fixed) against central
    differences, reverse and forward mode."""
    def of_x(v):
        return loss(v, *rest)
    ms.check_grad(of_x, (x,), rtol=1e-5, atol=1e-7)


def _log_softmax(x):
    z = x - x.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def _reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](loss)


ELEMENTWISE = [
    (lambda r: nn.L1Loss(r), lambda x, y: np.abs(x - y), "mean"),
    (lambda r: nn.MSELoss(r), lambda x, y: (x - y) ** 2, "mean"),
    (lambda r: nn.SmoothL1Loss(0.5, r),
     lambda x, y: np.where(np.abs(x - y) < 0.5, (x - y) ** 2, np.abs(x - y) - 0.25), "none"),
    (lambda r: nn.HuberLoss(r, 0.5),
     lambda x, y: np.where(np.abs(x - y) < 0.5, 0.5 * (x - y) ** 2,
                           0.5 * (np.abs(x - y) - 0.25)), "mean"),
    (lambda r: nn.BCEWithLogitsLoss(r),
     lambda x, y: -(y * np.log(1 / (1 + np.exp(-x))) + (1 - y) * np.log(1 - 1 / (1 + np.exp(-x)))),
     "mean"),
    (lambda r: nn.KLDivLoss(r), lambda x, y: y * (np.log(y) - x), "mean"),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("make, formula, default", ELEMENTWISE)
def test_elementwise_losses(make, formula, default, reduction):
    loss = make(reduction)
    np.testing.assert_allclose(loss(X, P), _reduce(formula(X, P), reduction), rtol=1e-10)
    out = loss(ms.Tensor(X.astype(np.float32)), ms.Tensor(P.astype(np.float32)))
    assert out.dtype == ms.float32
    if reduction != "none":
        _check_grad(loss, X, P)


@pytest.mark.parametrize("make, formula, default", ELEMENTWISE)
def test_default_reductions(make, formula, default):
    cls = type(make("mean"))
    assert cls().reduction == default


def test_bce_loss_with_weight():
    w = RNG.uniform(0.5, 2.0, size=(4, 3))
    loss = nn.BCELoss(weight=ms.Tensor(w), reduction="sum")
    want = np.sum(-w * (P * np.log(X.clip(0.1, 0.9)) + (1 - P) * np.log(1 - X.clip(0.1, 0.9))))
    np.testing.assert_allclose(loss(X.clip(0.1, 0.9), P), want, rtol=1e-10)
    _check_grad(loss, X.clip(0.1, 0.9), P)


def test_bce_with_logits_pos_weight():
    pw = np.array([1.0, 2.0, 3.0])
    loss = nn.BCEWithLogitsLoss(pos_weight=ms.Tensor(pw))
    s = 1 / (1 + np.exp(-X))
    want = np.mean(-(pw * P * np.log(s) + (1 - P) * np.log(1 - s)))
    np.testing.assert_allclose(loss(X, P), want, rtol=1e-10)
    _check_grad(loss, X, P)


def test_kldiv_zero_target_and_batchmean():
    y = P.copy()
    y[0, 0] = 0.0
    loss = nn.KLDivLoss("batchmean")
    want = np.sum(np.where(y > 0, y * np.log(np.where(y > 0, y, 1)), 0) - y * X) / 4
    np.testing.assert_allclose(loss(X, y), want, rtol=1e-10)


# ---------------------------------------------------------------- cross entropy
def _ce_indices(x, y, w=None, ignore=-100, reduction="mean", eps=0.0):
    """MindSpore's formula, one sample at a time."""
    lp = _log_softmax(x)
    c = x.shape[1]
    w = np.ones(c) if w is None else w
    nll, smooth, wsum = [], [], 0.0
    for n in range(len(y)):
        keep = y[n] != ignore
        nll.append(-w[y[n]] * lp[n, y[n]] if keep else 0.0)
        smooth.append(-np.sum(lp[n]) if keep else 0.0)    # no class weights here
        wsum += w[y[n]] if keep else 0.0
    nll, smooth = np.array(nll), np.array(smooth)
    if reduction == "mean":
        return (1 - eps) * nll.sum() / wsum + eps / c * smooth.mean()
    if reduction == "sum":
        return (1 - eps) * nll.sum() + eps / c * smooth.sum()
    return (1 - eps) * nll + eps / c * smooth


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weight", [None, np.array([1.0, 2.0, 0.5])])
@pytest.mark.parametrize("ignore, eps", [(-100, 0.0), (2, 0.0), (-100, 0.2), (1, 0.1)])
def test_cross_entropy_class_indices(reduction, weight, ignore, eps):
    loss = nn.CrossEntropyLoss(weight=None if weight is None else ms.Tensor(weight),
                               ignore_index=ignore, reduction=reduction, label_smoothing=eps)
    want = _ce_indices(X, IDX, weight, ignore, reduction, eps)
    np.testing.assert_allclose(loss(X, IDX), want, rtol=1e-10)
    if reduction != "none":
        _check_grad(loss, X, IDX)


def test_cross_entropy_weighted_mean_divides_by_target_weights():
    w = np.array([1.0, 2.0, 4.0])
    got = float(nn.CrossEntropyLoss(weight=ms.Tensor(w))(X, IDX))
    lp = _log_softmax(X)
    want = sum(-w[t] * lp[n, t] for n, t in enumerate(IDX)) / w[IDX].sum()
    assert abs(got - want) < 1e-12


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities(reduction):
    w = np.array([1.0, 2.0, 0.5])
    probs = P / P.sum(axis=1, keepdims=True)
    loss = nn.CrossEntropyLoss(weight=ms.Tensor(w), reduction=reduction, label_smoothing=0.1)
    target = probs * 0.9 + 0.1 / 3
    per = -np.sum(_log_softmax(X) * target * w, axis=1)
    np.testing.assert_allclose(loss(X, probs), _reduce(per, reduction), rtol=1e-10)
    if reduction != "none":
        _check_grad(loss, X, probs)


def test_cross_entropy_float32_and_high_rank():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)        # N, C, d
    y = RNG.integers(0, 3, size=(2, 4)).astype(np.int32)
    out = nn.CrossEntropyLoss()(ms.Tensor(x), ms.Tensor(y))
    lp = np.moveaxis(_log_softmax(x.astype(np.float64)), 1, -1)
    want = -np.mean(np.take_along_axis(lp, y[..., None], -1))
    assert out.dtype == ms.float32
    np.testing.assert_allclose(float(out), want, rtol=1e-5)
    g = ms.grad(nn.CrossEntropyLoss())(ms.Tensor(x), ms.Tensor(y))
    assert g.dtype == ms.float32 and g.shape == x.shape


@pytest.mark.parametrize("run", ["eager", "compiled"])
def test_int64_class_indices_raise_type_error(run):
    loss = nn.CrossEntropyLoss()
    labels = ms.Tensor(np.array([0, 1, 1, 2], np.int64))
    call = loss if run == "eager" else ms.grad(loss)
    with pytest.raises(TypeError, match="int32"):
        call(ms.Tensor(X.astype(np.float32)), labels)


def test_nll_loss():
    lp = _log_softmax(X)
    w = np.array([1.0, 2.0, 0.5])
    loss = nn.NLLLoss(weight=ms.Tensor(w), ignore_index=1)
    np.testing.assert_allclose(loss(lp, IDX), _ce_indices(X, IDX, w, 1), rtol=1e-10)
    _check_grad(loss, lp, IDX)
    with pytest.raises(TypeError):
        nn.NLLLoss()(lp, P)


def test_softmax_cross_entropy_with_logits_sparse_and_dense():
    dense = nn.SoftmaxCrossEntropyWithLogits(reduction="mean")
    sparse = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    onehot = np.eye(3)[IDX]
    want = -np.mean(np.sum(onehot * _log_softmax(X), axis=1))
    np.testing.assert_allclose(dense(X, onehot), want, rtol=1e-10)
    np.testing.assert_allclose(sparse(X, IDX), want, rtol=1e-10)
    _check_grad(sparse, X, IDX)


def test_cosine_embedding_loss():
    x1, x2 = X, RNG.normal(size=(4, 3))
    y = np.array([1, -1, 1, -1], np.int32)
    cos = np.sum(x1 * x2, 1) / np.linalg.norm(x1, axis=1) / np.linalg.norm(x2, axis=1)
    want = np.mean(np.where(y == 1, 1 - cos, np.maximum(cos - 0.1, 0)))
    np.testing.assert_allclose(nn.CosineEmbeddingLoss(0.1)(x1, x2, y), want, rtol=1e-10)


def test_loss_base_for_user_losses():
    class MAE(nn.LossBase):
        def construct(self, logits, labels):
            return self.get_loss(np.abs(logits - labels))
    np.testing.assert_allclose(MAE()(X, P), np.mean(np.abs(X - P)), rtol=1e-12)
    _check_grad(MAE(), X, P)


@pytest.mark.parametrize("make, error", [
    (lambda: nn.L1Loss("avg"), ValueError),
    (lambda: nn.CrossEntropyLoss(label_smoothing=1.5), ValueError),
    (lambda: nn.CrossEntropyLoss(ignore_index=1.0), TypeError),
    (lambda: nn.SmoothL1Loss(beta=0.0), ValueError),
    (lambda: nn.CosineEmbeddingLoss(margin=2.0), ValueError),
])
def test_bad_arguments(make, error):
    with pytest.raises(error):
        make()
