"""MaxPool2d / AvgPool2d / Conv2d options of MindSpore 2.x: data_format='NHWC',
ceil_mode, return_indices, count_include_pad / divisor_override with ceil_mode, unbatched
inputs; values against a window-by-window reference written here, gradients against
central finite differences in float64."""
import itertools
import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn, ops
from tests.finite_differences import central

RNG = np.random.default_rng(7)


def _sizes(n, k, s, p, d, ceil):
    e = d * (k - 1) + 1
    if not ceil:
        return (n + 2 * p - e) // s + 1
    out = math.ceil((n + 2 * p - e) / s) + 1
    return out - 1 if (out - 1) * s >= n + p else out


def _reference(x, k, s, p, kind, ceil=False, d=1, include_pad=True, divisor=None):
    """Pooling of (N, C, H, W), one window at a time."""
    n, c, h, w = x.shape
    oh, ow = _sizes(h, k, s, p, d, ceil), _sizes(w, k, s, p, d, ceil)
    out = np.zeros((n, c, oh, ow))
    idx = np.zeros((n, c, oh, ow), np.int64)
    for a, b, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        rows = [i * s - p + r * d for r in range(k)]
        cols = [j * s - p + q * d for q in range(k)]
        inside = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
        if kind == "max":
            best = max(inside, key=lambda rq: (x[a, b][rq], -rq[0], -rq[1]))
            out[a, b, i, j], idx[a, b, i, j] = x[a, b][best], best[0] * w + best[1]
            continue
        total = sum(x[a, b][rq] for rq in inside)
        if divisor:
            count = divisor
        elif include_pad:   # window positions inside the padded input, not the ceil overhang
            count = sum(1 for r in rows if -p <= r < h + p) * sum(1 for q in cols if -p <= q < w + p)
        else:
            count = len(inside)
        out[a, b, i, j] = total / count
    return out, idx


def _check_grad(layer, x):
    wts = RNG.normal(size=np.shape(layer(x)[0] if isinstance(layer(x), tuple) else layer(x)))

    def loss(v):
        out = layer(v)
        out = out[0] if isinstance(out, tuple) else out
        return np.sum(out * wts)
    g = ms.grad(loss)(x)
    np.testing.assert_allclose(g, central(lambda v: float(loss(v)), x), rtol=1e-6, atol=1e-7)


X = RNG.permutation(2 * 2 * 7 * 6).reshape(2, 2, 7, 6).astype(np.float64) / 10.0  # distinct


@pytest.mark.parametrize("k, s, p", [(2, 2, 0), (3, 2, 1), (2, 3, 1), (3, 3, 0)])
def test_max_pool_ceil_mode_and_indices(k, s, p):
    pool = nn.MaxPool2d(k, s, pad_mode="pad", padding=p, ceil_mode=True, return_indices=True)
    out, idx = pool(X)
    want, want_idx = _reference(X, k, s, p, "max", ceil=True)
    np.testing.assert_allclose(out, want)
    np.testing.assert_array_equal(idx, want_idx)
    assert idx.dtype == np.int64
    _check_grad(pool, X)


def test_max_pool_indices_with_dilation_and_floor_mode():
    pool = nn.MaxPool2d(2, 1, pad_mode="pad", padding=1, dilation=2, return_indices=True)
    out, idx = pool(X)
    want, want_idx = _reference(X, 2, 1, 1, "max", d=2)
    np.testing.assert_allclose(out, want)
    np.testing.assert_array_equal(idx, want_idx)
    flat = X.reshape(2, 2, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.reshape(2, 2, -1), 2),
                                  out.reshape(2, 2, -1))


def test_indices_inside_compiled_code_have_no_gradient():
    pool = nn.MaxPool2d(3, 2, pad_mode="pad", padding=1, ceil_mode=True, return_indices=True)

    def f(x):
        out, idx = pool(x)
        return np.sum(out * out) + np.sum(idx) * 0.0
    g = ms.grad(f)(X)
    np.testing.assert_allclose(g, central(lambda v: float(f(v)), X), rtol=1e-6, atol=1e-8)
    src = ms.adjoint_source(f, X)
    assert "max_pool_argmax" in src or "max_pool(" in src


@pytest.mark.parametrize("include_pad, divisor", [(True, None), (False, None), (True, 5)])
@pytest.mark.parametrize("k, s, p", [(2, 2, 0), (3, 2, 1), (3, 2, 0)])
def test_avg_pool_ceil_mode(k, s, p, include_pad, divisor):
    pool = nn.AvgPool2d(k, s, pad_mode="pad", padding=p, ceil_mode=True,
                        count_include_pad=include_pad, divisor_override=divisor)
    want, _ = _reference(X, k, s, p, "avg", ceil=True, include_pad=include_pad, divisor=divisor)
    np.testing.assert_allclose(pool(X), want, rtol=1e-12)
    _check_grad(pool, X)


