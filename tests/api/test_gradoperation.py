"""GradOperation(get_all, get_by_list, sens_param): SPEC's result table, sens, and argument checks.

The network is the seeds' ``Net`` (``matmul(x * z, y)`` with a Parameter ``z``);
expected gradients are finite differences of its NumPy reference ``api.net_ref``.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from ad_compiler import Parameter, ParameterTuple, Tensor, nn
from ad_compiler.ops import GradOperation

FLAGS = list(itertools.product([False, True], repeat=3))


def _flag_id(flags):
    names = ("get_all", "get_by_list", "sens_param")
    return "-".join(n for n, f in zip(names, flags) if f) or "defaults"


def _sens(api, shape=(2, 3), dtype=np.float32, seed=1):
    return Tensor(api.rng(seed).uniform(-1.0, 1.0, shape).astype(dtype))


def _expected(api, net, x, y, get_all, get_by_list, sens=None):
    """SPEC's table: bare dx / (dx, dy) / (dz,) / ((dx, dy), (dz,))."""
    dx, dy, dz = api.fd_grads(api.net_ref, (x, y, net.z), sens=sens)
    inputs = (api.Leaf(dx, x), api.Leaf(dy, y))
    weights = (api.Leaf(dz, net.z),)
    if get_all and get_by_list:
        return inputs, weights
    if get_by_list:
        return weights
    if get_all:
        return inputs
    return inputs[0]


# -- the table ----------------------------------------------------------------------

@pytest.mark.parametrize("get_all,get_by_list,sens_param", FLAGS, ids=[_flag_id(f) for f in FLAGS])
def test_flag_combinations(api, get_all, get_by_list, sens_param):
    net = api.Net(z=1.5)
    x, y = api.net_inputs()
    grad_op = GradOperation(get_all=get_all, get_by_list=get_by_list, sens_param=sens_param)
    gradient_function = grad_op(net, ParameterTuple(net.trainable_params())) if get_by_list \
        else grad_op(net)
    sens = _sens(api) if sens_param else None
    got = gradient_function(x, y, sens) if sens_param else gradient_function(x, y)
    api.assert_structure(got, _expected(api, net, x, y, get_all, get_by_list, sens))


def test_inputs_and_weights_are_always_two_tuples(api):
    net = api.Net(z=0.5)
    x, y = api.net_inputs()
    result = GradOperation(get_all=True, get_by_list=True)(net, net.z)(x, y)
    # even one Parameter given bare: (inputs_tuple, weights_tuple)
    api.assert_structure(result, _expected(api, net, x, y, True, True))


def test_weights_ignored_without_get_by_list(api):
    net = api.Net(z=2.0)
    x, y = api.net_inputs()
    params = ParameterTuple(net.trainable_params())
    api.assert_structure(GradOperation()(net, params)(x, y), _expected(api, net, x, y, False, False))
    api.assert_structure(GradOperation(get_all=True)(net, params)(x, y),
                         _expected(api, net, x, y, True, False))


@pytest.mark.parametrize("form", ["ParameterTuple", "list", "tuple"])
def test_get_by_list_with_a_sequence_gives_a_tuple(api, form):
    net = api.Net(z=1.5)
    x, y = api.net_inputs()
    weights = {"ParameterTuple": ParameterTuple(net.trainable_params()),
               "list": [net.z], "tuple": (net.z,)}[form]
    got = GradOperation(get_by_list=True)(net, weights)(x, y)
    api.assert_structure(got, _expected(api, net, x, y, False, True))


def test_get_by_list_with_one_parameter_gives_it_bare(api):
    net = api.Net(z=1.5)
    x, y = api.net_inputs()
    got = GradOperation(get_by_list=True)(net, net.z)(x, y)
    (dz,) = _expected(api, net, x, y, False, True)
    api.assert_structure(got, dz)


class Scaled(nn.Cell):
    """Own Parameter, a sub-cell, and a frozen Parameter (not trainable)."""

    def __init__(self, weight, bias):
        super().__init__()
        self.scale = Parameter(Tensor(np.array([1.5, -0.5], np.float32)), name="scale")
        self.fc = nn.Dense(3, 2, weight_init=Tensor(weight), bias_init=Tensor(bias))
        self.offset = Parameter(Tensor(np.array([0.25, 0.75], np.float32)), name="offset",
                                requires_grad=False)

    def construct(self, x):
        return np.tanh(self.fc(x) * self.scale + self.offset)


def _scaled_ref(x, scale, weight, bias, offset):
    return np.tanh((x @ weight.T + bias) * scale + offset)


