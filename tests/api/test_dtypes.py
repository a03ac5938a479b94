"""The compiled value has Python's type and dtype: NumPy scalars, 0-d arrays, float32.

NumPy 2 types a NumPy scalar strongly (``float32 array + np.float64`` is float64) and
a Python number weakly (``float32 array + 0.5`` is float32). Each case checks the
value (type, dtype, numbers) against plain Python with float64 and float32 inputs, and
the gradient of every input against central finite differences in float64. Where
two paths of a run-time branch or loop give a value different strong dtypes, Python's
dtype depends on the path: that is a located error.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import InvalidOperandError

X3 = np.array([0.3, -0.5, 0.8])


# -- a NumPy function of Python numbers is a strong NumPy scalar ----------------------

def ufunc_of_python_floats(x, s):
    return np.sum(x + np.multiply(2.0, s))      # np.float64: x becomes float64


def tanh_of_python_float(x, s):
    return np.sum(x * np.tanh(s))


def math_of_python_float(x, s):
    return np.sum(x * math.tanh(s))             # a Python float: x keeps its dtype


def arithmetic_of_python_floats(x, s):
    return np.sum(x * (2.0 * s))


def maximum_of_python_floats(x, s):
    return np.maximum(s, 1.0) * np.sum(x)


def asarray_of_python_float(x, s):
    return np.asarray(s) * x                    # a 0-d float64 array


# -- 0-d arrays and NumPy scalars ----------------------------------------------------

def asarray_of_a_sum(x, s):
    return np.asarray(np.sum(x))                # a 0-d array, not np.float32


def array_of_a_sum(x, s):
    return np.array(np.sum(x) * s)


def copy_of_a_sum(x, s):
    return np.copy(np.sum(x))


def python_number_on_one_path(x, s):
    t = np.sum(x)
    if t > 0.0:
        t = s * 2.0                              # Python: a float here, np.float32 there
    return t


# -- a loop that surely runs settles a carried dtype ----------------------------------

def loop_promotes_once(x, s):
    for i in range(3):
        x = x * s + np.float64(0.5)
    return np.sum(x)


def loop_that_never_runs(x, s):
    for i in range(0):
        x = x + np.float64(0.5)
    return np.sum(x)


def while_that_surely_runs_once(x, s):
    k = 0
    while k < 3:                                 # True at compile time: unrolled once
        k += 1
        x = x * -0.7 + np.tanh(s)
        if np.mean(x) > 1.6:
            break
    return x


def return_after_the_promotion(x, s):
    for i in range(3):
        x = x * -0.7 + np.tanh(s)
        if np.mean(x) > 0.0:
            return np.sum(x)
    return np.sum(x * 2.0)


CASES = [ufunc_of_python_floats, tanh_of_python_float, math_of_python_float,
         arithmetic_of_python_floats, maximum_of_python_floats, asarray_of_python_float,
         asarray_of_a_sum, array_of_a_sum, copy_of_a_sum, python_number_on_one_path,
         loop_promotes_once, loop_that_never_runs, while_that_surely_runs_once,
         return_after_the_promotion]
INPUTS = [(X3, 1.5), (-X3, 0.7)]  # both paths of python_number_on_one_path


def _same_value(got, want, dtype):
    """Python's type and dtype exactly; a Python float on one path may come back as a
    NumPy scalar of the other path's dtype (value-equal: NumPy's weak-number rule)."""
    if isinstance(want, float) and not isinstance(want, np.generic):
        assert isinstance(got, (float, np.floating)), type(got)
    else:
        assert type(got) is type(want), f"{type(got).__name__}, Python {type(want).__name__}"
        assert got.dtype == want.dtype, f"dtype {got.dtype}, Python {want.dtype}"
    np.testing.assert_allclose(np.float64(got), np.float64(want),
                               rtol=1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_value_has_pythons_type_and_dtype(fn, dtype):
    for x, s in INPUTS:
        x = x.astype(dtype)
        value, (gx, gs) = ms.value_and_grad(fn, grad_position=(0, 1))(x.copy(), s)
        _same_value(value, fn(x.copy(), s), dtype)
        assert type(gx) is np.ndarray and gx.dtype == dtype
        assert type(gs) is float


@pytest.mark.parametrize("fn", CASES, ids=[f.__name__ for f in CASES])
def test_gradient_matches_finite_differences(api, fn):
    for x, s in INPUTS:
        grads = ms.grad(fn, grad_position=(0, 1))(x.copy(), s)
        for i, (got, want) in enumerate(zip(grads, api.fd_grads(fn, (x, s)))):
            api.assert_grad(got, want, (x, s)[i], what=f"{fn.__name__}: input {i}")


# -- different strong dtypes where paths meet: a located error -------------------------

def branch_gives_two_dtypes(x):
    y = x + np.float64(0.5)
    if np.sum(x) > 100.0:
        return np.sum(y)
    return np.sum(x)


def variable_gets_two_dtypes(x):
    y = x
    if np.sum(x) > 0.0:
        y = x.astype(np.float64)
    return np.sum(y)


def while_promotes(x):
    while np.sum(x) < 10.0:
        x = x * 2.0 + np.float64(1.0)
    return np.sum(x)


def loop_with_break_promotes(x):
    for i in range(3):
        if np.sum(x) > 5.0:
            break
        x = x + np.float64(1.0)
    return np.sum(x)


@pytest.mark.parametrize("fn, line, what", [
    (branch_gives_two_dtypes, "if np.sum(x) > 100.0:", "different dtypes"),
    (variable_gets_two_dtypes, "if np.sum(x) > 0.0:", "different dtypes"),
    (while_promotes, "while np.sum(x) < 10.0:", "changes dtype in the loop"),
    (loop_with_break_promotes, "if np.sum(x) > 5.0:", "different dtypes"),
], ids=lambda v: getattr(v, "__name__", None))
def test_path_dependent_dtype_is_a_located_error(fn, line, what):
    x = X3.astype(np.float32)
    with pytest.raises(InvalidOperandError, match=what) as info:
        ms.value_and_grad(fn)(x)
    assert info.value.loc is not None and __file__ == info.value.loc.file
    assert line in str(info.value)


@pytest.mark.parametrize("fn", [branch_gives_two_dtypes, variable_gets_two_dtypes,
                                while_promotes, loop_with_break_promotes],
                         ids=lambda f: f.__name__)
def test_one_dtype_on_every_path_compiles(api, fn):
    # float64 inputs: every path gives float64, so nothing depends on the path
    value, grad = ms.value_and_grad(fn)(X3.copy())
    want = fn(X3.copy())
    assert type(value) is type(want) and value.dtype == want.dtype
    api.assert_grad(grad, api.fd_grads(fn, (X3,))[0], X3)
