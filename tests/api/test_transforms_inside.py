"""``ms.vjp``, ``ms.jvp``, ``ms.jacrev``, ``ms.jacfwd`` and ``ms.hessian`` called inside
a compiled function (or ``construct``): inlined as ordinary IR, so the function's
value is Python's and its derivatives (reverse and forward, first and second order)
agree with central differences (``ms.check_grad``)."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import errors, nn
from tests.finite_differences import central

X = np.array([0.3, -0.5, 0.8])
Y = np.array([1.2, 0.4, -0.7])
V = np.array([0.5, -1.0, 2.0])


def cube(a):
    return np.sum(a ** 3 * np.sin(a))


def pair(a, b):
    return np.sin(a) * b, np.sum(a * b)


def looped(a, b):
    for _ in range(3):
        if np.sum(a) > 0.0:
            a = np.tanh(a * b)
        else:
            a = a * 0.5 + b
    return a


def with_aux(a, b):
    return np.sin(a) * b, np.cos(a)


# -- the functions compiled: each uses a transform in its body -----------------------

def uses_vjp(x, y):
    out, vjp_fn = ms.vjp(pair, x, y)
    dx, dy = vjp_fn((y, 2.0))
    return np.sum(out[0] * dx) + out[1] * np.sum(dy)


def uses_vjp_aux(x, y):
    out, vjp_fn, aux = ms.vjp(with_aux, x, y, has_aux=True)
    return np.sum(vjp_fn(x)[1] * aux) + np.sum(out)


def uses_jvp(x, y):
    out, tangent = ms.jvp(looped, (x, y), (y, x * x))
    return np.sum(out * tangent)


def uses_jvp_one_input(x):
    out, tangent = ms.jvp(np.tanh, x, np.cos(x))
    return np.sum(tangent * 2.0 + out)


def uses_jacrev(x, y):
    j = ms.jacrev(looped)(x, y)
    return np.sum(j * np.outer(y, x))


def uses_jacfwd(x, y):
    jx, jy = ms.jacfwd(looped, grad_position=(0, 1))(x, y)
    return np.sum(jx ** 2) + np.sum(jy * jx)


def uses_jacrev_aux(x, y):
    (jx, jy), aux = ms.jacrev(with_aux, grad_position=(0, 1), has_aux=True)(x, y)
    return np.sum(jx * jy) + np.sum(aux)


def uses_hessian(x):
    return ms.hessian(cube)(x) @ V @ x      # a Hessian-vector product inside a loss


def uses_hessian_blocks(x, y):
    ((hxx, hxy), (hyx, hyy)) = ms.hessian(lambda_free_two, grad_position=(0, 1))(x, y)
    return np.sum(hxx * hyy) + np.sum(hxy * hyx)


def lambda_free_two(a, b):
    return np.sum(np.sin(a * b) * a)


CASES = [(uses_vjp, (X, Y)), (uses_vjp_aux, (X, Y)), (uses_jvp, (X, Y)), (uses_jvp, (-X, Y)),
         (uses_jvp_one_input, (X,)), (uses_jacrev, (X, Y)), (uses_jacrev, (-X, Y)),
         (uses_jacfwd, (X, Y)), (uses_jacrev_aux, (X, Y)), (uses_hessian, (X,)),
         (uses_hessian_blocks, (X, Y))]


@pytest.mark.parametrize("fn, args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in
                                                  enumerate(CASES)])
def test_value_and_derivatives(fn, args):
    positions = tuple(range(len(args)))
    value, _ = ms.value_and_grad(fn, grad_position=positions)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    ms.check_grad(fn, args)                     # reverse and forward mode


@pytest.mark.parametrize("fn, args", [(uses_jvp_one_input, (X,)), (uses_jacrev, (X, Y)),
                                      (uses_vjp, (X, Y))])
def test_second_order(fn, args):
    ms.check_grad(fn, args, order=2, modes=("rev",))


def test_float32_stays_float32():
    x32, y32 = X.astype(np.float32), Y.astype(np.float32)
    for fn in (uses_jvp, uses_jacrev, uses_jacfwd, uses_vjp):
        gx, gy = ms.grad(fn, grad_position=(0, 1))(x32, y32)
        assert gx.dtype == gy.dtype == np.float32, fn.__name__
        np.testing.assert_allclose(gx, ms.grad(fn, grad_position=(0, 1))(X, Y)[0], rtol=2e-4,
                                   atol=1e-5)


class Layer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(np.array([0.9, -1.1, 0.4]), name="w")

    def construct(self, x):
        return np.tanh(x * self.w)


class JacobianPenalty(nn.Cell):
    """A loss with the Jacobian of a sub-Cell (it reads Parameters) in it."""

    def __init__(self):
        super().__init__()
        self.layer = Layer()

    def construct(self, x):
        out, t = ms.jvp(self.layer, (x,), (np.ones(3),))
        return np.sum(out ** 2) + np.sum(ms.jacrev(self.layer)(x) ** 2) + np.sum(t)


def test_inside_construct_with_parameters():
    net = JacobianPenalty()
    ms.check_grad(net, (X,))
    grads = ms.grad(net, grad_position=None, weights=net.trainable_params())(X)
    w = net.layer.w
    base = w.asnumpy().copy()

    def at(v):  # the weight gradient against central differences
        w.set_data(v)
        return float(net(X))
    want = central(at, base)
    w.set_data(base)
    np.testing.assert_allclose(grads[0].asnumpy(), want, rtol=1e-6, atol=1e-8)


# -- mistakes: the uncompiled error, located at the user's line ------------------------

def vjp_fn_without_v(x):
    _, vjp_fn = ms.vjp(np.sin, x)
    return np.sum(vjp_fn())


def jvp_tangent_wrong_shape(x):
    return np.sum(ms.jvp(np.sin, (x,), (x[:2],))[1])


def jacrev_of_a_tuple_output(x):
    return np.sum(ms.jacrev(pair)(x, x))


@pytest.mark.parametrize("fn, error", [
    (vjp_fn_without_v, errors.GradTypeError),
    (jvp_tangent_wrong_shape, errors.GradValueError),
    (jacrev_of_a_tuple_output, errors.GradTypeError),
], ids=lambda v: getattr(v, "__name__", ""))
def test_misuse_is_the_uncompiled_error(fn, error):
    with pytest.raises(error) as plain:
        fn(X)
    with pytest.raises(error) as compiled:
        ms.grad(fn)(X)
    message = str(compiled.value)
    assert __file__ in message
    assert str(plain.value).splitlines()[0].split(": ", 1)[0] in message


def jacfwd_of_lambda(x):
    return np.sum(ms.jacfwd(lambda a: np.sin(a))(x))


def hessian_of_local_def(x):
    def k(a):
        return np.sum(a ** 3)
    return np.sum(ms.hessian(k)(x))


@pytest.mark.parametrize("fn, words", [
    (jacfwd_of_lambda, "the gradient of <lambda>, a function defined inside"),
    (hessian_of_local_def, "the gradient of k, a function defined inside"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_local_functions_stay_refused_and_located(fn, words):
    fn(X)  # fine uncompiled
    with pytest.raises(errors.UnsupportedOperationError) as info:
        ms.grad(fn)(X)
    assert words in str(info.value) and "hint:" in str(info.value)
    assert __file__ in str(info.value)


def test_jacrev_with_aux_and_several_positions_outside_compiled_code():
    (jx, jy), aux = ms.jacrev(with_aux, grad_position=(0, 1), has_aux=True)(X, Y)
    np.testing.assert_allclose(jx, np.diag(np.cos(X) * Y), rtol=1e-14)   # by hand
    np.testing.assert_allclose(jy, np.diag(np.sin(X)), rtol=1e-14)
    np.testing.assert_allclose(aux, np.cos(X))


# -- transforms made outside, called inside ----------------------------------------------

JAC = ms.jacfwd(looped, grad_position=1)
HESS = ms.hessian(cube)
_, VJP_AT_X = ms.vjp(pair, X, Y)


def uses_module_level_transforms(x):
    dx, dy = VJP_AT_X((x, 1.0))                  # the pullback at (X, Y), of a cotangent
    return np.sum(JAC(x, Y) @ x) + np.sum(HESS(x) * np.outer(x, x)) + np.sum(dx * dy)


def test_transforms_made_outside_are_inlined_when_called_inside():
    value, _ = ms.value_and_grad(uses_module_level_transforms)(X)
    assert value == pytest.approx(uses_module_level_transforms(X), rel=1e-12)
    ms.check_grad(uses_module_level_transforms, (X,))
    ms.check_grad(uses_module_level_transforms, (-X,))


def grows_until(a):
    for _ in range(4):          # a data-dependent exit: a while with a counter
        a = np.tanh(a) * 1.3 + 0.1 * a
        if np.sum(a) > 1.0:
            break
    return np.sum(np.sin(a) * a)


def sum_of_hessian(x):
    return np.sum(ms.hessian(grows_until)(x))


def test_gradient_of_a_hessian_through_a_loop_with_break():
    """Reverse mode over the forward-over-reverse code of a loop with a break: the
    loop's counter (added when it was first differentiated) sits before the tangent
    carried after it (fuzz seed 488: an internal IRError, 'dn_iter changes type')."""
    x = np.array([[0.1, -0.2], [0.3, 0.05], [-0.1, 0.2]])
    value, grad = ms.value_and_grad(sum_of_hessian)(x)
    assert value == pytest.approx(sum_of_hessian(x))
    fd = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[k] += 1e-5
        lo[k] -= 1e-5
        fd[k] = (sum_of_hessian(hi) - sum_of_hessian(lo)) / 2e-5
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5)