def test_avg_pool_valid_mode_with_count_include_pad_false_and_divisor():
    np.testing.assert_allclose(nn.AvgPool2d(3, 2, divisor_override=4)(X),
                               _reference(X, 3, 2, 0, "avg", divisor=4)[0], rtol=1e-12)


@pytest.mark.parametrize("make", [lambda f: nn.MaxPool2d(3, 2, pad_mode="same", data_format=f),
                                  lambda f: nn.AvgPool2d(2, 2, data_format=f),
                                  lambda f: nn.AvgPool2d(3, 2, pad_mode="same", data_format=f)])
def test_pooling_nhwc_is_nchw_transposed(make):
    x_nhwc = np.transpose(X, (0, 2, 3, 1))
    got = make("NHWC")(x_nhwc)
    np.testing.assert_allclose(got, np.transpose(make("NCHW")(X), (0, 2, 3, 1)))
    _check_grad(make("NHWC"), x_nhwc)


def test_conv2d_nhwc():
    np.random.seed(3)
    conv = nn.Conv2d(2, 3, (3, 2), stride=2, has_bias=True, bias_init="normal",
                     data_format="NHWC", dtype=ms.float64)
    assert conv.weight.shape == (3, 3, 2, 2)              # (out, kh, kw, in / group)
    assert np.abs(conv.weight.asnumpy()).max() <= 1 / math.sqrt(2 * 3 * 2)
    ref = nn.Conv2d(2, 3, (3, 2), stride=2, has_bias=True, dtype=ms.float64,
                    weight_init=ms.Tensor(np.transpose(conv.weight.asnumpy(), (0, 3, 1, 2))),
                    bias_init=ms.Tensor(conv.bias.asnumpy()))
    x_nhwc = np.transpose(X, (0, 2, 3, 1))
    np.testing.assert_allclose(conv(x_nhwc), np.transpose(ref(X), (0, 2, 3, 1)), rtol=1e-12)
    _check_grad(conv, x_nhwc)
    gw = ms.grad(lambda: np.sum(conv(x_nhwc) ** 2), None, conv.trainable_params())()

    def loss_of(w):
        conv.weight.set_data(w)
        return float(np.sum(conv(x_nhwc) ** 2))
    w0 = conv.weight.asnumpy().copy()
    np.testing.assert_allclose(gw[0], central(loss_of, w0), rtol=1e-6, atol=1e-8)


def test_float32_and_unbatched_inputs():
    x32 = X.astype(np.float32)
    out, idx = nn.MaxPool2d(2, 2, pad_mode="pad", ceil_mode=True, return_indices=True)(x32[0])
    want, want_idx = _reference(X[:1], 2, 2, 0, "max", ceil=True)
    assert out.dtype == np.float32 and out.shape == want.shape[1:]
    np.testing.assert_array_equal(idx, want_idx[0])
    pooled = nn.AvgPool2d(3, 2, pad_mode="pad", padding=1, ceil_mode=True)(x32)
    assert pooled.dtype == np.float32
    avg = nn.AvgPool2d(2, 2)
    g = ms.grad(lambda v: np.sum(avg(v)))(x32[0])
    assert g.dtype == np.float32 and g.shape == x32[0].shape


@pytest.mark.parametrize("make", [
    lambda: nn.MaxPool2d(2, ceil_mode=True),                         # 'pad' only options
    lambda: nn.MaxPool2d(2, return_indices=True, pad_mode="same"),
    lambda: nn.MaxPool2d(2, dilation=2),
    lambda: nn.MaxPool2d(2, pad_mode="pad", data_format="NHWC"),     # MindSpore refuses these
    lambda: nn.AvgPool2d(2, ceil_mode=True, data_format="NHWC"),
    lambda: nn.AvgPool2d(2, divisor_override=0),
    lambda: nn.Conv2d(2, 3, 3, data_format="NCWH"),
])
def test_option_errors(make):
    with pytest.raises(ValueError):
        make()


def test_functional_forms():
    out, idx = ops.max_pool2d(ms.Tensor(X), 3, 2, 1, return_indices=True, ceil_mode=True)
    want, want_idx = _reference(X, 3, 2, 1, "max", ceil=True)
    np.testing.assert_allclose(out.asnumpy(), want)
    np.testing.assert_array_equal(idx.asnumpy(), want_idx)
    np.testing.assert_allclose(ops.avg_pool2d(X, 3, 2, 1, ceil_mode=True),
                               _reference(X, 3, 2, 1, "avg", ceil=True)[0], rtol=1e-12)
