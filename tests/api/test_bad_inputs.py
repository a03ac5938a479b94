"""Everyday mistakes get a typed error that says what was given and what is accepted.

Each error is the builtin MindSpore raises for the mistake (TypeError, ValueError,
RuntimeError, AttributeError) and an ad_compiler error; where the mistake is in the
user's code the message names the file and line. Inputs that are unusual but valid
(NaN, inf) just propagate.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import Parameter, Tensor, nn, ops
from ad_compiler.errors import AdCompilerError
from ad_compiler.ops import GradOperation, grad, value_and_grad

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")


def square_sum(x):
    return np.sum(x * x)


def weighted(x, y):
    return np.sum(x * np.sin(y))


def line_of(fn, text: str) -> int:
    """The line of ``fn``'s source file where ``text`` occurs inside ``fn``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _raises(error, call, *phrases):
    """``call()`` raises ``error`` (also an AdCompilerError) whose message has ``phrases``."""
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, AdCompilerError), type(info.value)
    for phrase in phrases:
        assert phrase in str(info.value), (phrase, str(info.value))
    return info.value


TRANSFORMS = {
    "grad": lambda f, *a: grad(f)(*a),
    "value_and_grad": lambda f, *a: value_and_grad(f)(*a),
    "GradOperation": lambda f, *a: GradOperation(get_all=True)(f)(*a),
    "vjp": lambda f, *a: ms.vjp(f, *a),
    "jvp": lambda f, *a: ms.jvp(f, a, a),
}


# -- inputs the compiler refuses -------------------------------------------------------------

REFUSED = {
    "object ndarray": (lambda: np.array([1.0, 2.0], dtype=object),
                       ["ndarray of dtype object, which is not a numeric dtype",
                        "np.asarray(x, dtype=np.float64)"]),
    "string ndarray": (lambda: np.array(["a", "b"]), ["dtype <U1, which is not a numeric dtype"]),
    "datetime ndarray": (lambda: np.array(["2024-01-01"], dtype="datetime64[D]"),
                         ["dtype datetime64[D]"]),
    "np.matrix": (lambda: np.matrix([[1.0, 2.0]]), ["a numpy.matrix", "np.asarray(m)"]),
    "masked array": (lambda: np.ma.masked_array([1.0, 2.0], mask=[0, 1]),
                     ["a masked array", "ignore its mask", "np.where"]),
    "ndarray subclass": (lambda: np.arange(3.0).view(type("Units", (np.ndarray,), {})),
                         ["Units, a subclass of numpy.ndarray", "np.asarray(x)"]),
    "generator": (lambda: (float(i) for i in range(3)),
                  ["a generator, an iterator that one call would use up", "tuple(values)"]),
    "map iterator": (lambda: map(float, [1, 2]), ["a map, an iterator"]),
}
ACCEPTED = "accepted: floating-point and complex Tensors, ndarrays and scalars"


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("kind", list(REFUSED))
def test_refused_input_is_a_type_error_naming_the_argument(kind, transform):
    make, phrases = REFUSED[kind]
    _raises(TypeError, lambda: TRANSFORMS[transform](identity_sum, make()),
            "argument 0 is ", ACCEPTED, *phrases)


def identity_sum(x):
    return np.sum(x)


@pytest.mark.parametrize("args, where", [
    ((np.ones(2), (np.ones(2), np.array(["a"]))), "argument 1[1] is an ndarray of dtype <U1"),
    ((np.ones(2), {"w": np.array([1.0], dtype=object)}),
     "argument 1['w'] is an ndarray of dtype object"),
    ((np.ones(2), [[1.0, iter(())]]), "argument 1[0][1] is a tuple_iterator"),
])
def test_refusal_inside_a_container_names_the_entry(args, where):
    _raises(TypeError, lambda: grad(first_sum)(*args), where)


def first_sum(x, rest):
    return np.sum(x)


def test_refused_input_is_refused_at_vjp_not_later():
    _raises(TypeError, lambda: ms.vjp(identity_sum, np.array(["a"])), "not a numeric dtype")


def test_complex_value_without_a_complex_rule_is_a_located_type_error():
    err = _raises(TypeError, lambda: grad(rotates)(np.ones(2)),
                  "sinc of a complex value (c128[2]) has no complex derivative rule", "hint:")
    assert err.loc.file == __file__ and err.loc.line == line_of(rotates, "np.sinc")


def rotates(x):
    z = x * 1j
    return np.abs(np.sum(np.sinc(z)))


