"""``np.random.*`` inside a compiled function: the compiled code draws the same numbers,
in the same order and as many, as plain Python (seeded alike before each call), and
treats them as constants for differentiation."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import UnsupportedOperationError
from tests.finite_differences import central

X = np.array([0.3, -0.5, 0.8])


def many_draws(x):
    a = np.random.rand(3)
    np.random.rand(2)                    # unused: still advances the generator
    b = np.random.normal(0.0, 2.0, size=(3,))
    c = np.random.rand(3)                # the same call again: other numbers
    i = np.random.choice(3)
    p = np.random.permutation(3)
    u = np.random.uniform(-1, 1)
    return np.sum(x * a + x * x * b + c * x) * u + x[i] + np.sum(x[p] * np.arange(3.0))


def seeded_inside(x):
    np.random.seed(5)
    return np.sum(x * np.random.randn(3))


def in_range_loop(x):
    s = 0.0
    for _ in range(3):
        s = s + np.sum(x * np.random.rand(3))
    return s


def in_data_branch(x):
    if np.sum(x) > 0:
        return np.sum(x * np.random.rand(3))
    return np.sum(x)


def scaled_python_float(x):
    return x * np.random.uniform() * np.count_nonzero(x > 0)


def _run(call, seed=11):
    """``call()`` after seeding; returns its result and the generator's next number."""
    np.random.seed(seed)
    out = call()
    return out, np.random.rand()


@pytest.mark.parametrize("fn", [many_draws, seeded_inside, in_range_loop])
def test_draws_match_plain_python(fn):
    expected, after = _run(lambda: fn(X))
    (value, grad), compiled_after = _run(lambda: ms.value_and_grad(fn)(X))
    assert value == expected and compiled_after == after
    want = central(lambda v: _run(lambda: fn(v))[0], X)
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-8)
    # the cached code draws again at every call, as Python does
    (value2, _), after2 = _run(lambda: ms.value_and_grad(fn)(X), seed=12)
    assert value2 == _run(lambda: fn(X), seed=12)[0] and after2 == _run(lambda: fn(X), seed=12)[1]
    # grad alone runs the forward draws too
    assert _run(lambda: ms.grad(fn)(X))[1] == after


def test_draws_through_jvp_and_gradients_of_gradients():
    def f(x):
        return np.sum(x * x * np.random.rand(3)) * np.random.uniform()

    def df(x):
        return ms.grad(f)(x)[0]

    (value, _), after = _run(lambda: ms.jvp(f, (X,), (np.ones(3),)))
    assert (value, after) == _run(lambda: f(X))
    second, after = _run(lambda: ms.grad(df)(X))
    assert after == _run(lambda: df(X))[1]
    a, u = _run(lambda: (np.random.rand(3), np.random.uniform()))[0]
    np.testing.assert_allclose(second, [2 * a[0] * u, 0.0, 0.0])


def test_python_numbers_numpy_returns_keep_their_type():
    x32 = X.astype(np.float32)
    (value, grad), _ = _run(lambda: ms.value_and_grad(lambda_free_sum)(x32))
    expected, _ = _run(lambda: lambda_free_sum(x32))
    assert value.dtype == expected.dtype and value == expected and grad.dtype == np.float32
    # np.random.uniform() is a Python float: it keeps a float32 array float32
    (value, grad), _ = _run(lambda: ms.value_and_grad(scaled_by_draw)(x32))
    assert value.dtype == np.float32 == grad.dtype


def scaled_by_draw(x):
    return np.sum(x * np.random.uniform())


def lambda_free_sum(x):
    return np.sum(scaled_python_float(x))


def test_generated_code_calls_np_random_in_order():
    src = ms.adjoint_source(many_draws, X)
    calls = [ln[ln.index("np.random."):].strip() for ln in src.splitlines()
             if "np.random." in ln and not ln.strip().startswith("#")]
    assert calls == ["np.random.rand(3)", "np.random.rand(2)",
                     "np.random.normal(0.0, 2.0, size=(3,))", "np.random.rand(3)",
                     "np.random.choice(3)", "np.random.permutation(3)",
                     "np.random.uniform(-1, 1)"]


def test_draw_in_a_data_dependent_branch_is_refused_at_the_call():
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(in_data_branch)(X)
    assert "np.random.rand inside a loop or a branch" in str(info.value)
    assert "test_randomness.py:" in str(info.value)


def test_arguments_computed_from_inputs_are_refused():
    def f(x):
        return np.sum(np.random.normal(x[0], 1.0, size=3))

    with pytest.raises(UnsupportedOperationError, match="must be known when compiling"):
        ms.grad(f)(X)
