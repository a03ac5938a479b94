"""Loss Cells: MSELoss and SoftmaxCrossEntropyWithLogits.

Invariants:

- ``reduction`` is fixed at construction and checked there (``'mean'``, ``'sum'``
  or ``'none'``; anything else is a ValueError); ``construct`` branches on it with
  plain ``if`` statements that the compiler folds.
- ``construct`` is straight-line NumPy code, usable eagerly on Tensors and lifted
  as is by the compiler. Labels only select and weight: their derivative is zero
  wherever they are used.
- ``'mean'`` and ``'sum'`` reduce over every axis to a 0-d value; ``'none'`` keeps
  the elementwise loss (MSELoss) or one loss per sample (cross entropy).

>>> from ad_compiler.tensor import Tensor
>>> MSELoss()(Tensor([1.0, 2.0]), Tensor([0.0, 0.0]))
Tensor(shape=[], dtype=Float32, value= 2.5)
"""
from __future__ import annotations

import numpy as np

from ..ops.operations import stop_gradient

from .cell import Cell

__all__ = ["MSELoss", "SoftmaxCrossEntropyWithLogits"]

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
