"""``ms.checkpoint``: recompute a function's forward values in the backward sweep.

``f = ms.checkpoint(f)`` computes the same values and gradients as ``f``. Called
outside compiled code it is ``f`` itself. Inside a function being
differentiated, a call of ``f`` becomes one ``bprop_call`` op whose region is
``f`` inlined (frontend/custom.py); its adjoint re-emits that region in the
backward sweep and back-propagates through the copy (ad/custom.py), so nothing
computed inside ``f`` is kept from the forward sweep: in particular a loop inside
``f`` stores no tape during the forward sweep, only while its copy runs
backward. ``Cell.recompute()`` does the same for every call of a Cell.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..errors import GradTypeError


class Checkpointed:
    """A function whose forward values are recomputed in the backward sweep."""

    def __init__(self, fn: Callable[..., Any]):
        if not callable(fn):
            raise GradTypeError(f"checkpoint needs a function, not {type(fn).__name__}",
                                hint="ms.checkpoint(fn) takes the function to recompute")
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<checkpoint {self.__name__}>"


def checkpoint(fn: Callable[..., Any]) -> Checkpointed:
    """``fn``, with its forward values recomputed in the backward sweep instead of stored.

    Example:
        >>> import numpy as np
        >>> import ad_compiler as ms
        >>> @ms.checkpoint
        ... def block(x):
        ...     for _ in range(3):
        ...         x = np.sin(x)
        ...     return x
        >>> block(np.array([0.5]))      # outside compiled code: the function itself
        array([0.44508534])
    """
    return Checkpointed(fn)
