"""Learning-rate schedules: Cells mapping the optimizer's step number to a rate.

Each schedule follows MindSpore's formula; ``schedule(global_step)`` accepts a
Python int or an integer Tensor and returns a float32 Tensor. Optimizers call
them with their own step counter before each update (step 0 first).

>>> ExponentialDecayLR(0.1, 0.5, 2)(2)
Tensor(shape=[], dtype=Float32, value= 0.05)
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import unwrap, wrap
from .cell import Cell

__all__ = ["LearningRateSchedule", "ExponentialDecayLR", "PolynomialDecayLR",
           "CosineDecayLR", "WarmUpLR"]


def _positive(value, who: str, what: str, kind=(int, float)):
    if isinstance(value, bool) or not isinstance(value, kind) or value <= 0:
        raise ValueError(f"For '{who}', {what} must be positive, got {value!r}")
    return value


class LearningRateSchedule(Cell):
    """Base class: subclasses define ``rate(step) -> float``."""

    def construct(self, global_step):
        step = float(np.asarray(unwrap(global_step)))
        return wrap(np.asarray(self.rate(step), np.float32))

    def rate(self, step: float) -> float:
        raise NotImplementedError


class ExponentialDecayLR(LearningRateSchedule):
    """``learning_rate * decay_rate ** p``, ``p = step / decay_steps`` (floored if ``is_stair``)."""

    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        self.learning_rate = _positive(learning_rate, "ExponentialDecayLR", "learning_rate")
        self.decay_rate = _positive(decay_rate, "ExponentialDecayLR", "decay_rate")
        self.decay_steps = _positive(decay_steps, "ExponentialDecayLR", "decay_steps", int)
        self.is_stair = bool(is_stair)

    def rate(self, step):
        p = step / self.decay_steps
        if self.is_stair:
            p = math.floor(p)
        return self.learning_rate * self.decay_rate ** p


class PolynomialDecayLR(LearningRateSchedule):
    """``(lr - end) * (1 - min(step, decay_steps) / decay_steps) ** power + end``.

    With ``update_decay_steps`` the horizon grows to the next multiple of
    ``decay_steps`` instead of holding at ``end_learning_rate``.
    """

    def __init__(self, learning_rate, end_learning_rate, decay_steps, power,
                 update_decay_steps=False):
        super().__init__()
        self.learning_rate = _positive(learning_rate, "PolynomialDecayLR", "learning_rate")
        self.end_learning_rate = float(end_learning_rate)
        self.decay_steps = _positive(decay_steps, "PolynomialDecayLR", "decay_steps", int)
        self.power = _positive(power, "PolynomialDecayLR", "power")
        self.update_decay_steps = bool(update_decay_steps)

    def rate(self, step):
        horizon = self.decay_steps
        if self.update_decay_steps:
            horizon = self.decay_steps * max(math.ceil(step / self.decay_steps), 1)
        else:
            step = min(step, self.decay_steps)
        frac = (1.0 - step / horizon) ** self.power
        return (self.learning_rate - self.end_learning_rate) * frac + self.end_learning_rate


class CosineDecayLR(LearningRateSchedule):
    """``min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * min(step, decay_steps) / decay_steps))``."""

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        if isinstance(min_lr, bool) or not isinstance(min_lr, (int, float)) or min_lr < 0:
            raise ValueError(f"For 'CosineDecayLR', min_lr must be >= 0, got {min_lr!r}")
        self.min_lr = float(min_lr)
        self.max_lr = _positive(max_lr, "CosineDecayLR", "max_lr")
        if self.min_lr >= self.max_lr:
            raise ValueError("For 'CosineDecayLR', max_lr must be greater than min_lr")
        self.decay_steps = _positive(decay_steps, "CosineDecayLR", "decay_steps", int)

    def rate(self, step):
        p = min(step, self.decay_steps) / self.decay_steps
        return self.min_lr + 0.5 * (self.max_lr - self.min_lr) * (1.0 + math.cos(math.pi * p))


class WarmUpLR(LearningRateSchedule):
    """``learning_rate * min(step, warmup_steps) / warmup_steps`` (0 at step 0)."""

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        self.learning_rate = _positive(learning_rate, "WarmUpLR", "learning_rate")
        self.warmup_steps = _positive(warmup_steps, "WarmUpLR", "warmup_steps", int)

    def rate(self, step):
        return self.learning_rate * min(step, self.warmup_steps) / self.warmup_steps
