"""``ms.checkpoint`` and ``Cell.recompute()``: same values and gradients as without,
the region's forward values recomputed in the backward sweep (checked against
central differences through ``ms.check_grad``, and on the generated source)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn
from ad_compiler.errors import GradTypeError
from tests.finite_differences import central


@ms.checkpoint
def block(x, w):
    for _ in range(4):
        x = np.tanh(x * w + 0.1)
    return x


def with_checkpoint(x, w):
    y = block(x, w)
    return np.sum(block(y, w) ** 2)


def without(x, w):
    y = block.fn(x, w)
    return np.sum(block.fn(y, w) ** 2)


@ms.checkpoint
def two_outputs(x, s):
    if np.sum(x) > 0.0:
        x = x * s
    return np.sin(x), x * x


def uses_two(x, s):
    a, b = two_outputs(x, s)
    return np.sum(a * b) + s


X = np.array([0.3, -0.2, 0.5])
W = np.array([0.9, 1.1, 0.7])


def test_values_and_gradients_equal_the_plain_function():
    value, grads = ms.value_and_grad(with_checkpoint, grad_position=(0, 1))(X, W)
    want, want_grads = ms.value_and_grad(without, grad_position=(0, 1))(X, W)
    assert value == with_checkpoint(X, W) == want
    for g, h in zip(grads, want_grads):
        np.testing.assert_allclose(g, h, rtol=1e-13)


@pytest.mark.parametrize("fn, args", [(with_checkpoint, (X, W)), (uses_two, (X, 1.3)),
                                      (uses_two, (-X, 0.7))])
def test_against_central_differences(fn, args):
    ms.check_grad(fn, args)                            # reverse and forward mode
    ms.check_grad(fn, args, order=2)    # forward over reverse, reverse over reverse


def test_the_forward_sweep_keeps_no_tape_of_the_checkpointed_loop():
    source = ms.adjoint_source(with_checkpoint, X, W, grad_position=(0, 1))
    source = "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith("#"))
    forward = source.split("_tape = []", 1)[0]
    assert forward.count("= np.tanh(") == 2 and ".append(" not in forward  # stores nothing
    groups = _tapes_by_loop(source)
    assert len(groups) == 2  # each call's loop, recomputed in the backward sweep
    for tape in groups[0]:  # each tape freed after its backward loop, before the next one
        assert source.index(f"del {tape}\n") < source.index(f"{groups[1][0]} = []")


def _tapes_by_loop(source: str) -> list:
    """The names of the lists each loop stacks (created just before it), by loop."""
    runs = re.findall(r"((?:\n\s*\w+_tape\w* = \[\])+)\n\s*for ", source)
    return [re.findall(r"(\w+) = \[\]", run) for run in runs]


def test_float32_stays_float32():
    x32, w32 = X.astype(np.float32), W.astype(np.float32)
    value, (gx, gw) = ms.value_and_grad(with_checkpoint, grad_position=(0, 1))(x32, w32)
    assert value.dtype == np.float32 and gx.dtype == np.float32 and gw.dtype == np.float32
    np.testing.assert_allclose(gx, ms.grad(without)(X, W), rtol=1e-4)


class Layer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(np.array([0.8, -0.6, 1.2]), name="w")

    def construct(self, x):
        for _ in range(3):
            x = np.sin(x * self.w)
        return x


class Net(nn.Cell):
    def __init__(self, recompute: bool):
        super().__init__()
        self.layer = Layer()
        if recompute:
            self.layer.recompute()

    def construct(self, x):
        return np.sum(self.layer(x) ** 2)


def test_cell_recompute_gives_the_same_gradients_for_inputs_and_parameters():
    net, plain = Net(True), Net(False)
    grads = ms.grad(net, grad_position=0, weights=net.trainable_params())(X)
    want = ms.grad(plain, grad_position=0, weights=plain.trainable_params())(X)
    np.testing.assert_allclose(grads[0], want[0], rtol=1e-13)
    np.testing.assert_allclose(grads[1][0], want[1][0], rtol=1e-13)
    source = ms.adjoint_source(net, X, grad_position=0, weights=net.trainable_params())
    assert len(_tapes_by_loop(source)) == 1  # only the recomputed loop
    w = net.layer.w
    base = w.asnumpy().copy()

    def at(v):
        w.set_data(v)
        return float(net(X))
    want = central(at, base)
    w.set_data(base)
    np.testing.assert_allclose(grads[1][0].asnumpy(), want, rtol=0, atol=1e-6)


def test_checkpoint_outside_compiled_code_is_the_function():
    assert np.array_equal(block(X, W), block.fn(X, W))
    assert block.__name__ == "block"
    with pytest.raises(GradTypeError, match="checkpoint needs a function"):
        ms.checkpoint(3)


def test_a_recomputed_cell_differentiated_directly():
    layer, plain = Layer(), Layer()
    layer.recompute()
    weights = layer.trainable_params()
    got = ms.grad(layer, grad_position=0, weights=weights)(X)
    want = ms.grad(plain, grad_position=0, weights=plain.trainable_params())(X)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
    np.testing.assert_allclose(got[1][0], want[1][0], rtol=1e-13)
    ms.check_grad(layer, (X,))


@ms.checkpoint
def scaled(a, b=1.0):
    return np.tanh(a) * b


def passes_one_value_twice(x):
    y = x * 1.5
    return np.sum(scaled(y, b=y)) + np.sum(scaled(x, x))


def test_a_value_passed_as_two_arguments():
    ms.check_grad(passes_one_value_twice, (X,))
