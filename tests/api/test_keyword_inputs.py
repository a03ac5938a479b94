"""Inputs passed by keyword: bound to the parameter they name, so ``y=y`` is input 1
for ``get_all`` and ``grad_position`` (as MindSpore binds them). Gradients are
checked against closed forms and ``ms.check_grad``; mistakes give Python's own
``TypeError`` text."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn, ops
from ad_compiler.errors import GradTypeError

X = np.array([1.0, -2.0, 0.5])
Y = np.array([0.3, 0.4, -1.1])


def f(x, y):
    return np.sum(x * np.sin(y))


def df(x, y):  # by hand
    return np.sin(y), x * np.cos(y)


def with_defaults(x, s=0.5, t=None):
    return np.sum(x * s) if t is None else np.sum(x * s * t)


def keyword_only(x, *, y):
    return np.sum(x * y)


def var_keywords(x, **more):
    return np.sum(x)


def positional_only(x, y, /):
    return np.sum(x * y)


def _close(got, want):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_get_all_differentiates_an_input_passed_by_keyword():
    got = ops.GradOperation(get_all=True)(f)(X, y=Y)
    assert isinstance(got, tuple) and len(got) == 2
    _close(got, df(X, Y))
    _close(got, ops.GradOperation(get_all=True)(f)(X, Y))


@pytest.mark.parametrize("position, want", [((0, 1), (0, 1)), (1, (1,)), ((1, 0), (1, 0))])
def test_grad_position_counts_keywords_by_their_parameter(position, want):
    got = ms.grad(f, grad_position=position)(y=Y, x=X)
    got = got if isinstance(got, tuple) else (got,)
    _close(got, [df(X, Y)[p] for p in want])


def test_value_and_grad_and_the_cache():
    vg = ms.value_and_grad(f, grad_position=(0, 1))
    for call in (lambda: vg(X, y=Y), lambda: vg(X, Y), lambda: vg(X, y=Y), lambda: vg(x=X, y=Y)):
        value, grads = call()
        assert value == f(X, Y)
        _close(grads, df(X, Y))


def test_a_cell_and_a_bound_method():
    class Net(nn.Cell):
        def construct(self, x, y):
            return f(x, y)

    class Model:
        def loss(self, x, y):
            return f(x, y)

    _close(ops.GradOperation(get_all=True)(Net())(X, y=Y), df(X, Y))
    _close(ms.grad(Model().loss, grad_position=(0, 1))(x=X, y=Y), df(X, Y))


def test_a_parameter_skipped_before_a_keyword_takes_its_default():
    t = np.array([2.0, -1.0, 3.0])
    dx, ds, dt = ops.GradOperation(get_all=True)(with_defaults)(X, t=t)
    _close((dx, dt), (0.5 * t, 0.5 * X))
    assert isinstance(ds, float) and ds == pytest.approx(np.sum(X * t))  # s: a Python float
    ms.check_grad(with_defaults, (X, 0.5, t), modes=("rev",))


def test_sens_param_with_inputs_by_keyword():
    def g(x, y):
        return x * np.sin(y)
    sens = np.array([1.0, 2.0, -1.0])
    want = (sens * np.sin(Y), sens * X * np.cos(Y))
    grad_op = ops.GradOperation(get_all=True, sens_param=True)(g)
    _close(grad_op(X, sens, y=Y), want)          # sens: the last positional argument
    _close(grad_op(X, y=Y, sens=sens), want)     # or by keyword
    _close(grad_op(sens, x=X, y=Y), want)


def test_float32_stays_float32():
    x32, y32 = X.astype(np.float32), Y.astype(np.float32)
    dx, dy = ops.GradOperation(get_all=True)(f)(x32, y=y32)
    assert dx.dtype == dy.dtype == np.float32
    _close((dx, dy), [w.astype(np.float32) for w in df(x32, y32)])


def _python_error(fn, *args, **kwargs):
    with pytest.raises(TypeError) as info:
        fn(*args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize("fn, args, kwargs", [
    (f, (X,), {"z": Y}),              # unknown
    (f, (X,), {"x": X}),              # given twice
    (f, (), {"y": Y}),                # required input missing
    (with_defaults, (), {"t": Y}),
    (positional_only, (X,), {"y": Y}),
], ids=["unknown", "twice", "missing", "missing-before-default", "positional-only"])
def test_mistakes_give_pythons_type_error(fn, args, kwargs):
    with pytest.raises(GradTypeError) as info:
        ms.grad(fn)(*args, **kwargs)
    assert str(info.value).splitlines()[0] == _python_error(fn, *args, **kwargs)


@pytest.mark.parametrize("fn, kwargs, words", [
    (keyword_only, {"y": Y}, "'y' is a keyword-only parameter of keyword_only()"),
    (var_keywords, {"w": Y}, "'w' would go to the **kwargs of var_keywords()"),
    (f, {"y": Y, "sens": 1.0}, "sens= is given but the gradient function takes no sensitivity"),
], ids=["keyword-only", "var-keywords", "sens-without-sens_param"])
def test_what_has_no_input_position_stays_refused(fn, kwargs, words):
    with pytest.raises(GradTypeError) as info:
        ms.grad(fn)(X, **kwargs)
    assert words in str(info.value) and "hint:" in str(info.value)


def h2(a, c):
    return np.sum(np.sin(a) * c)


def keyword_inside(x):
    da, dc = ms.grad(h2, grad_position=(0, 1))(x, c=x * x)
    return np.sum(da * dc)


def keyword_inside_gradop(x):
    return np.sum(ops.GradOperation(get_all=True)(h2)(a=x, c=np.cos(x))[1] ** 2)


@pytest.mark.parametrize("fn", [keyword_inside, keyword_inside_gradop])
def test_keywords_inside_compiled_code(fn):
    x = np.array([0.3, -0.5, 0.8])
    ms.check_grad(fn, (x,), modes=("rev",))
    value, _ = ms.value_and_grad(fn)(x)
    assert value == pytest.approx(fn(x), rel=1e-14)
