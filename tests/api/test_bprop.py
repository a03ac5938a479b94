"""A Cell's ``bprop`` replaces its derived adjoint wherever the Cell is called (SPEC)."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, Tensor, nn, ops


def t(*values):
    return Tensor(np.array(values, np.float32))


class Scaled(nn.Cell):
    """Forward x * 3 * w; the custom adjoint claims 100 * dout (deliberately not 3w)."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(t(2.0), name="w")

    def construct(self, x):
        return x * 3.0 * self.w

    def bprop(self, x, out, dout):
        return dout * 100.0            # a bare value for one input


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Scaled()

    def construct(self, x, y):
        return self.inner(x) * y + np.sin(y)


def test_top_level_bprop_replaces_the_adjoint():
    assert ops.GradOperation()(Scaled())(t(1.0, 2.0)).asnumpy().tolist() == [100.0, 100.0]


def test_bprop_inside_another_cell_and_parameters_it_owns_get_zeros():
    x, y = t(1.0, 2.0), t(0.5, -1.0)
    (dx, dy), (dw,) = ops.GradOperation(get_all=True, get_by_list=True)(Outer())(x, y)
    np.testing.assert_allclose(dx.asnumpy(), 100.0 * y.asnumpy())
    np.testing.assert_allclose(dy.asnumpy(), 6.0 * x.asnumpy() + np.cos(y.asnumpy()), rtol=1e-6)
    assert dw.asnumpy().tolist() == [0.0]


def test_bprop_inside_a_plain_function():
    net = Scaled()

    def f(x):
        return np.sum(net(x) * x)
    # d/dx [net(x) . x] = net'(x)^T x + net(x) with the custom net' = 100
    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(ms.grad(f)(x), 100.0 * x + 6.0 * x, rtol=1e-6)


class TwoInputs(nn.Cell):
    def construct(self, x, y):
        return x * y

    def bprop(self, x, y, out, dout):
        return None, dout * 2.0, dout  # None: zeros; the extra entry is ignored


def test_none_means_zeros_and_extra_entries_are_ignored():
    dx, dy = ops.GradOperation(get_all=True)(TwoInputs())(t(1.0, 2.0), t(3.0, 4.0))
    assert dx.asnumpy().tolist() == [0.0, 0.0]
    assert dy.asnumpy().tolist() == [2.0, 2.0]


class TooFew(nn.Cell):
    def construct(self, x, y):
        return x * y

    def bprop(self, x, y, out, dout):
        return (dout,)


class WrongShape(nn.Cell):
    def construct(self, x):
        return x * 2.0

    def bprop(self, x, out, dout):
        return (np.sum(dout),)


class WrongDtype(nn.Cell):
    def construct(self, x):
        return x * 2.0

    def bprop(self, x, out, dout):
        return (dout.astype(np.float64) * 7.0,)


def test_too_few_gradients_or_a_wrong_shape_are_runtime_errors():
    with pytest.raises(RuntimeError, match="1 gradient"):
        ops.GradOperation(get_all=True)(TooFew())(t(1.0), t(2.0))
    with pytest.raises(RuntimeError, match="shape"):
        ops.GradOperation()(WrongShape())(t(1.0, 2.0))


def test_a_wrong_dtype_is_cast():
    g = ops.GradOperation()(WrongDtype())(t(1.0, 2.0))
    assert g.asnumpy().dtype == np.float32 and g.asnumpy().tolist() == [7.0, 7.0]
