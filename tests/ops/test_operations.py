"""The MindSpore-style ops: eager results on Tensors and ndarrays, and their lowerings.

Expected values are computed with plain NumPy from the same inputs, never with
the code under test.
"""
from __future__ import annotations

import numpy as np
import pytest

from ad_compiler.ad import rules
from ad_compiler.ir.core import AType
from ad_compiler.ops import operations as ops
from ad_compiler.tensor import Tensor

X = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=np.float32)
W = np.array([[0.5, 1.0, -1.0], [2.0, 0.0, 1.5]], dtype=np.float32)


def _np(v):
    return v.asnumpy() if isinstance(v, Tensor) else v


def test_tensor_in_tensor_out_ndarray_in_ndarray_out():
    assert isinstance(ops.exp(Tensor(X)), Tensor)
    assert type(ops.exp(X)) is np.ndarray
    assert isinstance(ops.add(X, Tensor(W)), Tensor)
    np.testing.assert_allclose(_np(ops.exp(Tensor(X))), np.exp(X))
    assert _np(ops.exp(Tensor(X))).dtype == np.float32


@pytest.mark.parametrize("transpose_a, transpose_b, a, b", [
    (False, False, X, W.T), (True, False, X, W), (False, True, X, W), (True, True, X.T, W)])
def test_matmul_transpose_flags(transpose_a, transpose_b, a, b):
    out = ops.MatMul(transpose_a=transpose_a, transpose_b=transpose_b)(Tensor(a), Tensor(b))
    expected = (a.T if transpose_a else a) @ (b.T if transpose_b else b)
    assert isinstance(out, Tensor)
    np.testing.assert_allclose(out.asnumpy(), expected)


def test_matmul_of_two_vectors_is_a_dot_product():
    u, v = np.array([1.0, 2.0, 3.0]), np.array([4.0, -5.0, 6.0])
    assert np.shape(ops.matmul(u, v)) == ()
    assert float(ops.matmul(u, v)) == 1 * 4 - 2 * 5 + 3 * 6


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axis", [(), 0, 1, (0, 1), -1])
def test_reduce_sum_and_mean(keep_dims, axis):
    np_axis = None if axis == () else axis
    got = ops.ReduceSum(keep_dims=keep_dims)(Tensor(X), axis)
    np.testing.assert_allclose(got.asnumpy(), np.sum(X, axis=np_axis, keepdims=keep_dims))
    got = ops.ReduceMean(keep_dims)(X, axis=axis)
    np.testing.assert_allclose(got, np.mean(X, axis=np_axis, keepdims=keep_dims), rtol=1e-6)


def test_reduce_sum_default_axis_sums_everything():
    assert float(ops.ReduceSum()(Tensor(X)).asnumpy()) == pytest.approx(float(X.sum()))


def test_functional_reductions_use_mindspore_names():
    np.testing.assert_allclose(ops.sum(X, dim=1, keepdim=True), X.sum(1, keepdims=True))
    np.testing.assert_allclose(ops.sum(X), X.sum())
    np.testing.assert_allclose(ops.mean(X, axis=0, keep_dims=False), X.mean(0))


def test_stop_gradient_returns_its_argument():
    t = Tensor(X)
    assert ops.stop_gradient(t) is t
    pair = (t, 2.0)
    assert ops.stop_gradient(pair) is pair
    assert ops.stop_gradient(3.5) == 3.5


def test_shape_ops():
    np.testing.assert_array_equal(ops.transpose(X, (1, 0)), X.T)
    np.testing.assert_array_equal(ops.Transpose()(Tensor(X), (1, 0)).asnumpy(), X.T)
    np.testing.assert_array_equal(ops.reshape(X, (3, -1)), X.reshape(3, 2))
    np.testing.assert_array_equal(ops.Reshape()(X, (6,)), X.ravel())
    assert ops.expand_dims(X, 1).shape == (2, 1, 3)
    assert ops.ExpandDims()(Tensor(X), -1).shape == (2, 3, 1)
    assert ops.squeeze(np.ones((1, 3, 1))).shape == (3,)
    assert ops.Squeeze(0)(np.ones((1, 3, 1))).shape == (3, 1)
    np.testing.assert_array_equal(ops.concat((X, W), 1), np.concatenate((X, W), 1))
    np.testing.assert_array_equal(ops.Concat(0)([Tensor(X), Tensor(W)]).asnumpy(),
                                  np.concatenate((X, W)))
    np.testing.assert_array_equal(ops.stack([X, W], axis=-1), np.stack([X, W], axis=-1))
    assert isinstance(ops.Stack()([Tensor(X), Tensor(W)]), Tensor)


