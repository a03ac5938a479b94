"""The code of the seed examples (grad, GradOperation) lifts and computes what Python does.

Parts that need pieces other modules provide (functional ``ops.exp``, ``ops.MatMul``,
a lowering on ``GradOperation``) are skipped, with the reason, until they exist.
"""
import numpy as np
import pytest

import ad_compiler.ops as ms_ops
from ad_compiler import nn
from ad_compiler.frontend import lift
from ad_compiler.ir.core import AType
from ad_compiler.ir.interp import interpret
from ad_compiler.ir.verifier import verify
from ad_compiler.nn import Parameter
from ad_compiler.tensor import Tensor, unwrap


def run_both(fn, *arrays):
    lifted = lift(fn, tuple(AType.of(a) for a in arrays))
    verify(lifted.function)
    params = [np.asarray(unwrap(p)) for p in lifted.params]
    outs = interpret(lifted.function, *arrays, *params)
    want = fn(*[Tensor(a) for a in arrays])
    return lifted, outs, want


class Net(nn.Cell):  # seed: grad, "Cell object to be differentiated"
    def construct(self, x, y, z):
        return x * y * z


def test_seed_cell_product():
    x, y, z = (np.array(v, np.float32) for v in ([1, 2], [-2, 3], [0, 3]))
    lifted, outs, want = run_both(Net(), x, y, z)
    assert lifted.out_tree == 0
    np.testing.assert_allclose(outs[0], unwrap(want))


@pytest.mark.skipif(not (hasattr(ms_ops, "exp") and hasattr(ms_ops, "pow")),
                    reason="functional ops.exp / ops.pow are not declared yet")
def test_seed_function_with_functional_ops():
    def fn(x, y, z):
        res = x * ms_ops.exp(y) * ms_ops.pow(z, 2)
        return res, z
    x, y, z = (np.array(v, np.float32) for v in ([3, 3], [0, 0], [5, 5]))
    lifted, outs, want = run_both(fn, x, y, z)
    assert lifted.out_tree == (0, 1)
    np.testing.assert_allclose(outs[0], unwrap(want[0]))


net = nn.Dense(10, 1)
loss_fn = nn.MSELoss()


def forward(inputs, labels):  # seed: grad with a network, weights and has_aux
    logits = net(inputs)
    loss = loss_fn(logits, labels)
    return loss, logits


def test_seed_forward_with_dense_and_mse():
    inputs = np.random.default_rng(1).standard_normal((16, 10)).astype(np.float32)
    labels = np.random.default_rng(2).standard_normal((16, 1)).astype(np.float32)
    lifted, outs, want = run_both(forward, inputs, labels)
    assert lifted.params == net.trainable_params()
    assert lifted.out_tree == (0, 1)
    np.testing.assert_allclose(outs[0], unwrap(want[0]), rtol=1e-5)
    np.testing.assert_allclose(outs[1], unwrap(want[1]), rtol=1e-5)


def _seed3_net_class():
    class Seed3Net(nn.Cell):  # seed: GradOperation vs tf.gradients
        def __init__(self):
            super().__init__()
            self.matmul = ms_ops.MatMul()
            self.z = Parameter(Tensor(np.array([1.0], np.float32)), name='z')

        def construct(self, x, y):
            x = x * self.z
            out = self.matmul(x, y)
            return out
    return Seed3Net


@pytest.mark.skipif(not hasattr(ms_ops, "MatMul"), reason="ops.MatMul is not declared yet")
def test_seed_cell_with_matmul_op_and_parameter():
    x = np.array([[0.5, 0.6, 0.4], [1.2, 1.3, 1.1]], np.float32)
    y = np.array([[0.01, 0.3, 1.1], [0.1, 0.2, 1.3], [2.1, 1.2, 3.3]], np.float32)
    cell = _seed3_net_class()()
    lifted, outs, want = run_both(cell, x, y)
    assert lifted.params == [cell.z]
    np.testing.assert_allclose(outs[0], unwrap(want), rtol=1e-6)
