"""Compositions where MindSpore's behaviour is specific: frozen weights, has_aux outputs."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, ParameterTuple, Tensor, nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([1.0, 2.0])), name="w")
        self.b = Parameter(Tensor(np.array([0.5])), name="b", requires_grad=False)

    def construct(self, x):
        return ops.sum(x * self.w + self.b)


X = Tensor(np.array([3.0, -1.0]))


def test_a_listed_parameter_without_requires_grad_gets_zeros():
    net = Net()
    dw, db = ops.GradOperation(get_by_list=True)(net, ParameterTuple([net.w, net.b]))(X)
    np.testing.assert_allclose(dw.asnumpy(), X.asnumpy())          # d/dw sum(x*w + b) = x
    np.testing.assert_allclose(db.asnumpy(), [0.0])


def test_changing_requires_grad_is_seen_at_the_next_call():
    net = Net()
    grad_fn = ops.GradOperation(get_by_list=True)(net, ParameterTuple([net.w, net.b]))
    assert grad_fn(X)[1].asnumpy().tolist() == [0.0]
    net.b.requires_grad = True
    assert grad_fn(X)[1].asnumpy().tolist() == [2.0]                # d/db sum(x*w + b) = 2
    net.w.requires_grad = False
    assert grad_fn(X)[0].asnumpy().tolist() == [0.0, 0.0]


def test_inside_compiled_code_too():
    net = Net()
    inner = ops.GradOperation(get_by_list=True)(net, ParameterTuple([net.w, net.b]))

    def outer(x):
        dw, db = inner(x)
        return ops.sum(dw * x) + ops.sum(db)
    # d/dx (sum(x * x) + 0) = 2x
    np.testing.assert_allclose(ms.grad(outer)(X).asnumpy(), 2 * X.asnumpy())
    net.b.requires_grad = True   # now db = 2: the gradient w.r.t. x is unchanged, the value not
    assert float(ms.value_and_grad(outer)(X)[0]) == pytest.approx(10.0 + 2.0)


def returns_a_list(x):
    return [np.sum(x * x), x]


def returns_one(x):
    return np.sum(x * x)


@pytest.mark.parametrize("fn", [returns_a_list, returns_one])
def test_has_aux_needs_a_tuple_of_two_or_more(fn):
    with pytest.raises(ValueError, match="must return a tuple of at least two"):
        ms.grad(fn, has_aux=True)(np.ones(2))
