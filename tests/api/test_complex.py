"""Complex numbers end to end: user functions with complex inputs and intermediates.

The convention is JAX's (docs/complex.md): for a real-valued ``L`` the gradient of a
complex ``z = x + iy`` is ``dL/dx - i dL/dy``. Expected values are central finite
differences in complex128 of the same function run as plain NumPy (and, as a second
opinion, HIPS autograd, which follows the same convention); never ad_compiler itself.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import GradOperation, Parameter, Tensor, grad, nn, value_and_grad
from ad_compiler.errors import AdCompilerError
from tests.finite_differences import central, central_at, directional

EPS = 1e-6


def check(fn, *args, tol=1e-6):
    """ms.grad of ``fn`` w.r.t. every argument equals the finite differences, with each
    gradient of its argument's type and dtype."""
    got = GradOperation(get_all=True)(fn)(*args)
    for i, (g, a) in enumerate(zip(got, args)):
        np.testing.assert_allclose(g, central_at(fn, args, i), rtol=tol, atol=tol,
                                   err_msg=f"gradient {i}")
        if isinstance(a, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == a.dtype, (g, a.dtype)
        else:
            assert type(g) is type(a), (g, a)
    return got


Z = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.7 - 1.1j])
W = np.array([[0.3 - 0.2j, 1.1 + 0.4j, -0.6j], [0.5, -1.0 + 0.5j, 0.2 + 0.9j]])


# -- the convention -------------------------------------------------------------------------

def abs_squared(z):
    return np.abs(z) ** 2


def test_convention_is_jax_abs_squared():
    """grad(|z|^2)(1+2j) = 2 * conj(z) = 2-4j: JAX's documented value."""
    got = grad(abs_squared)(1 + 2j)
    assert type(got) is complex
    assert got == pytest.approx(2 - 4j)
    assert got == pytest.approx(central(abs_squared, 1 + 2j))


def test_convention_is_autograds_abs_squared():
    """The same value as autograd (an optional peer: skipped where not installed)."""
    autograd = pytest.importorskip("autograd")
    import autograd.numpy as anp
    got = grad(abs_squared)(1 + 2j)
    assert got == pytest.approx(autograd.grad(lambda z: anp.abs(z) ** 2)(1 + 2j))


def real_of_square(z):
    return np.real(z * z)


def test_holomorphic_inside_real_part():
    """Re(z^2) = x^2 - y^2: gradient 2x + 2iy, not its conjugate."""
    got = grad(real_of_square)(1 + 2j)
    assert got == pytest.approx(2 + 4j)
    assert got == pytest.approx(central(real_of_square, 1 + 2j))


# -- spellings ------------------------------------------------------------------------------

def spellings(z):
    return (np.sum(np.real(z) * np.imag(z)) + np.sum(z.real ** 2 - z.imag)
            + np.sum(np.real(np.conj(z) * z.conj() * np.conjugate(z) * z.conjugate()))
            + np.sum(np.angle(z)) + np.sum(np.angle(z, deg=True)) / 90.0 + np.sum(np.abs(z)))


def test_every_spelling_of_real_imag_conj_angle_abs():
    check(spellings, Z)


def test_python_complex_scalar_in_python_complex_out():
    g = check(lambda z: abs(z) * np.real(z) + np.imag(z * z), 0.3 - 1.2j)
    assert type(g[0]) is complex


def built_from_reals(x, y):
    z = x + 1j * y
    w = np.exp(1j * x) * np.complex128(2.0 - 1.0j) * z.conj()
    return np.sum(np.abs(w + z) ** 2) + np.sum(np.angle(z))


def test_complex_intermediates_from_real_inputs_give_real_gradients():
    x, y = np.array([0.3, -0.5, 1.2]), np.array([0.7, 0.2, -0.4])
    gx, gy = check(built_from_reals, x, y)
    assert gx.dtype == np.float64 and gy.dtype == np.float64


def test_float32_inputs_meeting_complex_keep_float32():
    x = np.array([0.3, -0.5], np.float32)
    g = grad(lambda x: np.sum(np.abs(np.exp(1j * x) + x) ** 2))(x)
    assert g.dtype == np.float32
    ref = central(lambda x: np.sum(np.abs(np.exp(1j * x) + x) ** 2), x)
    np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-4)


def test_complex64_stays_complex64():
    z = Z.astype(np.complex64)
    g = grad(lambda z: np.sum(np.abs(np.sin(z) * z) ** 2))(z)
    assert g.dtype == np.complex64
    ref = central(lambda z: np.sum(np.abs(np.sin(z) * z) ** 2), z)
    np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-4)


