"""Data movement end to end: user-style functions through ``ms.value_and_grad``.

Each function's value is compared with plain Python and its gradient with central
finite differences in float64; a float32 input gives a float32 value and gradient.
Views made by these functions (np.flip, swapaxes, moveaxis, rot90, split, diagonal)
are written through as NumPy does, or refused with a located error.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.api.transforms import adjoint_source
from ad_compiler.errors import UnsupportedOperationError

def _w(out):
    """A scalar that weighs every position of ``out`` differently."""
    weights = np.arange(1.0, out.size + 1.0).reshape(out.shape).astype(out.dtype)
    return np.sum(np.sin(out) * weights)


def check(adcheck, fn, *args):
    """Value vs Python, gradient vs finite differences (float64), then float32 dtypes."""
    positions = tuple(range(len(args)))
    value, grads = ms.value_and_grad(fn, grad_position=positions)(*(a.copy() for a in args))
    np.testing.assert_allclose(value, fn(*(a.copy() for a in args)), rtol=1e-10)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, g in enumerate(grads):
        want = adcheck.numeric_grad(lambda vals: fn(*(np.copy(v) for v in vals)), list(args), i)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6, err_msg=f"gradient of input {i}")
    args32 = [a.astype(np.float32) for a in args]
    value, grads = ms.value_and_grad(fn, grad_position=positions)(*args32)
    assert np.asarray(value).dtype == np.asarray(fn(*args32)).dtype == np.float32
    grads = grads if isinstance(grads, tuple) else (grads,)
    assert all(g.dtype == np.float32 for g in grads)
    np.testing.assert_allclose(value, fn(*args32), rtol=1e-5)


RNG = np.random.default_rng(7)
V = RNG.uniform(-1.5, 1.5, 5)
M = RNG.uniform(-1.5, 1.5, (3, 4))
S = RNG.uniform(-1.5, 1.5, (3, 3))
T = RNG.uniform(-1.5, 1.5, (2, 3, 4))

CASES = [
    ("tile", lambda x: _w(np.tile(x, (2, 1, 2))), M),
    ("tile-int", lambda x: _w(np.tile(x, 3)), V),
    ("repeat-scalar", lambda x: _w(np.repeat(x, 2, axis=1)), M),
    ("repeat-none", lambda x: _w(np.repeat(x, 3)), M),
    ("repeat-counts", lambda x: _w(np.repeat(x, [2, 0, 1], axis=0)), M),
    ("x.repeat", lambda x: _w(x.repeat(2, -1)), T),
    ("flip-none", lambda x: _w(np.flip(x)), T),
    ("flip-int", lambda x: _w(np.flip(x, 1)), T),
    ("flip-tuple", lambda x: _w(np.flip(x, (0, -1))), T),
    ("fliplr-flipud", lambda x: _w(np.fliplr(x) * np.flipud(x)), M),
    ("roll-none", lambda x: _w(np.roll(x, 5)), M),
    ("roll-axis", lambda x: _w(np.roll(x, -1, axis=1)), M),
    ("roll-tuple", lambda x: _w(np.roll(x, (1, 2, -1), axis=(0, 2, 0))), T),
    ("rot90-k1", lambda x: _w(np.rot90(x)), M),
    ("rot90-k2", lambda x: _w(np.rot90(x, 2)), M),
    ("rot90-k3-axes", lambda x: _w(np.rot90(x, -1, axes=(2, 0))), T),
    ("swapaxes", lambda x: _w(np.swapaxes(x, 0, 2) * 1.5), T),
    ("x.swapaxes", lambda x: _w(x.swapaxes(-1, 1)), T),
    ("moveaxis", lambda x: _w(np.moveaxis(x, 0, -1)), T),
    ("moveaxis-lists", lambda x: _w(np.moveaxis(x, [0, 1], [2, 0])), T),
    ("rollaxis", lambda x: _w(np.rollaxis(x, 2, 1)), T),
    ("hstack", lambda x: _w(np.hstack([x, x * 2.0])), M),
    ("hstack-1d", lambda x: _w(np.hstack((x, x[:2]))), V),
    ("vstack", lambda x: _w(np.vstack([x, x ** 2])), V),
    ("dstack", lambda x: _w(np.dstack([x, x])), M),
    ("column_stack", lambda x: _w(np.column_stack([x, x * x])), V),
    ("split-unpacked", lambda x: _w(np.split(x, 2, axis=1)[1]), M),
    ("split-indices", lambda x: _two(np.split(x, [1, 3], axis=-1)), M),
    ("array_split", lambda x: _w(np.array_split(x, 3)[2]) + _w(np.array_split(x, 3)[0]), V),
    ("hsplit-vsplit", lambda x: _w(np.hsplit(x, 2)[0]) + _w(np.vsplit(x, [1])[1]), M),
    ("pad-constant", lambda x: _w(np.pad(x, ((1, 0), (2, 1)), constant_values=0.5)), M),
    ("pad-edge", lambda x: _w(np.pad(x, ((1, 2), (0, 3)), mode="edge")), M),
    ("pad-reflect", lambda x: _w(np.pad(x, 2, mode="reflect")), M),
    ("pad-symmetric", lambda x: _w(np.pad(x, (3, 1), mode="symmetric")), V),
    ("pad-wrap", lambda x: _w(np.pad(x, 7, mode="wrap")), V),
    ("diag-1d", lambda x: _w(np.diag(x)), V),
    ("diag-1d-k", lambda x: _w(np.diag(x, -2)), V),
    ("diag-2d-k", lambda x: _w(np.diag(x, 1)), M),
    ("diagonal", lambda x: _w(np.diagonal(x, -1, 2, 1)), T),
    ("x.diagonal", lambda x: _w(x.diagonal(1)), M),
    ("trace", lambda x: np.sin(np.trace(x, 1)), M),
    ("x.trace", lambda x: np.sum(np.sin(x.trace(0, 0, 2))), T),
    ("tril-triu", lambda x: _w(np.tril(x) + np.triu(x, 2) * 3.0), M),
    ("tril-1d", lambda x: _w(np.tril(x, -1)), V),
    ("take-wrap", lambda x: _w(np.take(x, [6, -1, 2], mode="wrap")), V),
    ("take-clip-axis", lambda x: _w(np.take(x, [5, 0], axis=1, mode="clip")), M),
    ("take_along_axis", lambda x: _w(np.take_along_axis(x, np.array([[0, 3], [1, 1], [2, 0]]), 1)),
     M),
    ("sort", lambda x: _w(np.sort(x)), V),
    ("sort-axis0", lambda x: _w(np.sort(x, axis=0)), M),
    ("sort-none", lambda x: _w(np.sort(x, axis=None)), M),
    ("argsort-along", lambda x: _w(np.take_along_axis(x, np.argsort(x, axis=1), axis=1)), M),
    ("kron", lambda x: _w(np.kron(x, x[:2, :2])), M),
    ("kron-1d-2d", lambda x: _w(np.kron(x[:2], np.outer(x[1:3], x[:2]))), V),
    ("ops.tile", lambda x: _w(ops.tile(x, (2, 2))), M),
    ("ops.Tile", lambda x: _w(ops.Tile()(x, (1, 3))), M),
    ("ops.repeat_elements", lambda x: _w(ops.repeat_elements(x, 2, axis=1)), M),
    ("ops.flip-roll", lambda x: _w(ops.flip(x, (1,)) + ops.roll(x, 1, 0)), M),
    ("ops.swapaxes-moveaxis", lambda x: _w(ops.swapaxes(x, 0, 1) + ops.moveaxis(x, 0, 1)), S),
    ("ops.hstack-vstack", lambda x: _w(ops.hstack([x, x])) + _w(ops.vstack((x, x))), M),
    ("ops.split", lambda x: _w(ops.split(x, 2, axis=1)[1]) + _w(ops.split(x, [1, 2])[1]), M),
    ("ops.diag", lambda x: _w(ops.diag(x)), M),
    ("ops.diagonal", lambda x: _w(ops.diagonal(x, 1, 2, 0)), T),
    ("ops.tril-triu", lambda x: _w(ops.tril(x, 1) - ops.triu(x, diagonal=-1)), M),
    ("ops.sort", lambda x: _w(ops.sort(x, axis=0, descending=True)[0]), M),
    ("ops.Sort", lambda x: _w(ops.Sort(0)(x)[0] + ops.Sort(descending=True)(x)[0]), M),
    ("ops.trace-kron", lambda x: np.sin(ops.trace(x)) + _w(ops.kron(x, x)), S),
    ("ops.gather", lambda x: _w(ops.gather(x, np.array([2, 0, 2]), 1)), M),
    ("ops.gather_elements", lambda x: _w(ops.gather_elements(x, 1, np.array([[0, 0], [3, 1]]))),
     M),
]


def _two(parts):
    a, b, c = parts
    return _w(a) + 2.0 * _w(c) + np.sum(b)


@pytest.mark.parametrize("name, fn, arg", CASES, ids=[c[0] for c in CASES])
def test_value_and_gradient(adcheck, name, fn, arg):
    check(adcheck, fn, arg)


def test_sort_of_a_two_input_product(adcheck):
    check(adcheck, lambda x, y: _w(np.sort(x * y, axis=-1)), M, M[::-1] * 0.5)


def test_ops_sort_returns_int32_indices():
    values, indices = ops.sort(np.array([3.0, 1.0, 2.0]))
    np.testing.assert_array_equal(values, [1.0, 2.0, 3.0])
    assert indices.dtype == np.int32 and list(indices) == [1, 2, 0]


def _lines(source):
    return [ln.strip() for ln in source.splitlines()]


def test_generated_source_reads_like_numpy():
    def f(x):
        return _w(np.roll(np.flip(x, 1), 2, axis=0) + np.tile(x, (1, 1)))
    source = adjoint_source(f, "f64[3,4]")
    assert "flip = x[:, ::-1]" in _lines(source), source
    assert "roll_flip = np.roll(flip, (2,), axis=(0,))" in _lines(source), source
    assert "np.tile(x, (1, 1))" in source, source
    assert "np.roll(" in source.split("np.tile(x, (1, 1))")[1], "the adjoint rolls back"


def test_adjoint_of_diag_is_a_diagonal():
    source = adjoint_source(lambda x: _w(np.diag(x)), "f64[3]")
    assert "np.diag(x)" in source and "np.diagonal(" in source, source


# -- views: writes through them reach their base, as in NumPy ---------------------------------

def write_through_flip(x):
    y = x * 1.0
    f = np.flip(y, 1)
    f[0, 0] = x[1, 2] * 3.0     # writes y[0, -1]
    return _w(y) + _w(f)


def write_through_swapaxes(x):
    y = x * 1.0
    s = np.swapaxes(y, 0, 1)
    s[1] += x[:, 0] ** 2           # writes y[:, 1]
    return _w(y)


def write_through_rot90(x):
    y = x * 1.0
    r = np.rot90(y)             # a flip, then a transpose: a view of y
    r[0, 1] = np.sin(x[2, 2])   # writes y[1, -1]
    y *= 2.0
    return _w(y) + _w(r)


def write_through_split_parts(x):
    y = x * 1.0
    a, b = np.split(y, 2, axis=1)
    a[1, 1] = b[0, 0] * x[2, 3]
    b *= 0.5
    return _w(y)


def write_through_moveaxis(x):
    y = x * 1.0
    m = np.moveaxis(y, 0, -1)
    m[0] = m[1] * 2.0
    return _w(y) + _w(m)


def take_is_a_copy(x):
    y = x * 1.0
    t = np.take(y, 1, axis=0)
    t[0] = 5.0                  # NumPy: y is not changed
    h = np.hstack([y])
    h[0, 0] = 7.0               # nor by this (a new array)
    return _w(y) + _w(t) + _w(h)


@pytest.mark.parametrize("fn", [write_through_flip, write_through_swapaxes, write_through_rot90,
                                write_through_split_parts, write_through_moveaxis,
                                take_is_a_copy])
def test_writes_through_views(adcheck, fn):
    check(adcheck, fn, M)


def writes_into_diagonal(x):
    y = x * 1.0
    d = np.diagonal(y)
    d[0] = 1.0                  # NumPy: the diagonal is a read-only view
    return _w(y)


def test_writing_into_a_diagonal_is_numpys_error():
    with pytest.raises(ValueError, match="read-only"):
        writes_into_diagonal(M.copy())
    with pytest.raises(ValueError, match="read-only"):
        ms.grad(writes_into_diagonal)(M.copy())


def base_written_under_loose_broadcast(x):
    y = x * 1.0
    v = np.broadcast_to(y.reshape(-1), (2, 12))  # a reshape: a view or a copy
    y[0, 0] = 5.0
    return _w(v)


def sorts_in_place(x):
    y = x * 1.0
    y.sort()
    return _w(y)


@pytest.mark.parametrize("fn, match", [
    (sorts_in_place, "sorts the array in place"),
    (base_written_under_loose_broadcast, "may share memory"),
])
def test_refused_with_location(fn, match):
    with pytest.raises(UnsupportedOperationError, match=match) as info:
        ms.grad(fn)(M.copy())
    assert "test_movement.py" in str(info.value)


@pytest.mark.parametrize("call, error", [
    (lambda x: np.split(x, 3), ValueError),
    (lambda x: np.pad(x, 1, mode="mean"), UnsupportedOperationError),
    (lambda x: np.diag(x[None]), ValueError),
    (lambda x: np.rot90(x, axes=(0, 0)), ValueError),
    (lambda x: np.repeat(x, [1, 2]), ValueError),
])
def test_bad_arguments_raise(call, error):
    with pytest.raises(error):
        ms.grad(lambda x: np.sum(call(x)))(np.ones((2, 2)))


def base_written_under_diagonal(x):
    y = x * 1.0
    d = np.diagonal(y)
    y[0, 0] = 5.0 * x[1, 1]     # d sees this (a view)
    y *= 1.5
    return _w(d) + _w(y)


def base_written_under_broadcast(x):
    y = x * 1.0
    v = np.broadcast_to(y[0], (2, 4))
    y[0] *= x[1]                # v sees this (a view)
    return _w(v)


@pytest.mark.parametrize("fn", [base_written_under_diagonal, base_written_under_broadcast])
def test_read_only_views_see_writes_into_their_base(adcheck, fn):
    check(adcheck, fn, M)


def test_ops_called_eagerly_give_a_tensor_per_item():
    t = ms.Tensor(M.astype(np.float32))
    values, indices = ops.sort(t, axis=1)
    assert isinstance(values, ms.Tensor) and isinstance(indices, ms.Tensor)
    np.testing.assert_array_equal(values.asnumpy(), np.sort(M.astype(np.float32), axis=1))
    parts = ops.split(t, [1, 2])
    assert type(parts) is tuple and [p.shape for p in parts] == [(1, 4), (2, 4)]
    assert ops.Tile()(t, (2, 1)).shape == (6, 4)
