"""The gradient of ``w`` in ``x @ w.T`` comes out row-major (transpose VJP of a product).

The transpose's VJP turns ``(a @ c).T`` into ``c.T @ a.T``: same value, but a
C-contiguous array instead of a transposed view, which element-wise updates (an
optimizer's) read many times faster. Checked against central finite differences
in float64; the primal value stays exactly Python's.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from tests.finite_differences import central, central_at


def dense(x, w, b):
    return np.sum(np.tanh(x @ w.T + b) ** 2)


def shared(x, w):
    wt = w.T  # used twice: its cotangent is a sum, not one product
    return np.sum(np.sin(x @ wt)) + np.sum(wt * wt)


def transposed_product(a, c, s):
    return np.sum((a @ c).T * s)  # the primal (a @ c).T is Python's, bit for bit


def batched(x, w):
    return np.sum(np.tanh(x @ np.swapaxes(w, -1, -2)))


CASES = [
    (dense, [(5, 4), (3, 4), (3,)], (0, 1, 2)),
    (shared, [(2, 3), (3, 3)], (0, 1)),
    (transposed_product, [(3, 4), (4, 2), (2, 3)], (0, 1, 2)),
    (batched, [(2, 5, 4), (2, 3, 4)], (0, 1)),
]


@pytest.mark.parametrize("f,shapes,positions", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_match_finite_differences(f, shapes, positions):
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s) for s in shapes]
    value, grads = ms.value_and_grad(f, grad_position=positions)(*args)
    assert float(value) == f(*args)
    for p, g in zip(positions, grads):
        np.testing.assert_allclose(g, central_at(f, args, p), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_weight_gradient_is_row_major(dtype):
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in [(8, 16), (4, 16), (4,)])
    dw = ms.grad(dense, grad_position=1)(x, w, b)
    assert dw.dtype == dtype and dw.shape == w.shape
    assert dw.flags.c_contiguous
    source = ms.adjoint_source(dense, x, w, b, grad_position=1)
    assert " @ x\n" in source  # dy.T @ x, not (x.T @ dy).T


def test_second_order_through_the_product():
    rng = np.random.default_rng(2)
    x, w, b, v = (rng.standard_normal(s) for s in [(5, 4), (3, 4), (3,), (3, 4)])
    grad_w = ms.grad(dense, grad_position=1)

    def directional(w):
        return np.sum(grad_w(x, w, b) * v)
    hv = ms.grad(directional)(w)
    np.testing.assert_allclose(hv, central(directional, w), rtol=1e-5,
                               atol=1e-6)