def test_tensor_complex64_in_tensor_out():
    t = Tensor(Z.astype(np.complex64))
    g = grad(lambda z: ms.ops.sum(np.real(z * z)))(t)
    assert isinstance(g, Tensor) and g.dtype == ms.dtype.complex64
    np.testing.assert_allclose(g.asnumpy(), 2 * Z, rtol=1e-5)


# -- complex cases of existing primitives ------------------------------------------------------

def elementwise_mix(z, w):
    a = np.exp(z) * np.log(w[0] + 3.0) / (z + 2.0) - np.sin(z) * np.cos(z) + np.tanh(z)
    b = np.sqrt(z + 3.0) + np.square(z) + z ** 3 + z ** 0.5 + (z + 3.0) ** w[1] - np.power(z, 2)
    return np.sum(np.abs(a + b) ** 2)


def test_elementwise_functions_on_complex():
    check(elementwise_mix, Z, W)


def reductions_and_products(z, w):
    m = w @ z + np.dot(w, np.conj(z)) + np.einsum("ij,j->i", w, z)
    s = np.sum(w, axis=0) * np.mean(z) + np.prod(z) + np.cumsum(z)
    return np.real(np.sum(m * m)) + np.sum(np.abs(s)) + np.imag(np.prod(w))


def test_reductions_matmul_einsum_on_complex():
    check(reductions_and_products, Z, W)


def movement_and_indexing(z, w):
    a = np.concatenate([z, w[1]])[::-1].reshape(2, 3).T
    b = np.stack([z, z * 1j])[:, 1:] + w[:, 1:]
    c = np.where(np.abs(z) > 1.0, z, 2j * z)
    d = np.tile(z, 2)[2:5] * np.roll(z, 1) + np.flip(w, axis=1)[0]
    return np.sum(np.abs(a) ** 2) + np.real(np.sum(b * b)) + np.sum(np.imag(c * d))


def test_movement_indexing_where_on_complex():
    check(movement_and_indexing, Z, W)


def loop_carry(z, w):
    acc = z
    for i in range(3):
        acc = acc * w[0] + np.conj(acc) * 0.5
        if np.real(np.sum(acc)) > 100.0:
            break
    return np.sum(np.abs(acc))


def test_complex_values_carried_by_a_loop():
    check(loop_carry, Z, W)


def inv_det_solve(a, b):
    return np.abs(np.linalg.det(a)) + np.sum(np.abs(np.linalg.solve(a, b)) ** 2) + \
        np.real(np.trace(np.linalg.inv(a)))


def test_inv_det_solve_on_complex():
    a = np.array([[2.0 + 0.5j, 0.3 - 0.2j], [-0.4 + 0.1j, 1.5 - 0.3j]])
    check(inv_det_solve, a, np.array([1.0 - 1.0j, 0.5j]))


class ComplexWeights(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([1j, 2.0 - 0.5j])), name="w")

    def construct(self, x):
        return np.sum(np.abs(x * self.w) ** 2)


def test_complex_parameter_gets_its_gradient():
    net = ComplexWeights()
    g = GradOperation(get_by_list=True)(net, net.trainable_params())(np.array([0.5, -2.0]))
    w = net.w.asnumpy()
    # |x w|^2 = x^2 |w|^2: gradient 2 x^2 conj(w)
    np.testing.assert_allclose(g[0].asnumpy(), 2 * np.array([0.25, 4.0]) * np.conj(w))


# -- second order ----------------------------------------------------------------------------

def phase_energy(x):
    return np.sum(np.abs(np.exp(1j * x * x) + x) ** 2)


def test_second_order_through_complex_intermediates():
    x = np.array([0.3, -0.7])
    g2 = grad(lambda x: np.sum(grad(phase_energy)(x) ** 2))(x)
    ref = central(lambda x: np.sum(central(phase_energy, x) ** 2), x)
    np.testing.assert_allclose(g2, ref, rtol=1e-4, atol=1e-4)


def test_second_order_in_a_complex_input():
    z = np.array([0.4 + 0.2j, -0.3 + 0.8j])
    inner = grad(abs_squared_sum)
    g2 = grad(lambda z: np.sum(np.abs(inner(z)) ** 2))(z)
    # grad |z|^2 = 2 conj(z); sum |2 conj z|^2 = 4 |z|^2: gradient 8 conj(z)
    np.testing.assert_allclose(g2, 8 * np.conj(z), rtol=1e-6)


