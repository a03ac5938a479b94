"""Run-time helpers that generated code calls as ``rt.<name>(...)``.

Codegen writes one expression per op, but NumPy's item assignment is a
statement that mutates its target. These helpers give the functional forms the
indexing primitives (ops/indexing.py) need, each a copy followed by NumPy's own
assignment, so the result equals what the same statement does in NumPy:

>>> import numpy as np
>>> x = np.zeros(4)
>>> index_add(x, [0, 0, 2], 1.0)        # like ``x[[0, 0, 2]] += 1``: repeats add once
array([1., 0., 1., 0.])
>>> scatter_add(x, [0, 0, 2], 1.0)      # ``np.add.at``: repeats accumulate
array([2., 0., 1., 0.])
>>> x                                   # inputs are never written
array([0., 0., 0., 0.])

Invariants:

* no helper writes into its arguments; each returns a new array of the first
  argument's shape and dtype (0-d inputs give 0-d arrays);
* ``index`` is anything NumPy accepts as an index, and ``value`` broadcasts to
  the selection, with NumPy's casting rules for assignment.
"""
from __future__ import annotations

import numpy as np


def index_set(x, index, value):
    """``x`` with ``x[index] = value`` (with repeated indices, NumPy's last write wins)."""
    out = np.array(x, copy=True)
    out[index] = value
    return out


def index_add(acc, index, value):
    """``acc`` with ``acc[index] += value``: NumPy's augmented assignment, which adds
    once per selected position even when an index array repeats it."""
    out = np.array(acc, copy=True)
    out[index] += value
    return out


def index_sub(acc, index, value):
    """``acc`` with ``acc[index] -= value`` (NumPy's augmented assignment)."""
    out = np.array(acc, copy=True)
    out[index] -= value
    return out


def scatter_add(acc, index, value):
    """``acc`` with every selected element of ``value`` added (``np.add.at``): a
    position selected k times receives all k contributions."""
    out = np.array(acc, copy=True)
    np.add.at(out, index, value)
    return out


def winners(shape, index):
    """Which elements of an assignment's selection land in the result.

    ``x[index] = v`` on an array of ``shape`` writes each element of the
    selection; where an index array selects one position several times only one
    write survives. The result (a bool array of the selection's shape) marks the
    survivors, found by performing the same assignment on element numbers, so it
    agrees with NumPy by construction.
    """
    dummy = np.broadcast_to(np.empty((), dtype=bool), shape)
    sel_shape = dummy[index].shape
    order = np.arange(int(np.prod(sel_shape, dtype=np.int64))).reshape(sel_shape)
    ids = np.full(shape, -1, dtype=order.dtype)
    ids[index] = order
    return ids[index] == order


def sum_to(ct, like):
    """``ct`` summed over the axes along which ``like`` was broadcast to ``ct``'s shape
    (the run-time form of un-broadcasting, for lengths that depend on data)."""
    shape = np.shape(like)
    if np.shape(ct) == shape:
        return ct
    lead = np.ndim(ct) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and np.shape(ct)[lead + i] != 1)
    return np.sum(ct, axis=axes, keepdims=True).reshape(shape) if axes else \
        np.reshape(ct, shape)