class ComplexWeight(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.array([1j, 2.0])), name="w")

    def construct(self, x):
        return self.w


def test_complex_output_of_grad_is_a_located_type_error():
    err = _raises(TypeError, lambda: grad(ComplexWeight())(np.ones(2)),
                  "ComplexWeight.construct() returns a complex value; a gradient needs a "
                  "real-valued output", "np.real(out)", "sens_param=True")
    assert err.loc.line == line_of(ComplexWeight.construct, "return self.w")


def test_integer_and_bool_scalars_stay_constants():
    g = GradOperation(get_all=True)(scale_by)(np.array([1.0, -2.0]), np.int64(3), np.bool_(True))
    assert len(g) == 1
    np.testing.assert_array_equal(g[0], [3.0, 3.0])      # d/dx of sum(x * 3) = 3


def scale_by(x, k, flag):
    return np.sum(x * k) if flag else np.sum(x)


# -- the function's output ---------------------------------------------------------------------

def returns_nothing(x):
    np.sum(x * 2.0)


def returns_none(x):
    if x.shape[0] > 0:
        return None
    return x


def returns_text(x):
    return "done"


def returns_list_with_text(x):
    return [np.sum(x), "done"]


OUTPUTS = [
    (returns_nothing, "returns None (it has no return statement)", "def returns_nothing"),
    (returns_none, "returns None;", "return None"),
    (returns_text, "returns the string 'done'", 'return "done"'),
    (returns_list_with_text, "returns a list holding the string 'done'", "return [np.sum"),
]


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "GradOperation", "jvp"])
@pytest.mark.parametrize("fn, phrase, line_text", OUTPUTS, ids=[o[0].__name__ for o in OUTPUTS])
def test_output_that_is_not_numbers_is_a_type_error_at_the_return(fn, phrase, line_text, transform):
    err = _raises(TypeError, lambda: TRANSFORMS[transform](fn, np.ones(2)), phrase,
                  "must return a Tensor, an ndarray or a float")
    assert err.loc.file == __file__ and err.loc.line == line_of(fn, line_text)


class Labels(nn.Cell):
    def construct(self, x):
        return "label"


RETURNS_NONE = lambda x: None  # noqa: E731


@pytest.mark.parametrize("fn, name, line_text", [
    (RETURNS_NONE, "<lambda>() returns None;", "lambda x: None"),
    (Labels(), "Labels.construct() returns the string 'label'", 'return "label"'),
], ids=["lambda", "Cell"])
def test_output_error_names_the_function_as_the_user_wrote_it(fn, name, line_text):
    err = _raises(TypeError, lambda: grad(fn)(np.ones(2)), name)
    assert err.loc.file == __file__
    with open(__file__) as source:
        assert line_text in source.read().splitlines()[err.loc.line - 1]


def test_vjp_fn_of_none_is_a_type_error():
    _, vjp_fn = ms.vjp(doubled, np.ones(2))
    _raises(TypeError, lambda: vjp_fn(None), "vjp_fn(v) needs the cotangent v, got None")


def test_vjp_of_a_function_returning_none_fails_when_differentiated():
    # vjp compiles the gradient before it runs the function (vjp_fn must not be refused later)
    _raises(TypeError, lambda: ms.vjp(returns_text, np.ones(2)), "returns the string 'done'")


def loss_and_label(x):
    return np.sum(x * x), "label", None


def test_aux_outputs_may_be_anything(api):
    x = np.array([0.5, -1.5])
    dx, aux = grad(loss_and_label, has_aux=True)(x)
    assert aux == ("label", None)
    api.assert_grad(dx, 2 * x, x)


# -- the function itself ---------------------------------------------------------------------

MAKERS = {
    "grad": lambda fn: grad(fn),
    "value_and_grad": lambda fn: value_and_grad(fn),
    "GradOperation": lambda fn: GradOperation()(fn),
    "GradOperation get_all": lambda fn: GradOperation(get_all=True)(fn),
    "jacrev": lambda fn: ms.jacrev(fn),
    "jacfwd": lambda fn: ms.jacfwd(fn),
}


@pytest.mark.parametrize("not_callable, shown", [(None, "got None"), (3, "got int 3"),
                                                 (np.ones(2), "got ndarray")])
@pytest.mark.parametrize("make", list(MAKERS))
def test_not_callable_is_a_type_error_when_the_gradient_function_is_called(make, not_callable,
                                                                           shown):
    gradient_function = MAKERS[make](not_callable)      # SPEC: no error yet
    _raises(TypeError, lambda: gradient_function(np.ones(2)),
            "the function to differentiate must be callable", shown, "not grad(f(x))")


