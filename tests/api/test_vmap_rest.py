"""ms.vmap of the primitives whose batching is not a plain broadcast: random draws (the
batch draws what a Python loop of calls draws, with the same seed), np.linalg.lstsq
(values against a loop, per-example gradients against central differences) and the
lengths known only at run time (a mask shared by the batch batches, one that differs
between examples is refused with its line)."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import GradValueError, UnsupportedOperationError
from ad_compiler.ops.randomness import DRAWS, SIZED
from tests.finite_differences import central

RNG = np.random.default_rng(11)
X = RNG.normal(size=(4, 3))
B = len(X)


def loop(fn, args, in_axes):
    """What vmap must return: ``fn`` called per example, the results stacked."""
    outs = [fn(*[a if ax is None else np.take(a, k, axis=ax) for a, ax in zip(args, in_axes)])
            for k in range(B)]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o) for o in zip(*outs))
    return np.stack(outs)


def seeded(fn, *args, seed=5, **kwargs):
    np.random.seed(seed)
    return fn(*args, **kwargs)


# -- random draws ----------------------------------------------------------------------

#: x times a call of each function np.random offers in compiled code (size given or not)
NOISY = {
    "rand": lambda x: x * np.random.rand(3),
    "randn": lambda x: x * np.random.randn(2, 3),
    "random": lambda x: x * np.random.random(3),
    "random_sample": lambda x: x * np.random.random_sample(),
    "randint": lambda x: x * np.random.randint(0, 7, size=3),
    "normal": lambda x: x * np.random.normal(1.0, 2.0, 3),
    "standard_normal": lambda x: x * np.random.standard_normal((3,)),
    "uniform": lambda x: x * np.random.uniform(),
    "choice": lambda x: x * np.random.choice(5, 3, p=[0.1, 0.2, 0.3, 0.15, 0.25]),
    "permutation": lambda x: x * np.random.permutation(3),
    "exponential": lambda x: x * np.random.exponential(2.0, 3),
    "poisson": lambda x: x * np.random.poisson(40.0, size=3),
    "binomial": lambda x: x * np.random.binomial(10, 0.3, 3),
    "beta": lambda x: x * np.random.beta(0.5, 0.7, 3),
    "gamma": lambda x: x * np.random.gamma(0.5, size=3),
    "laplace": lambda x: x * np.random.laplace(size=3),
    "logistic": lambda x: x * np.random.logistic(0.0, 1.0, 3),
    "lognormal": lambda x: x * np.random.lognormal(0.0, 1.0, 3),
    "choice-no-replace": lambda x: x * np.random.choice(6, 3, replace=False),
    "randint-uint8": lambda x: x * np.random.randint(0, 5, size=3, dtype=np.uint8),
}


def test_every_draw_is_called_in_a_test():
    assert set(DRAWS) <= set(NOISY)


@pytest.mark.parametrize("fn", sorted(SIZED) + ["rand", "randn"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_numpy_fills_a_sized_draw_in_c_order(fn, shape):
    """The fact vmap's one-call form rests on: one draw of size (B, *shape) gives the
    numbers of B draws of shape, one after the other (several seeds and batch sizes)."""
    args = {"randint": (0, 9), "choice": (5,), "binomial": (10, 0.3), "poisson": (30.0,),
            "beta": (0.5, 0.7), "gamma": (0.5,)}.get(fn, ())
    draw = getattr(np.random, fn)

    def call(size):
        if fn in ("rand", "randn"):
            return draw(*size)
        return draw(*args, size=size or None)
    for seed in range(3):
        for size in (1, 2, 5):
            one_by_one = np.stack([np.asarray(seeded(call, shape, seed=seed))] +
                                  [np.asarray(call(shape)) for _ in range(size - 1)])
            whole = seeded(call, (size,) + shape, seed=seed)
            np.testing.assert_array_equal(whole, one_by_one)


@pytest.mark.parametrize("name", sorted(NOISY))
def test_a_draw_batches_as_a_loop_of_calls_draws(name):
    """One call of size (B, ...) where NumPy fills it in C order; a loop over the
    examples where a bigger call would draw other numbers (a permutation, choice
    without replacement, randint of bytes)."""
    noisy = NOISY[name]
    expected = seeded(loop, noisy, (X,), (0,))
    got = seeded(ms.vmap(noisy), X)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype


def test_a_sized_draw_is_one_call_of_the_batch_size():
    source = ms.vmap(NOISY["rand"]).source(X)
    assert "np.random.rand(4, 3)" in source and "for " not in source


def several(x):
    np.random.seed(3)
    a = np.random.rand(3)
    return x * a + np.random.normal(size=3) + np.random.permutation(3)


def test_several_draws_and_a_seed_draw_in_the_order_of_a_loop():
    """A loop interleaves the draws of each example (and reseeds for each): the batched
    code loops over the examples for the draws, and only for them."""
    expected = seeded(loop, several, (X,), (0,))
    vf = ms.vmap(several)
    np.testing.assert_array_equal(seeded(vf, X), expected)
    source = vf.source(X)
    assert source.count("for k in range(") == 1 and "np.stack(" in source


def test_a_scalar_draw_keeps_float32():
    def f(x):
        return x * np.random.rand() + float(np.sum(x))
    x32 = X.astype(np.float32)
    expected = seeded(loop, f, (x32,), (0,))
    got = seeded(ms.vmap(f), x32)
    assert got.dtype == np.float32 == expected.dtype
    np.testing.assert_array_equal(got, expected)


def noise_loss(w, x):
    return np.sum(np.tanh(x @ w + 0.1 * np.random.randn(2)))


def test_per_example_gradients_with_noise_match_a_loop_of_grad_calls():
    w = RNG.normal(size=(3, 2))
    grad = ms.grad(noise_loss)
    expected = seeded(loop, grad, (w, X), (None, 0))
    np.testing.assert_allclose(seeded(ms.vmap(grad, in_axes=(None, 0)), w, X), expected,
                               rtol=1e-13, atol=1e-15)


def test_gradient_of_a_vmapped_noisy_function_matches_central_differences():
    """grad(vmap(f)) with f drawing noise: the noise is a constant of the gradient, so
    central differences at the same seed are the reference."""
    w = RNG.normal(size=(3, 2))

    def total(w):
        return np.sum(ms.vmap(noise_loss, in_axes=(None, 0))(w, X))
    got = seeded(ms.grad(total), w)
    fd = central(lambda v: seeded(lambda: sum(noise_loss(v, x) for x in X)), w)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_gradient_through_the_loop_of_draws_matches_central_differences():
    """grad(vmap(f)) of a function with several draws (drawn in a loop over the
    examples): the draws are constants of the gradient."""
    def total(x):
        return np.sum(np.sin(ms.vmap(several)(x)))
    got = seeded(ms.grad(total), X)
    fd = central(lambda v: seeded(lambda: np.sum(np.sin(np.stack([several(x) for x in v])))), X)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_nested_vmap_draws_as_two_nested_loops():
    noisy = NOISY["rand"]
    xs = RNG.normal(size=(2, 4, 3))
    expected = seeded(lambda: np.stack([np.stack([noisy(x) for x in row]) for row in xs]))
    np.testing.assert_array_equal(seeded(ms.vmap(ms.vmap(noisy)), xs), expected)
    expected = seeded(lambda: np.stack([np.stack([several(x) for x in row]) for row in xs]))
    np.testing.assert_array_equal(seeded(ms.vmap(ms.vmap(several)), xs), expected)


# -- np.linalg.lstsq -------------------------------------------------------------------

A = RNG.normal(size=(B, 5, 3))
Y, YS = RNG.normal(size=(B, 5)), RNG.normal(size=(B, 5, 2))


def solution(a, y):
    return np.linalg.lstsq(a, y, rcond=None)[0]


def lstsq_loss(a, y):
    x = np.linalg.lstsq(a, y, rcond=None)[0]
    return np.sum(np.sin(x)) + np.sum(x * x)


@pytest.mark.parametrize("args, in_axes", [((A, Y), (0, 0)), ((A, YS), (0, 0)),
                                           ((A, Y[0]), (0, None)), ((A[0], Y), (None, 0)),
                                           ((A[:, :3], Y[:, :3]), (0, 0))],
                         ids=["vector", "columns", "shared-rhs", "shared-matrix", "square"])
def test_lstsq_batches_as_a_loop(args, in_axes):
    got = ms.vmap(solution, in_axes=in_axes)(*args)
    np.testing.assert_allclose(got, loop(solution, args, in_axes), rtol=1e-10, atol=1e-12)


def test_lstsq_batched_keeps_float32_and_is_one_call():
    a32, y32 = A.astype(np.float32), Y.astype(np.float32)
    got = ms.vmap(solution)(a32, y32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, loop(solution, (a32, y32), (0, 0)), rtol=1e-4)
    assert "for " not in ms.vmap(solution).source(A, Y)


@pytest.mark.parametrize("rhs", [Y, YS], ids=["vector", "columns"])
def test_per_example_lstsq_gradients_match_central_differences(rhs):
    ga, gy = ms.vmap(ms.grad(lstsq_loss, grad_position=(0, 1)))(A, rhs)
    for k in range(B):
        np.testing.assert_allclose(ga[k], central(lambda a: lstsq_loss(a, rhs[k]), A[k]),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gy[k], central(lambda y: lstsq_loss(A[k], y), rhs[k]),
                                   rtol=1e-6, atol=1e-8)


def test_gradient_of_vmapped_lstsq_matches_central_differences():
    def total(a, y):
        return np.sum(ms.vmap(lstsq_loss)(a, y))
    ga, gy = ms.grad(total, grad_position=(0, 1))(A, YS)
    np.testing.assert_allclose(ga, central(lambda a: sum(lstsq_loss(a[k], YS[k])
                                                         for k in range(B)), A),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, central(lambda y: sum(lstsq_loss(A[k], y[k])
                                                         for k in range(B)), YS),
                               rtol=1e-6, atol=1e-8)


def test_a_rank_deficient_example_is_a_run_time_error():
    a = A.copy()
    a[2, :, 2] = a[2, :, 0]  # example 2: two equal columns
    with pytest.raises(GradValueError, match="rank 2 < 3"):
        ms.vmap(solution)(a, Y)


def test_lstsq_of_a_stack_outside_vmap_is_refused_as_numpy_does():
    with pytest.raises(UnsupportedOperationError, match="expects a \\(m, n\\) matrix") as e:
        ms.grad(lstsq_loss)(A, YS)
    assert "np.linalg.lstsq(a, y, rcond=None)" in str(e.value)


# -- lengths known only at run time ----------------------------------------------------

MASK = np.array([True, False, True])
W = RNG.normal(size=3)


def masked_sum(x, m):
    return np.sum(np.sin(x[m]))


def masked_scale(x, m):
    return np.sin(x[m]) * np.mean(x[m])


def masked_mean(x, w, m):
    return np.sum(w[m] * x[m] ** 2) / len(x[m]) + x[m].shape[0]


def where_indices(x, m):
    i = np.where(m)[0]
    return x[i] * np.sum(x[np.flatnonzero(m)])


def masked_dot(x, m):
    return np.dot(x[m], x[m]) * x + np.sum((x[m][:, None] * x[m]) @ x[m])


CASES = [(masked_sum, (X, MASK), (0, None)), (masked_scale, (X, MASK), (0, None)),
         (masked_mean, (X, W, MASK), (0, None, None)),
         (masked_mean, (X[0], X, MASK), (None, 0, None)),
         (where_indices, (X, MASK), (0, None)), (masked_dot, (X, MASK), (0, None))]
IDS = ["sum", "scale", "mean", "mean-shared-x", "where", "dot"]


@pytest.mark.parametrize("fn, args, in_axes", CASES, ids=IDS)
def test_a_shared_mask_batches_as_a_loop(fn, args, in_axes):
    np.testing.assert_allclose(ms.vmap(fn, in_axes=in_axes)(*args), loop(fn, args, in_axes),
                               rtol=1e-12, atol=1e-14)


def _scalar(fn, args, k):
    """``fn``'s output summed: the loss whose gradient w.r.t. batched argument ``k`` is
    checked."""
    return lambda v: np.sum(fn(*args[:k], v, *args[k + 1:]))


@pytest.mark.parametrize("fn, args, in_axes", CASES, ids=IDS)
def test_per_example_gradients_through_a_shared_mask_match_central_differences(fn, args,
                                                                             in_axes):
    k = next(i for i, ax in enumerate(in_axes) if ax is not None)
    loss = lambda *a: np.sum(fn(*a))  # noqa: E731
    got = ms.vmap(ms.grad(loss, grad_position=k), in_axes=in_axes)(*args)
    for e in range(B):
        example = [a if ax is None else a[e] for a, ax in zip(args, in_axes)]
        np.testing.assert_allclose(got[e], central(_scalar(fn, example, k), example[k]),
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, args, in_axes", CASES, ids=IDS)
def test_gradient_of_vmap_through_a_shared_mask_matches_central_differences(fn, args,
                                                                           in_axes):
    k = next(i for i, ax in enumerate(in_axes) if ax is not None)
    got = ms.grad(lambda *a: np.sum(ms.vmap(fn, in_axes=in_axes)(*a)), grad_position=k)(*args)
    fd = central(lambda v: np.sum(loop(fn, args[:k] + (v,) + args[k + 1:], in_axes)), args[k])
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_a_shared_mask_keeps_float32():
    x32 = X.astype(np.float32)
    got = ms.vmap(ms.grad(masked_sum), in_axes=(0, None))(x32, MASK)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, loop(ms.grad(masked_sum), (x32, MASK), (0, None)),
                               rtol=1e-6)


def positive_sum(x):
    return np.sum(x[x > 0])


def positive_places(x):
    return x[np.nonzero(x > 0)[0]]


def positive_count(x):
    return np.sum(x) * len(np.flatnonzero(x > 0))


@pytest.mark.parametrize("fn, text", [(positive_sum, "x[x > 0]"),
                                      (positive_places, "np.nonzero(x > 0)"),
                                      (positive_count, "np.flatnonzero(x > 0)")])
def test_a_length_that_differs_between_examples_is_refused_with_its_line(fn, text):
    """Each example would have its own length: a ragged batch, no array."""
    with pytest.raises(UnsupportedOperationError, match="its own number of elements") as e:
        ms.vmap(fn)(X)
    assert text in str(e.value) and "test_vmap_rest.py" in str(e.value)
    assert "np.where(mask, x, 0.0)" in str(e.value)
