"""Cells from the seeds with data-dependent control flow in ``construct``.

(a) seed 003's Net (``x * z``, then MatMul with ``y``; Parameter ``z``) choosing between two
formulas with ``if np.sum(x) > 0:``; (b) a Cell looping over an ``nn.CellList`` (or a plain
Python list) of sub-cells (two ``nn.Dense(3, 3)`` and a custom Cell with its own Parameter)
and branching on the result. Each is differentiated under all eight GradOperation flag
combinations with ``weights = ParameterTuple(net.trainable_params())``, on both sides of
the branch; every gradient (inputs and Parameters) is compared with central finite
differences of a NumPy reference written by hand, fed the Parameters' ``.asnumpy()``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, ParameterTuple, Tensor, nn, ops
from tests.finite_differences import central_at

TOL = {np.float64: dict(rtol=1e-5, atol=1e-7), np.float32: dict(rtol=2e-3, atol=2e-4)}
FLAGS = list(itertools.product([False, True], repeat=3))
FLAG_IDS = [f"all={int(a)}-list={int(b)}-sens={int(c)}" for a, b, c in FLAGS]


# -- (a) seed 003's Net with a data-dependent branch ------------------------------------
class BranchNet(nn.Cell):
    def __init__(self, z=1.0, dtype=np.float32):
        super().__init__()
        self.matmul = ops.MatMul()
        self.z = Parameter(Tensor(np.array([z], dtype)), name="z")

    def construct(self, x, y):
        x = x * self.z
        if np.sum(x) > 0:
            out = self.matmul(x, y)
        else:
            out = self.matmul(np.tanh(x), y * self.z)
        return out


def branch_net_reference(x, y, z):
    x = x * z
    if np.sum(x) > 0:
        return x @ y
    return np.tanh(x) @ (y * z)


SEED_X = [[0.5, 0.6, 0.4], [1.2, 1.3, 1.1]]
SEED_Y = [[0.01, 0.3, 1.1], [0.1, 0.2, 1.3], [2.1, 1.2, 3.3]]


# -- (b) a chain of sub-cells in a CellList (or a Python list), then a branch ------------
class Gain(nn.Cell):
    def __init__(self, gain):
        super().__init__()
        self.gain = Parameter(Tensor(gain), name="gain")

    def construct(self, x):
        return np.tanh(x * self.gain)


class Chain(nn.Cell):
    def __init__(self, dtype=np.float32, as_list=False):
        super().__init__()
        rng = np.random.default_rng(7)

        def dense():
            return nn.Dense(3, 3, weight_init=Tensor(rng.uniform(-0.9, 0.9, (3, 3)).astype(dtype)),
                            bias_init=Tensor(rng.uniform(-0.3, 0.3, 3).astype(dtype)),
                            dtype=ms.float64 if dtype == np.float64 else ms.float32)
        layers = [dense(), Gain(np.array([0.9, 1.4, -0.7], dtype)), dense()]
        self.cells = layers if as_list else nn.CellList(layers)
        self.scale = Parameter(Tensor(np.array([0.7, -1.2, 0.9], dtype)), name="scale")

    def construct(self, x):
        for cell in self.cells:
            x = cell(x)
        if np.sum(x) > 0:
            return x * self.scale
        return np.sin(x) * self.scale ** 2


def chain_reference(x, w1, b1, gain, w2, b2, scale):
    h = x @ w1.T + b1
    h = np.tanh(h * gain)
    h = h @ w2.T + b2
    if np.sum(h) > 0:
        return h * scale
    return np.sin(h) * scale ** 2


def chain_parameters(net):
    """The Parameters in chain_reference's order, found by attribute, not by the API."""
    first, gain, last = net.cells
    return [first.weight, first.bias, gain.gain, last.weight, last.bias, net.scale]


def chain_condition(x, *params):
    h = np.tanh((x @ params[0].T + params[1]) * params[2])
    return float(np.sum(h @ params[3].T + params[4]))


# -- set-ups -----------------------------------------------------------------------------
@dataclass
class Setup:
    net: nn.Cell
    inputs: tuple                 # Tensors
    params: list                  # the net's Parameters, in the reference's order
    reference: Callable           # reference(*input_arrays, *param_arrays) -> ndarray


def branch_net_setup(branch, dtype):
    sign = 1.0 if branch == "then" else -1.0
    net = BranchNet(dtype=dtype)
    net.z.set_data(Tensor(np.array([1.25], dtype)))
    x = Tensor(np.array(SEED_X, dtype) * sign)
    y = Tensor(np.array(SEED_Y, dtype))
    return Setup(net, (x, y), [net.z], branch_net_reference)


def chain_setup(branch, dtype, as_list=False):
    net = Chain(dtype, as_list)
    values = [p.asnumpy().astype(np.float64) for p in chain_parameters(net)]
    rng = np.random.default_rng(3)
    for _ in range(100):  # the first input (of a fixed sequence) that takes the branch clearly
        x = rng.uniform(-1.5, 1.5, (2, 3))
        s = chain_condition(x, *values)
        if abs(s) > 0.05 and (s > 0) == (branch == "then"):
            break
    return Setup(net, (Tensor(x.astype(dtype)),), chain_parameters(net), chain_reference)


SETUPS = {"branch-net": branch_net_setup, "cell-list": chain_setup,
          "python-list": lambda branch, dtype: chain_setup(branch, dtype, as_list=True)}


