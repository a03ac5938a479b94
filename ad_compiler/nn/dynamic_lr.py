"""``nn.dynamic_lr``: learning rates computed ahead of training, one per step.

Each function returns a Python list of floats, one entry per training step, to
pass as an optimizer's ``learning_rate`` (an optimizer stepping past its end
raises RuntimeError). The formulas and signatures are MindSpore 2.x's; with
``current_epoch = floor(i / step_per_epoch)`` at step ``i``:

- ``exponential_decay_lr``: ``lr * decay_rate ** (current_epoch / decay_epoch)``
  (the exponent floored when ``is_stair``);
- ``natural_exp_decay_lr``: ``lr * exp(-decay_rate * e)``, ``e = current_epoch``
  (``floor(current_epoch / decay_epoch) * decay_epoch`` when ``is_stair``);
- ``inverse_decay_lr``: ``lr / (1 + decay_rate * current_epoch / decay_epoch)``
  (the ratio floored when ``is_stair``);
- ``cosine_decay_lr``: ``min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * e / decay_epoch))``,
  ``e = min(current_epoch, decay_epoch)``;
- ``polynomial_decay_lr``: ``(lr - end_lr) * (1 - e / d) ** power + end_lr`` with
  ``e = min(current_epoch, decay_epoch)``, ``d = decay_epoch``; with
  ``update_decay_epoch``, ``e = current_epoch`` and
  ``d = decay_epoch * max(ceil(current_epoch / decay_epoch), 1)``;
- ``warmup_lr``: ``lr * min(current_epoch, warmup_epoch) / warmup_epoch``;
- ``piecewise_constant_lr(milestone, learning_rates)``: ``learning_rates[t]`` for the
  steps in ``[milestone[t-1], milestone[t])``.

Bad arguments raise what MindSpore raises: TypeError for a wrong type (a rate
that is not a float, a step count that is not an int), ValueError for a wrong value.

>>> exponential_decay_lr(0.1, 0.9, total_step=6, step_per_epoch=2, decay_epoch=1)
[0.1, 0.1, 0.09000000000000001, 0.09000000000000001, 0.08100000000000002, 0.08100000000000002]
"""
from __future__ import annotations

import math

__all__ = ["piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr",
           "inverse_decay_lr", "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr"]


def _positive_int(value, name: str, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{who}', '{name}' must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"For '{who}', '{name}' must be a positive int, got {value}")
    return value


def _float(value, name: str, who: str, positive: bool = True) -> float:
    if not isinstance(value, float):
        raise TypeError(f"For '{who}', '{name}' must be a float, got {type(value).__name__}")
    if value <= 0.0 if positive else value < 0.0:
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"For '{who}', '{name}' must be {bound}, got {value}")
    return value


