"""Convolution and pooling: ops.conv2d ... and the nn layers against direct loop-based
references written here, gradients against float64 central differences."""
import itertools
import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import dtype as mstype
from ad_compiler import nn, ops
from ad_compiler.tensor import Tensor
from tests.finite_differences import central

RNG = np.random.default_rng(11)


# -- references: plain loops over every output pixel ----------------------------------------

def same_pads(size, k, s, d=1):
    e = (k - 1) * d + 1
    total = max(0, (math.ceil(size / s) - 1) * s + e - size)
    return total // 2, total - total // 2


def ref_conv2d(x, w, stride=(1, 1), dilation=(1, 1), pads=(0, 0, 0, 0), groups=1):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[1], wd + pads[2] + pads[3]))
    xp[:, :, pads[0]:pads[0] + h, pads[2]:pads[2] + wd] = x
    oh = (xp.shape[2] - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (xp.shape[3] - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for b, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // og
        total = 0.0
        for ci, a, e in itertools.product(range(cg), range(kh), range(kw)):
            total += xp[b, g * cg + ci, i * stride[0] + a * dilation[0],
                        j * stride[1] + e * dilation[1]] * w[oc, ci, a, e]
        out[b, oc, i, j] = total
    return out


def ref_pool(x, k, s, pads, reduce, pad_value):
    n, c, h, wd = x.shape
    xp = np.full((n, c, h + pads[0] + pads[1], wd + pads[2] + pads[3]), pad_value)
    xp[:, :, pads[0]:pads[0] + h, pads[2]:pads[2] + wd] = x
    real = np.zeros(xp.shape[2:])
    real[pads[0]:pads[0] + h, pads[2]:pads[2] + wd] = 1
    oh, ow = (xp.shape[2] - k[0]) // s[0] + 1, (xp.shape[3] - k[1]) // s[1] + 1
    out = np.zeros((n, c, oh, ow))
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        rows, cols = slice(i * s[0], i * s[0] + k[0]), slice(j * s[1], j * s[1] + k[1])
        out[b, ch, i, j] = reduce(xp[b, ch, rows, cols], real[rows, cols])
    return out


def ref_max_pool(x, k, s, pads=(0, 0, 0, 0)):
    return ref_pool(x, k, s, pads, lambda v, r: v.max(), -np.inf)


def ref_avg_pool(x, k, s, pads=(0, 0, 0, 0), real_only=False):
    def mean(v, r):
        return v.sum() / (r.sum() if real_only else v.size)
    return ref_pool(x, k, s, pads, mean, 0.0)


def ref_conv_transpose(y, w, stride, pads, out_size):
    """Each input pixel spreads ``value * kernel`` into the (padded) output."""
    n, ci, h, wd = y.shape
    _, co, kh, kw = w.shape
    full = np.zeros((n, co, out_size[0] + pads[0] + pads[1], out_size[1] + pads[2] + pads[3]))
    for b, c, i, j in itertools.product(range(n), range(ci), range(h), range(wd)):
        full[b, :, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw] += \
            y[b, c, i, j] * w[c]
    return full[:, :, pads[0]:pads[0] + out_size[0], pads[2]:pads[2] + out_size[1]]


CONV_CASES = [  # x shape, w shape, kwargs of ops.conv2d
    ((2, 3, 6, 5), (4, 3, 3, 3), dict(pad_mode="valid")),
    ((1, 2, 7, 7), (3, 2, 3, 3), dict(pad_mode="same", stride=2)),   # asymmetric 'same'
    ((1, 2, 6, 6), (2, 2, 2, 2), dict(pad_mode="same", stride=2)),   # extra pixel bottom/right
    ((1, 2, 5, 6), (2, 2, 3, 2), dict(pad_mode="same", stride=(2, 3), dilation=(1, 2))),
    ((2, 4, 6, 6), (6, 2, 3, 3), dict(pad_mode="pad", padding=1, groups=2)),
    ((1, 2, 5, 5), (2, 1, 2, 3), dict(pad_mode="pad", padding=(1, 0, 2, 1), groups=2,
                                      stride=2)),
    ((1, 1, 7, 6), (2, 1, 3, 3), dict(pad_mode="valid", dilation=2)),
    ((1, 3, 4, 4), (3, 1, 3, 3), dict(pad_mode="same", groups=3)),   # depthwise
]


def _conv_pads(x, w, kw):
    mode = kw.get("pad_mode", "valid")
    stride = kw.get("stride", 1)
    stride = (stride, stride) if isinstance(stride, int) else stride
    dil = kw.get("dilation", 1)
    dil = (dil, dil) if isinstance(dil, int) else dil
    if mode == "same":
        return stride, dil, same_pads(x[2], w[2], stride[0], dil[0]) + \
            same_pads(x[3], w[3], stride[1], dil[1])
    p = kw.get("padding", 0)
    return stride, dil, (p,) * 4 if isinstance(p, int) else p


@pytest.mark.parametrize("xs,ws,kw", CONV_CASES)
def test_conv2d_values_match_loops(xs, ws, kw):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    stride, dil, pads = _conv_pads(xs, ws, kw)
    expected = ref_conv2d(x, w, stride, dil, pads, kw.get("groups", 1))
    np.testing.assert_allclose(ops.conv2d(x, w, **kw), expected, rtol=1e-10, atol=1e-12)


def _check_grads(f, *args):
    """``ms.value_and_grad``'s value of ``f`` is Python's; its derivatives in every
    argument agree with central differences (``ms.check_grad``, both modes)."""
    value, _ = ms.value_and_grad(f, grad_position=tuple(range(len(args))))(*args)
    assert np.isclose(value, f(*args))
    ms.check_grad(f, args, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("xs,ws,kw", CONV_CASES)
def test_conv2d_gradients_match_finite_differences(xs, ws, kw):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    r = RNG.standard_normal(ops.conv2d(x, w, **kw).shape)
    b = RNG.standard_normal(ws[0])

    def f(x, w, b):
        return np.sum(np.tanh(ops.conv2d(x, w, b, **kw)) * r)
    _check_grads(f, x, w, b)


POOL_CASES = [((2, 2, 6, 6), 2, 2, "valid"), ((1, 2, 7, 5), 3, 2, "same"),
              ((1, 1, 5, 6), (2, 3), (1, 2), "same"), ((1, 2, 6, 4), (3, 1), (3, 1), "valid")]


def _pool_pads(xs, k, s, mode):
    k = (k, k) if isinstance(k, int) else k
    s = (s, s) if isinstance(s, int) else s
    pads = same_pads(xs[2], k[0], s[0]) + same_pads(xs[3], k[1], s[1]) if mode == "same" \
        else (0, 0, 0, 0)
    return k, s, pads


@pytest.mark.parametrize("xs,k,s,mode", POOL_CASES)
def test_pool_layers_match_loops(xs, k, s, mode):
    x = RNG.standard_normal(xs)
    kk, ss, pads = _pool_pads(xs, k, s, mode)
    np.testing.assert_allclose(nn.MaxPool2d(k, s, mode)(x), ref_max_pool(x, kk, ss, pads))
    # MindSpore's 'same' average counts the real pixels only
    np.testing.assert_allclose(nn.AvgPool2d(k, s, mode)(x),
                               ref_avg_pool(x, kk, ss, pads, real_only=True))


@pytest.mark.parametrize("xs,k,s,mode", POOL_CASES)
def test_pool_gradients_match_finite_differences(xs, k, s, mode):
    x = RNG.standard_normal(xs)
    mp, ap = nn.MaxPool2d(k, s, mode), nn.AvgPool2d(k, s, mode)
    r = RNG.standard_normal(mp(x).shape)

    def f(x):
        return np.sum(mp(x * x) * r) + np.sum(np.sin(ap(x)) * r)
    _check_grads(f, x)


def test_functional_pools_with_padding():
    x = RNG.standard_normal((1, 2, 5, 6))
    np.testing.assert_allclose(ops.max_pool2d(x, 3, 2, 1), ref_max_pool(x, (3, 3), (2, 2),
                                                                         (1, 1, 1, 1)))
    np.testing.assert_allclose(ops.avg_pool2d(x, 3, 2, 1), ref_avg_pool(x, (3, 3), (2, 2),
                                                                         (1, 1, 1, 1)))
    np.testing.assert_allclose(ops.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                               ref_avg_pool(x, (3, 3), (2, 2), (1, 1, 1, 1), real_only=True))
    np.testing.assert_allclose(ops.avg_pool2d(x, 2, 2, divisor_override=3),
                               ref_avg_pool(x, (2, 2), (2, 2)) * 4 / 3)

    def f(x):
        return np.sum(ops.max_pool2d(x, 3, 2, 1) ** 2) + np.sum(ops.avg_pool2d(x, 3, 1, 1) ** 2)
    _check_grads(f, x)


def test_max_pool_gradient_goes_to_the_first_maximum_on_ties():
    x = np.zeros((1, 1, 2, 4))
    x[0, 0, 1, 1] = x[0, 0, 0, 1] = 1.0       # a tie in the first window
    g = ms.grad(lambda x: np.sum(ops.max_pool2d(x, 2, 2)))(x)
    # first window: the first maximum in row-major order; second window: all zeros, so
    # the first element
    assert g[0, 0].tolist() == [[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]


def test_adaptive_avg_pool_matches_bins():
    x = RNG.standard_normal((2, 3, 7, 5))
    out = nn.AdaptiveAvgPool2d((3, 2))(x)
    for i, j in itertools.product(range(3), range(2)):
        h0, h1 = (i * 7) // 3, math.ceil((i + 1) * 7 / 3)
        w0, w1 = (j * 5) // 2, math.ceil((j + 1) * 5 / 2)
        np.testing.assert_allclose(out[:, :, i, j], x[:, :, h0:h1, w0:w1].mean(axis=(2, 3)))
    assert nn.AdaptiveAvgPool2d((None, 1))(x).shape == (2, 3, 7, 1)
    assert ops.adaptive_avg_pool2d(x[0], 1).shape == (3, 1, 1)
    r = RNG.standard_normal((2, 3, 3, 2))
    _check_grads(lambda x: np.sum(np.cos(ops.adaptive_avg_pool2d(x, (3, 2))) * r), x)


TRANSPOSE_CASES = [  # in, out, kernel, stride, pad_mode, padding, output_padding, H, W
    (2, 3, 3, 2, "same", 0, 0, 3, 4),
    (2, 3, 2, 2, "valid", 0, 0, 3, 3),
    (1, 2, 3, 1, "valid", 0, 0, 4, 2),
    (3, 2, 1, 2, "same", 0, 0, 3, 3),          # kernel smaller than the stride
    (2, 2, 3, 2, "pad", (1, 0, 1, 1), 1, 3, 3),
]


@pytest.mark.parametrize("cin,cout,k,s,mode,pad,op,h,w", TRANSPOSE_CASES)
def test_conv2d_transpose_is_the_input_gradient_of_conv2d(cin, cout, k, s, mode, pad, op, h,
                                                           w):
    layer = nn.Conv2dTranspose(cin, cout, k, s, mode, pad, op, weight_init="normal",
                               dtype=mstype.float64)
    y = RNG.standard_normal((2, cin, h, w))
    out = layer(y).asnumpy()
    extent_out = {"same": (h * s, w * s),
                  "valid": (h * s + max(k - s, 0), w * s + max(k - s, 0))}
    if mode == "pad":
        pads = pad
        size = ((h - 1) * s - pads[0] - pads[1] + k + op, (w - 1) * s - pads[2] - pads[3] + k + op)
    else:
        size = extent_out[mode]
        pads = same_pads(size[0], k, s) + same_pads(size[1], k, s) if mode == "same" \
            else (0, 0, 0, 0)
    assert out.shape == (2, cout) + size
    np.testing.assert_allclose(out, ref_conv_transpose(y, layer.weight.asnumpy(), (s, s), pads,
                                                       size), rtol=1e-10, atol=1e-12)
    r = RNG.standard_normal(out.shape)
    wv = layer.weight.asnumpy().copy()

    def f(y, wv):
        return np.sum(np.tanh(ops.conv_transpose2d(y, wv, None, s, layer._pads,
                                                   layer._extra)) * r)
    _check_grads(f, y, wv)


def test_conv1d_matches_conv2d_of_height_one():
    x = RNG.standard_normal((2, 4, 9))
    conv = nn.Conv1d(4, 6, 3, stride=2, group=2, has_bias=True, bias_init="normal",
                     dtype=mstype.float64)
    assert conv.weight.shape == (6, 2, 3) and conv.bias.shape == (6,)
    w, b = conv.weight.asnumpy(), conv.bias.asnumpy()
    expected = ops.conv2d(x[:, :, None], w[:, :, None], b, stride=(1, 2), pad_mode="same",
                          groups=2)[:, :, 0]
    np.testing.assert_allclose(conv(x).asnumpy(), expected)
    r = RNG.standard_normal(ops.conv1d(x, w, None, 2, "pad", (2, 1), 2, 2).shape)

    def f(x, w):  # stride 2, padding (2, 1), dilation 2, 2 groups
        return np.sum(ops.conv1d(x, w, None, 2, "pad", (2, 1), 2, 2) ** 2 * r)
    _check_grads(f, x, w)


# -- layers -----------------------------------------------------------------------------------

def test_conv2d_defaults_and_parameters():
    conv = nn.Conv2d(3, 8, 5)
    assert (conv.stride, conv.pad_mode, conv.dilation, conv.group, conv.has_bias) == \
        ((1, 1), "same", (1, 1), 1, False)
    assert conv.bias is None
    assert [(p.name, p.shape) for p in conv.trainable_params()] == [("weight", (8, 3, 5, 5))]
    assert conv.weight.dtype == mstype.float32
    bound = 1 / math.sqrt(3 * 25)
    assert 0.8 * bound < np.abs(conv.weight.asnumpy()).max() <= bound
    grouped = nn.Conv2d(4, 6, (3, 2), group=2, has_bias=True, weight_init="zeros",
                        bias_init=0.5)
    assert grouped.weight.shape == (6, 2, 3, 2) and grouped.bias.asnumpy().tolist() == [0.5] * 6
    assert nn.Conv2dTranspose(4, 6, 3, group=2).weight.shape == (4, 3, 3, 3)


def test_lenet_float32_stays_float32_and_weights_get_gradients():
    np.random.seed(0)
    net = nn.SequentialCell(nn.Conv2d(1, 6, 5, pad_mode="valid", has_bias=True), nn.ReLU(),
                            nn.MaxPool2d(2, 2), nn.Conv2d(6, 16, 5, pad_mode="valid"),
                            nn.ReLU(), nn.AvgPool2d(2, 2), nn.Flatten(), nn.Dense(16 * 5 * 5, 10))
    x = Tensor(RNG.standard_normal((2, 1, 32, 32)).astype(np.float32))
    assert net(x).shape == (2, 10) and net(x).dtype == mstype.float32
    params = net.trainable_params()
    loss, grads = ms.value_and_grad(lambda x: (net(x) ** 2).sum(), None, params)(x)
    assert loss.dtype == mstype.float32
    assert [g.shape for g in grads] == [p.shape for p in params]
    assert all(np.asarray(g).dtype == np.float32 for g in grads)


def test_cell_weight_gradients_match_finite_differences():
    net = nn.SequentialCell(nn.Conv2d(2, 3, 3, stride=2, has_bias=True, dtype=mstype.float64,
                                      bias_init="normal"),
                            nn.Tanh(), nn.MaxPool2d(2, 1, "same"), nn.Flatten())
    x = RNG.standard_normal((2, 2, 5, 5))
    params = net.trainable_params()
    _, grads = ms.value_and_grad(lambda x: (net(x) ** 2).sum(), None, params)(x)
    for p, g in zip(params, grads):
        value = p.asnumpy().copy()

        def f(v, p=p):
            p.set_data(Tensor(v))
            return float((net(x) ** 2).sum().asnumpy())
        expected = central(f, value.copy())
        p.set_data(Tensor(value))
        np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-6, atol=1e-8)


def test_flatten():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert ops.flatten(x, start_dim=-2).shape == (2, 12)
    assert ops.flatten(np.float64(3.0)).shape == (1,)


def test_generated_gradient_names_the_kernels():
    def f(x, w):
        return np.sum(ops.max_pool2d(ops.conv2d(x, w, pad_mode="same"), 2))
    src = ms.adjoint_source(f, np.ones((1, 1, 4, 4)), np.ones((1, 1, 3, 3)),
                            grad_position=(0, 1))
    assert "conv_transpose(" in src and "conv_filter(" in src and "max_pool_scatter(" in src
    assert "padding=((1, 1), (1, 1))" in src


# -- errors ------------------------------------------------------------------------------------

def test_bad_arguments_raise_mindspore_error_types():
    with pytest.raises(TypeError):
        nn.Conv2d(3.0, 8, 3)
    with pytest.raises(ValueError):
        nn.Conv2d(3, 8, 0)
    with pytest.raises(ValueError):
        nn.Conv2d(3, 8, 3, pad_mode="same", padding=1)
    with pytest.raises(ValueError):
        nn.Conv2d(3, 8, 3, pad_mode="zeros")
    with pytest.raises(ValueError):
        nn.Conv2d(3, 8, 3, group=2)
    with pytest.raises(ValueError):
        nn.MaxPool2d(2, 2, "full")
    with pytest.raises(TypeError):
        nn.AvgPool2d((2, 2, 2))


def test_bad_shapes_raise():
    conv = nn.Conv2d(3, 4, 3)
    with pytest.raises(RuntimeError, match="2 channels"):
        conv(np.ones((1, 2, 5, 5), np.float32))
    with pytest.raises(ValueError, match="4-d"):
        conv(np.ones((2, 5, 5), np.float32))
    with pytest.raises(ValueError, match="smaller than the kernel"):
        ops.conv2d(np.ones((1, 3, 2, 2)), np.ones((4, 3, 3, 3)))
    with pytest.raises(ValueError, match="4-d"):
        nn.MaxPool2d(2, 2)(np.ones((4, 4)))


def test_bad_shape_in_compiled_code_is_a_located_error_of_the_same_type():
    conv = nn.Conv2d(3, 4, 3)

    def f(x):
        return conv(x).sum()
    with pytest.raises(RuntimeError, match="2 channels") as info:
        ms.grad(f)(Tensor(np.ones((1, 2, 5, 5), np.float32)))
    # located at the layer's construct, then at the user's call of the layer
    assert "nn/conv.py" in info.value.__notes__[0]
    assert "test_conv.py" in info.value.__notes__[1] and "conv(x).sum()" in info.value.__notes__[1]
    with pytest.raises(ValueError, match="4-d") as info:
        ms.grad(f)(Tensor(np.ones((2, 5, 5), np.float32)))


def test_second_derivative_through_conv_and_pool():
    """The gradient is itself differentiable: grad of (grad . v) against central differences
    of the compiled first gradient."""
    w = RNG.standard_normal((2, 1, 2, 2))
    v = RNG.standard_normal((1, 1, 5, 4))

    def f(x):
        return np.sum(ops.avg_pool2d(ops.conv2d(x, w, pad_mode="same", stride=2) ** 3, 2, 1))

    df = ms.grad(f)

    def directional(x):
        return np.sum(df(x) * v)

    x = RNG.standard_normal((1, 1, 5, 4))
    ms.check_grad(directional, (x,), rtol=1e-5, atol=1e-7)
