"""Training cells: WithLossCell, WithEvalCell and TrainOneStepCell (MindSpore 2.x).

Invariants:

- The wrappers use ``auto_prefix=False``: wrapping a network renames none of
  its Parameters (``fc.weight`` stays ``fc.weight``).
- ``WithLossCell`` and ``WithEvalCell`` are ordinary Cells whose ``construct``
  the compiler lifts like any other.
- ``TrainOneStepCell(*inputs)`` runs eagerly: it computes the loss and the
  gradients of the optimizer's Parameters with one compiled ``value_and_grad``
  (cached across steps), scales them by ``sens``, applies the optimizer and
  returns the loss.
"""
from __future__ import annotations

from ..api.grad import value_and_grad
from .cell import Cell

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell"]


def _check_cell(value, who: str, what: str) -> None:
    if not isinstance(value, Cell):
        raise TypeError(f"For '{who}', {what} must be a Cell, got {type(value).__name__}")


class WithLossCell(Cell):
    """``loss_fn(backbone(data), label)``."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        _check_cell(backbone, "WithLossCell", "backbone")
        _check_cell(loss_fn, "WithLossCell", "loss_fn")
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        return self._loss_fn(out, label)

    @property
    def backbone_network(self) -> Cell:
        return self._backbone


class WithEvalCell(Cell):
    """``(loss, outputs, label)`` with ``outputs = network(data)``, for evaluation."""

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        _check_cell(network, "WithEvalCell", "network")
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = bool(add_cast_fp32)

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            outputs = outputs.astype("float32")
            label = label.astype("float32")
        loss = self._loss_fn(outputs, label)
        return loss, outputs, label


class TrainOneStepCell(Cell):
    """One training step: loss, gradients of ``optimizer.parameters``, the update.

    Args:
        network: a Cell returning the loss (e.g. a WithLossCell).
        optimizer: an optimizer over (some of) the network's Parameters.
        sens: the loss's sensitivity (None: 1.0); the gradients are those of
            ``sens * loss`` (for a non-scalar loss, of ``sens * sum(loss)``).
    """

    def __init__(self, network, optimizer, sens=None, return_grad=False):
        super().__init__(auto_prefix=False)
        _check_cell(network, "TrainOneStepCell", "network")
        from .optim import Optimizer
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"For 'TrainOneStepCell', optimizer must be an nn optimizer, "
                            f"got {type(optimizer).__name__}")
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = self.optimizer.parameters
        self.sens = 1.0 if sens is None else float(sens)
        self.return_grad = bool(return_grad)
        self.__dict__["_grad_fn"] = value_and_grad(network, None, self.weights)

    def construct(self, *inputs):
        loss, grads = self._grad_fn(*inputs)
        if self.sens != 1.0:
            grads = tuple(g * self.sens for g in grads)
        self.optimizer(grads)
        return (loss, grads) if self.return_grad else loss
