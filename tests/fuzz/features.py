"""Which features the quick test enables, and which expose compiler defects still open.

``PENDING`` features generate programs the compiler gets wrong today; each entry
gives the failure and a minimal reproduction. Remove a feature from ``PENDING``
once its reproductions pass (``python -m tests.fuzz --features all`` shows what is left).
"""
from __future__ import annotations

from .generator import FEATURES

#: The defects it held before (wrong dtypes of float32 inputs meeting float64 NumPy
#: scalars, a KeyError of ms.grad inside a helper, lists holding arrays written in
#: place in a loop, '+=' through aliases of input views) are fixed or now refused
#: with a located error. Add a feature here, with a minimal
#: reproduction in a comment, when the fuzzer finds a defect not fixed at once.
PENDING: set = {
    # wrong value (seed 306 of `--features all`): an in-place write through the loop
    # variable of a 'for' over a list a comprehension built does not reach the list
    # (a literal list is right; `t[0] /= 2.0` is refused with a located error):
    #     def g(x):
    #         t = [x[k] * 1.05 for k in range(3)]
    #         for i in t:
    #             i /= 2.0
    #         return float(np.sum(np.concatenate(t)))
    #     x = np.array([[-0.95, 0.9], [-0.35, -1.4], [0.55, -0.26]])
    #     # Python -0.79275; value_and_grad(g)(x)[0] gives -1.5855 (the write is lost)
    "comprehension",
}

STABLE = tuple(f for f in FEATURES if f not in PENDING)
