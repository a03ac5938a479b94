"""More activation Cells and the Identity, each calling its functional op.

ReLU6, LeakyReLU (``alpha=0.2``), ELU (``alpha=1.0``), GELU (``approximate=True``:
the tanh form, MindSpore's default; ``False``: the erf form), SiLU, LogSoftmax and Identity. Their values
and derivatives (incl. at the kinks) are those of ``ops/normalization.py``.

>>> import numpy as np
>>> LeakyReLU()(np.array([-1.0, 2.0]))
array([-0.2,  2. ])
"""
from __future__ import annotations

from .. import ops as _ops
from .cell import Cell

__all__ = ["ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "LogSoftmax", "Identity"]


class ReLU6(Cell):
    """``min(max(x, 0), 6)``."""

    def construct(self, x):
        return _ops.relu6(x)


class LeakyReLU(Cell):
    """``x`` where positive, else ``alpha * x`` (MindSpore's default ``alpha=0.2``)."""

    def __init__(self, alpha=0.2):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return _ops.leaky_relu(x, self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class ELU(Cell):
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = float(alpha)

    def construct(self, x):
        return _ops.elu(x, self.alpha)


class GELU(Cell):
    """Gaussian error linear unit; ``approximate=True`` (default) is the tanh form,
    ``False`` the exact ``0.5 x (1 + erf(x / sqrt(2)))``."""

    def __init__(self, approximate=True):
        super().__init__()
        self.approximate = bool(approximate)

    def construct(self, x):
        return _ops.gelu(x, "tanh" if self.approximate else "none")


class SiLU(Cell):
    """``x * sigmoid(x)``."""

    def construct(self, x):
        return _ops.silu(x)


class LogSoftmax(Cell):
    """``log(softmax(x))`` along ``axis`` (default the last), computed stably."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return _ops.log_softmax(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class Identity(Cell):
    """Returns its input."""

    def construct(self, x):
        return x
