"""Gradient functions called inside compiled functions: constant, default and Python-float
inputs, unused results, loops, branches, nesting, tuples and ``has_aux``.

Each function is checked three ways: its compiled value equals the value of the same
function called uncompiled; its value equals a plain-NumPy closed form written by hand
(where there is one); its gradient equals central finite differences, in float64, of
that closed form (or of the uncompiled function when no closed form is written).
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, ParameterTuple, Tensor, errors, nn, ops
from tests.finite_differences import central

C = np.array([0.2, 0.4, -0.1])
GET_ALL = ops.GradOperation(get_all=True)
WITH_SENS = ops.GradOperation(sens_param=True)


# -- the inner functions and their derivatives, by hand ------------------------------

def h(a):
    return np.sum(np.tanh(a) ** 2)


def dh(a):
    t = np.tanh(a)
    return 2 * t * (1 - t ** 2)


def h2(a, c):
    return np.sum(np.sin(a) * c)


def h_aux(a):
    return np.sum(a ** 3), a * 2.0


def helper(a, b=1.0):
    return ms.value_and_grad(h)(b)[1] * b


# -- the outer functions (compiled) and their closed forms ---------------------------

def default_unused(x):  # the fuzzer's reproduction: a helper's default feeds ms.value_and_grad
    t = helper(x)
    return np.sum(x)


def default_used(x, b=0.4):
    v, g = ms.value_and_grad(h)(b)
    return np.sum(x * g) + v


def float_input(x):
    return np.sum(x) * ms.grad(h)(0.7)


def numpy_scalar_input(x):
    return np.sum(x) * ms.grad(h)(np.float64(0.7))


def constant_array_unused(x):
    g = ms.grad(h)(C)
    return np.sum(x ** 2)


def constant_array_used(x):
    return np.sum(x * ms.grad(h)(C))


def float32_constant(x):
    return np.sum(x * ms.grad(h)(C.astype(np.float32)))


def value_unused(x):
    v, g = ms.value_and_grad(h)(x)
    return g[0] * 2.0


def gradient_unused(x):
    v, g = ms.value_and_grad(h)(x)
    return v


def get_all_constant(x):
    gx, gc = GET_ALL(h2)(x, C)
    return np.sum(gx * gc) + np.sum(gx ** 2)


def get_all_float(x):
    gx, gc = GET_ALL(h2)(x, 0.5)
    return np.sum(gx) * gc


def get_all_made_inside(x):
    gx, gc = ops.GradOperation(get_all=True)(h2)(x, C)
    return np.sum(gx * gc)


def sens_float(x):
    return np.sum(WITH_SENS(h)(x, 2.0) * x)


def sens_int_keyword(x):
    return np.sum(WITH_SENS(h)(x, sens=2) * x)


def sens_constant_array(x):
    return np.sum(WITH_SENS(np.sin)(x, C) ** 2)


def sens_computed(x):
    return np.sum(WITH_SENS(h)(x, np.sum(x)) * x)


def in_for_loop(x):
    acc = 0.0
    for i in range(3):
        acc = acc + np.sum(ms.grad(h)(x * (i + 1.0))) + ms.grad(h)(i + 0.5)
    return acc


def in_while_loop(x):
    acc = x
    while np.sum(acc) < 3.0:
        acc = acc + ms.grad(h)(acc) + 0.5
    return np.sum(acc)


def in_if(x):
    if np.sum(x) > 0:
        return np.sum(ms.grad(h)(x)) + ms.grad(h)(0.3)
    return np.sum(x * ms.grad(h)(C))


def returns_tuple(x):
    return ms.grad(h2, grad_position=(0, 1))(x, x * 2.0)


def with_aux(x):
    g, aux = ms.grad(h_aux, has_aux=True)(x)
    return np.sum(g * aux[0])


def value_and_grad_with_aux(x):
    (v, aux), g = ms.value_and_grad(h_aux, has_aux=True)(x)
    return v + np.sum(g) + np.sum(aux[0])


def with_aux_constant(x):
    g, aux = ms.grad(h_aux, has_aux=True)(C)
    return np.sum(x * g) + np.sum(aux[0])


def _while_reference(x):
    acc = x
    while np.sum(acc) < 3.0:
        acc = acc + dh(acc) + 0.5
    return np.sum(acc)


def _if_reference(x):
    if np.sum(x) > 0:
        return np.sum(dh(x)) + dh(0.3)
    return np.sum(x * dh(C))


CASES = [
    # outer function, closed form (plain NumPy)
    (default_unused, lambda x: np.sum(x)),
    (default_used, lambda x: np.sum(x * dh(0.4)) + h(0.4)),
    (float_input, lambda x: np.sum(x) * dh(0.7)),
    (numpy_scalar_input, lambda x: np.sum(x) * dh(0.7)),
    (constant_array_unused, lambda x: np.sum(x ** 2)),
    (constant_array_used, lambda x: np.sum(x * dh(C))),
    (float32_constant, lambda x: np.sum(x * dh(C.astype(np.float32)))),
    (value_unused, lambda x: dh(x)[0] * 2.0),
    (gradient_unused, h),
    (get_all_constant, lambda x: np.sum(np.cos(x) * C * np.sin(x)) + np.sum((np.cos(x) * C) ** 2)),
    (get_all_float, lambda x: np.sum(np.cos(x) * 0.5) * np.sum(np.sin(x))),
    (get_all_made_inside, lambda x: np.sum(np.cos(x) * C * np.sin(x))),
    (sens_float, lambda x: np.sum(2.0 * dh(x) * x)),
    (sens_int_keyword, lambda x: np.sum(2.0 * dh(x) * x)),
    (sens_constant_array, lambda x: np.sum((np.cos(x) * C) ** 2)),
    (sens_computed, lambda x: np.sum(np.sum(x) * dh(x) * x)),
    (in_for_loop, lambda x: sum(np.sum(dh(x * (i + 1.0))) + dh(i + 0.5) for i in range(3))),
    (in_while_loop, _while_reference),
    (in_if, _if_reference),
    (returns_tuple, lambda x: (np.cos(x) * 2.0 * x, np.sin(x))),
    (with_aux, lambda x: np.sum(3 * x ** 2 * 2 * x)),
    (value_and_grad_with_aux, lambda x: np.sum(x ** 3) + np.sum(3 * x ** 2) + 2 * x[0]),
    (with_aux_constant, lambda x: np.sum(x * 3 * C ** 2) + np.sum(2 * C)),
]

INPUTS = [np.array([0.3, -0.5, 0.8]), np.array([-0.9, -0.2, 0.1])]


def _total(out) -> float:
    return float(sum(np.sum(o) for o in out)) if isinstance(out, tuple) else float(np.sum(out))


@pytest.mark.parametrize("x", INPUTS, ids=["sum>0", "sum<0"])
@pytest.mark.parametrize("fn, closed_form", CASES, ids=[c[0].__name__ for c in CASES])
def test_value_and_gradient(fn, closed_form, x):
    value, grad = ms.value_and_grad(fn)(x.copy())
    for want in (fn(x.copy()), closed_form(x.copy())):
        if isinstance(want, tuple):
            assert isinstance(value, tuple) and len(value) == len(want)
            for v, w in zip(value, want):
                np.testing.assert_allclose(v, w, rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-6)
    want = central(lambda v: _total(closed_form(v)), x)
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-6)


# -- nested three times: no closed form, against the uncompiled function -------------

def first(a):
    return np.sum(ms.grad(h)(a) ** 2)


def second(a):
    return np.sum(ms.grad(first)(a) * a)


def nested(x):
    return np.sum(ms.grad(second)(x))


def nested_constant(x):
    return np.sum(ms.grad(second)(C) * x) + ms.grad(first)(0.25)


@pytest.mark.parametrize("fn", [nested, nested_constant])
def test_nested_three_times(fn):
    x = np.array([0.3, -0.5, 0.8])
    value, _ = ms.value_and_grad(fn)(x.copy())
    np.testing.assert_allclose(value, fn(x.copy()), rtol=1e-6)
    ms.check_grad(fn, (x,), rtol=1e-4, atol=1e-6)


def test_float32_stays_float32():
    x = np.array([0.3, -0.5, 0.8], np.float32)
    value, grad = ms.value_and_grad(float_input)(x)
    assert grad.dtype == np.float32
    assert np.asarray(value).dtype == np.asarray(float_input(x)).dtype
    np.testing.assert_allclose(grad, np.full(3, dh(0.7)), rtol=1e-5)


def float_argument(x, y):
    return np.sum(x) * ms.grad(h)(y) + ms.value_and_grad(h)(y * 2.0)[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_python_float_argument(dtype):
    x, y = np.array([0.3, -0.5, 0.8], dtype), 0.7
    value, (gx, gy) = ms.value_and_grad(float_argument, grad_position=(0, 1))(x, y)
    plain = float_argument(x, y)
    assert np.asarray(value).dtype == np.asarray(plain).dtype
    np.testing.assert_allclose(value, np.sum(x) * dh(0.7) + h(1.4), rtol=1e-6)
    assert gx.dtype == dtype and type(gy) is float
    np.testing.assert_allclose(gx, np.full(3, dh(0.7)), rtol=1e-6)

    def closed_form(y):
        return np.sum(x.astype(np.float64)) * dh(y) + h(2.0 * y)
    want = central(closed_form, y)
    np.testing.assert_allclose(gy, want, rtol=1e-4 if dtype == np.float32 else 1e-6)


# -- errors: the same typed error as the uncompiled call, at the user's line ----------

def sens_wrong_shape(x):
    return np.sum(WITH_SENS(np.sin)(x, np.ones(2)))


def sens_wrong_count(x):
    return np.sum(WITH_SENS(np.sin)(x, (np.ones(3), np.ones(3))))


def sens_wrong_dtype(x):
    return np.sum(WITH_SENS(np.sin)(x, np.ones(3, np.float32)))


def sens_value_wrong_shape(x):
    return np.sum(WITH_SENS(np.sin)(x, x[:2]))


def unknown_keyword_input(x):
    return np.sum(ms.grad(h2)(x, d=C))


@pytest.mark.parametrize("fn, error", [
    (sens_wrong_shape, errors.GradValueError),
    (sens_wrong_count, errors.GradRuntimeError),
    (sens_wrong_dtype, errors.GradTypeError),
    (sens_value_wrong_shape, errors.GradValueError),
    (unknown_keyword_input, errors.GradTypeError),
], ids=lambda v: getattr(v, "__name__", ""))
def test_misuse_is_the_uncompiled_error(fn, error):
    x = np.array([0.3, -0.5, 0.8])
    with pytest.raises(error) as plain:
        fn(x)
    with pytest.raises(error) as compiled:
        ms.grad(fn)(x)
    message = str(compiled.value)
    assert __file__ in message and fn.__name__ not in ("",)
    assert str(plain.value).splitlines()[0].split(": ", 1)[-1] in message


def grad_of_lambda(x):
    return np.sum(ms.grad(lambda a: np.sum(a ** 3))(x))


def grad_of_local_def(x):
    def k(a):
        return np.sum(np.sin(a) * x)
    return np.sum(ms.grad(k)(x))


@pytest.mark.parametrize("fn, words", [
    (grad_of_lambda, "the gradient of <lambda>, a function defined inside"),
    (grad_of_local_def, "the gradient of k, a function defined inside"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_documented_refusals_are_located(fn, words):
    x = np.array([0.3, -0.5, 0.8])
    fn(x)  # fine uncompiled
    with pytest.raises(errors.UnsupportedOperationError) as info:
        ms.grad(fn)(x)
    message = str(info.value)
    assert words in message and "hint:" in message
    line = fn.__code__.co_firstlineno + 1 + (fn is grad_of_local_def) * 2
    assert f"{__file__}:{line}:" in message


# -- weights given inside compiled code ---------------------------------------------

W = np.array([0.5, -1.0, 2.0])


class Wave(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(W.copy(), name="w")

    def construct(self, a):
        return np.sum(np.sin(self.w * a))


class WeightsMadeInInit(nn.Cell):  # MindSpore's pattern
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.weights = ParameterTuple(net.trainable_params())
        self.grad_op = ops.GradOperation(get_by_list=True)

    def construct(self, x):
        return self.grad_op(self.net, self.weights)(x)


class WeightsListedInConstruct(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x):
        return ms.grad(self.net, grad_position=None, weights=self.net.trainable_params())(x)


class WeightsOfConstantInput(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad_op = ops.GradOperation(get_by_list=True)

    def construct(self, x):
        return self.grad_op(self.net, self.net.trainable_params())(0.5)[0] * x


def _cos_wx_x(x):  # d/dw sum(sin(w x))
    return (np.cos(W * x) * x,)


@pytest.mark.parametrize("cell, closed_form", [
    (WeightsMadeInInit, _cos_wx_x),
    (WeightsListedInConstruct, lambda x: _cos_wx_x(x)[0]),
    (WeightsOfConstantInput, lambda x: np.cos(W * 0.5) * 0.5 * x),
], ids=lambda v: getattr(v, "__name__", ""))
def test_weights_inside(cell, closed_form):
    net = cell(Wave())
    x = np.array([0.3, -0.5, 0.8])
    plain = net(x)
    for got, want in zip(leaves(plain), leaves(closed_form(x))):
        np.testing.assert_allclose(np.asarray(got.asnumpy() if isinstance(got, Tensor) else got),
                                   want, rtol=1e-6)
    grad = ops.GradOperation()(net)(x)
    want = central(lambda v: _total(closed_form(v)), x)
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-6)


def weights_computed(x):
    return np.sum(ms.grad(WAVE, grad_position=None, weights=x * 2.0)(x))


WAVE = Wave()


def test_weights_computed_in_the_function_are_refused():
    x = np.array([0.3, -0.5, 0.8])
    with pytest.raises(errors.GradTypeError, match="weights must be Parameters"):
        weights_computed(x)
    with pytest.raises(errors.GradTypeError, match="weights must be Parameters") as info:
        ms.grad(weights_computed)(x)
    assert f"{__file__}:{weights_computed.__code__.co_firstlineno + 1}:" in str(info.value)


def leaves(tree):
    return [v for t in tree for v in leaves(t)] if isinstance(tree, tuple) else [tree]


class TwoWaves(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(W.copy(), name="w")
        self.v = Parameter(W * 0.5, name="v")

    def construct(self, a):
        return np.sum(np.sin(self.w * a)) + np.sum(np.cos(self.v * a))


class SumOfWeightGradients(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def construct(self, x):
        gs = ms.grad(self.net, grad_position=None, weights=self.net.trainable_params())(x)
        total = 0.0
        for g in gs:
            total = total + np.sum(g * g)
        return total


def test_trainable_params_listed_inside_follow_requires_grad():
    net = SumOfWeightGradients(TwoWaves())
    x = np.array([0.3, -0.5, 0.8])
    g = ops.GradOperation()(net)

    def plain(v):
        out = net(v)
        return float(np.asarray(out.asnumpy() if isinstance(out, Tensor) else out))
    np.testing.assert_allclose(g(x), central(plain, x), rtol=1e-5, atol=1e-7)
    net.net.v.requires_grad = False   # trainable_params() now lists w alone
    np.testing.assert_allclose(g(x), central(plain, x), rtol=1e-5, atol=1e-7)