def _bool(value, name: str, who: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{who}', '{name}' must be a bool, got {type(value).__name__}")
    return value


def _epochs(total_step, step_per_epoch, who: str) -> list:
    """``current_epoch`` of every step."""
    total = _positive_int(total_step, "total_step", who)
    per = _positive_int(step_per_epoch, "step_per_epoch", who)
    return [i // per for i in range(total)]


def _decay_inputs(who, learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                  is_stair):
    _float(learning_rate, "learning_rate", who)
    _float(decay_rate, "decay_rate", who)
    _positive_int(decay_epoch, "decay_epoch", who)
    _bool(is_stair, "is_stair", who)
    return _epochs(total_step, step_per_epoch, who)


def piecewise_constant_lr(milestone, learning_rates) -> list:
    """``learning_rates[t]`` repeated for the steps ``[milestone[t-1], milestone[t])``;
    ``milestone`` increasing positive ints, as many as ``learning_rates``."""
    who = "piecewise_constant_lr"
    for name, value in (("milestone", milestone), ("learning_rates", learning_rates)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"For '{who}', '{name}' must be a list or a tuple, got "
                            f"{type(value).__name__}")
    if len(milestone) != len(learning_rates):
        raise ValueError(f"For '{who}', 'milestone' and 'learning_rates' must have the same "
                         f"length, got {len(milestone)} and {len(learning_rates)}")
    rates, last = [], 0
    for i, (end, rate) in enumerate(zip(milestone, learning_rates)):
        _positive_int(end, f"milestone[{i}]", who)
        _float(rate, f"learning_rates[{i}]", who, positive=False)
        if end < last:
            raise ValueError(f"For '{who}', milestone[{i}] = {end} is smaller than "
                             f"milestone[{i - 1}] = {last}: milestones must increase")
        rates += [rate] * (end - last)
        last = end
    return rates


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False) -> list:
    """``learning_rate * decay_rate ** (current_epoch / decay_epoch)`` per step."""
    epochs = _decay_inputs("exponential_decay_lr", learning_rate, decay_rate, total_step,
                           step_per_epoch, decay_epoch, is_stair)
    if is_stair:
        return [learning_rate * decay_rate ** math.floor(e / decay_epoch) for e in epochs]
    return [learning_rate * decay_rate ** (e / decay_epoch) for e in epochs]


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False) -> list:
    """``learning_rate * e ** (-decay_rate * current_epoch)`` per step (the epoch
    rounded down to a multiple of ``decay_epoch`` when ``is_stair``)."""
    epochs = _decay_inputs("natural_exp_decay_lr", learning_rate, decay_rate, total_step,
                           step_per_epoch, decay_epoch, is_stair)
    if is_stair:
        epochs = [math.floor(e / decay_epoch) * decay_epoch for e in epochs]
    return [learning_rate * math.e ** (-decay_rate * e) for e in epochs]


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                     is_stair=False) -> list:
    """``learning_rate / (1 + decay_rate * current_epoch / decay_epoch)`` per step."""
    epochs = _decay_inputs("inverse_decay_lr", learning_rate, decay_rate, total_step,
                           step_per_epoch, decay_epoch, is_stair)
    if is_stair:
        return [learning_rate / (1 + decay_rate * math.floor(e / decay_epoch)) for e in epochs]
    return [learning_rate / (1 + decay_rate * e / decay_epoch) for e in epochs]


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch) -> list:
    """``min_lr + 0.5 * (max_lr - min_lr) * (1 + cos(pi * min(current_epoch, decay_epoch)
    / decay_epoch))`` per step."""
    who = "cosine_decay_lr"
    _float(min_lr, "min_lr", who, positive=False)
    _float(max_lr, "max_lr", who)
    _positive_int(decay_epoch, "decay_epoch", who)
    epochs = _epochs(total_step, step_per_epoch, who)
    if min_lr >= max_lr:
        raise ValueError(f"For '{who}', 'max_lr' must be greater than 'min_lr', got "
                         f"max_lr={max_lr}, min_lr={min_lr}")
    delta = 0.5 * (max_lr - min_lr)
    return [min_lr + delta * (1 + math.cos(math.pi * min(e, decay_epoch) / decay_epoch))
            for e in epochs]


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch,
                        decay_epoch, power, update_decay_epoch=False) -> list:
    """``(learning_rate - end_learning_rate) * (1 - e / d) ** power + end_learning_rate``
    per step (see the module docstring for ``e`` and ``d``)."""
    who = "polynomial_decay_lr"
    _float(learning_rate, "learning_rate", who)
    _float(end_learning_rate, "end_learning_rate", who, positive=False)
    _float(power, "power", who)
    _positive_int(decay_epoch, "decay_epoch", who)
    _bool(update_decay_epoch, "update_decay_epoch", who)
    epochs = _epochs(total_step, step_per_epoch, who)
    delta = learning_rate - end_learning_rate
    rates = []
    for e in epochs:
        if update_decay_epoch:
            horizon = decay_epoch * max(math.ceil(e / decay_epoch), 1)
        else:
            horizon, e = decay_epoch, min(e, decay_epoch)
        rates.append(delta * (1 - e / horizon) ** power + end_learning_rate)
    return rates


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch) -> list:
    """``learning_rate * min(current_epoch, warmup_epoch) / warmup_epoch`` per step."""
    who = "warmup_lr"
    _float(learning_rate, "learning_rate", who, positive=False)
    _positive_int(warmup_epoch, "warmup_epoch", who)
    epochs = _epochs(total_step, step_per_epoch, who)
    return [learning_rate * min(e, warmup_epoch) / warmup_epoch for e in epochs]
