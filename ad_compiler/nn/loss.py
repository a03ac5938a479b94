"""Loss Cells: MindSpore 2.x's losses (MSE, L1, SmoothL1, Huber, cross entropy, NLL, BCE,
BCEWithLogits, KLDiv, CosineEmbedding) and ``LossBase`` for user losses.

Invariants:

- ``reduction`` is fixed at construction and checked there (``'mean'``, ``'sum'``
  or ``'none'``; anything else is a ValueError); ``construct`` branches on it with
  plain ``if`` statements that the compiler folds.
- ``construct`` is straight-line NumPy code, usable eagerly on Tensors and lifted
  as is by the compiler. Labels only select and weight: their derivative is zero
  wherever they are used.
- ``'mean'`` and ``'sum'`` reduce over every axis to a 0-d value; ``'none'`` keeps
  the elementwise loss (MSELoss) or one loss per sample (cross entropy).
- Class indices (CrossEntropyLoss, NLLLoss) must be int32, as in MindSpore: any
  other integer dtype raises TypeError while the loss is built or compiled. The
  class axis is 1 (0 for a 1-D input); indices select through a one-hot
  comparison, so no gather is differentiated.

>>> from ad_compiler.tensor import Tensor
>>> MSELoss()(Tensor([1.0, 2.0]), Tensor([0.0, 0.0]))
Tensor(shape=[], dtype=Float32, value= 2.5)
"""
from __future__ import annotations

import numpy as np

from .. import dtype as _mstype
from ..ops.operations import stop_gradient

from .cell import Cell

__all__ = ["LossBase", "MSELoss", "SoftmaxCrossEntropyWithLogits", "L1Loss", "SmoothL1Loss",
           "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
           "KLDivLoss", "CosineEmbeddingLoss"]

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction



def reduce_loss(loss, reduction):
    """``loss`` reduced as ``reduction`` says ('mean', 'sum' or 'none').

    Called from ``construct`` methods: the compiler inlines it and folds the
    comparisons, since ``reduction`` is fixed when the Cell is built.
    """
    if reduction == "mean":
        return np.mean(loss)
    if reduction == "sum":
        return np.sum(loss)
    return loss

class MSELoss(Cell):
    """Mean squared error: ``reduce((logits - labels) ** 2)``.

    Args:
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.
    """

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = _check_reduction(reduction)

    def construct(self, logits, labels):
        loss = np.square(logits - labels)
        return reduce_loss(loss, self.reduction)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


class SoftmaxCrossEntropyWithLogits(Cell):
    """Cross entropy between ``softmax(logits)`` and the labels, over the last axis.

    Args:
        sparse: False: ``labels`` are (one-hot or soft) probabilities with the shape
            of ``logits``. True: ``labels`` are integer class indices with the shape of
            ``logits`` minus its last axis.
        reduction: ``'none'`` (default: one loss per sample), ``'mean'`` or ``'sum'``.
    """

    def __init__(self, sparse=False, reduction="none"):
        super().__init__()
        self.sparse = bool(sparse)
        self.reduction = _check_reduction(reduction)

    def construct(self, logits, labels):
        if self.sparse:
            # Class indices become one-hot rows: compare each index with 0..C-1.
            labels = np.equal(np.expand_dims(labels, -1), np.arange(logits.shape[-1]))
        shifted = logits - np.max(logits, axis=-1, keepdims=True)
        log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
        # labels are targets, not inputs of the model: MindSpore gives them no gradient
        loss = -np.sum(stop_gradient(labels) * log_probs, axis=-1)
        return reduce_loss(loss, self.reduction)

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}, reduction={self.reduction}"


class LossBase(Cell):
    """Base of user losses: ``self.get_loss(x, weights=1.0)`` weights and reduces ``x``.

    Args:
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.
    """

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = _check_reduction(reduction)

    def get_loss(self, x, weights=1.0):
        return reduce_loss(x * weights, self.reduction)

    def get_axis(self, x):
        """Every axis of ``x``, as MindSpore's ``LossBase.get_axis``."""
        return tuple(range(np.ndim(x)))

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


