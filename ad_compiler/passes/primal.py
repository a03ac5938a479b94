"""Passes on the primal IR, run before reverse mode differentiates it.

Each one changes no forward value; it states a fact about derivatives that the
local VJP rules cannot see (docs/optimizations.md):

* ``shift_invariance`` (shift.py): a stabilising shift whose derivative is zero
  is read through ``stop_gradient``;
* ``recognise_sigmoid`` (sigmoid.py): ``1 / (1 + np.exp(-a))`` is ``sigmoid(a)``,
  whose VJP is written in terms of its value.
"""
from __future__ import annotations

from ..ir.core import Function
from .shift import shift_invariance
from .sigmoid import recognise_sigmoid

PRIMAL_PASSES = [recognise_sigmoid, shift_invariance]


def prepare_for_reverse(fn: Function, passes=PRIMAL_PASSES) -> Function:
    for p in passes:
        fn = p(fn)
    return fn
