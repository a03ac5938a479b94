"""Gradients of CuPy arrays (a GPU): the same generated code as for NumPy, less buffer
reuse, run by CuPy through NumPy's dispatch protocols.

Skipped unless ``cupy`` imports and sees a GPU. To run: on a machine with an NVIDIA
GPU, ``pip install cupy-cuda12x`` (the wheel for its CUDA version), then
``python -m pytest tests/backends/test_cupy.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms

cp = pytest.importorskip("cupy", reason="cupy is not installed (it needs an NVIDIA GPU)")
try:
    _GPUS = cp.cuda.runtime.getDeviceCount()
except Exception:  # noqa: BLE001 - no driver, no device: the same answer
    _GPUS = 0
pytestmark = pytest.mark.skipif(not _GPUS, reason="cupy sees no GPU")


def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def slicing(a, b):
    y = a[1:, ::2] * b[None, :]
    return np.sum(y ** 2) + np.sum(a[[0, 0, 2]] * 0.5)


@pytest.mark.parametrize("fn, shapes", [(logistic, [(8,), (64, 8), (64,)]),
                                        (slicing, [(12, 10), (5,)])])
def test_cupy_gradients_equal_numpys(fn, shapes):
    r = np.random.default_rng(0)
    host = [r.uniform(0.1, 0.9, s) for s in shapes]
    device = [cp.asarray(h) for h in host]
    positions = tuple(range(len(host)))
    got = ms.grad(fn, grad_position=positions)(*device)
    expected = ms.grad(fn, grad_position=positions)(*host)
    for g, e in zip(got, expected):
        assert isinstance(g, cp.ndarray)
        np.testing.assert_allclose(cp.asnumpy(g), e, rtol=1e-10)
