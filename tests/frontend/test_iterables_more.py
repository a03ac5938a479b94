"""``map``/``filter`` with a lambda or a helper, ``sum`` of generators, ``zip(*rows)``,
``reversed`` and ``sorted`` on static keys, ``list``/``tuple`` of arrays: values
against plain Python, gradients against central finite differences in float64,
and located errors where the result would depend on the data."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import UnsupportedOperationError

X = np.array([1.25, -2.0, 3.0, -0.5])
M = np.array([[0.5, -1.0, 2.0, -0.3], [1.5, 0.25, -2.5, 0.8], [-0.7, 1.1, 0.4, -1.2]])


def check(f, x):
    value = ms.value_and_grad(f)(x.copy())[0]
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12, atol=1e-12)
    ms.check_grad(f, (x.copy(),), rtol=1e-6, atol=1e-6)  # reverse and forward mode
    x32 = x.astype(np.float32)
    value32, grad32 = ms.value_and_grad(f)(x32)
    assert grad32.dtype == np.float32
    np.testing.assert_allclose(value32, f(x32.copy()), rtol=1e-5, atol=1e-5)


def square(v):
    return v * v


def map_lambda_over_range(x):
    return sum(map(lambda i: x[i] * (i + 1), range(3)))


def map_helper_over_rows(m):
    return np.sum(sum(map(square, m)))


def map_over_tuple_of_values(x):
    return sum(map(square, (x[0], x[1], 2.0)))


def map_two_sequences(x):
    return sum(map(lambda a, b: a * b, [x[0], x[1]], (x[2], x[3])))


def map_numpy_function_over_rows(m):
    return np.sum(np.stack(list(map(np.tanh, m))))


def map_is_an_iterator(x):
    squares = map(square, [x[0], x[1]])
    return sum(squares) + sum(squares)        # the second sum sees nothing, as in Python


def filter_static_range(x):
    return sum(x[i] for i in filter(lambda i: i != 1, range(4)))


def filter_rows_by_position(m):
    rows = list(filter(lambda r: True, m))
    return np.sum(rows[1] * rows[2])


def filter_none_on_constants(x):
    return sum(filter(None, [0, 2, 0, 3])) * x[0]


def sum_generator_over_range(x):
    return sum(x[i] ** 2 for i in range(3))


def sum_generator_over_zip(x):
    ws = [0.5, -1.0, 2.0]
    vs = [x[0], x[1], x[2]]
    return sum(w * v for w, v in zip(ws, vs))


def zip_star_lists(x):
    rows = [[x[0], x[1]], [x[2], x[3]]]
    return sum(a * b for a, b in zip(*rows))


def zip_star_array(m):
    return sum(np.sum(np.stack(col)) * k for k, col in enumerate(zip(*m)))


def columns_by_zip_star(m):
    cols = list(zip(*m))
    return np.sum(np.array(cols[1]) * np.array(cols[3]))


def reversed_list(x):
    return sum(k * v for k, v in enumerate(reversed([x[0], x[1], x[2]])))


def reversed_tuple_and_range(x):
    return sum(v * i for v, i in zip(reversed((x[0], x[1])), reversed(range(2))))


def reversed_rows(m):
    rows = [m[0], m[1], m[2]]
    return sum(np.sum(a * b) for a, b in zip(rows, reversed(rows)))


def sorted_constants(x):
    return sum(x[i] * k for k, i in enumerate(sorted([3, 0, 2])))


def sorted_by_static_key(x):
    pairs = [(2, x[0]), (1, x[1]), (3, x[2])]
    return sum(k * v for k, (_, v) in enumerate(sorted(pairs, key=lambda p: p[0])))


def sorted_reverse_is_stable(x):
    pairs = [(1, x[0]), (2, x[1]), (1, x[2])]
    return sum(k * v for k, (_, v) in enumerate(sorted(pairs, key=lambda p: p[0],
                                                       reverse=True)))


def min_max_of_map(x):
    return max(map(lambda v: v * 2.0, [x[0], x[1]])) + min(x[i] for i in range(3))


def extremum_of_static_iterators(x):
    return x[max(map(int, [1, 2]))] * min(filter(None, [3, 0, 1]))


def tuple_of_array(m):
    first, *rest = tuple(m)
    return np.sum(first * rest[-1])


FUNCTIONS_1D = [map_lambda_over_range, map_over_tuple_of_values, map_two_sequences,
                map_is_an_iterator, filter_static_range, filter_none_on_constants,
                sum_generator_over_range, sum_generator_over_zip, zip_star_lists,
                reversed_list, reversed_tuple_and_range, sorted_constants,
                sorted_by_static_key, sorted_reverse_is_stable, min_max_of_map,
                extremum_of_static_iterators]
FUNCTIONS_2D = [map_helper_over_rows, map_numpy_function_over_rows, filter_rows_by_position,
                zip_star_array, columns_by_zip_star, reversed_rows, tuple_of_array]


@pytest.mark.parametrize("f", FUNCTIONS_1D, ids=lambda f: f.__name__)
def test_on_a_vector(f):
    check(f, X)


@pytest.mark.parametrize("f", FUNCTIONS_2D, ids=lambda f: f.__name__)
def test_on_a_matrix(f):
    check(f, M)


def filter_by_data(x):
    return sum(filter(lambda v: v > 0, [x[0], x[1]]))


def sort_by_data(x):
    return sorted([x[0], x[1]])[0]


def sort_by_data_key(x):
    return sorted([0, 1], key=lambda i: x[i])[0] * x[0]


def map_over_run_time_length(x):
    return sum(map(square, x[x > 0]))


@pytest.mark.parametrize("f, what, line", [
    (filter_by_data, "filter() with a condition on run-time values",
     "return sum(filter(lambda v: v > 0, [x[0], x[1]]))"),
    (sort_by_data, "sorted() by run-time values", "return sorted([x[0], x[1]])[0]"),
    (sort_by_data_key, "sorted() by run-time values",
     "return sorted([0, 1], key=lambda i: x[i])[0] * x[0]"),
    (map_over_run_time_length, "known only at run time",
     "return sum(map(square, x[x > 0]))"),
])
def test_data_dependent_results_are_located_errors(f, what, line):
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(f)(X)
    text = str(info.value)
    assert what in text and line in text and "test_iterables_more.py" in text


def splat_rows(m):
    return np.sum(np.add(*m[:2]) * m[2])


def test_star_of_an_array_passes_its_rows():
    check(splat_rows, M)


def test_star_of_a_scalar_is_a_located_error():
    def f(x):
        return np.add(*np.sum(x))
    with pytest.raises(UnsupportedOperationError, match="0-d") as info:
        ms.grad(f)(X)
    assert "return np.add(*np.sum(x))" in str(info.value)
