"""Gradients of gradients for straight-line code, against closed forms derived by hand."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, ParameterTuple, Tensor, nn, ops
from ad_compiler.ops import GradOperation, grad


def x_sin_x(x):
    return x * np.sin(x)


def exp_x_times_x(x):
    return np.exp(x) * x


def sin_only(x):
    return np.sin(x)


SECOND_DERIVATIVES = [
    # f, f'' (by hand)
    (x_sin_x, lambda x: 2 * np.cos(x) - x * np.sin(x)),
    (exp_x_times_x, lambda x: np.exp(x) * (2 + x)),
]

FIRST_DERIVATIVES = {
    x_sin_x: lambda x: np.sin(x) + x * np.cos(x),
    exp_x_times_x: lambda x: np.exp(x) * (1 + x),
}


def _inputs():
    values = np.array([-1.3, -0.2, 0.4, 1.7])
    return [
        pytest.param(lambda: values.copy(), id="ndarray float64"),
        pytest.param(lambda: Tensor(values.astype(np.float32)), id="Tensor float32"),
        pytest.param(lambda: 0.6, id="Python float"),
        pytest.param(lambda: np.float64(-0.8), id="np.float64"),
    ]


@pytest.mark.parametrize("make_x", _inputs())
@pytest.mark.parametrize("fn,second", SECOND_DERIVATIVES, ids=lambda v: getattr(v, "__name__", ""))
def test_second_derivative(api, fn, second, make_x):
    x = make_x()
    api.assert_grad(grad(fn)(x), FIRST_DERIVATIVES[fn](api.f64(x)), x, "first derivative")
    api.assert_grad(grad(grad(fn))(x), second(api.f64(x)), x, "second derivative")


def test_second_derivative_with_gradoperation(api):
    x = np.array([0.3, -1.1, 2.2])
    second = GradOperation()(GradOperation()(x_sin_x))
    api.assert_grad(second(x), 2 * np.cos(x) - x * np.sin(x), x)


def test_third_derivative(api):
    x = np.array([-0.7, 0.1, 1.9])
    # (x sin x)''' = -3 sin x - x cos x
    api.assert_grad(grad(grad(grad(x_sin_x)))(x), -3 * np.sin(x) - x * np.cos(x), x)
    api.assert_grad(grad(grad(grad(sin_only)))(x), -np.cos(x), x)


def scalar_mixed(x, y):
    return x ** 2 * np.sin(y) + x * y


def vector_mixed(x, y):
    return np.sum(x ** 2 * np.sin(y) + np.exp(x * y))


def test_mixed_partial_of_scalar_inputs(api):
    x, y = 0.7, -1.2
    # d/dx = 2x sin y + y; d/dy of that = 2x cos y + 1
    api.assert_grad(grad(scalar_mixed, 0)(x, y), 2 * x * np.sin(y) + y, x)
    api.assert_grad(grad(grad(scalar_mixed, 0), 1)(x, y), 2 * x * np.cos(y) + 1, y)
    # the other order gives the same
    api.assert_grad(grad(grad(scalar_mixed, 1), 0)(x, y), 2 * x * np.cos(y) + 1, x)


def test_mixed_partial_of_vector_inputs(api):
    x, y = np.array([0.5, -0.3, 1.1]), np.array([0.2, 0.9, -0.4])
    # d/dx_i = 2 x_i sin y_i + y_i e^(x_i y_i); the Hessian block is diagonal:
    # d/dy_i of it = 2 x_i cos y_i + e^(x_i y_i) (1 + x_i y_i); ones sens sums over i
    want = 2 * x * np.cos(y) + np.exp(x * y) * (1 + x * y)
    api.assert_grad(grad(grad(vector_mixed, 0), 1)(x, y), want, y)


def test_second_order_of_both_positions(api):
    x, y = np.array([0.5, -0.3]), np.array([0.2, 0.9])
    # sum over outputs of grad(f, (0, 1)) = sum_i (d_xi f + d_yi f); its derivatives w.r.t. x, y
    dx_dx = 2 * np.sin(y) + y ** 2 * np.exp(x * y)
    dy_dx = 2 * x * np.cos(y) + np.exp(x * y) * (1 + x * y)
    dy_dy = -x ** 2 * np.sin(y) + x ** 2 * np.exp(x * y)
    hx, hy = GradOperation(get_all=True)(GradOperation(get_all=True)(vector_mixed))(x, y)
    api.assert_grad(hx, dx_dx + dy_dx, x)
    api.assert_grad(hy, dy_dx + dy_dy, y)


class SinNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.z = Parameter(Tensor(np.array([0.5, -1.5, 2.0], np.float32)), name="z")

    def construct(self, x):
        return np.sin(x) * self.z


class GradNetWrtX(nn.Cell):
    """Seed 003's pattern: a GradOperation applied inside construct."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad_op = ops.GradOperation()

    def construct(self, x):
        gradient_function = self.grad_op(self.net)
        return gradient_function(x)


def test_gradoperation_of_a_cell_calling_gradoperation(api):
    net = SinNet()
    x = Tensor(np.array([0.3, -0.8, 1.4], np.float32))
    z = api.f64(net.z)
    xv = api.f64(x)
    first = GradNetWrtX(net)
    api.assert_grad(first(x), np.cos(xv) * z, x)
    # d/dx of sum(cos x * z) = -sin x * z; d/dz = cos x
    api.assert_grad(GradOperation()(first)(x), -np.sin(xv) * z, x)
    (dz,) = GradOperation(get_by_list=True)(first, ParameterTuple(net.trainable_params()))(x)
    api.assert_grad(dz, np.cos(xv), net.z)


def test_value_and_grad_of_a_gradient(api):
    x = np.array([0.4, 1.3])
    value, g = ms.value_and_grad(grad(x_sin_x))(x)
    api.assert_values(value, np.sin(x) + x * np.cos(x))
    api.assert_grad(g, 2 * np.cos(x) - x * np.sin(x), x)
