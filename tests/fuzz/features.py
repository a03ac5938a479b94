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
}

STABLE = tuple(f for f in FEATURES if f not in PENDING)