def test_get_by_list_without_weights_gives_all_trainable_params(api):
    r = api.rng(3)
    net = Scaled(r.uniform(-1, 1, (2, 3)).astype(np.float32), r.uniform(-1, 1, 2).astype(np.float32))
    x = Tensor(r.uniform(-1, 1, (4, 3)).astype(np.float32))
    assert [p.name for p in net.trainable_params()] == ["scale", "fc.weight", "fc.bias"]
    args = (x, net.scale, net.fc.weight, net.fc.bias, net.offset)
    d_scale, d_weight, d_bias = api.fd_grads(_scaled_ref, args, positions=(1, 2, 3))
    want = (api.Leaf(d_scale, net.scale), api.Leaf(d_weight, net.fc.weight),
            api.Leaf(d_bias, net.fc.bias))
    api.assert_structure(GradOperation(get_by_list=True)(net)(x), want)
    dx = api.fd_grad(_scaled_ref, args, 0)
    api.assert_structure(GradOperation(get_all=True, get_by_list=True)(net)(x),
                         ((api.Leaf(dx, x),), want))


# -- sens -------------------------------------------------------------------------------

def test_sens_by_keyword(api):
    net = api.Net(z=1.5)
    x, y = api.net_inputs()
    sens = _sens(api, seed=7)
    got = GradOperation(get_all=True, sens_param=True)(net)(x, y, sens=sens)
    api.assert_structure(got, _expected(api, net, x, y, True, False, sens))


def three_inputs(a, b, c):
    return a * b + np.sin(c)


def test_sens_keyword_wins_over_the_last_positional(api):
    r = api.rng(5)
    a, b, c, sens = (r.uniform(-1, 1, 3) for _ in range(4))
    # with sens= given, c is an input, not the sensitivity
    got = GradOperation(get_all=True, sens_param=True)(three_inputs)(a, b, c, sens=sens)
    want = tuple(api.Leaf(g, v) for g, v in
                 zip(api.fd_grads(three_inputs, (a, b, c), sens=sens), (a, b, c)))
    api.assert_structure(got, want)


def nested_outputs(x, y):
    return x * y, (x + y, np.sin(x))


def _nested_sens(api):
    r = api.rng(11)
    return tuple(r.uniform(-1, 1, 3) for _ in range(3))


@pytest.mark.parametrize("layout", ["nested tuple", "flat tuple", "nested list", "flat list"])
def test_tuple_output_with_nested_or_flat_sens(api, layout):
    r = api.rng(2)
    x, y = r.uniform(-1, 1, 3), r.uniform(-1, 1, 3)
    s1, s2, s3 = _nested_sens(api)
    sens = {"nested tuple": (s1, (s2, s3)), "flat tuple": (s1, s2, s3),
            "nested list": [s1, [s2, s3]], "flat list": [s1, s2, s3]}[layout]
    got = GradOperation(get_all=True, sens_param=True)(nested_outputs)(x, y, sens)
    dx, dy = api.fd_grads(nested_outputs, (x, y), sens=(s1, s2, s3))
    api.assert_structure(got, (api.Leaf(dx, x), api.Leaf(dy, y)))


def dict_outputs(x, y):
    return {"p": x * y, "q": np.sin(x)}


def list_outputs(x, y):
    return [x * y, np.exp(y)]


@pytest.mark.parametrize("fn", [nested_outputs, dict_outputs, list_outputs],
                         ids=lambda f: f.__name__)
def test_structured_output_without_sens_is_the_sum_of_its_leaves(api, fn):
    r = api.rng(4)
    x, y = r.uniform(-1, 1, (2, 2)), r.uniform(-1, 1, (2, 2))
    dx, dy = api.fd_grads(fn, (x, y))
    api.assert_structure(GradOperation(get_all=True)(fn)(x, y), (api.Leaf(dx, x), api.Leaf(dy, y)))


def _net_sens_error_cases():
    return [
        ("broadcastable shape (3,)", lambda: Tensor(np.ones(3, np.float32)), ValueError),
        ("broadcastable shape (1, 3)", lambda: Tensor(np.ones((1, 3), np.float32)), ValueError),
        ("transposed shape (3, 2)", lambda: Tensor(np.ones((3, 2), np.float32)), ValueError),
        ("float64 for a float32 output", lambda: Tensor(np.ones((2, 3), np.float64)), TypeError),
        ("int32 for a float32 output", lambda: Tensor(np.ones((2, 3), np.int32)), TypeError),
        ("Python float for a (2, 3) output", lambda: 1.0, RuntimeError),
        ("Python int for a (2, 3) output", lambda: 1, RuntimeError),
        ("two entries for one output",
         lambda: (Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((2, 3), np.float32))),
         RuntimeError),
    ]


@pytest.mark.parametrize("make_sens,error", [c[1:] for c in _net_sens_error_cases()],
                         ids=[c[0] for c in _net_sens_error_cases()])
