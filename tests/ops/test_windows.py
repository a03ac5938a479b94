"""The convolution and pooling kernels (ops/windows.py) against per-pixel loops.

The references below loop over every output pixel and kernel tap in plain
Python, the definition the kernels' vectorised loops over taps must match; the
transposed convolution is checked as the adjoint of the convolution
(``<conv(x, w), y> == <x, conv_transpose(y, w)>``), computed in float64.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ad_compiler.ops import windows

CASES = [  # (size, kernel, stride, dilation, padding, groups, channels in/out)
    ((7, 6), (3, 2), (1, 1), (1, 1), ((0, 0), (0, 0)), 1, (2, 3)),
    ((8, 9), (3, 3), (2, 3), (1, 1), ((1, 0), (2, 1)), 1, (2, 2)),
    ((9, 8), (2, 3), (1, 2), (2, 1), ((0, 1), (1, 1)), 2, (4, 6)),
    ((11,), (4,), (3,), (1,), ((2, 1),), 1, (1, 2)),
    ((5, 4, 6), (2, 2, 3), (1, 2, 1), (1, 1, 2), ((0, 0), (1, 0), (0, 1)), 1, (2, 2)),
]


def _window_origins(size, kernel, stride, dilation, padding):
    out = windows.out_size(size, kernel, stride, dilation, padding)
    return out, list(itertools.product(*(range(n) for n in out)))


def ref_pool_argmax(xp, kernel, stride, dilation, out):
    """For each window of ``xp`` (N, C, *full): the padded position np.argmax picks."""
    n, c = xp.shape[:2]
    where = {}
    for b, ch in itertools.product(range(n), range(c)):
        for s in itertools.product(*(range(m) for m in out)):
            cells = [tuple(si * st + ki * dl for si, st, ki, dl in zip(s, stride, k, dilation))
                     for k in itertools.product(*(range(m) for m in kernel))]
            values = np.array([xp[(b, ch) + cell] for cell in cells])
            where[(b, ch) + s] = (b, ch) + cells[int(np.argmax(values))]
    return where


def _pool_case(case, rng, ties=False, nan=False):
    size, kernel, stride, dilation, padding, _, (c, _) = case
    x = rng.standard_normal((2, c) + size)
    if ties:
        x = np.round(x)  # many equal values in a window
    if nan:
        x.flat[rng.choice(x.size, 3, replace=False)] = np.nan
    return x, kernel, stride, dilation, padding


@pytest.mark.parametrize("ties,nan", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("case", CASES)
def test_max_pool_kernels_match_a_loop_over_windows(case, ties, nan):
    rng = np.random.default_rng(0)
    x, kernel, stride, dilation, padding = _pool_case(case, rng, ties, nan)
    out, _ = _window_origins(x.shape[2:], kernel, stride, dilation, padding)
    xp = windows.pad(x, padding, -np.inf)
    where = ref_pool_argmax(xp, kernel, stride, dilation, out)
    g = rng.standard_normal(x.shape[:2] + out)
    scattered = np.zeros(xp.shape)
    pooled, gathered = np.empty(g.shape), np.empty(g.shape)
    gp = windows.pad(x * 0.5 + 1.0, padding)
    for index, cell in where.items():
        scattered[cell] += g[index]
        pooled[index] = xp[cell]
        gathered[index] = gp[cell]
    crop = (slice(None),) * 2 + tuple(slice(lo, lo + m) for m, (lo, _) in zip(x.shape[2:], padding))
    p = dict(kernel=kernel, stride=stride, dilation=dilation, padding=padding)
    np.testing.assert_array_equal(windows.max_pool(x, **p), pooled)
    np.testing.assert_allclose(windows.max_pool_scatter(x, g, **p), scattered[crop], atol=1e-12)
    np.testing.assert_array_equal(windows.max_pool_gather(x, x * 0.5 + 1.0, **p), gathered)
    argmax = np.empty(g.shape, np.int64)  # return_indices: flat, in the unpadded plane
    for index, cell in where.items():
        unpadded = tuple(c - lo for c, (lo, _) in zip(cell[2:], padding))
        argmax[index] = np.ravel_multi_index(unpadded, x.shape[2:])
    np.testing.assert_array_equal(windows.max_pool_argmax(x, **p), argmax)


@pytest.mark.parametrize("case", CASES)
def test_conv_transpose_is_the_adjoint_of_conv(case):
    size, kernel, stride, dilation, padding, groups, (c, o) = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, c) + size)
    w = rng.standard_normal((o, c // groups) + kernel)
    p = dict(stride=stride, dilation=dilation, padding=padding, groups=groups)
    y = rng.standard_normal(windows.conv(x, w, **p).shape)
    dx = windows.conv_transpose(y, w, size=size, **p)
    assert dx.shape == x.shape
    np.testing.assert_allclose(np.sum(dx * x), np.sum(windows.conv(x, w, **p) * y), rtol=1e-10)
    basis = np.zeros_like(x)  # and entry by entry, against conv of the unit inputs
    for i in range(0, x.size, 7):
        basis.flat[i] = 1.0
        assert np.isclose(dx.flat[i], np.sum(windows.conv(basis, w, **p) * y), atol=1e-10)
        basis.flat[i] = 0.0


def test_kernels_keep_float32():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 2, 6, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    p = dict(stride=(2, 1), dilation=(1, 1), padding=((1, 1), (0, 1)), groups=1)
    y = windows.conv(x, w, **p)
    assert windows.conv_transpose(y, w, size=(6, 6), **p).dtype == np.float32
    q = dict(kernel=(2, 2), stride=(2, 2), dilation=(1, 1), padding=((0, 0), (0, 0)))
    g = np.ones((2, 2, 3, 3), np.float32)
    assert windows.max_pool(x, **q).dtype == np.float32
    assert windows.max_pool_scatter(x, g, **q).dtype == np.float32
    assert windows.max_pool_gather(x, x, **q).dtype == np.float32
