"""grad / value_and_grad: grad_position, weights, has_aux, return_ids, checks, decorators."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, ParameterTuple, Tensor, nn, ops
from ad_compiler.ops import grad, value_and_grad


def fn3(x, y, z):
    return x * np.sin(y) * z ** 2


@pytest.fixture
def xyz(api):
    r = api.rng(21)
    return tuple(Tensor(r.uniform(-1.5, 1.5, 4).astype(np.float32)) for _ in range(3))


def _leaves(api, fn, args, positions):
    """Expected input gradients at ``positions``, as Leaf objects in that order."""
    return tuple(api.Leaf(api.fd_grad(fn, args, p), args[p]) for p in positions)


# -- grad_position -------------------------------------------------------------------

@pytest.mark.parametrize("position", [0, 1, 2])
def test_int_position_gives_a_bare_gradient(api, xyz, position):
    (want,) = _leaves(api, fn3, xyz, (position,))
    api.assert_structure(grad(fn3, position)(*xyz), want)


@pytest.mark.parametrize("positions", [(0, 1), (2, 0), (1, 2, 0), (0, 1, 2)], ids=str)
def test_tuple_position_keeps_the_order_given(api, xyz, positions):
    api.assert_structure(grad(fn3, grad_position=positions)(*xyz), _leaves(api, fn3, xyz, positions))


@pytest.mark.parametrize("position", [(0,), (1,), (2,)], ids=str)
def test_one_tuple_position_gives_a_bare_gradient(api, xyz, position):
    (want,) = _leaves(api, fn3, xyz, position)
    api.assert_structure(grad(fn3, position)(*xyz), want)


def test_default_position_is_the_first_input(api, xyz):
    (want,) = _leaves(api, fn3, xyz, (0,))
    api.assert_structure(grad(fn3)(*xyz), want)


def test_seed_cell_example(api):
    class Net(nn.Cell):
        def construct(self, x, y, z):
            return x * y * z

    x = Tensor([1, 2], ms.float32)
    y = Tensor([-2, 3], ms.float32)
    z = Tensor([0, 3], ms.float32)
    dy, dz = grad(Net(), grad_position=(1, 2))(x, y, z)
    # d(xyz)/dy = x z, d(xyz)/dz = x y
    api.assert_grad(dy, [1 * 0, 2 * 3], y)
    api.assert_grad(dz, [1 * -2, 2 * 3], z)


# -- weights -----------------------------------------------------------------------------

class Model(nn.Cell):
    def __init__(self, w, b):
        super().__init__()
        self.w = Parameter(Tensor(w), name="w")
        self.b = Parameter(Tensor(b), name="b")

    def construct(self, x, y):
        return np.sum(np.tanh(x @ self.w + self.b) * y)


def model_ref(x, y, w, b):
    return np.sum(np.tanh(x @ w + b) * y)


@pytest.fixture
def model(api):
    r = api.rng(22)
    net = Model(r.uniform(-1, 1, (3, 2)).astype(np.float32), r.uniform(-1, 1, 2).astype(np.float32))
    x = Tensor(r.uniform(-1, 1, (4, 3)).astype(np.float32))
    y = Tensor(r.uniform(-1, 1, (4, 2)).astype(np.float32))
    args = (x, y, net.w, net.b)
    want = {name: api.Leaf(api.fd_grad(model_ref, args, i), a)
            for i, (name, a) in enumerate(zip("xywb", args))}
    return net, x, y, want


def test_weights_only_with_position_none(api, model):
    net, x, y, want = model
    api.assert_structure(grad(net, None, weights=net.trainable_params())(x, y), (want["w"], want["b"]))


@pytest.mark.parametrize("form", ["list", "ParameterTuple", "tuple"])
def test_weight_sequence_gives_a_tuple(api, model, form):
    net, x, y, want = model
    weights = {"list": [net.b, net.w], "ParameterTuple": ParameterTuple([net.b, net.w]),
               "tuple": (net.b, net.w)}[form]
    api.assert_structure(grad(net, None, weights)(x, y), (want["b"], want["w"]))


def test_one_parameter_gives_a_bare_gradient(api, model):
    net, x, y, want = model
    api.assert_structure(grad(net, grad_position=None, weights=net.w)(x, y), want["w"])


@pytest.mark.parametrize("position,weights,shape", [
    (0, "w", ("x", "w")),
    ((1,), "list", ("y", ("w", "b"))),
    ((1, 0), "w", (("y", "x"), "w")),
    ((0, 1), "ParameterTuple", (("x", "y"), ("w", "b"))),
], ids=["int-bare", "1tuple-list", "pair-bare", "pair-ParameterTuple"])
def test_inputs_and_weights(api, model, position, weights, shape):
    net, x, y, want = model
    w = {"w": net.w, "list": [net.w, net.b], "ParameterTuple": ParameterTuple(net.trainable_params())}
    expected = _fill(shape, want)
    api.assert_structure(grad(net, position, w[weights])(x, y), expected)


def _fill(shape, want):
    if isinstance(shape, tuple):
        return tuple(_fill(s, want) for s in shape)
    return want[shape]


def test_tensor_weight_that_is_not_a_parameter_gets_zeros(api, model):
    net, x, y, want = model
    plain = Tensor(np.ones((2, 3), np.float32))
    got = grad(net, None, weights=[net.w, plain])(x, y)
    api.assert_structure(got, (want["w"], api.Leaf(np.zeros((2, 3)), plain)))
    api.assert_structure(grad(net, None, weights=plain)(x, y), api.Leaf(np.zeros((2, 3)), plain))


def test_parameter_not_read_by_the_function_gets_zeros(api, model):
    net, x, y, want = model
    other = Parameter(Tensor(np.ones(5, np.float32)), name="other")
    got = grad(net, None, weights=[other, net.b])(x, y)
    api.assert_structure(got, (api.Leaf(np.zeros(5), other), want["b"]))


@pytest.mark.parametrize("weights", [3, "w", np.ones(2), [1.0], {"w": None}], ids=repr)
def test_weights_of_a_wrong_type_raise_type_error(model, weights):
    net, x, y, _ = model
    with pytest.raises(TypeError):
        grad(net, None, weights=weights)(x, y)


def test_a_wrong_weight_among_parameters_raises_type_error(model):
    net, x, y, _ = model
    with pytest.raises(TypeError):
        grad(net, 0, weights=[net.w, "b"])(x, y)


# -- has_aux -------------------------------------------------------------------------------

def with_aux(x, y, z):
    res = x * ops.exp(y) * ops.pow(z, 2)
    return res, z


def with_two_aux(x, y):
    return np.sum(x * y), x ** 3, np.cos(y)


def test_has_aux_seed_example(api):
    x = Tensor([3, 3], ms.float32)
    y = Tensor([0, 0], ms.float32)
    z = Tensor([5, 5], ms.float32)
    gradient, aux = grad(with_aux, (1, 2), None, True)(x, y, z)
    # d/dy = x e^y z^2 = 75, d/dz = 2 x e^y z = 30
    api.assert_structure(gradient, (api.Leaf([75.0, 75.0], y), api.Leaf([30.0, 30.0], z)))
    assert type(aux) is tuple and len(aux) == 1
    assert isinstance(aux[0], Tensor)
    api.assert_values(aux[0], [5.0, 5.0], np.float32)


def test_has_aux_differentiates_only_the_first_output(api):
    r = api.rng(23)
    x, y = r.uniform(-1, 1, 3), r.uniform(-1, 1, 3)
    got, aux = grad(with_two_aux, (0, 1), has_aux=True)(x, y)
    # only sum(x * y) counts: x ** 3 and cos(y) would change both gradients
    api.assert_structure(got, (api.Leaf(y, x), api.Leaf(x, y)))
    assert type(aux) is tuple and len(aux) == 2
    api.assert_values(aux[0], x ** 3)
    api.assert_values(aux[1], np.cos(y))


def test_has_aux_with_weights_seed_example(api):
    r = api.rng(24)
    weight, bias = r.uniform(-1, 1, (1, 10)).astype(np.float32), r.uniform(-1, 1, 1).astype(np.float32)
    net = nn.Dense(10, 1, weight_init=Tensor(weight), bias_init=Tensor(bias))
    loss_fn = nn.MSELoss()

    def forward(inputs, labels):
        logits = net(inputs)
        loss = loss_fn(logits, labels)
        return loss, logits

    def forward_ref(inputs, labels, w, b):
        return np.mean(np.square(inputs @ w.T + b - labels))

    inputs = Tensor(r.standard_normal((16, 10)).astype(np.float32))
    labels = Tensor(r.standard_normal((16, 1)).astype(np.float32))
    weights = net.trainable_params()
    args = (inputs, labels, net.weight, net.bias)
    d_in, d_lab, d_w, d_b = (api.Leaf(api.fd_grad(forward_ref, args, i), a) for i, a in enumerate(args))

    inputs_gradient, (aux_logits,) = grad(forward, grad_position=(0, 1), weights=None,
                                          has_aux=True)(inputs, labels)
    api.assert_structure(inputs_gradient, (d_in, d_lab))
    api.assert_values(aux_logits, inputs.asnumpy() @ weight.T + bias, np.float32)
    assert aux_logits.shape == (16, 1)

    params_gradient, (aux_logits,) = grad(forward, grad_position=None, weights=weights,
                                          has_aux=True)(inputs, labels)
    api.assert_structure(params_gradient, (d_w, d_b))

    inputs_gradient, params_gradient = grad(forward, grad_position=0, weights=weights,
                                            has_aux=False)(inputs, labels)
    # without has_aux the logits count too: d(loss + sum(logits))
    def both_ref(inputs, labels, w, b):
        return forward_ref(inputs, labels, w, b) + np.sum(inputs @ w.T + b)
    api.assert_structure((inputs_gradient, params_gradient),
                         (api.Leaf(api.fd_grad(both_ref, args, 0), inputs),
                          tuple(api.Leaf(api.fd_grad(both_ref, args, i), args[i]) for i in (2, 3))))


def nested_aux(x, y):
    return np.sum(x * y), (x + y, y * 2.0)


def test_aux_is_the_tuple_of_the_remaining_outputs_even_when_nested(api):
    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    got, aux = grad(nested_aux, has_aux=True)(x, y)
    api.assert_grad(got, y, x)
    assert type(aux) is tuple and len(aux) == 1
    assert type(aux[0]) is tuple and len(aux[0]) == 2
    api.assert_values(aux[0][0], x + y)
    api.assert_values(aux[0][1], y * 2.0)


def test_return_ids_with_has_aux(api):
    x, y = np.array([1.0, 2.0]), np.array([0.5, -0.5])
    ((i0, g0), (i1, g1)), aux = grad(with_two_aux, (1, 0), has_aux=True, return_ids=True)(x, y)
    assert (i0, i1) == (1, 0)
    api.assert_grad(g0, x, y)
    api.assert_grad(g1, y, x)
    assert len(aux) == 2


def single_output(x):
    return x * 2.0


def one_tuple_output(x):
    return (x * 2.0,)


@pytest.mark.parametrize("fn", [single_output, one_tuple_output], ids=lambda f: f.__name__)
@pytest.mark.parametrize("transform", [grad, value_and_grad], ids=lambda t: t.__name__)
def test_has_aux_needs_two_outputs(fn, transform):
    with pytest.raises(ValueError):
        transform(fn, has_aux=True)(np.ones(3))


# -- return_ids ----------------------------------------------------------------------------

def test_return_ids_for_positions(api, xyz):
    got = grad(fn3, (2, 0), return_ids=True)(*xyz)
    d2, d0 = _leaves(api, fn3, xyz, (2, 0))
    assert type(got) is tuple and len(got) == 2
    assert [pair[0] for pair in got] == [2, 0]
    api.assert_structure(got[0][1], d2)
    api.assert_structure(got[1][1], d0)


def test_return_ids_one_position_is_a_bare_pair(api, xyz):
    got = grad(fn3, 1, return_ids=True)(*xyz)
    (d1,) = _leaves(api, fn3, xyz, (1,))
    assert type(got) is tuple and len(got) == 2 and got[0] == 1
    api.assert_structure(got[1], d1)


def test_return_ids_for_inputs_and_weights(api, model):
    net, x, y, want = model
    got = grad(net, (1, 0), weights=net.trainable_params(), return_ids=True)(x, y)
    (iy, gy), (ix, gx) = got[0]
    (nw, gw), (nb, gb) = got[1]
    assert (iy, ix, nw, nb) == (1, 0, "w", "b")
    api.assert_structure((gy, gx, gw, gb), (want["y"], want["x"], want["w"], want["b"]))


def test_return_ids_for_one_parameter(api, model):
    net, x, y, want = model
    name, g = grad(net, None, weights=net.b, return_ids=True)(x, y)
    assert name == "b"
    api.assert_structure(g, want["b"])


# -- argument checks -------------------------------------------------------------------------

TRANSFORMS = pytest.mark.parametrize("transform", [grad, value_and_grad], ids=lambda t: t.__name__)


@TRANSFORMS
@pytest.mark.parametrize("position", [-1, (0, -1), (0, 0), (2, 1, 2)], ids=str)
def test_negative_or_duplicate_position_raises_value_error(transform, position):
    with pytest.raises(ValueError):
        transform(fn3, grad_position=position)


@TRANSFORMS
@pytest.mark.parametrize("position", [1.0, [0, 1], (0, 1.0), (0, "1"), "0", (None,)], ids=repr)
def test_non_int_position_raises_type_error(transform, position):
    with pytest.raises(TypeError):
        transform(fn3, grad_position=position)


@TRANSFORMS
@pytest.mark.parametrize("position", [3, (0, 3), (7,), ()], ids=str)
def test_position_out_of_range_or_empty_raises_runtime_error_when_called(transform, position, xyz):
    gradient_function = transform(fn3, grad_position=position)   # no error yet
    with pytest.raises(RuntimeError):
        gradient_function(*xyz)


@TRANSFORMS
def test_nothing_to_differentiate_raises_value_error(transform):
    with pytest.raises(ValueError):
        transform(fn3, grad_position=None)
    with pytest.raises(ValueError):
        transform(fn3, grad_position=None, weights=None)


@TRANSFORMS
@pytest.mark.parametrize("kwargs", [dict(has_aux=1), dict(has_aux=None), dict(return_ids=1),
                                    dict(return_ids="yes")], ids=repr)
def test_non_bool_has_aux_or_return_ids_raises_type_error(transform, kwargs):
    with pytest.raises(TypeError):
        transform(fn3, **kwargs)


# -- value_and_grad ---------------------------------------------------------------------------

def test_value_and_grad_returns_the_value_and_the_gradients(api, xyz):
    value, grads = value_and_grad(fn3, (0, 2))(*xyz)
    x, y, z = (t.asnumpy() for t in xyz)
    assert isinstance(value, Tensor)
    api.assert_values(value, x * np.sin(y) * z ** 2, np.float32)
    assert value.asnumpy().dtype == np.float32
    api.assert_structure(grads, _leaves(api, fn3, xyz, (0, 2)))


def test_value_and_grad_with_has_aux_returns_the_whole_output(api):
    r = api.rng(25)
    x, y = r.uniform(-1, 1, 3), r.uniform(-1, 1, 3)
    value, grads = value_and_grad(with_two_aux, (0, 1), has_aux=True)(x, y)
    assert type(value) is tuple and len(value) == 3
    api.assert_values(value[0], np.sum(x * y))
    api.assert_values(value[1], x ** 3)
    api.assert_values(value[2], np.cos(y))
    api.assert_structure(grads, (api.Leaf(y, x), api.Leaf(x, y)))


def test_value_and_grad_with_weights(api, model):
    net, x, y, want = model
    value, (dx, (dw, db)) = value_and_grad(net, 0, net.trainable_params())(x, y)
    ref = model_ref(*(api.f64(a) for a in (x, y, net.w, net.b)))
    api.assert_values(value, ref, np.float32)
    api.assert_structure((dx, dw, db), (want["x"], want["w"], want["b"]))


def test_value_and_grad_tuple_output_value_is_the_whole_tuple(api):
    r = api.rng(26)
    x, y = r.uniform(-1, 1, 3), r.uniform(-1, 1, 3)
    value, dx = value_and_grad(with_two_aux)(x, y)
    assert type(value) is tuple and len(value) == 3
    api.assert_values(value[1], x ** 3)
    # without has_aux every output leaf gets a ones sensitivity
    api.assert_structure(dx, api.Leaf(y + 3 * x ** 2, x))


# -- decorators ------------------------------------------------------------------------------

@ms.grad
def d_square_sum(x):
    return np.sum(x ** 2)


@ms.grad(grad_position=(0, 1))
def d_product(x, y):
    return np.sum(x * np.exp(y))


@ms.value_and_grad
def vg_cube(x):
    return np.sum(x ** 3)


@ms.value_and_grad(grad_position=1)
def vg_second(x, y):
    return np.sum(x * np.sin(y))


def test_grad_decorator_without_arguments(api):
    x = np.array([1.0, -2.0, 0.5])
    api.assert_grad(d_square_sum(x), 2 * x, x)


def test_grad_decorator_with_arguments(api):
    x, y = np.array([1.0, -2.0]), np.array([0.3, -0.1])
    api.assert_structure(d_product(x, y), (api.Leaf(np.exp(y), x), api.Leaf(x * np.exp(y), y)))


def test_value_and_grad_decorators(api):
    x = np.array([1.0, -2.0, 0.5])
    value, g = vg_cube(x)
    api.assert_values(value, np.sum(x ** 3))
    api.assert_grad(g, 3 * x ** 2, x)
    y = np.array([0.2, 0.4, -0.6])
    value, g = vg_second(x, y)
    api.assert_values(value, np.sum(x * np.sin(y)))
    api.assert_grad(g, x * np.cos(y), y)


def test_ops_and_top_level_names_are_the_same_functions():
    assert ms.grad is ops.grad and ms.value_and_grad is ops.value_and_grad
    assert ms.GradOperation is ops.GradOperation
