"""Which features the quick test enables, and which expose compiler defects still open.

``PENDING`` features generate programs the compiler gets wrong today; each entry
gives the failure and a minimal reproduction. Remove a feature from ``PENDING``
once its reproductions pass (``python -m tests.fuzz --features all`` shows what is left).
"""
from __future__ import annotations

from .generator import FEATURES

#: The defects it held before (wrong dtypes of float32 inputs meeting float64 NumPy
#: scalars, a KeyError of ms.grad inside a helper, lists holding arrays written in
#: place in a loop, '+=' through aliases of input views, in-place writes through the
#: loop variable over a list a comprehension or a loop built) are fixed or now refused
#: with a located error. Add a feature here, with a minimal
#: reproduction in a comment, when the fuzzer finds a defect not fixed at once.
PENDING: set = set()

STABLE = tuple(f for f in FEATURES if f not in PENDING)
