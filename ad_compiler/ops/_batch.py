"""Batching rules shared by the primitives' declarations (``primitive(..., batch=...)``).

A rule is ``batch(b, axes, *inputs, **params) -> (out, out_axis)`` (see
ad/rules.py): ``axes`` holds each input's batch axis or ``None``. Most rules move
the batch axis to the front and shift the primitive's axis parameters by one;
the factories here build them for a primitive by name:

* :func:`broadcasting`: elementwise ops, batched inputs aligned so NumPy's
  broadcasting keeps the batch axis apart from the example's axes;
* :func:`along` / :func:`reducing`: ops with axis parameters (``None``, "every
  axis", becomes the example's axes);
* :func:`leading`: ops that work on the trailing axes of a stack (np.linalg);
* :func:`materialized`: ops whose inputs must all carry the batch (concat).

Nothing here loops over the batch: each rule emits one op on the whole batch
(plus transposes/reshapes that place the batch axis).
"""
from __future__ import annotations

import numpy as np

from ..ad.batching import materialize, to_front
from ..errors import UnsupportedOperationError


def example_ndim(v, ax) -> int:
    """The number of axes of one example of ``v``."""
    t = v.type
    return t.ndim - (ax is not None)


def lead_ones(b, v, rank: int):
    """``v`` (batch axis first) with ones inserted after the batch axis up to ``rank``
    example axes, so broadcasting against a shared value aligns the example's axes."""
    shape = v.type.shape
    missing = rank - (len(shape) - 1)
    if missing <= 0:
        return v
    return b.reshape(v, shape=shape[:1] + (1,) * missing + shape[1:])


def _norm(a: int, n: int) -> int:
    if not -n <= a < max(n, 1):
        raise UnsupportedOperationError(f"axis {a} is out of bounds for {n} axes")
    return a % n if n else 0


def shift(axis, n: int):
    """``axis`` (an int, tuple or None) of an example with ``n`` axes, counted in the
    batched value (batch first); None stays None."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_norm(a, n) + 1 for a in axis)
    return _norm(axis, n) + 1


def broadcasting(name: str):
    """The rule of an elementwise (broadcasting) primitive."""
    def rule(b, axes, *inputs, **params):
        rank = max(example_ndim(v, ax) for v, ax in zip(inputs, axes))
        ins = [v if ax is None else lead_ones(b, to_front(b, v, ax), rank)
               for v, ax in zip(inputs, axes)]
        return b.emit(name, *ins, **params), 0
    rule.__name__ = f"batch_{name}"
    return rule


def along(name: str, *keys: str, none: str = "flatten"):
    """The rule of a one-input primitive whose params ``keys`` are axes of its input.

    An axis ``None`` means: ``none="flatten"`` the flattened example (argmax, cumsum),
    ``none="all"`` every axis of the example (a reduction), ``none="same"`` the
    flattened example reshaped back (roll).
    """
    keys = keys or ("axis",)

    def rule(b, axes, x, *rest, **params):
        if any(ax is not None for ax in axes[1:]):
            raise UnsupportedOperationError(f"vmap: '{name}' with a batched second input")
        n = example_ndim(x, axes[0])
        x = to_front(b, x, axes[0])
        new = dict(params)
        flat = False
        for k in keys:
            if params.get(k) is None and none != "all":
                flat = True
            elif params.get(k) is None:
                new[k] = tuple(range(1, n + 1))
            else:
                new[k] = shift(params[k], n)
        shape = x.type.shape
        if flat:
            x = b.reshape(x, shape=(shape[0], int(np.prod(shape[1:], dtype=np.int64))))
            new.update({k: 1 for k in keys if params.get(k) is None})
        out = b.emit(name, x, *rest, **new)
        if flat and none == "same":
            out = b.reshape(out, shape=shape)
        elif flat and params.get("keepdims"):
            out = b.reshape(out, shape=(shape[0],) + (1,) * n)
        return out, 0
    rule.__name__ = f"batch_{name}"
    return rule


def reducing(name: str):
    """A reduction over ``axis`` (None: every axis of the example)."""
    return along(name, "axis", none="all")


def leading(name: str):
    """A primitive that works on the trailing axes of a stack (np.linalg's): the batch
    axis goes first, everything else as it was."""
    def rule(b, axes, *inputs, **params):
        ins = [materialize(b, v, ax) for v, ax in zip(inputs, axes)]
        return b.emit(name, *ins, **params), 0
    rule.__name__ = f"batch_{name}"
    return rule


def materialized(name: str, axis_of=lambda n: n):
    """A primitive of several inputs joined along ``axis`` (concat, stack): every input
    carries the batch first; ``axis_of(n)`` is the number of axes ``axis`` counts in,
    for examples with ``n`` axes."""
    def rule(b, axes, *inputs, axis, **params):
        n = example_ndim(inputs[0], axes[0])
        ins = [materialize(b, v, ax) for v, ax in zip(inputs, axes)]
        return b.emit(name, *ins, axis=shift(axis, axis_of(n)), **params), 0
    rule.__name__ = f"batch_{name}"
    return rule


def refuse(name: str, why: str):
    """A rule that refuses (a case vmap cannot batch yet), naming the primitive."""
    def rule(b, axes, *inputs, **params):
        raise UnsupportedOperationError(f"vmap does not batch '{name}' {why}")
    return rule
