"""MindSpore ``ops`` spellings of the building helpers and the functions without a
derivative (``ops.diff``, ``ops.cross``, ``ops.isnan``, ``ops.argsort`` ...).

Each lowers onto the same primitives as its NumPy counterpart; arguments keep
MindSpore's names and meanings (``dim``, ``keep_dims``, ``axis=()`` for every axis).
"""
from __future__ import annotations

import numpy as np

from . import building as _building, movement as _movement, predicates as _predicates
from .operations import _ms_axis, _same_as, functional

isnan = _same_as(np.isnan, "isnan")
isfinite = _same_as(np.isfinite, "isfinite")
isinf = _same_as(np.isinf, "isinf")
logical_and = _same_as(np.logical_and, "logical_and")
logical_or = _same_as(np.logical_or, "logical_or")
logical_xor = _same_as(np.logical_xor, "logical_xor")
logical_not = _same_as(np.logical_not, "logical_not")
select = _same_as(np.where, "select")  # MindSpore's select(cond, x, y) is np.where


@functional
def diff(b, x, n=1, axis=-1, prepend=None, append=None):
    """``ops.diff(x, n=1, axis=-1, prepend=None, append=None)``, as ``np.diff``."""
    return _building.lower_diff(b, x, n, axis, np._NoValue if prepend is None else prepend,
                                np._NoValue if append is None else append)


@functional
def cross(b, input, other, dim=None):  # noqa: A002 - MindSpore's name
    """``ops.cross(input, other, dim=None)``: the cross product of 3-vectors along
    ``dim`` (for None, the first axis of size 3)."""
    shape = b.type_of(b.const(input)).shape
    if dim is None:
        if 3 not in shape:
            raise ValueError(f"ops.cross: no dimension of size 3 in shape {shape}")
        dim = shape.index(3)
    return _building.lower_cross(b, input, other, axis=dim)


@functional
def linspace(b, start, end, steps):
    """``ops.linspace(start, end, steps)``: ``steps`` evenly spaced values, both ends included."""
    return _building.lower_linspace(b, start, end, steps)


def _atleast(n):
    lower = _building._atleast(n)

    def spelled(b, inputs):
        if not isinstance(inputs, (list, tuple)):
            return lower(b, inputs)
        out = lower(b, *inputs)
        return out if len(inputs) > 1 else (out,)
    spelled.__name__ = f"atleast_{n}d"
    spelled.__doc__ = (f"``ops.atleast_{n}d(inputs)``: a Tensor or a list of them, each "
                       f"with at least {n} dimensions")
    return functional(spelled)


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


@functional
def argsort(b, input, axis=-1, descending=False):  # noqa: A002 - MindSpore's name
    """``ops.argsort(input, axis=-1, descending=False)``: the sorting permutation."""
    x = b.const(input)
    return _movement.lower_argsort(b, b.neg(x) if descending else x, axis, kind="stable")


@functional
def searchsorted(b, sorted_sequence, values, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """``ops.searchsorted``: where ``values`` go in ``sorted_sequence`` (``right=True``
    or ``side='right'`` for the last position)."""
    side = side or ("right" if right else "left")
    out = _predicates.lower_searchsorted(b, sorted_sequence, values, side, sorter)
    return b.cast(out, dtype=np.dtype(np.int32)) if out_int32 else out


@functional
def isclose(b, input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    return b.emit("isclose", b.const(input), b.const(other), rtol=float(rtol),
                  atol=float(atol), equal_nan=bool(equal_nan))


@functional
def count_nonzero(b, x, axis=(), keep_dims=False, dtype=np.int32):
    """``ops.count_nonzero(x, axis=(), keep_dims=False, dtype=int32)``."""
    out = _predicates.lower_count_nonzero(b, x, _ms_axis(axis), keepdims=keep_dims)
    return b.cast(b.const(out), dtype=np.dtype(dtype))


__all__ = ["isnan", "isfinite", "isinf", "logical_and", "logical_or", "logical_xor",
           "logical_not", "select", "diff", "cross", "linspace", "atleast_1d", "atleast_2d",
           "atleast_3d", "argsort", "searchsorted", "isclose", "count_nonzero"]
