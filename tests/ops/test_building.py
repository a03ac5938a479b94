"""Building helpers and functions without a derivative, compiled as users write them.

Each function is compiled with ``ms.value_and_grad``; the value must equal plain
NumPy's exactly and the gradient central finite differences in float64. A float32
case checks that the value and the gradient stay float32.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.errors import UnsupportedOperationError
from tests.finite_differences import central, central_at

RNG = np.random.default_rng(7)
V4 = np.array([0.3, -0.5, 0.8, 1.2])
M23 = np.array([[0.3, -0.5, 0.8], [1.2, -0.1, 0.6]])
M34 = RNG.normal(size=(3, 4))
B23 = RNG.normal(size=(4, 2, 3))


def append_flat(x):
    return np.sum(np.append(x, x * 2.0) ** 2)


def append_axis(x):
    return np.sum(np.append(x, np.sin(x), axis=1) * np.arange(6.0))


def append_scalar(x):
    return np.sum(np.append(x[0], x) ** 3)


def diff_n2_prepend(x):
    return np.sum(np.diff(x, 2, prepend=1.0, append=x[:1]) ** 2)


def diff_axis0(x):
    return np.sum(np.diff(x, axis=0) * np.arange(4.0))


def cross3(x):
    return np.sum(np.cross(x[0], x[1]) * np.array([1.0, 2.0, 3.0]))


def cross_batched(x):
    return np.sum(np.cross(x, np.array([0.2, -0.7, 1.1])) ** 2)


def cross_axes(x):
    c = np.cross(x, x[::-1] * 2.0, axisa=0, axisb=0, axisc=0)
    return np.sum(c * c[::-1])


def cross2(x):
    return np.sum(np.cross(x[:, :2], x[:, 1:]) * np.array([1.0, -2.0]))


def cross_2_and_3(x):
    return np.sum(np.cross(x[0, :2], x[1]) ** 2)


def select(x):
    return np.sum(np.select([x > 0.5, x < -0.2], [x * 2.0, x ** 2], np.sin(x)))


def select_default(x):
    return np.sum(np.select([x > 0.0], [x ** 3]) + x)


def gradient_1d(x):
    return np.sum(np.gradient(x * x, 0.5) ** 2)


def gradient_edge2(x):
    return np.sum(np.gradient(np.sin(x), edge_order=2) ** 2)


def gradient_2d(x):
    gy, gx = np.gradient(x * x[0, 0], 2.0)
    return np.sum(gy * gx + gx)


def gradient_axis(x):
    return np.sum(np.gradient(x ** 3, axis=1) * np.arange(3.0))


def gradient_uneven(x):
    return np.sum(np.gradient(x ** 2, np.array([0.0, 0.5, 1.5, 1.7])) ** 2)


def gradient_uneven_edge2(x):
    gy, gx = np.gradient(np.sin(x), np.array([0.0, 1.0, 3.0]), [0.0, 0.5, 1.5, 1.7],
                         edge_order=2)
    return np.sum(gy * gx)


def linspace_ends(x):
    return np.sum(np.linspace(x[0], x[1], 5) ** 2 * np.arange(5.0))


def linspace_vectors(x):
    y = np.linspace(x[:2], x[2:], 4, endpoint=False, axis=1)
    return np.sum(np.sin(y))


def linspace_retstep(x):
    y, step = np.linspace(0.0, x[3], 3, retstep=True)
    return np.sum(y * y) + step * x[0]


def atleast(x):
    return np.sum(np.atleast_2d(x) * np.atleast_3d(x[0]) + np.atleast_1d(x[1]) ** 2)


def atleast_many(x):
    a, b = np.atleast_2d(x[0], x)
    return np.sum(a * b)


def partition(x):
    return np.sum(np.partition(x, 1)[:2] * np.array([1.0, 3.0]))


def partition_axis(x):
    return np.sum(np.partition(x, (0, 2), axis=0) * np.arange(4.0))


def r_concat(x):
    return np.sum(np.r_[x, x[0], 0:2, np.array([0.5])] ** 2 * np.arange(8.0))


def c_columns(x):
    return np.sum(np.c_[x, x ** 2] @ np.array([1.0, -2.0]))


def nested_array(x):
    return np.sum(np.array([[x[0], 2.0 * x[1]], (x[0] * x[1], x[2])]) ** 2)


def nested_array_depth3(x):
    a = np.array([[[x[0], 1.0], [x[1], x[2] * x[3]]], [(x[3], x[0]), [x[2], 0.5]]])
    return np.sum(a ** 3 * np.arange(8.0).reshape(2, 2, 2))


def nested_array_rows(x):
    return np.sum(np.array([x, x * x, [1.0, x[0], x[1], 2.0]]) * np.arange(12.0).reshape(3, 4))


# -- functions without a derivative, used as indices, masks and conditions ------------------

def argsort_gather(x):
    return np.sum(x[np.argsort(x)] * np.arange(4.0))


def argsort_axis(x):
    i = np.argsort(x, axis=0)
    return np.sum(x[i[0], np.arange(4)] * 2.0)


def searchsorted(x):
    return np.sum(x * np.searchsorted(np.array([-0.7, 0.1, 1.0]), x, side="right"))


def masks_and_logic(x):
    mask = np.logical_and(x > 0, np.logical_not(x > 1)) | np.isnan(x) & ~np.isinf(x)
    keep = np.logical_or(np.isclose(x, 0.3), np.logical_xor(x > 1, x < -1))
    return np.sum(np.where(mask, x, 0.0) + np.where(keep, x ** 2, 0.0) + np.isfinite(x) * x)


def count_nonzero(x):
    return np.sum(x) * np.count_nonzero(x > 0) + np.sum(np.count_nonzero(x > 0, axis=0) * x[0])


def allclose_branch(x):
    if np.allclose(x, 0.0):
        return np.sum(x)
    return np.sum(x * x)


def array_equal_branch(x):
    if np.array_equal(x, x * 1.0):
        return np.sum(x ** 3)
    return np.sum(x)


def unique_of_constants(x):
    u = np.unique(np.array([3.0, 1.0, 3.0, 2.0]))
    return np.sum(x[:3] * u) + np.flatnonzero(np.array([0.0, 1.0]))[0] * x[3]


def ops_forms(x):
    a = ops.diff(x, 1, 0) * ops.linspace(x[0, 0], x[0, 1], 4)
    c = ops.cross(x[:, :3], x[::-1, :3], dim=1)
    keep = ops.logical_and(ops.isfinite(x), ops.logical_not(ops.isnan(x)))
    return (np.sum(a * a) + np.sum(c) + np.sum(ops.select(keep, x, 0.0))
            + np.sum(x[0][ops.argsort(x[0], descending=True)] * np.arange(4.0))
            + np.sum(ops.atleast_2d(x[0, 0])) * ops.count_nonzero(x > 0))


CASES = [
    (append_flat, V4), (append_axis, M23), (append_scalar, V4),
    (diff_n2_prepend, V4), (diff_axis0, M34 * np.arange(1.0, 5.0)),
    (cross3, M23), (cross_batched, B23), (cross_axes, RNG.normal(size=(3, 4))),
    (cross2, M23), (cross_2_and_3, M23),
    (select, V4), (select_default, V4),
    (gradient_1d, V4), (gradient_edge2, V4), (gradient_2d, M34), (gradient_axis, M23),
    (gradient_uneven, V4), (gradient_uneven_edge2, M34),
    (linspace_ends, V4), (linspace_vectors, V4), (linspace_retstep, V4),
    (atleast, V4), (atleast_many, V4), (partition, V4), (partition_axis, M34),
    (r_concat, V4), (c_columns, V4),
    (nested_array, V4), (nested_array_depth3, V4), (nested_array_rows, V4),
    (argsort_gather, V4), (argsort_axis, M34), (searchsorted, V4), (masks_and_logic, V4),
    (count_nonzero, M23), (allclose_branch, V4), (array_equal_branch, V4),
    (unique_of_constants, V4), (ops_forms, M34),
]


@pytest.mark.parametrize("fn, x", CASES, ids=[c[0].__name__ for c in CASES])
def test_value_and_gradient(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # np.cross of 2-vectors
        value, grad = ms.value_and_grad(fn)(x)
        expected = fn(x)
        assert np.asarray(value).dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(value, expected)
        np.testing.assert_allclose(grad, central(fn, x), rtol=1e-5, atol=1e-6)
        # a second input through the cached code
        y = x * 0.9 + 0.05
        np.testing.assert_allclose(ms.grad(fn)(y), central(fn, y), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn, x", [(append_axis, M23), (diff_n2_prepend, V4), (cross3, M23),
                                   (select, V4), (gradient_2d, M34), (linspace_ends, V4),
                                   (partition, V4), (r_concat, V4), (c_columns, V4),
                                   (nested_array, V4), (masks_and_logic, V4)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_float32_stays_float32(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        x32 = x.astype(np.float32)
        value, grad = ms.value_and_grad(fn)(x32)
        assert grad.dtype == np.float32
        assert np.asarray(value).dtype == np.asarray(fn(x32)).dtype
        np.testing.assert_allclose(value, fn(x32), rtol=1e-6)


def test_second_order_through_cross_and_gradient():
    def f(x):
        return np.sum(np.cross(x[0], x[1]) ** 2) + np.sum(np.gradient(x[0] ** 3) ** 2)

    def df0(x):
        return ms.grad(f)(x)[0, 1]

    x = M23.copy()
    np.testing.assert_allclose(ms.grad(df0)(x), central(df0, x), rtol=1e-4, atol=1e-6)


def test_generated_source_is_one_statement_per_op():
    src = ms.adjoint_source(cross3, M23)
    assert "np.cross(" in src
    lines = [ln for ln in src.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    assert all(ln.count("np.cross(") <= 1 for ln in lines)


def test_partition_values_follow_numpy():
    x = RNG.normal(size=(5, 7))
    for kth in (0, 3, (1, 5), -1):
        got = ms.value_and_grad(lambda_free_partition, 0)(x, kth)[0]
        np.testing.assert_array_equal(got, lambda_free_partition(x, kth))


def lambda_free_partition(x, kth):
    return np.sum(np.partition(x, kth, axis=1) * np.arange(7.0))


@pytest.mark.parametrize("source, message", [
    ("np.unique(x)", "np.unique of an array computed in the function"),
    ("np.argwhere(x > 0)", "np.argwhere of an array computed in the function"),
    ("np.linspace(0.0, 1.0, int(x[0]))", "np.linspace's num must be an int known"),
    ("np.gradient(x, x * 2.0)", "np.gradient with coordinates computed in the function"),
])
def test_located_refusals(tmp_path, source, message):
    import importlib.util
    path = tmp_path / "refused.py"
    path.write_text(f"import numpy as np\n\n\ndef f(x):\n    return np.sum({source})\n")
    spec = importlib.util.spec_from_file_location("refused", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(UnsupportedOperationError) as info:
        ms.grad(module.f)(V4)
    text = str(info.value)
    assert message in text and "refused.py:5" in text


def gradient_traced_spacing(x, s):
    return np.sum(np.gradient(x ** 2, s) ** 2) + np.sum(np.gradient(x, s, edge_order=2))


def linspace_float_ends(a, b):
    return np.sum(np.linspace(a, b, 4) ** 2)


def invert_of_python_bool(x, s):
    """np.invert(True) is False, but ~True is -2 (Python's int meaning)."""
    return np.sum(np.where(np.invert(s > 0.42), x, -0.18)) + ~(s > 0.42) * s


@pytest.mark.parametrize("fn, args", [(gradient_traced_spacing, (V4, 0.7)),
                                      (linspace_float_ends, (0.3, 1.7)),
                                      (invert_of_python_bool, (V4, 0.2)),
                                      (invert_of_python_bool, (V4, 0.5))],
                         ids=["gradient_traced_spacing", "linspace_float_ends", "invert_true",
                              "invert_false"])
def test_gradient_with_respect_to_python_float_arguments(fn, args):
    value, grads = ms.value_and_grad(fn, grad_position=(0, 1))(*args)
    assert value == fn(*args)
    second = central_at(fn, args, 1)
    np.testing.assert_allclose(grads[1], second, rtol=1e-6)