@pytest.mark.parametrize("call", [lambda: ms.vjp(None, np.ones(2)),
                                  lambda: ms.jvp(None, np.ones(2), np.ones(2))],
                         ids=["vjp", "jvp"])
def test_vjp_and_jvp_of_none_are_type_errors(call):
    _raises(TypeError, call, "must be callable", "got None")


def test_decorator_forms_still_take_no_function(api):
    x = np.array([1.0, -2.0])
    api.assert_grad(grad(grad_position=0)(square_sum)(x), 2 * x, x)
    value, dx = value_and_grad(grad_position=0)(square_sum)(x)
    api.assert_grad(dx, 2 * x, x)


@pytest.mark.parametrize("args, phrase", [
    ((np.ones(2),), "weighted() cannot take 1 arguments: missing a required argument: 'y'"),
    ((np.ones(2),) * 3, "weighted() cannot take 3 arguments: too many positional arguments"),
])
def test_wrong_number_of_inputs_is_a_type_error_at_the_def(args, phrase):
    err = _raises(TypeError, lambda: grad(weighted)(*args), phrase,
                  "hint: call the gradient function with the inputs of weighted(x, y)")
    assert err.loc.line == line_of(weighted, "def weighted")


# -- sens ---------------------------------------------------------------------------------------

def doubled(x):
    return x * 2.0


@pytest.mark.parametrize("call", [
    lambda g: g(np.ones(2), sens=None),
    lambda g: g(np.ones(2), None),
], ids=["keyword", "positional"])
def test_sens_none_is_a_type_error(call):
    g = GradOperation(sens_param=True)(doubled)
    _raises(TypeError, lambda: call(g), "sens is None", "sens_param=True", "np.ones_like(out)")


@pytest.mark.parametrize("sens, what", [("a", "a str"),
                                        (np.array([1j, 1j]), "an array of dtype complex128"),
                                        ((None,), "None")])
def test_sens_that_is_not_a_real_array_is_a_type_error(sens, what):
    g = GradOperation(sens_param=True)(doubled)
    _raises(TypeError, lambda: g(np.ones(2), sens), f"sens[0] is {what}",
            "must be an array of its shape (2,) and dtype float64")


# -- jvp tangents ------------------------------------------------------------------------------

def test_jvp_tangent_of_the_wrong_shape_names_it():
    _raises(ValueError, lambda: ms.jvp(doubled, np.ones(2), np.ones(3)),
            "tangent v has shape (3,) but the input has shape (2,)")
    inputs, tangents = (np.ones(2), np.ones(2)), (np.ones(2), np.ones(3))
    _raises(ValueError, lambda: ms.jvp(weighted, inputs, tangents),
            "tangent v[1] has shape (3,) but inputs[1] has shape (2,)")


def pair_sum(p, w):
    return np.sum(p[0]) * np.sum(p[1]) * w


def test_jvp_tangent_inside_a_tuple_input_is_named_by_its_path():
    inputs = ((np.ones(2), np.ones(3)), 2.0)
    _raises(ValueError, lambda: ms.jvp(pair_sum, inputs, ((np.ones(2), np.ones(2)), 1.0)),
            "tangent v[0][1] has shape (2,) but inputs[0][1] has shape (3,)")
    _raises(RuntimeError, lambda: ms.jvp(pair_sum, inputs, (np.ones(2), 1.0)),
            "tangent v[0] must be a tuple of 2 entries like inputs[0]")


@pytest.mark.parametrize("tangent, error, phrase", [
    (None, TypeError, "tangent v is None"),
    ("x", TypeError, "tangent v is a str"),
    (np.array([1j, 1j]), TypeError, "dtype complex128"),
])
def test_jvp_tangent_that_is_not_a_real_array_is_a_type_error(tangent, error, phrase):
    _raises(error, lambda: ms.jvp(doubled, np.ones(2), tangent), phrase)


def test_jvp_wrong_number_of_tangents():
    _raises(RuntimeError, lambda: ms.jvp(weighted, (np.ones(2), np.ones(2)), (np.ones(2),)),
            "v has 1 entries but there are 2 inputs")


