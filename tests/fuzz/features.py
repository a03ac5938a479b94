"""Which features the quick test enables, and which expose compiler defects still open.

``PENDING`` features generate programs the compiler gets wrong today; each entry
gives the failure and a minimal reproduction. Remove a feature from ``PENDING``
once its reproductions pass (``python -m tests.fuzz --features all`` shows what is left).
"""
from __future__ import annotations

from .generator import FEATURES

PENDING = {
    # Programs whose float32 inputs meet a float64 NumPy scalar (np.float64 is a strong
    # type in NumPy 2: float32 array + np.float64 -> float64). Wrong dtype, three ways
    # (x a float32 array, s a Python float):
    #   1. a NumPy ufunc of Python floats is a strong np.float64, compiled as a weak float:
    #        def f(x, s): return np.sum(x + np.multiply(2.0, s))
    #        # Python np.float64(7.56...), compiled np.float32(7.56)
    #   2. results of two paths with different dtypes are merged (and become a 0-d array):
    #        def f(x):
    #            y = x + np.float64(0.5)
    #            if np.sum(x) > 100.0:
    #                return np.sum(y)
    #            return np.sum(x)        # Python np.float32(0.6), compiled array(0.6, float64)
    #   3. a loop that would promote a carried variable promotes it even when it runs 0 times:
    #        def f(x):
    #            for i in range(0):
    #                x = x + np.float64(0.5)
    #            return np.sum(x)        # Python np.float32, compiled np.float64
    "mixed_dtype",
    # Internal error: ms.grad / ms.value_and_grad of a Python-float default argument inside
    # an inlined helper:
    #     def h(a): return np.sum(np.tanh(a) ** 2)
    #     def helper(a, b=1.0): return ms.value_and_grad(h)(b)[1] * b
    #     def f(x):
    #         t = helper(x)
    #         return np.sum(x)          # KeyError in passes/rewrite.py
    "higher_order",
    # Wrong value and gradient: a loop over a list that holds an array the body writes in
    # place reads the list's items as they were when the list was built:
    #     def f(x):
    #         t = x * 1.0
    #         for v in [x, t]:
    #             t[0] += np.max(v)
    #         return np.sum(t)          # x = [0.5, -1.0, 2.0]: Python 6.0, compiled 5.5
    "containers",
}

STABLE = tuple(f for f in FEATURES if f not in PENDING)