def test_elementwise_class_forms_match_numpy():
    pairs = [(ops.Add(), np.add), (ops.Sub(), np.subtract), (ops.Mul(), np.multiply),
             (ops.Div(), np.divide), (ops.Maximum(), np.maximum), (ops.Minimum(), np.minimum)]
    for op, fn in pairs:
        np.testing.assert_allclose(op(Tensor(X), Tensor(W + 3)).asnumpy(), fn(X, W + 3))
    singles = [(ops.Exp(), np.exp), (ops.Sin(), np.sin), (ops.Cos(), np.cos),
               (ops.Tanh(), np.tanh), (ops.Square(), np.square), (ops.Abs(), np.abs),
               (ops.Neg(), np.negative), (ops.Sqrt(), lambda v: np.sqrt(np.abs(v)))]
    for op, fn in singles:
        arg = np.abs(X) if isinstance(op, ops.Sqrt) else X
        np.testing.assert_allclose(op(arg), fn(X), rtol=1e-6)
    np.testing.assert_allclose(ops.Log()(np.abs(X)), np.log(np.abs(X)))
    np.testing.assert_allclose(ops.Pow()(np.abs(X), 2.5), np.abs(X) ** 2.5, rtol=1e-6)
    np.testing.assert_allclose(ops.ReLU()(X), np.maximum(X, 0))
    np.testing.assert_allclose(ops.Sigmoid()(X), 1 / (1 + np.exp(-X)), rtol=1e-6)


def test_activations_and_where():
    np.testing.assert_allclose(ops.relu(X), np.where(X > 0, X, 0))
    np.testing.assert_allclose(ops.sigmoid(Tensor(X)).asnumpy(), 1 / (1 + np.exp(-X)), rtol=1e-6)
    np.testing.assert_allclose(ops.where(X > 0, X, W), np.where(X > 0, X, W))
    np.testing.assert_allclose(ops.pow(X, 2), X * X)


def test_softmax_forms():
    e = np.exp(X - X.max(-1, keepdims=True))
    expected = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(ops.softmax(X), expected, rtol=1e-6)
    np.testing.assert_allclose(ops.Softmax()(Tensor(X)).asnumpy(), expected, rtol=1e-6)
    x64 = X.astype(np.float64)  # the float32 reference itself would round log(softmax)
    np.testing.assert_allclose(ops.log_softmax(X, axis=-1),
                               x64 - np.log(np.exp(x64).sum(-1, keepdims=True)), atol=1e-6)
    np.testing.assert_allclose(ops.LogSoftmax(0)(X), x64 - np.log(np.exp(x64).sum(0)), atol=1e-6)
    assert ops.softmax(X).dtype == np.float32


def test_every_public_name_is_exported_and_lowerable():
    for name in ops.__all__:
        obj = getattr(ops, name)
        if isinstance(obj, type):
            assert issubclass(obj, ops.Primitive)
        else:
            assert rules.find_lowering(obj) is not None, name


def test_compiled_forms_lower_to_primitives(adcheck):
    """What compiled code does: the function's (or instance's) lowering on IR values."""
    b, (x, w) = adcheck.new_function("f", [AType.of(X), AType.of(W)])
    out = rules.find_lowering(ops.MatMul(transpose_b=True))(b, x, w)
    total = rules.find_lowering(ops.sum)(b, rules.find_lowering(ops.softmax)(b, out), dim=1)
    fn = adcheck.finish(b, "f", [total])
    assert "matmul" in [op.prim for op in fn.body.ops]
    (got,) = adcheck.run(fn, X, W)
    np.testing.assert_allclose(got, np.ones(2), rtol=1e-6)


def test_constructing_an_op_in_compiled_code_is_static():
    construct = rules.find_lowering(ops.ReduceSum)
    op = construct(None, keep_dims=True)
    assert isinstance(op, ops.ReduceSum) and op.keep_dims
