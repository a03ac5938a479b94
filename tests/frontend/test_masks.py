"""Boolean masks computed in the function and the data-dependent lengths they give
(``x[x > 0]``, ``np.nonzero``, ``np.where(cond)``, masked item assignment): values
against plain Python, gradients against central finite differences in float64,
a second input with another number of selected elements through the cached code,
float32 kept, and the located refusals where a static shape is needed."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import UnsupportedOperationError
from tests.finite_differences import central, central_at


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def check(f, *args):
    """value_and_grad of ``f`` against Python and finite differences, on ``args``."""
    positions = tuple(range(len(args)))
    value, grads = ms.value_and_grad(f, grad_position=positions)(*copies(args))
    grads = grads if isinstance(grads, tuple) else (grads,)
    np.testing.assert_allclose(value, f(*copies(args)), rtol=1e-12, atol=1e-12)
    for i, g in enumerate(grads):
        want = central_at(lambda *a: np.sum(f(*a)), copies(args), i)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6)
        assert np.asarray(g).dtype == np.asarray(args[i]).dtype
    return value, grads


X1 = np.array([1.25, -2.0, 3.0, -0.5, 0.75])
X1_OTHER = np.array([-1.5, -2.0, 0.6, -0.25, -0.75])   # another count of positives
X2 = np.array([[0.5, -1.0, 2.0, -0.3], [1.5, 0.25, -2.5, 0.8], [-0.7, 1.1, 0.4, -1.2]])


def sum_of_positives_squared(x):
    return np.sum(x[x > 0] ** 2)


def masked_times_two(x):
    mask = x > 0.3
    return np.sum(x[mask] * 2 + np.sin(x[mask]))


def mean_of_selection(x):
    return np.mean(x[x < 1.0]) * np.max(x[x > -1.0])


def where_index(x):
    idx = np.where(x > 0)[0]
    return np.sum(x[idx] ** 3)


def nonzero_index(x):
    return np.sum(np.exp(x[np.nonzero(x > 0.5)]))


def nonzero_2d(x):
    return np.sum(x[np.nonzero(x > 0)] * x[np.nonzero(x > 0)])


def columns_by_mask(x):
    keep = x[0] > 0
    return np.sum(x[:, keep] ** 2) + np.sum(np.mean(x[:, keep], axis=1))


def rows_by_mask(x):
    keep = np.sum(x, axis=1) > 0
    return np.sum(np.tanh(x[keep, :]))


def length_and_shape(x):
    sel = x[x > 0]
    return np.sum(sel) / len(sel) + sel.shape[0] * 0.5 + np.sum(sel) * sel.size


def selection_matmul(x, w):
    rows = x[x[:, 0] > 0]           # (?, 4)
    return np.sum(rows @ w) + np.sum(rows @ w[:, 0])


def selection_of_selection(x):
    pos = x[x > 0]
    return np.sum(pos[pos > 1.0] ** 2) + np.sum(pos[::-1][:2])


def scalar_broadcast_and_two_selections(x):
    a = x[x > 0]
    return np.sum((a - 0.5) * a / 2.0) + np.sum(np.maximum(a, 1.0))


def set_through_mask(x):
    y = x * 1.0
    y[y > 0] = 0.0
    return np.sum(y * x)


def set_values_through_mask(x):
    y = x * 2.0
    y[x > 0] = x[x > 0] ** 2
    return np.sum(y * x)


def add_through_mask(x):
    y = x * 1.0
    y[x > 0] += 3.0 * x[x > 0]
    return np.sum(y * y)


def multiply_through_mask(x):
    y = x * 1.0
    y[x < 0] *= np.tanh(x[x < 0])
    return np.sum(y * x)


def set_columns_through_mask(x):
    y = x.copy()
    keep = x[1] > 0
    y[:, keep] = x[:, keep] ** 2
    return np.sum(y * x)


def add_rows_through_mask(x):
    y = x * 1.0
    y[x[:, 0] > 0, :] += np.sin(x[x[:, 0] > 0, :])
    return np.sum(y ** 2)


def set_through_where_index(x):
    y = np.zeros_like(x)
    y[np.where(x > 0)] = x[x > 0]
    return np.sum(y ** 2 + y * x)


def loop_over_masks(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x[x > i * 0.5] ** 2)
    return s


def loop_over_selected(x):
    s = 0.0
    for v in x[x > 0]:
        s = s + v * v
    return s


def branch_picks_mask(x):
    if np.sum(x) > 0:
        sel = x[x > 0]
    else:
        sel = x[x < 0]
    return np.sum(sel ** 2)


def combined_masks(x):
    inside = (x > -1.0) & (x < 2.0)
    return np.sum(x[inside] ** 2) + np.sum(x[~inside]) + np.sum(x[(x > 1.0) | (x < -1.0)])


def logical_masks(x):
    keep = np.logical_and(x > -1.0, np.logical_not(x > 2.0))
    return np.sum(np.sin(x[np.logical_xor(keep, x > 0)])) + np.sum(x[np.logical_or(keep, x > 2)])


def broadcast_two_lengths(x):
    # one selection has a single element, which NumPy broadcasts against the other
    return np.sum(x[x > 2.9] * x[x > 0]) + np.sum(x[x > 2.9000001] * np.sin(x[x > 0]))


def variance_of_selection(x):
    return np.var(x[x > -1], ddof=1) + x[x > 0].var() + np.dot(x[x > 0], x[x > 0])


FUNCTIONS = [variance_of_selection, broadcast_two_lengths, combined_masks, logical_masks, sum_of_positives_squared, masked_times_two, mean_of_selection, where_index,
             nonzero_index, length_and_shape, selection_of_selection,
             scalar_broadcast_and_two_selections, set_through_mask, set_values_through_mask,
             add_through_mask, multiply_through_mask, set_through_where_index,
             loop_over_masks, loop_over_selected, branch_picks_mask]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_one_dimensional_masks(f):
    check(f, X1)
    check(f, X1_OTHER if f is not mean_of_selection else X1[::-1].copy())


@pytest.mark.parametrize("f", [nonzero_2d, columns_by_mask, rows_by_mask,
                               add_rows_through_mask],
                         ids=lambda f: f.__name__)
def test_two_dimensional_masks(f):
    check(f, X2)
    check(f, -X2[::-1].copy())


def test_set_columns_through_a_mask():
    check(set_columns_through_mask, X2)


def test_matmul_of_a_selection_with_static_inner_dims():
    w = np.linspace(-1.0, 1.0, 8).reshape(4, 2)
    check(selection_matmul, X2, w)
    check(selection_matmul, -X2, w)


def test_the_cache_does_not_fix_the_selected_length():
    g = ms.grad(sum_of_positives_squared)
    for x in (X1, X1_OTHER, np.abs(X1), -np.abs(X1)):
        np.testing.assert_allclose(g(x), np.where(x > 0, 2 * x, 0.0))


def test_returning_a_selection_seeds_it_with_its_run_time_shape():
    np.testing.assert_allclose(ms.grad(lambda x: x[x > 0])(X1), (X1 > 0).astype(float))


def test_float32_stays_float32():
    x = X1.astype(np.float32)
    for f in (sum_of_positives_squared, mean_of_selection, add_through_mask):
        value, grad = ms.value_and_grad(f)(x)
        assert np.asarray(value).dtype == np.float32 and grad.dtype == np.float32
        np.testing.assert_allclose(value, f(x.copy()), rtol=1e-6)


def test_generated_code_reads_through_the_mask_and_scatters_back():
    src = ms.adjoint_source(sum_of_positives_squared, X1)
    assert "gather_x_greater_x = x[greater_x]" in src
    assert "dx[greater_x] += " in src


def test_ir_prints_a_run_time_length_as_a_question_mark():
    text = str(ms.adjoint_ir(sum_of_positives_squared, X1))
    assert "# f64[?]" in text


def combine_with_fixed_length(x):
    return np.sum(x[x > 0] + x)


def reshape_with_fixed_shape(x):
    return np.sum(x[x > 0].reshape(2, -1))


def std_of_selection(x):
    return np.std(x[x > 0])


@pytest.mark.parametrize("f, line", [
    (combine_with_fixed_length, "return np.sum(x[x > 0] + x)"),
    (reshape_with_fixed_shape, "return np.sum(x[x > 0].reshape(2, -1))"),
    (std_of_selection, "return np.std(x[x > 0])"),
])
def test_static_shapes_it_cannot_have_are_located_errors(f, line):
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(f)(X1)
    text = str(info.value)
    assert "test_masks.py" in text and line in text and "depends on the data" in text
    assert "np.where(mask, x, 0.0)" in text   # the hint


def test_sorting_or_filtering_by_data_stays_refused():
    def f(x):
        return sum(filter(lambda v: v > 0, [x[0], x[1]]))
    with pytest.raises(UnsupportedOperationError, match="filter"):
        ms.grad(f)(X1)


def cube_of_positives(x):
    return np.sum(x[x > 0] ** 3)


def test_forward_mode_and_jacobians():
    t = np.linspace(-1.0, 1.0, X1.size)
    value, tangent = ms.jvp(cube_of_positives, (X1,), (t,))
    np.testing.assert_allclose(value, cube_of_positives(X1))
    gradient = central(lambda x: np.sum(cube_of_positives(x)), X1)
    np.testing.assert_allclose(tangent, np.sum(gradient * t), rtol=1e-6)
    np.testing.assert_allclose(ms.jacfwd(cube_of_positives)(X1),
                               central(lambda x: np.sum(cube_of_positives(x)), X1), rtol=1e-6)
    jac = ms.jacrev(lambda x: x[x > 0] ** 2)(X1)
    pos = np.flatnonzero(X1 > 0)
    want = np.zeros((pos.size, X1.size))
    want[np.arange(pos.size), pos] = 2 * X1[pos]
    np.testing.assert_allclose(jac, want)


def test_second_order():
    hess_diag = ms.grad(lambda x: np.sum(ms.grad(cube_of_positives)(x)))(X1)
    np.testing.assert_allclose(hess_diag, np.where(X1 > 0, 6 * X1, 0.0))


def selection_carried_by_a_loop(x):
    r = x[x > 0]
    for _ in range(3):
        r = r * 0.5 + np.sin(r)
    return np.sum(r)


def selection_shrinking_in_a_loop(x):
    r = x * 1.0
    for _ in range(2):
        r = r[r > 0.1] * 2.0
    return np.sum(r)


@pytest.mark.parametrize("f, what", [
    (selection_carried_by_a_loop, "a loop or branch carrying 'r'"),
    (selection_shrinking_in_a_loop, "changes type in the loop"),
])
def test_loops_carrying_a_run_time_length_are_located_errors(f, what):
    with pytest.raises((UnsupportedOperationError, ValueError)) as info:
        ms.grad(f)(X1)
    assert what in str(info.value) and "test_masks.py" in str(info.value)


def invert_python_bool_and_numpy_bool(x, s):
    return np.sum(x * ~(s > 0)) + np.sum(np.where(np.invert(s > 0) | (x > 0), x, 0.0))


@pytest.mark.parametrize("s", [0.5, -0.5])
def test_invert_of_a_python_bool_is_pythons_and_np_invert_numpys(s):
    # ~True is -2 in Python, np.invert(True) is False
    value, grad = ms.value_and_grad(invert_python_bool_and_numpy_bool)(X1, s)
    assert value == invert_python_bool_and_numpy_bool(X1, s)
    want = central(lambda x: np.sum(invert_python_bool_and_numpy_bool(x, s)), X1)
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-6)