def abs_squared_sum(z):
    return np.sum(np.abs(z) ** 2)


# -- complex outputs: vjp, sens_param, jvp -----------------------------------------------------

def complex_map(z, x):
    return np.exp(z) * x + np.conj(z) * 1j


def test_vjp_with_a_complex_cotangent():
    x = np.array([0.5, -1.5, 2.0])
    ct = np.array([1.0 - 0.5j, 0.2j, -1.0 + 0.3j])
    out, vjp_fn = ms.vjp(complex_map, Z, x)
    np.testing.assert_allclose(out, complex_map(Z, x))
    gz, gx = vjp_fn(ct)

    def paired(z, x):  # a cotangent pairs with the output as Re(sum(ct * out))
        return np.real(np.sum(ct * complex_map(z, x)))
    np.testing.assert_allclose(gz, central_at(paired, [Z, x], 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gx, central_at(paired, [Z, x], 1), rtol=1e-6, atol=1e-7)
    assert gx.dtype == np.float64


def test_gradoperation_sens_param_takes_a_complex_sensitivity():
    x = np.array([0.5, -1.5, 2.0])
    ct = np.array([1.0 - 0.5j, 0.2j, -1.0 + 0.3j])
    gz = GradOperation(sens_param=True)(complex_map)(Z, x, ct)
    np.testing.assert_allclose(gz, ms.vjp(complex_map, Z, x)[1](ct)[0])


def test_jvp_with_a_complex_tangent():
    x = np.array([0.5, -1.5, 2.0])
    tz, tx = np.array([0.3 + 0.1j, -1.0j, 0.5]), np.array([1.0, 0.0, -2.0])
    out, t_out = ms.jvp(complex_map, (Z, x), (tz, tx))
    expected = directional(complex_map, (Z, x), (tz, tx), EPS)
    np.testing.assert_allclose(t_out, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("transform", [
    lambda f: grad(f)(Z), lambda f: value_and_grad(f)(Z), lambda f: GradOperation()(f)(Z)],
    ids=["grad", "value_and_grad", "GradOperation"])
def test_grad_of_a_complex_output_is_a_type_error(transform):
    with pytest.raises(TypeError) as info:
        transform(complex_sum)
    assert isinstance(info.value, AdCompilerError)
    assert "complex_sum() returns a complex value; a gradient needs a real-valued output" \
        in str(info.value)


def complex_sum(z):
    return np.sum(z * z)


def test_has_aux_may_return_complex_aux():
    loss, aux = value_and_grad(lambda z: (np.sum(np.abs(z)), z * 2.0), has_aux=True)(Z)[0]
    np.testing.assert_allclose(aux, Z * 2.0)


# -- what has no complex rule is a located error, never a number --------------------------------

def writes_python_complex_into_real(z):
    buf = np.zeros(3)
    buf[0] = 1 + 2j   # NumPy: TypeError (float() of a complex)
    return np.sum(buf) + np.sum(np.abs(z))


def adds_complex_into_real(z):
    buf = np.zeros(3)
    buf[:2] += z[:2]  # NumPy: UFuncTypeError (cannot cast complex128 to float64)
    return np.sum(buf)


def uses_floor(z):
    return np.sum(np.abs(np.floor(z)))


@pytest.mark.parametrize("fn", [writes_python_complex_into_real, adds_complex_into_real,
                                uses_floor])
def test_no_complex_rule_is_a_located_type_error(fn):
    with pytest.raises(AdCompilerError) as info:
        grad(fn)(Z)
    err = info.value
    assert isinstance(err, TypeError), repr(err)
    assert err.loc is not None and err.loc.file == __file__, repr(err)


def test_generated_source_is_readable():
    source = ms.adjoint_source(built_from_reals, np.ones(2), np.ones(2), grad_position=(0, 1))
    assert ".conjugate()" in source and "np.real(" in source, source
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert all(line.count("np.") <= 2 for line in code), source  # one op per statement


# -- every lowered NumPy function of one complex array ---------------------------------------

def _lowered_numpy_functions():
    from ad_compiler.ad import rules
    found = {}
    for obj, _ in rules._LOWERINGS.values():
        for space, prefix in ((np, "np"), (np.linalg, "np.linalg")):
            name = getattr(obj, "__name__", None)
            # np.complex64 rounds to float32: its gradient needs a larger step
            # (tests/api/test_complex_linalg.py)
            if name and getattr(space, name, None) is obj and name not in (
                    "choice", "permutation", "complex64"):
                found[f"{prefix}.{name}"] = obj
    return dict(sorted(found.items()))


ONE_ARRAY = [np.array([1 + 2j, -0.5 + 0.3j, 0.7 - 1.1j]),
             np.array([[2.0 - 0.2j, 1.1 + 0.4j, -0.6j], [0.5, -1.0 + 0.5j, 0.2 + 0.9j],
                       [0.1j, 0.4, 1.0 - 0.2j]])]


def test_every_lowered_numpy_function_of_a_complex_array_is_numpy_or_refused(tmp_path):
    """Each lowered np.X called on a complex array gives NumPy's value, dtype and a gradient
    matching complex finite differences, or a located GradTypeError: never another number."""
    import importlib.util
    functions = _lowered_numpy_functions()
    source = "import numpy as np\n\nW = 0.7 - 0.4j\n" + "".join(
        f"\n\ndef f{i}(z):\n    y = {name}(z)\n    return np.real(np.sum(y * W)), y\n"
        for i, name in enumerate(functions))
    (tmp_path / "lowered_complex.py").write_text(source)
    spec = importlib.util.spec_from_file_location("lowered_complex", tmp_path / "lowered_complex.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    checked = 0
    for i, (name, obj) in enumerate(functions.items()):
        fn = getattr(module, f"f{i}")
        for z in ONE_ARRAY:
            try:
                with np.errstate(all="ignore"):
                    want = fn(z)
            except Exception:
                continue  # NumPy itself refuses this call
            if not isinstance(want[1], (np.ndarray, np.generic, complex, float)):
                continue
            try:
                (_, got), g = value_and_grad(fn, has_aux=True)(z)
            except AdCompilerError as e:
                assert e.loc is not None, (name, e)
                if isinstance(e, TypeError):
                    continue  # refused for complex values: a located GradTypeError
                assert "complex" not in str(e), (name, e)
                continue
            assert np.asarray(got).dtype == np.asarray(want[1]).dtype, name
            np.testing.assert_allclose(got, want[1], rtol=1e-12, atol=1e-12, err_msg=name)
            if np.asarray(want[1]).dtype.kind in "fc":
                ref = central(lambda z: fn(z)[0], z)
                # a point on a branch cut (0.5 for arccosh) has no complex derivative: the
                # two steps disagree there, and the gradient is one side's
                smooth = np.isclose(ref, central(lambda z: fn(z)[0], z, 1e-4),
                                    rtol=1e-3, atol=1e-4)
                assert np.mean(smooth) > 0.5, name
                np.testing.assert_allclose(np.asarray(g)[smooth], ref[smooth], rtol=1e-5,
                                           atol=1e-6, err_msg=name)
            checked += 1
    assert checked > 80


def test_vmap_of_grad_on_complex_batches():
    zs = np.stack([Z, Z * 0.5j, Z - 1.0])
    got = ms.vmap(grad(abs_squared_sum))(zs)
    np.testing.assert_allclose(got, 2 * np.conj(zs))
    np.testing.assert_allclose(ms.vmap(lambda z: np.real(z) * np.imag(z))(zs),
                               np.real(zs) * np.imag(zs))


def inverse_hyperbolic(z):
    a = np.arcsinh(z * 0.7)
    c = np.arccosh(z)
    return np.sum(np.real(a * np.conj(c)) + np.imag(c) * 0.5)


@pytest.mark.parametrize("z", [np.array([2.0 + 0.3j, -2.0 + 0.1j, -1.5 - 0.4j, 0.3 + 2.0j]),
                               np.array([0.2 - 0.5j, -0.7 + 1.3j])],
                         ids=["beyond-the-cuts", "near-the-origin"])
def test_arcsinh_and_arccosh_of_complex_values_take_numpys_branch(z):
    """arccosh's rule 1/sqrt((z-1)(z+1)) has the other sign where Re z < 0: the complex
    rule is 1/(sqrt(z-1) sqrt(z+1)); arcsinh's hypot(z, 1) is a modulus, not sqrt(1+z^2)."""
    got = grad(inverse_hyperbolic)(z)
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, central(inverse_hyperbolic, z), rtol=1e-6,
                               atol=1e-7)
    got64 = grad(inverse_hyperbolic)(z.astype(np.complex64))
    assert got64.dtype == np.complex64
