"""The exception types MindSpore 2.x raises for wrong shapes given to Dense and to the
initial values of Dense / Conv2d, with messages saying what was expected and what came."""
import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn


def _dense():
    np.random.seed(0)
    return nn.Dense(3, 2)


def test_dense_wrong_number_of_features_eagerly():
    with pytest.raises(ValueError, match=r"in_channels = 3, got an input of shape \(4, 5\)"):
        _dense()(ms.Tensor(np.ones((4, 5), np.float32)))


def test_dense_rank_one_input_is_one_example_and_a_scalar_is_refused():
    d = _dense()
    x = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_allclose(d(x), d.weight.asnumpy() @ x + d.bias.asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"got an input of shape \(\)"):
        d(np.float32(1.0))


def test_dense_wrong_features_compiled_names_the_layer_line():
    d = _dense()

    def loss(x):
        return np.sum(d(x))
    with pytest.raises(ValueError, match="For 'Dense'") as info:
        ms.grad(loss)(np.ones((4, 5), np.float32))
    assert "layers.py" in str(info.value) and "check_dense_input" in str(info.value)
    with pytest.raises(ValueError, match="For 'Dense'"):
        ms.value_and_grad(d, None, d.trainable_params())(np.ones((2, 7), np.float32))


def test_dense_higher_rank_input_still_works_and_adds_no_code():
    d = _dense()
    x = np.random.default_rng(0).normal(size=(2, 4, 3))
    np.testing.assert_allclose(d(x), x @ d.weight.asnumpy().T + d.bias.asnumpy(), rtol=1e-6)

    def loss(x):
        return np.sum(d(x) ** 2)
    src = ms.adjoint_source(loss, x)
    assert "check" not in src


@pytest.mark.parametrize("make, match", [
    (lambda w: nn.Dense(3, 2, weight_init=w), r"For 'Dense', weight_init .* \(2, 3\), got .* \(3, 2\)"),
    (lambda w: nn.Dense(2, 3, has_bias=True, bias_init=w), r"For 'Dense', bias_init .* \(3,\), got .* \(3, 2\)"),
    (lambda w: nn.Conv2d(2, 3, 1, weight_init=w), r"For 'Conv2d', weight_init .* \(3, 2, 1, 1\), got .* \(3, 2\)"),
    (lambda w: nn.Conv2d(2, 3, 1, has_bias=True, bias_init=w), r"For 'Conv2d', bias_init .* \(3,\)"),
])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_weight_init_of_the_wrong_shape_is_a_value_error(make, match, as_tensor):
    w = np.ones((3, 2), np.float32)
    with pytest.raises(ValueError, match=match):
        make(ms.Tensor(w) if as_tensor else w)


def test_conv2d_wrong_channels_is_a_runtime_error():
    np.random.seed(0)
    conv = nn.Conv2d(3, 2, 3)
    with pytest.raises(RuntimeError, match="4 channels.*expects 3"):
        conv(np.ones((1, 4, 5, 5), np.float32))
