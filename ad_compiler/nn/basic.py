"""Embedding and Dropout.

Invariants:

- Embedding's table is the Parameter ``embedding_table`` of shape
  ``(vocab_size, embedding_size)`` (default init ``'normal'``: N(0, 0.01**2)); a
  ``padding_idx`` row starts at zero and gets no gradient; the other rows get the
  scatter-add of the cotangents of the positions that read them.
- Dropout keeps each element with probability ``keep_prob`` (or ``1 - p`` when ``p``
  is given) and scales the kept ones by ``1 / keep_prob``; the mask is drawn from
  ``np.random`` at each call: eagerly, or by the gradient function before it runs
  the compiled code (an input of it), in the same order, so after the same
  ``np.random.seed`` both see the same mask. The gradient goes through the mask.
  In eval mode (the default until ``set_train()``) it is the identity.
"""
from __future__ import annotations

import numpy as np

from .. import dtype as _mstype
from .. import ops as _ops
from .cell import Cell
from .layers import _initial_value
from .parameter import Parameter

__all__ = ["Embedding", "Dropout"]


class Embedding(Cell):
    """Rows of ``embedding_table`` looked up by integer ids: ``(*ids.shape, embedding_size)``."""

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=_mstype.float32, padding_idx=None):
        super().__init__()
        for what, value in (("vocab_size", vocab_size), ("embedding_size", embedding_size)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"Embedding {what} must be an int, got {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"Embedding {what} must be positive, got {value}")
        if not isinstance(use_one_hot, bool):
            raise TypeError(f"Embedding use_one_hot must be a bool, got {type(use_one_hot).__name__}")
        if padding_idx is not None and not 0 <= padding_idx < vocab_size:
            raise ValueError(f"Embedding padding_idx must be in [0, {vocab_size}), "
                             f"got {padding_idx!r}")
        self.vocab_size, self.embedding_size = int(vocab_size), int(embedding_size)
        self.use_one_hot, self.dtype = use_one_hot, dtype
        self.padding_idx = padding_idx
        table = _initial_value(embedding_table, (self.vocab_size, self.embedding_size),
                               np.float32)
        if padding_idx is not None:
            table[padding_idx] = 0.0
        self.embedding_table = Parameter(table, name="embedding_table")

    def construct(self, ids):
        return _ops.embedding(ids, self.embedding_table, self.padding_idx)

    def extend_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, embedding_table={self.embedding_table}, "
                f"dtype={self.dtype}, padding_idx={self.padding_idx}")


class Dropout(Cell):
    """Randomly zero elements in training mode; ``keep_prob`` (default 0.5) or ``p``."""

    def __init__(self, keep_prob=0.5, p=None, dtype=_mstype.float32):
        super().__init__()
        if p is not None:
            if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p < 1.0:
                raise ValueError(f"Dropout p must be a float in [0, 1), got {p!r}")
            keep_prob = 1.0 - p
        elif isinstance(keep_prob, bool) or not isinstance(keep_prob, (int, float)) \
                or not 0.0 < keep_prob <= 1.0:
            raise ValueError(f"Dropout keep_prob must be a float in (0, 1], got {keep_prob!r}")
        self.keep_prob = float(keep_prob)
        self.p = 1.0 - self.keep_prob

    def construct(self, x):
        if self.training:
            return _ops.dropout(x, self.p, True)
        return x

    def extend_repr(self) -> str:
        return f"p={self.p}"
