"""``set_context``, ``get_context``, ``set_seed`` and the execution-mode constants.

ad_compiler has one execution model (eager Python, gradients compiled to NumPy
source), so ``mode`` and ``device_target`` are checked and recorded but change
nothing: a program written for MindSpore's GRAPH_MODE or PYNATIVE_MODE runs the
same. ``set_seed`` seeds NumPy's global generator, which initializers use.
"""
from __future__ import annotations

import numpy as np

__all__ = ["GRAPH_MODE", "PYNATIVE_MODE", "set_context", "get_context", "set_seed",
           "get_seed"]

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_DEVICES = ("CPU", "GPU", "Ascend")
_CONTEXT = {"mode": PYNATIVE_MODE, "device_target": "CPU", "device_id": 0}
_SEED = [None]


def set_context(**kwargs) -> None:
    """Record MindSpore context settings; ``mode`` and ``device_target`` are checked.

    Raises ValueError for a mode other than GRAPH_MODE/PYNATIVE_MODE or an unknown
    device target. Other keys (``device_id``, ``save_graphs`` ...) are accepted.
    """
    mode = kwargs.get("mode", _CONTEXT["mode"])
    if mode not in (GRAPH_MODE, PYNATIVE_MODE) or isinstance(mode, bool):
        raise ValueError(f"set_context: mode must be GRAPH_MODE (0) or PYNATIVE_MODE (1), "
                         f"got {mode!r}")
    device = kwargs.get("device_target", _CONTEXT["device_target"])
    if device not in _DEVICES:
        raise ValueError(f"set_context: device_target must be one of {_DEVICES}, got {device!r}")
    _CONTEXT.update(kwargs)


def get_context(attr_key: str):
    """The value ``set_context`` recorded for ``attr_key`` (ValueError if unknown)."""
    if attr_key not in _CONTEXT:
        raise ValueError(f"get_context: no context setting named {attr_key!r}")
    return _CONTEXT[attr_key]


def set_seed(seed: int) -> None:
    """Seed NumPy's global generator (weights, dropout masks, shuffles)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"set_seed: seed must be a non-negative int, got {seed!r}")
    _SEED[0] = seed
    np.random.seed(seed)


def get_seed():
    """The seed last given to :func:`set_seed`, or None."""
    return _SEED[0]
