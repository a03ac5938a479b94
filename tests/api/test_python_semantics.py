"""Python's own semantics kept to the bit: ``math`` functions, reductions of 0-d
arrays, and the names of generated code.

Values are compared with ``==`` (and types with ``is``) against calling the function
in plain Python; exceptions by type and message; gradients against central finite
differences in float64.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import AdCompilerError, InvalidAxisError, UnsupportedOperationError


def central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


# -- math functions: computed by math ---------------------------------------------------

UNARY = {  # function -> points inside its domain
    "acos": (-0.7, 0.2, 0.5), "acosh": (1.3, 2.0), "asin": (-0.7, 0.5), "asinh": (-2.0, 1.5),
    "atan": (-2.0, 0.3), "atanh": (-0.5, 0.7), "cbrt": (-2.0, 1.5, 2.0), "cos": (-2.0, 0.3),
    "cosh": (-2.0, 1.5), "degrees": (-2.0, 0.3), "exp": (-2.0, 1.5), "exp2": (-0.5, 1.5),
    "expm1": (1.0, -0.3), "fabs": (-2.0, 1.5), "log": (0.3, 2.0), "log10": (0.3, 2.0),
    "log1p": (-0.5, 2.0), "log2": (0.3, 2.0), "radians": (-2.0, 0.3), "sin": (-2.0, 0.3),
    "sinh": (-2.0, 2.0), "sqrt": (0.3, 2.0), "tan": (0.3, -1.0), "tanh": (1.5, 3.7),
}

# one function per math function (the compiler reads their source)

def m_acos(x):
    return math.acos(x)


def m_acosh(x):
    return math.acosh(x)


def m_asin(x):
    return math.asin(x)


def m_asinh(x):
    return math.asinh(x)


def m_atan(x):
    return math.atan(x)


def m_atanh(x):
    return math.atanh(x)


def m_cbrt(x):
    return math.cbrt(x)


def m_cos(x):
    return math.cos(x)


def m_cosh(x):
    return math.cosh(x)


def m_degrees(x):
    return math.degrees(x)


def m_exp(x):
    return math.exp(x)


def m_exp2(x):
    return math.exp2(x)


def m_expm1(x):
    return math.expm1(x)


def m_fabs(x):
    return math.fabs(x)


def m_log(x):
    return math.log(x)


def m_log10(x):
    return math.log10(x)


def m_log1p(x):
    return math.log1p(x)


def m_log2(x):
    return math.log2(x)


def m_radians(x):
    return math.radians(x)


def m_sin(x):
    return math.sin(x)


def m_sinh(x):
    return math.sinh(x)


def m_sqrt(x):
    return math.sqrt(x)


def m_tan(x):
    return math.tan(x)


def m_tanh(x):
    return math.tanh(x)


def b_atan2(x, y):
    return math.atan2(x, y)


def b_copysign(x, y):
    return math.copysign(x, y)


def b_fmod(x, y):
    return math.fmod(x, y)


def b_pow(x, y):
    return math.pow(x, y)


def b_hypot(x, y):
    return math.hypot(x, y)


def b_log(x, y):
    return math.log(x, y)


def m_floor(x):
    return math.floor(x)


def m_ceil(x):
    return math.ceil(x)


def m_trunc(x):
    return math.trunc(x)


def m_of_item(x):
    return math.sqrt(x[0]) + math.tanh(x[1])


def m_hypot3(x, y, z):
    return math.hypot(x, y, z)


def _outcome(fn, *args):
    """``("value", type, value)`` or ``("raises", type, message)`` of a call."""
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001 - the outcome compared
        return "raises", type(e), str(e)
    return "value", type(out), out


def _compiled_value(fn, *args):
    return ms.value_and_grad(fn, grad_position=tuple(range(len(args))))(*args)[0]


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("kind", [float, np.float64, np.float32])
def test_math_value_is_pythons_to_the_bit(name, kind):
    fn = globals()[f"m_{name}"]
    for p in UNARY[name]:
        x = kind(p)
        assert _outcome(_compiled_value, fn, x) == _outcome(fn, x), (name, x)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_math_gradient_is_the_derivative(name):
    fn = globals()[f"m_{name}"]
    for p in UNARY[name]:
        g = ms.grad(fn)(p)
        assert type(g) is float
        assert g == pytest.approx(central(fn, p), rel=1e-6, abs=1e-9), (name, p)


@pytest.mark.parametrize("fn, x", [
    (m_sqrt, -1.0), (m_log, 0.0), (m_log, -1.0), (m_log1p, -1.0), (m_log1p, -2.0),
    (m_acos, 1.5), (m_asin, -2.0), (m_acosh, 0.5), (m_atanh, 1.0), (m_atanh, -3.0),
    (m_log2, 0.0), (m_log10, -0.5), (m_sin, math.inf), (m_cos, -math.inf), (m_tan, math.inf),
    (m_exp, 1000.0), (m_expm1, 800.0), (m_cosh, 1e308), (m_exp2, 2000.0),
    (m_floor, math.inf), (m_ceil, math.nan), (m_trunc, np.float32(1.5)),
])
def test_math_raises_what_python_raises(fn, x):
    want = _outcome(fn, x)
    assert want[0] == "raises"
    for call in (lambda: ms.value_and_grad(fn)(x)[0], lambda: ms.grad(fn)(x)):
        assert _outcome(call) == want


@pytest.mark.parametrize("fn, x, y", [
    (b_pow, -2.0, 0.5), (b_pow, 0.0, -1.0), (b_pow, 10.0, 400.0), (b_fmod, 1.0, 0.0),
    (b_fmod, math.inf, 2.0), (b_log, 2.0, 1.0), (b_log, -2.0, 3.0), (b_log, 2.0, 0.0),
])
def test_two_argument_math_raises_what_python_raises(fn, x, y):
    want = _outcome(fn, x, y)
    assert want[0] == "raises"
    assert _outcome(lambda: ms.value_and_grad(fn, grad_position=(0, 1))(x, y)[0]) == want


@pytest.mark.parametrize("fn, x, y", [
    (b_atan2, -2.0, 0.5), (b_copysign, 1.5, -2.0), (b_fmod, 5.5, 1.5), (b_pow, 1.7, 2.5),
    (b_pow, -1.5, 3.0), (b_hypot, 3.0, -4.0), (b_log, 5.0, 3.0),
])
def test_two_argument_math_values_and_gradients(fn, x, y):
    assert _outcome(_compiled_value, fn, x, y) == _outcome(fn, x, y)
    gx, gy = ms.grad(fn, grad_position=(0, 1))(x, y)
    assert gx == pytest.approx(central(lambda u: fn(u, y), x), rel=1e-6, abs=1e-9)
    if not (fn is b_pow and x < 0):  # (-1.5) ** y is real only at integer y
        assert gy == pytest.approx(central(lambda v: fn(x, v), y), rel=1e-6, abs=1e-9)


def test_hypot_of_three_is_math_hypot():
    args = (0.3, -1.7, 2.9)
    value, grads = ms.value_and_grad(m_hypot3, grad_position=(0, 1, 2))(*args)
    assert value == m_hypot3(*args) and type(value) is float
    for i, g in enumerate(grads):
        def along(t, i=i):
            moved = list(args)
            moved[i] = t
            return m_hypot3(*moved)
        assert g == pytest.approx(central(along, args[i]), rel=1e-6)


@pytest.mark.parametrize("fn", [m_floor, m_ceil, m_trunc])
def test_floor_ceil_trunc_give_python_ints(fn):
    for x in (-2.5, -0.5, 0.5, 1e20):
        assert _outcome(_compiled_value, fn, x) == _outcome(fn, x)
    assert ms.grad(fn)(1.5) == 0.0


def test_math_of_float32_items_computes_in_double():
    x = np.array([2.0, 0.7], np.float32)
    value, grad = ms.value_and_grad(m_of_item)(x)
    assert value == m_of_item(x) and type(value) is float
    assert grad.dtype == np.float32
    x64 = x.astype(np.float64)
    want = [central(lambda t: m_of_item(np.array([t, x64[1]])), x64[0]),
            central(lambda t: m_of_item(np.array([x64[0], t])), x64[1])]
    np.testing.assert_allclose(grad, want, rtol=1e-5)


def test_math_of_a_one_element_array_follows_numpy():
    x = np.array([0.5])
    want = _outcome(m_sqrt, x)
    if want[0] == "raises":      # NumPy 2.4 and later: only 0-d arrays convert
        with pytest.raises(TypeError, match="0-dimensional") as info:
            ms.value_and_grad(m_sqrt)(x)
        assert isinstance(info.value, AdCompilerError) and info.value.loc.line > 0
    else:
        assert ms.value_and_grad(m_sqrt)(x)[0] == want[2]


def m_of_array(x):
    return math.sin(x) * 2.0


def test_math_of_a_whole_array_is_numpys_type_error():
    with pytest.raises(UnsupportedOperationError, match="math.sin"):
        ms.grad(m_of_array)(np.array([0.5, 1.5]))
    with pytest.raises(TypeError):
        m_of_array(np.array([0.5, 1.5]))


def m_generated(x):
    return math.sqrt(x) + math.exp(x)


def test_the_generated_code_calls_math():
    source = ms.adjoint_source(m_generated, 0.5)
    assert "math.sqrt(x)" in source and "math.exp(x)" in source
    assert "np.sqrt" not in source and "np.exp" not in source


def np_on_floats(x):
    return float(np.tanh(x)) + float(np.sin(x)), np.tanh(x)


def test_numpy_functions_of_python_floats_are_numpys():
    for x in (1.5, 3.7, 0.3, 2.0):
        want = np_on_floats(x)
        got = ms.value_and_grad(np_on_floats)(x)[0]
        assert got == want and type(got[1]) is np.float64


def np_sin_inf(x):
    return float(np.sin(x))


def test_numpy_sin_of_infinity_is_nan_as_in_numpy():
    with np.errstate(invalid="ignore"):
        got = ms.value_and_grad(np_sin_inf)(math.inf)[0]
        assert math.isnan(got) and math.isnan(np_sin_inf(math.inf))


# -- reductions of a 0-d array ----------------------------------------------------------

def sum_axis0(x):
    return np.sum(x, axis=0) * 2.0


def prod_last(x):
    return np.prod(x, axis=-1) + x.max(axis=0) + np.min(x, axis=-1)


def sum_axis_tuple(x):
    return np.sum(x, axis=(0,))


def mean_axis0(x):
    return np.mean(x, axis=0)


def std_axis_last(x):
    return np.std(x, axis=-1)


def sum_axis1(x):
    return np.sum(x, axis=1)


@pytest.mark.parametrize("fn", [sum_axis0, prod_last])
def test_a_0d_array_reduces_over_axis_0_as_in_numpy(fn):
    x = np.array(1.5)
    value, grad = ms.value_and_grad(fn)(x)
    want = fn(x)
    assert value == want and type(value) is type(want)
    assert grad == pytest.approx(central(fn, x))


@pytest.mark.parametrize("fn", [sum_axis_tuple, mean_axis0, std_axis_last, sum_axis1])
def test_a_0d_array_refuses_the_axes_numpy_refuses(fn):
    with pytest.raises(np.exceptions.AxisError) as want:
        fn(np.array(1.5))
    with pytest.raises(InvalidAxisError) as got:
        ms.grad(fn)(np.array(1.5))
    assert isinstance(got.value, np.exceptions.AxisError)
    assert str(want.value) in str(got.value) and got.value.loc is not None


# -- names of generated code ------------------------------------------------------------

def zero_starts(x, t):
    s = 0.0
    out = 0.0
    for i in range(3):
        if np.sum(x) > 0.0:
            s = s + t * x[i]
            out = out + s * s
    return out, s


def test_equal_constants_under_different_names_are_not_merged():
    x = np.array([1.0, 2.0, 3.0])
    source = ms.adjoint_source(zero_starts, x, 0.5)
    assert "out_1 = s, s" not in source and "= dout, dout" not in source
    value, (gx, gt) = ms.value_and_grad(zero_starts, grad_position=(0, 1))(x, 0.5)
    assert value == zero_starts(x, 0.5)

    def total(x, t):
        out, s = zero_starts(x, t)
        return out + s
    e = np.eye(3) * 1e-6
    np.testing.assert_allclose(gx, [(total(x + e[i], 0.5) - total(x - e[i], 0.5)) / 2e-6
                                    for i in range(3)], rtol=1e-6)
    assert gt == pytest.approx(central(lambda t: total(x, t), 0.5), rel=1e-6)


def seeded_draw(x):
    np.random.seed(3)
    return x * np.random.normal(size=x.shape)


def test_a_seed_is_a_statement():
    xs = np.ones((2, 3))
    for source in (ms.vmap(seeded_draw).source(xs), ms.adjoint_source(seeded_draw, xs[0])):
        lines = [line.strip() for line in source.splitlines()]
        assert "np.random.seed(3)" in lines
        assert not any(line.endswith("= np.random.seed(3)") for line in lines)


def math_per_example(x):
    return x * math.sin(x[0]) + math.hypot(x[1], 2.0) + math.floor(x[0] * 3.0) \
        - math.trunc(x[1] * 2.0) + math.ceil(x[0])


def test_math_functions_batch_under_vmap():
    xs = np.array([[0.3, 1.2], [0.7, -0.4]])
    np.testing.assert_allclose(ms.vmap(math_per_example)(xs),
                               np.stack([math_per_example(x) for x in xs]), rtol=1e-14)


def conversions(x):
    return float(x[:1]) if bool(x[:1]) else int(x[:1]) * 1.0


def test_one_element_conversions_follow_numpy():
    x = np.array([0.5, 2.0])
    want = _outcome(conversions, x)
    if want[0] == "raises":  # NumPy 2.4 and later: float() of a 1-d array raises
        with pytest.raises(TypeError, match="0-dimensional"):
            ms.grad(conversions)(x)
    else:
        assert ms.value_and_grad(conversions)(x)[0] == want[2]


def truth_of_one_element(x):
    return x * 2.0 if bool(x[:1] > 0.0) else x


def test_bool_of_a_one_element_array_is_numpys():
    x = np.array([0.5, 2.0])
    value, grad = ms.value_and_grad(lambda v: np.sum(truth_of_one_element(v)))(x)
    assert value == np.sum(truth_of_one_element(x))
    np.testing.assert_allclose(grad, [2.0, 2.0])


def test_the_cached_gradient_raises_at_an_input_outside_the_domain():
    vg = ms.value_and_grad(m_sqrt)
    assert vg(2.0)[0] == math.sqrt(2.0)
    for _ in range(2):  # the general path, then the fast path of the cache
        with pytest.raises(ValueError) as e:
            vg(-1.0)
        assert str(e.value) == "math domain error"   # Python's message (a note says where)
    assert vg(4.0) == (2.0, 0.25)


def test_the_fuzz_oracle_expects_pythons_exception():
    from tests.fuzz.oracle import check
    from tests.fuzz.program import HEADER, Program
    source = HEADER + "\n\ndef f(x, s):\n    return x * math.log(s)\n"
    ok = check(Program(0, source, (np.array([1.0, 2.0]), 2.0), (np.array([1.0, 2.0]), -3.0)),
               higher=False)
    assert ok.kind == "ok", ok.detail


def test_the_fuzz_oracle_flags_a_number_or_another_exception_where_python_raises():
    from tests.fuzz.oracle import Failure, check_same_exception
    raised = ValueError("math domain error")

    def returns(*args):
        return float("nan")

    def raises_other(*args):
        raise OverflowError("math range error")
    for vg in (returns, raises_other):
        with pytest.raises(Failure):
            check_same_exception(vg, (), raised, "at the second input")