# -- finite differences ------------------------------------------------------------------
def arrays(values):
    return [np.asarray(v.asnumpy() if isinstance(v, Tensor) else v, np.float64) for v in values]


def expected_result(setup, weights, get_all, get_by_list, weight):
    values = arrays(setup.inputs) + arrays(setup.params)
    grads = [central_at(lambda *v: np.sum(weight * setup.reference(*v)), values, k)
             for k in range(len(values))]
    n = len(setup.inputs)
    d_inputs = tuple(zip(setup.inputs, grads[:n]))
    by_param = {id(p): (p, g) for p, g in zip(setup.params, grads[n:])}
    d_weights = tuple(by_param[id(w)] for w in weights)
    if get_all and get_by_list:
        return (d_inputs, d_weights)
    if get_all:
        return d_inputs
    if get_by_list:
        return d_weights
    return d_inputs[0]


def assert_matches(got, want, tol, where="result"):
    """``want`` mirrors the result: tuples of (input or Parameter, expected gradient)."""
    if isinstance(want, tuple) and not (len(want) == 2 and isinstance(want[0], Tensor)):
        assert isinstance(got, tuple), f"{where}: {type(got).__name__}, expected a tuple"
        assert len(got) == len(want), f"{where}: {len(got)} entries, expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_matches(g, w, tol, f"{where}[{i}]")
        return
    like, expected = want
    assert isinstance(got, Tensor) and not isinstance(got, Parameter), \
        f"{where}: {type(got).__name__}, expected a Tensor"
    assert got.shape == like.shape and got.dtype == like.dtype, \
        f"{where}: {got.dtype}{got.shape}, expected {like.dtype}{like.shape}"
    np.testing.assert_allclose(got.asnumpy().astype(np.float64), expected, err_msg=where, **tol)


def check_flags(setup, get_all, get_by_list, sens_param, dtype):
    net = setup.net
    weights = ParameterTuple(net.trainable_params())
    out_shape = setup.reference(*arrays(setup.inputs), *arrays(setup.params)).shape
    sens = Tensor(np.random.default_rng(11).standard_normal(out_shape).astype(dtype))
    grad_fn = ops.GradOperation(get_all=get_all, get_by_list=get_by_list,
                                sens_param=sens_param)(net, weights)
    got = grad_fn(*setup.inputs, sens) if sens_param else grad_fn(*setup.inputs)
    weight = sens.asnumpy().astype(np.float64) if sens_param else np.ones(out_shape)
    assert_matches(got, expected_result(setup, weights, get_all, get_by_list, weight), TOL[dtype])


# -- tests -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("branch", ["then", "else"])
@pytest.mark.parametrize("kind", sorted(SETUPS))
@pytest.mark.parametrize("get_all, get_by_list, sens_param", FLAGS, ids=FLAG_IDS)
def test_all_flag_combinations_match_finite_differences(kind, branch, dtype, get_all,
                                                        get_by_list, sens_param):
    setup = SETUPS[kind](branch, dtype)
    check_flags(setup, get_all, get_by_list, sens_param, dtype)


@pytest.mark.parametrize("branch", ["then", "else"])
def test_inputs_take_the_intended_branch(branch):
    """The set-ups really exercise both sides (checked on the references, not the compiler)."""
    x, y = arrays(branch_net_setup(branch, np.float64).inputs)
    assert (np.sum(x * 1.25) > 0) == (branch == "then")
    for as_list in (False, True):
        setup = chain_setup(branch, np.float64, as_list)
        s = chain_condition(*arrays(setup.inputs), *arrays(setup.params))
        assert abs(s) > 0.05 and (s > 0) == (branch == "then")


def test_trainable_params_order_own_first_then_sub_cells():
    net = Chain(np.float64)
    assert [p.name for p in net.trainable_params()] == [
        "scale", "cells.0.weight", "cells.0.bias", "cells.1.gain", "cells.2.weight",
        "cells.2.bias"]
    assert [p.name for p in BranchNet().trainable_params()] == ["z"]


def test_compiled_gradient_reads_parameters_at_call_time_and_follows_the_new_branch():
    setup = branch_net_setup("then", np.float64)
    net = setup.net
    grad_fn = ops.GradOperation(get_all=True, get_by_list=True)(net, ParameterTuple([net.z]))
    weights = ParameterTuple([net.z])
    ones = np.ones((2, 3))
    assert_matches(grad_fn(*setup.inputs), expected_result(setup, weights, True, True, ones),
                   TOL[np.float64])
    net.z.set_data(Tensor(np.array([-0.8])))  # x * z now sums below zero: the else branch
    assert np.sum(arrays(setup.inputs)[0] * -0.8) < 0
    assert_matches(grad_fn(*setup.inputs), expected_result(setup, weights, True, True, ones),
                   TOL[np.float64])


def test_sens_by_keyword_equals_sens_by_position():
    setup = chain_setup("else", np.float64)
    grad_fn = ops.GradOperation(get_all=True, sens_param=True)(setup.net)
    sens = Tensor(np.random.default_rng(5).standard_normal((2, 3)))
    by_position = grad_fn(*setup.inputs, sens)
    by_keyword = grad_fn(*setup.inputs, sens=sens)
    np.testing.assert_array_equal(by_position[0].asnumpy(), by_keyword[0].asnumpy())
