"""Which features the quick test enables, and which expose compiler defects still open.

``PENDING`` features generate programs the compiler gets wrong today; each entry
gives the failure and a minimal reproduction (``x`` a float64 array unless said).
Remove a feature from ``PENDING`` once its reproductions pass.
"""
from __future__ import annotations

from .generator import FEATURES

PENDING = {
    # wrong dtype: float32 x, the value on the path taken is float32, compiled gives a
    # float64 (0-d ndarray for returns) because another path (a branch not taken, a loop
    # body run zero times or left early) promotes the variable or the result:
    #     def f(x):                                 # x float32
    #         y = x + np.float64(0.5)
    #         if np.sum(x) > 100.0:
    #             return np.sum(y)
    #         return np.sum(x)                      # Python np.float32(0.6), compiled array(0.6000..., float64)
    #     def f(x):
    #         for i in range(0):
    #             x = x + np.float64(0.5)
    #         return np.sum(x)                      # Python np.float32, compiled np.float64
    "mixed_dtype",
    # wrong gradient: np.std with zero spread (a scalar, or an axis of length 1) has a NaN
    # gradient; its derivative there is 0 for the finite differences:
    #     def f(x): return np.sum(np.std(x, axis=1) + x)     # x of shape (2, 1): gradient NaN
    "std_degenerate",
    # wrong value: item assignment through a copy made with np.array (seed 1022 of
    # python -m tests.fuzz --features <base>,setitem; reproduces when the file is imported
    # as a module, as the fuzzer does):
    #     def f(x, s, t):
    #         t1 = x[..., 0] * x
    #         t4 = ops.minimum(t1, t)
    #         t6 = np.array(t4)
    #         t6[:] *= np.tanh(ops.sigmoid(0.19))
    #         return np.sum(t4)            # x 3x3, t=-0.605943: Python -6.557, compiled -3.269
    "setitem",
    # wrong dtype: in-place '*=' by a float64 NumPy scalar on a float32 array keeps float32
    # in NumPy; compiled (after a float64 call of the same gradient function) gives float64:
    #     def f(x, y, s):
    #         t5 = ops.MatMul()(x, y)
    #         t5 *= np.tanh(s)
    #         return {'loss': np.sum(x) + np.sum(t5 * t5), 'out': x}
    #     vg = ms.value_and_grad(f, grad_position=(0, 1, 2)); vg(x64, y64, s); vg(x32, y32, s)
    "augassign",
}

STABLE = tuple(f for f in FEATURES if f not in PENDING)