def test_jvp_tangent_takes_its_inputs_dtype():
    x = np.array([0.5, -1.0], np.float32)
    out, tangent = ms.jvp(doubled, x, np.array([1.0, 3.0]))     # float64 tangent, float32 input
    assert out.dtype == np.float32 and tangent.dtype == np.float32
    np.testing.assert_allclose(tangent, [2.0, 6.0])
    _, tangent = ms.jvp(sin_of, 0.25, 1)                       # an int tangent for a float
    assert tangent == pytest.approx(np.cos(0.25), rel=1e-12)


def sin_of(x):
    return np.sin(x)


# -- Cells -------------------------------------------------------------------------------------

class NoConstruct(nn.Cell):
    pass


class HoldsNoConstruct(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = NoConstruct()

    def construct(self, x):
        return np.sum(self.inner(x))


MISSING = "For 'NoConstruct', the method 'construct' is not defined"


@pytest.mark.parametrize("make", list(MAKERS)[:4])
def test_cell_without_construct_is_an_attribute_error(make):
    _raises(AttributeError, lambda: MAKERS[make](NoConstruct())(np.ones(2)), MISSING,
            "define construct(self, ...) in class NoConstruct")


def test_sub_cell_without_construct_is_located_at_its_call():
    err = _raises(AttributeError, lambda: grad(HoldsNoConstruct())(np.ones(2)), MISSING)
    assert err.loc.file == __file__
    assert err.loc.line == line_of(HoldsNoConstruct.construct, "self.inner(x)")


def test_calling_a_cell_without_construct_raises_mindsporess_attribute_error():
    with pytest.raises(AttributeError, match=MISSING):
        NoConstruct()(np.ones(2))


# -- get_by_list without weights ---------------------------------------------------------------

@pytest.mark.parametrize("get_all", [False, True])
@pytest.mark.parametrize("x", [3, np.ones(2)], ids=["int", "array"])
def test_get_by_list_without_weights_on_a_function_without_parameters(get_all, x):
    g = GradOperation(get_all=get_all, get_by_list=True)(square_sum)
    _raises(ValueError, lambda: g(x), "get_by_list=True", "without weights",
            "square_sum is not a Cell and reads no trainable Parameter",
            "GradOperation(get_by_list=True)(fn, weights)")


SCALE = Parameter(Tensor(np.array([1.5, -0.5])), name="scale")


def scaled(x):
    return np.sum(np.sin(x) * SCALE)


def test_get_by_list_without_weights_takes_the_parameters_a_function_reads(api):
    x = np.array([0.3, 1.2])
    (dscale,) = GradOperation(get_by_list=True)(scaled)(x)
    api.assert_grad(dscale, np.sin(x), SCALE)


class NoParameters(nn.Cell):
    def construct(self, x):
        return np.sum(x * x)


def test_get_by_list_without_weights_on_a_cell_without_parameters_is_empty():
    assert GradOperation(get_by_list=True)(NoParameters())(np.ones(2)) == ()   # SPEC: all of none


def test_int_input_at_a_requested_position_is_a_runtime_error():
    _raises(RuntimeError, lambda: grad(square_sum)(3), "argument 0 is int 3, a constant with no "
            "gradient")
    assert GradOperation()(square_sum)(3) == ()        # SPEC: () when there is no first input


# -- other everyday inputs -----------------------------------------------------------------------

@pytest.mark.parametrize("x, phrase", [
    (None, "unsupported operand type(s) for *: 'NoneType' and 'NoneType'"),
    ("abc", "can't multiply sequence"),
    ([1.0, "a", 2], "can't multiply sequence"),
], ids=["None", "str", "mixed list"])
def test_inputs_python_cannot_compute_with_are_located_type_errors(x, phrase):
    err = _raises(TypeError, lambda: grad(square_sum)(x), phrase)
    assert err.loc.line == line_of(square_sum, "x * x")


def test_nan_and_inf_propagate_as_in_numpy():
    x = np.array([np.nan, np.inf, -2.0])
    value, dx = value_and_grad(square_sum)(x)
    with np.errstate(invalid="ignore"):
        assert np.isnan(value) and np.isnan(square_sum(x))
    np.testing.assert_array_equal(dx, 2 * x)                  # d/dx x^2 = 2x, NaN and inf kept
    with np.errstate(divide="ignore"):
        value, dx = value_and_grad(sqrt_sum)(np.array([0.0, 4.0]))
    assert value == 2.0
    np.testing.assert_array_equal(dx, [np.inf, 0.25])         # 1 / (2 sqrt x)


def sqrt_sum(x):
    return np.sum(np.sqrt(x))
