"""``np.select`` with a computed Python float among the choices keeps NumPy's dtype
(the float is weak: float32 choices stay float32) and its gradient."""
from __future__ import annotations

import numpy as np

import ad_compiler as ms


def select_with_float(x, s):
    return np.select([x < 0.16, -0.25 > 1.27], [x, s * 2.0], -0.4)


def test_float32_stays_float32_with_a_python_float_choice():
    x = np.array([0.1, 0.5], dtype=np.float32)
    value, (gx, gs) = ms.value_and_grad(select_with_float, grad_position=(0, 1))(x, 1.5)
    assert select_with_float(x, 1.5).dtype == np.float32
    assert value.dtype == np.float32 and gx.dtype == np.float32 and type(gs) is float


def test_gradient_against_central_differences():
    ms.check_grad(select_with_float, (np.array([0.1, 0.5, -0.3]), 1.5))