@pytest.mark.parametrize("by_keyword", [False, True], ids=["positional", "keyword"])
def test_sens_errors(api, make_sens, error, by_keyword):
    net = api.Net()
    x, y = api.net_inputs()
    gradient_function = GradOperation(get_all=True, sens_param=True)(net)
    with pytest.raises(error):
        if by_keyword:
            gradient_function(x, y, sens=make_sens())
        else:
            gradient_function(x, y, make_sens())


@pytest.mark.parametrize("sens", [
    pytest.param(lambda s: (s[0], s[1]), id="two of three"),
    pytest.param(lambda s: (s[0], (s[1],)), id="nested, one missing"),
    pytest.param(lambda s: (s[0], (s[1], s[2]), s[0]), id="four of three"),
    pytest.param(lambda s: s[0], id="bare for a tuple output"),
])
def test_sens_with_a_wrong_number_of_entries(api, sens):
    r = api.rng(2)
    x, y = r.uniform(-1, 1, 3), r.uniform(-1, 1, 3)
    with pytest.raises(RuntimeError):
        GradOperation(get_all=True, sens_param=True)(nested_outputs)(x, y, sens(_nested_sens(api)))


def test_sens_of_the_right_shape_and_dtype_is_accepted_as_ndarray(api):
    r = api.rng(8)
    x, y = r.uniform(-1, 1, (2, 3)), r.uniform(-1, 1, (2, 3))
    sens = r.uniform(-1, 1, (2, 3))
    got = GradOperation(get_all=True, sens_param=True)(three_inputs)(x, y, x, sens)
    want = api.fd_grads(three_inputs, (x, y, x), sens=sens)
    api.assert_structure(got, tuple(api.Leaf(g, v) for g, v in zip(want, (x, y, x))))


def sum_of_squares(x):
    return np.sum(x ** 2)


@pytest.mark.parametrize("sens", [2.5, np.float64(2.5), np.array(2.5)], ids=repr)
def test_scalar_sens_for_a_scalar_output(api, sens):
    x = np.array([0.5, -1.0, 2.0])
    got = GradOperation(sens_param=True)(sum_of_squares)(x, sens)
    api.assert_grad(got, 2 * x * 2.5, x)


def test_python_float_sens_for_a_float32_scalar_output(api):
    x = Tensor(np.array([0.5, -1.0], np.float32))
    got = GradOperation(sens_param=True)(sum_of_squares)(x, sens=-2.0)
    api.assert_grad(got, 2 * api.f64(x) * -2.0, x)


# -- argument checks ------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(get_all=1), dict(get_all=0), dict(get_by_list=1), dict(get_by_list="True"),
    dict(sens_param=None), dict(sens_param=1.0),
], ids=repr)
def test_non_bool_flags_raise_type_error_at_construction(kwargs):
    with pytest.raises(TypeError):
        GradOperation(**kwargs)


@pytest.mark.parametrize("not_callable", [3, "net", None, np.ones(2)], ids=repr)
def test_non_callable_fn_raises_type_error_when_called(not_callable):
    gradient_function = GradOperation()(not_callable)   # no error yet
    with pytest.raises(TypeError):
        gradient_function(np.ones(2))


def no_inputs():
    return np.ones(3) * 2.0


def only_constants(n, flag):
    return np.ones(3) * n * flag


@pytest.mark.parametrize("get_all", [False, True])
def test_no_differentiable_input_gives_an_empty_tuple(get_all):
    assert GradOperation(get_all=get_all)(no_inputs)() == ()
    assert GradOperation(get_all=get_all)(only_constants)(4, True) == ()


def test_gradient_function_is_reusable_across_calls(api):
    net = api.Net(z=1.5)
    gradient_function = GradOperation(get_all=True)(net)
    r = api.rng(9)
    for _ in range(3):
        x = Tensor(r.uniform(-1, 1, (2, 3)).astype(np.float32))
        y = Tensor(r.uniform(-1, 1, (3, 3)).astype(np.float32))
        api.assert_structure(gradient_function(x, y), _expected(api, net, x, y, True, False))


def test_float64_tensors_stay_float64(api):
    class Net64(nn.Cell):
        def __init__(self):
            super().__init__()
            self.z = Parameter(Tensor(np.array([0.75])), name="z")

        def construct(self, x, y):
            return (x * self.z) @ y

    net = Net64()
    r = api.rng(6)
    x, y = Tensor(r.uniform(-1, 1, (2, 3))), Tensor(r.uniform(-1, 1, (3, 4)))
    assert x.asnumpy().dtype == np.float64
    got = GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())(x, y)
    dx, dy, dz = api.fd_grads(api.net_ref, (x, y, net.z))
    api.assert_structure(got, ((api.Leaf(dx, x), api.Leaf(dy, y)), (api.Leaf(dz, net.z),)))