class L1Loss(LossBase):
    """``reduce(|logits - labels|)``; default reduction ``'mean'``."""

    def construct(self, logits, labels):
        return reduce_loss(np.abs(logits - labels), self.reduction)


class SmoothL1Loss(LossBase):
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``; ``d = logits - labels``.

    Args:
        beta: the threshold (default 1.0, must be positive).
        reduction: ``'none'`` (MindSpore's default here), ``'mean'`` or ``'sum'``.
    """

    def __init__(self, beta=1.0, reduction="none"):
        super().__init__(reduction)
        if not isinstance(beta, (int, float)) or isinstance(beta, bool) or beta <= 0:
            raise ValueError(f"SmoothL1Loss: beta must be a positive float, got {beta!r}")
        self.beta = float(beta)

    def construct(self, logits, labels):
        d = np.abs(logits - labels)
        loss = np.where(d < self.beta, 0.5 * np.square(d) / self.beta, d - 0.5 * self.beta)
        return reduce_loss(loss, self.reduction)


class HuberLoss(LossBase):
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``.

    Args:
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.
        delta: the threshold (default 1.0, must be positive).
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        if not isinstance(delta, (int, float)) or isinstance(delta, bool) or delta <= 0:
            raise ValueError(f"HuberLoss: delta must be a positive float, got {delta!r}")
        self.delta = float(delta)

    def construct(self, logits, labels):
        d = np.abs(logits - labels)
        loss = np.where(d < self.delta, 0.5 * np.square(d), self.delta * (d - 0.5 * self.delta))
        return reduce_loss(loss, self.reduction)


# ------------------------------------------------------------------ class-index losses
def _is_class_indices(labels, who: str) -> bool:
    """True for int32 labels, False for floating ones; TypeError for other dtypes."""
    dt = _mstype.to_numpy_dtype(labels.dtype)
    if dt == np.int32:
        return True
    if dt.kind == "f":
        return False
    raise TypeError(f"For '{who}', class indices must be int32, got {dt.name}; "
                    f"convert them first, e.g. labels.astype(ms.int32)")


def _class_axis(logits) -> int:
    return 0 if logits.ndim == 1 else 1


def _along_class_axis(values, logits):
    """``values`` (one per class) shaped to broadcast along the class axis of ``logits``."""
    axis = _class_axis(logits)
    return np.reshape(values, (logits.shape[axis],) + (1,) * (logits.ndim - 1 - axis))


def _one_hot(labels, logits):
    """Booleans with the shape of ``logits``: True where the class is ``labels``."""
    axis = _class_axis(logits)
    classes = _along_class_axis(np.arange(logits.shape[axis]), logits)
    return np.equal(np.expand_dims(labels, axis), classes)


def _check_weight(weight, who: str):
    if weight is None:
        return None
    arr = np.asarray(weight.asnumpy() if hasattr(weight, "asnumpy") else weight)
    if arr.ndim != 1:
        raise ValueError(f"For '{who}', weight must be 1-D (one value per class), "
                         f"got shape {arr.shape}")
    return arr


def _class_weights(weight, logits):
    """The per-class weights (ones when there are none) along the class axis."""
    if weight is None:
        return np.ones(_along_class_axis(np.arange(logits.shape[_class_axis(logits)]),
                                         logits).shape, _mstype.to_numpy_dtype(logits.dtype))
    return _along_class_axis(weight.astype(_mstype.to_numpy_dtype(logits.dtype)), logits)


def _nll(log_probs, labels, weight, ignore_index, reduction, label_smoothing):
    """MindSpore's ``nll_loss`` on log-probabilities and int32 class indices.

    ``l_n = -w[y_n] * log_probs[n, y_n]`` (0 where ``y_n == ignore_index``); 'mean'
    divides the sum by the summed weights of the kept targets. With label smoothing
    ``eps``: ``(1 - eps) * nll + eps / C * smooth``, where ``smooth_n`` is
    ``-sum_c log_probs[n, c]`` (no class weights: MindSpore's ``_nll_loss`` weights
    only the target term), 0 where ``y_n == ignore_index``, and 'mean' averages it
    over all the samples, ignored ones included.
    """
    axis = _class_axis(log_probs)
    hot = stop_gradient(_one_hot(labels, log_probs))
    keep = stop_gradient(np.not_equal(labels, ignore_index))
    w = _class_weights(weight, log_probs)
    target_weight = np.sum(hot * w, axis=axis) * keep
    nll = -np.sum(hot * w * log_probs, axis=axis) * keep
    if reduction == "mean":
        nll = np.sum(nll) / np.sum(target_weight)
    elif reduction == "sum":
        nll = np.sum(nll)
    if label_smoothing == 0.0:
        return nll
    smooth = reduce_loss(-np.sum(log_probs, axis=axis) * keep, reduction)
    return (1.0 - label_smoothing) * nll + label_smoothing / log_probs.shape[axis] * smooth


def _log_softmax(logits, axis):
    shifted = logits - stop_gradient(np.max(logits, axis=axis, keepdims=True))
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


class CrossEntropyLoss(LossBase):
    """Cross entropy of ``softmax(logits)`` along axis 1 (axis 0 for a 1-D input).

    ``labels`` are int32 class indices (shape of ``logits`` without the class axis;
    int64 raises TypeError, as in MindSpore) or class probabilities (shape of
    ``logits``, floating).

    Args:
        weight: None or a 1-D Tensor of one weight per class.
        ignore_index: targets equal to it add nothing (class indices only); -100.
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``. With class indices
            'mean' divides by the summed weights of the kept targets; with
            probabilities by the number of samples.
        label_smoothing: in [0, 1]; mixes the target with the uniform distribution.
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight = _check_weight(weight, "CrossEntropyLoss")
        self.ignore_index = _check_int(ignore_index, "CrossEntropyLoss", "ignore_index")
        self.label_smoothing = _check_smoothing(label_smoothing, "CrossEntropyLoss")

    def construct(self, logits, labels):
        axis = _class_axis(logits)
        log_probs = _log_softmax(logits, axis)
        if _is_class_indices(labels, "CrossEntropyLoss"):
            return _nll(log_probs, labels, self.weight, self.ignore_index, self.reduction,
                        self.label_smoothing)
        n_classes = logits.shape[axis]
        target = stop_gradient(labels) * (1.0 - self.label_smoothing) \
            + self.label_smoothing / n_classes
        loss = -np.sum(log_probs * target * _class_weights(self.weight, logits), axis=axis)
        return reduce_loss(loss, self.reduction)

    def extend_repr(self) -> str:
        return (f"ignore_index={self.ignore_index}, reduction={self.reduction}, "
                f"label_smoothing={self.label_smoothing}")


class NLLLoss(LossBase):
    """Negative log-likelihood of log-probabilities ``logits`` at int32 class ``labels``.

    Args:
        weight, ignore_index, reduction: as in :class:`CrossEntropyLoss`.
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight = _check_weight(weight, "NLLLoss")
        self.ignore_index = _check_int(ignore_index, "NLLLoss", "ignore_index")

    def construct(self, logits, labels):
        if not _is_class_indices(labels, "NLLLoss"):
            raise TypeError("For 'NLLLoss', labels must be int32 class indices")
        return _nll(logits, labels, self.weight, self.ignore_index, self.reduction, 0.0)


def _check_int(value, who: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{who}', {what} must be an int, got {type(value).__name__}")
    return int(value)


def _check_smoothing(value, who: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{who}', label_smoothing must be a float, got "
                        f"{type(value).__name__}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"For '{who}', label_smoothing must be in [0, 1], got {value}")
    return float(value)


# ------------------------------------------------------------------ binary and divergence losses
def _optional_tensor(value):
    if value is None:
        return None
    return value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)


class BCELoss(LossBase):
    """Binary cross entropy of probabilities:
    ``-w * (y log(x + 1e-12) + (1 - y) log(1 - x + 1e-12))``.

    The ``1e-12`` inside the logarithms is MindSpore's (its BinaryCrossEntropy
    kernels add it, they do not clamp): ``x`` at 0 or 1 gives a finite loss, about
    ``27.6 * w`` per element.

    Args:
        weight: None or a Tensor broadcasting to the inputs' shape.
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.
    """

    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = _optional_tensor(weight)

    def construct(self, logits, labels):
        eps = 1e-12
        loss = -(labels * np.log(logits + eps) + (1.0 - labels) * np.log(1.0 - logits + eps))
        if self.weight is not None:
            loss = loss * self.weight
        return reduce_loss(loss, self.reduction)


class BCEWithLogitsLoss(LossBase):
    """``-w * (p * y * log sigmoid(x) + (1 - y) * log(1 - sigmoid(x)))``, computed stably.

    Args:
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.
        weight: None or a Tensor broadcasting to the inputs (per element).
        pos_weight: None or a Tensor broadcasting to the inputs (per class, weights
            the positive term).
    """

    def __init__(self, reduction="mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight = _optional_tensor(weight)
        self.pos_weight = _optional_tensor(pos_weight)

    def construct(self, logits, labels):
        log_sig = -np.logaddexp(0.0, -logits)        # log sigmoid(x)
        log_one_minus = -np.logaddexp(0.0, logits)   # log (1 - sigmoid(x))
        positive = labels * log_sig
        if self.pos_weight is not None:
            positive = positive * self.pos_weight
        loss = -(positive + (1.0 - labels) * log_one_minus)
        if self.weight is not None:
            loss = loss * self.weight
        return reduce_loss(loss, self.reduction)


class KLDivLoss(LossBase):
    """``labels * (log(labels) - logits)`` (0 where ``labels == 0``); ``logits`` are log-probabilities.

    Args:
        reduction: ``'mean'`` (default), ``'sum'``, ``'none'`` or ``'batchmean'``
            (the sum divided by the batch size).
    """

    def __init__(self, reduction="mean"):
        if reduction == "batchmean":
            super().__init__("sum")
            self.batchmean = True
        else:
            super().__init__(reduction)
            self.batchmean = False

    def construct(self, logits, labels):
        positive = labels > 0
        xlogx = np.where(positive, labels * np.log(np.where(positive, labels, 1.0)), 0.0)
        loss = reduce_loss(xlogx - labels * logits, self.reduction)
        if self.batchmean:
            loss = loss / logits.shape[0]
        return loss

    def extend_repr(self) -> str:
        return "reduction=batchmean" if self.batchmean else f"reduction={self.reduction}"


class CosineEmbeddingLoss(LossBase):
    """``1 - cos(x1, x2)`` where ``labels == 1``, ``max(0, cos(x1, x2) - margin)`` where -1.

    Args:
        margin: in [-1, 1], default 0.0.
        reduction: ``'mean'`` (default), ``'sum'`` or ``'none'``.
    """

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)):
            raise TypeError(f"For 'CosineEmbeddingLoss', margin must be a float, got "
                            f"{type(margin).__name__}")
        if not -1.0 <= margin <= 1.0:
            raise ValueError(f"For 'CosineEmbeddingLoss', margin must be in [-1, 1], got {margin}")
        self.margin = float(margin)

    def construct(self, logits_x1, logits_x2, labels):
        dot = np.sum(logits_x1 * logits_x2, axis=-1)
        norms = np.sqrt(np.sum(np.square(logits_x1), axis=-1)) \
            * np.sqrt(np.sum(np.square(logits_x2), axis=-1))
        cos = dot / norms
        similar = 1.0 - cos
        dissimilar = np.maximum(cos - self.margin, 0.0)
        loss = np.where(labels == 1, similar, np.where(labels == -1, dissimilar, 0.0))
        return reduce_loss(loss, self.reduction)
