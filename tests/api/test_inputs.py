"""Which arguments get a gradient slot, and the type, dtype and freshness of their gradients."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, Tensor, ops
from ad_compiler.ops import GradOperation, grad, value_and_grad


def sin_times(x, y):
    return np.sin(x) * y


def sin_times_ref(x, y):
    return np.sin(x) * y


def _kinds():
    """One example of every kind of differentiable input (name, factory)."""
    return [
        ("Tensor float32", lambda: Tensor(np.array([0.3, -1.2, 2.0], np.float32))),
        ("Tensor float64", lambda: Tensor(np.array([0.3, -1.2, 2.0]))),
        ("Tensor float16", lambda: Tensor(np.array([0.3, -1.2, 2.0], np.float16))),
        ("0-d Tensor", lambda: Tensor(0.4)),
        ("Parameter float32", lambda: Parameter(Tensor(np.array([0.3, -1.2], np.float32)), name="p")),
        ("ndarray float64", lambda: np.array([[0.3, -1.2], [0.7, 2.0]])),
        ("ndarray float32", lambda: np.array([0.3, -1.2, 2.0], np.float32)),
        ("0-d ndarray", lambda: np.array(0.4)),
        ("np.float64", lambda: np.float64(0.4)),
        ("np.float32", lambda: np.float32(0.4)),
        ("Python float", lambda: 0.4),
    ]


@pytest.mark.parametrize("make", [k[1] for k in _kinds()], ids=[k[0] for k in _kinds()])
def test_every_floating_input_kind_gets_a_gradient_of_its_own_type(api, make):
    x, y = make(), make()
    dx, dy = grad(sin_times, (0, 1))(x, y)
    want_dx, want_dy = api.fd_grads(sin_times_ref, (x, y))
    api.assert_grad(dx, want_dx, x, "dx")
    api.assert_grad(dy, want_dy, y, "dy")


@pytest.mark.parametrize("make", [k[1] for k in _kinds()], ids=[k[0] for k in _kinds()])
def test_get_all_gives_a_one_tuple_for_every_kind(api, make):
    x = make()
    (dx,) = GradOperation(get_all=True)(exp_of)(x)
    api.assert_grad(dx, np.exp(api.f64(x)), x)


def exp_of(x):
    return np.exp(x)


def test_parameter_input_gives_a_plain_tensor(api):
    p = Parameter(Tensor(np.array([1.0, 2.0], np.float32)), name="p")
    g = grad(exp_of)(p)
    assert type(g) is Tensor and not isinstance(g, Parameter)
    api.assert_grad(g, np.exp([1.0, 2.0]), p)


def test_mixed_kinds_in_one_call(api):
    t = Tensor(np.array([0.5, 1.5], np.float32))
    a = np.array([0.25, -0.75])
    s = 1.25
    g = GradOperation(get_all=True)(three_way)(t, a, s)
    dt, da, ds = api.fd_grads(three_way, (t, a, s))
    api.assert_structure(g, (api.Leaf(dt, t), api.Leaf(da, a), api.Leaf(ds, s)))


def three_way(t, a, s):
    return t * a * s + np.sin(a * s)


# -- structures ------------------------------------------------------------------------------

def pair_fn(p, w):
    return np.sum(p[0] * np.sin(p[1])) * w


def dict_fn(d):
    return np.sum(d["a"] * d["b"] ** 2)


def nested_fn(d):
    return np.sum(d["u"][0] * d["u"][1]) + np.sum(np.exp(d["v"]))


@pytest.mark.parametrize("container", [tuple, list], ids=lambda c: c.__name__)
def test_tuple_or_list_argument_gets_a_gradient_of_the_same_structure(api, container):
    a, b = np.array([0.5, -1.0, 2.0]), np.array([0.1, 0.2, -0.3])
    w = 1.5
    dp, dw = grad(pair_fn, (0, 1))(container([a, b]), w)
    assert type(dp) is container and len(dp) == 2
    # closed form: d/da = w sin b, d/db = w a cos b, d/dw = sum(a sin b)
    api.assert_grad(dp[0], w * np.sin(b), a)
    api.assert_grad(dp[1], w * a * np.cos(b), b)
    api.assert_grad(dw, np.sum(a * np.sin(b)), w)


def test_dict_argument_gets_a_dict_gradient(api):
    a = Tensor(np.array([0.5, -1.0], np.float32))
    b = 0.75
    g = grad(dict_fn)({"a": a, "b": b})
    assert type(g) is dict and list(g) == ["a", "b"]
    api.assert_grad(g["a"], np.full(2, b ** 2), a)
    api.assert_grad(g["b"], np.sum(api.f64(a)) * 2 * b, b)


def test_nested_structure_gradient(api):
    u0, u1 = np.array([1.0, 2.0]), np.array([-0.5, 0.5], np.float32)
    v = Tensor(np.array([0.1, 0.2, 0.3], np.float32))
    g = GradOperation(get_all=True)(nested_fn)({"u": (u0, u1), "v": v})
    api.assert_structure(g, ({"u": (api.Leaf(u1, u0), api.Leaf(u0, u1)),
                              "v": api.Leaf(np.exp(api.f64(v)), v)},))


# -- constants -------------------------------------------------------------------------------

def scaled(x, k):
    return x * k


def scaled_sum(x, k, y):
    return x * k + np.sin(y)


def test_python_int_is_a_constant_without_a_slot(api):
    x = Tensor(np.array([1.0, 2.0], np.float32))
    got = GradOperation(get_all=True)(scaled)(x, 4)
    api.assert_structure(got, (api.Leaf(np.full(2, 4.0), x),))


def test_python_bool_is_a_constant_without_a_slot(api):
    x = np.array([1.0, 2.0])
    got = GradOperation(get_all=True)(scaled)(x, True)
    api.assert_structure(got, (api.Leaf(np.ones(2), x),))


def test_first_input_skips_leading_constants(api):
    y = np.array([0.5, 1.0])
    got = GradOperation()(scaled_sum)(3, 2, y)   # 3 and 2 have no slot: the first input is y
    api.assert_grad(got, np.cos(y), y)


def test_positions_keep_their_meaning_across_constants(api):
    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    api.assert_grad(grad(scaled_sum, 2)(x, 4, y), np.cos(y), y)
    api.assert_structure(grad(scaled_sum, (2, 0))(x, 4, y),
                         (api.Leaf(np.cos(y), y), api.Leaf(np.full(2, 4.0), x)))
    api.assert_structure(GradOperation(get_all=True)(scaled_sum)(x, 4, y),
                         (api.Leaf(np.full(2, 4.0), x), api.Leaf(np.cos(y), y)))


def test_int_constant_values_are_not_baked_in(api):
    x = np.array([1.0, 2.0])
    gradient_function = grad(scaled)
    api.assert_grad(gradient_function(x, 3), np.full(2, 3.0), x)
    api.assert_grad(gradient_function(x, -2), np.full(2, -2.0), x)


# -- integer Tensors ---------------------------------------------------------------------------

def square(x):
    return x * x


@pytest.mark.parametrize("dtype", [ms.int32, ms.int64], ids=str)
def test_integer_tensor_gets_a_gradient_cast_to_its_dtype(api, dtype):
    x = Tensor([1, -2, 3], dtype)
    g = grad(square)(x)
    api.assert_grad(g, [2, -4, 6], x)
    assert g.dtype == dtype


def times_half(x, y):
    return x * 0.5 + y


def test_integer_tensor_gradient_is_computed_in_float_then_cast(api):
    x = Tensor([4, 6], ms.int32)
    y = Tensor(np.array([1.0, 1.0], np.float32))
    dx, dy = grad(times_half, (0, 1))(x, y)
    # d/dx = 0.5 in float; cast to int32 gives 0
    api.assert_grad(dx, [0, 0], x)
    api.assert_grad(dy, [1.0, 1.0], y)


# -- inputs that do not reach the output ---------------------------------------------------------

def unused_second(x, y):
    return np.sin(x)


def stopped_second(x, y):
    return x * ops.stop_gradient(y)


@pytest.mark.parametrize("fn", [unused_second, stopped_second], ids=lambda f: f.__name__)
@pytest.mark.parametrize("make_y", [
    pytest.param(lambda: Tensor(np.ones((2, 3), np.float32)), id="Tensor float32"),
    pytest.param(lambda: np.ones((2, 3)), id="ndarray float64"),
    pytest.param(lambda: np.ones((2, 3), np.float32), id="ndarray float32"),
])
def test_input_that_does_not_reach_the_output_gets_zeros(api, fn, make_y):
    y = make_y()
    y_arr = y.asnumpy() if isinstance(y, Tensor) else y
    x = np.array([0.5, 1.0, 1.5], y_arr.dtype)
    x = Tensor(x) if isinstance(y, Tensor) else x
    api.assert_grad(grad(fn, 1)(x, y), np.zeros((2, 3)), y)


def test_unused_python_float_gets_zero_float(api):
    x = np.array([0.5, 1.0])
    api.assert_grad(grad(unused_second, 1)(x, 2.5), 0.0, 2.5)


def test_stop_gradient_keeps_the_other_path(api):
    x, y = np.array([0.5, 1.0]), np.array([2.0, -3.0])
    api.assert_structure(grad(stopped_second, (0, 1))(x, y),
                         (api.Leaf(y, x), api.Leaf(np.zeros(2), y)))


# -- aliasing and freshness ------------------------------------------------------------------------

def mul_sq(a, b):
    return a * b ** 2


def test_same_object_at_two_positions_is_two_variables(api):
    x = np.array([0.5, -1.5, 2.0])
    da, db = grad(mul_sq, (0, 1))(x, x)
    # separate variables: d/da = b^2, d/db = 2ab (not the total derivative 3x^2)
    api.assert_grad(da, x ** 2, x)
    api.assert_grad(db, 2 * x * x, x)
    assert not np.shares_memory(da, db)


def test_same_tensor_at_two_positions_is_two_variables(api):
    t = Tensor(np.array([0.5, -1.5], np.float32))
    da, db = GradOperation(get_all=True)(mul_sq)(t, t)
    x = api.f64(t)
    api.assert_grad(da, x ** 2, t)
    api.assert_grad(db, 2 * x * x, t)


def identity(x):
    return x


def add(x, y):
    return x + y


def _writable_and_fresh(g, *others):
    arr = g.asnumpy() if isinstance(g, Tensor) else g
    assert arr.flags.writeable, "gradient is read-only"
    for o in others:
        o_arr = o.asnumpy() if isinstance(o, Tensor) else o
        assert not np.shares_memory(arr, o_arr), "gradient shares memory with another array"


@pytest.mark.parametrize("wrap", [lambda a: a, Tensor], ids=["ndarray", "Tensor"])
def test_identity_gradient_with_sens_is_a_copy_of_sens(api, wrap):
    x = wrap(np.array([1.0, 2.0, 3.0]))
    sens = wrap(np.array([0.5, -0.5, 2.0]))
    g = GradOperation(sens_param=True)(identity)(x, sens)
    assert g is not sens and g is not x
    _writable_and_fresh(g, sens, x)
    api.assert_grad(g, [0.5, -0.5, 2.0], x)
    (g.asnumpy() if isinstance(g, Tensor) else g)[0] = 100.0
    assert api.f64(sens)[0] == 0.5


def identity_of_first(x, y):
    return x


def total(x, y):
    return np.sum(x) + np.sum(y)


def linear(x, y):
    return x * 3.0 - y


@pytest.mark.parametrize("fn", [identity_of_first, add, total, linear], ids=lambda f: f.__name__)
def test_gradients_are_fresh_writable_arrays(api, fn):
    x, y = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5, 0.5], [1.5, 2.5]])
    dx, dy = GradOperation(get_all=True)(fn)(x, y)
    _writable_and_fresh(dx, dy, x, y)
    _writable_and_fresh(dy, x, y)
    want_dx, want_dy = api.fd_grads(fn, (x, y))
    dx[0, 0] = 99.0   # writing one gradient changes nothing else
    api.assert_values(dx[1], want_dx[1])
    api.assert_values(dy, want_dy)
    api.assert_values(x, [[1.0, 2.0], [3.0, 4.0]])


def test_two_gradients_do_not_share_memory(api):
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    sens = np.array([0.5, 0.25])
    dx, dy = GradOperation(get_all=True, sens_param=True)(add)(x, y, sens)
    _writable_and_fresh(dx, dy, sens, x, y)
    _writable_and_fresh(dy, sens, x, y)
    dx[0] = -1.0
    assert dy[0] == 0.5 and sens[0] == 0.5


def test_value_of_identity_is_not_the_input_object(api):
    x = np.array([1.0, 2.0])
    value, g = value_and_grad(identity)(x)
    assert value is not x
    assert not np.shares_memory(np.asarray(value), x)
    api.assert_grad(g, np.ones(2), x)


@pytest.mark.parametrize("wrap", [lambda a: a, Tensor], ids=["ndarray", "Tensor"])
def test_repeated_calls_return_new_arrays(api, wrap):
    x = wrap(np.array([1.0, 2.0]))
    gradient_function = grad(identity)
    g1 = gradient_function(x)
    g2 = gradient_function(x)
    _writable_and_fresh(g1, g2, x)
    (g1.asnumpy() if isinstance(g1, Tensor) else g1)[0] = 5.0
    api.assert_grad(g2, np.ones(2), x)
    api.assert_grad(gradient_function(x), np.ones(2), x)
