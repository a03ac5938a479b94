"""NumPy's aliasing is part of the program: several names for one array, ``+=`` and
item assignment in place, views that see later writes. The compiled value equals
plain Python's and the gradient matches central finite differences, or the
compiler refuses with a located error."""
import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.errors import UnsupportedOperationError


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def check(api, fn, *args):
    """Value vs plain Python, every gradient vs central differences, twice (cache)."""
    positions = tuple(range(len(args)))
    for scale in (1.0, -0.7):
        call = [a * scale for a in args]
        value, grads = ms.value_and_grad(fn, grad_position=positions)(*_copy(call))
        api.assert_values(value, fn(*_copy(call)))
        want = api.fd_grads(lambda *a: fn(*_copy(a)), call)
        grads = grads if isinstance(grads, tuple) else (grads,)
        for g, w, like in zip(grads, want, call):
            api.assert_grad(g, w, like)


X = np.array([0.3, -0.5, 0.8])
Y = np.array([1.2, 0.7, -0.4])


# -- several names for one array ---------------------------------------------------

def aug_through_alias(x):
    z = x * 1.0
    w = z
    z += 1.0              # in place: w sees it
    return np.sum(w * w)


def item_through_alias_in_loop(x):
    y = x * 1.0
    a = y
    for i in range(2):
        a[0] = 5.0 * x[1]
    return np.sum(y * x)


def item_through_alias_in_branch(x):
    y = x * 1.0
    a = y
    if np.sum(x) > 0.0:
        a[0] = 5.0 * x[1]
    a[2] = a[2] * 3.0     # still one array after the 'if'
    return np.sum(y * x)


def alias_split_in_loop(x):
    y = x * 2.0
    a = y
    for i in range(3):
        a = a * 1.5       # a stops naming y: later writes do not reach y
        a[0] = x[1]
    return np.sum(a * y)


def helper_writes_its_argument(x):
    y = x * 1.0
    _fill(y, x[1] * x[2])
    return np.sum(y * y)


def _fill(a, v):
    a[0] = v


def list_holds_the_array(x):
    y = x * 1.0
    items = [y, x]
    y += x * x
    return np.sum(items[0] * items[1])


def folded_buffer_written_later(x):
    buf = np.zeros(3)
    y = x * buf
    buf += 1.0            # y was computed with zeros
    return np.sum(y) + np.sum(buf * x)


def aug_keeps_dtype(x):
    y = x * 1.0
    y += x * 2.0
    return np.sum(y * y)


# -- views ------------------------------------------------------------------------------

def view_sees_later_write(x):
    y = x * 1.0
    v = y[1:]
    y[1] = x[0] * 4.0
    return np.sum(v * v)


def write_through_view(x):
    y = x * 1.0
    v = y[1:]
    v[0] = x[0] * 3.0
    return np.sum(y * y)


def aug_through_view(x):
    y = x * 1.0
    v = y[:2]
    v += x[1:] * 2.0
    return np.sum(y * x)


def view_of_matrix_row(m):
    b = m * 1.0
    row = b[1]
    row *= 2.0
    b[0, 1] = row[2]
    return np.sum(b * m)


def view_written_in_loop(x):
    y = x * 1.0
    v = y[1:]
    for i in range(2):
        v[0] = v[0] * x[0] + y[0]
    return np.sum(y * y)


def no_overlap_self_assignment(m):
    b = m * 1.0
    b[0] = b[2]           # disjoint rows: well defined
    return np.sum(b * m)


def times_one_is_a_new_array(m):
    b = m.copy()
    b[:, -1] = b[1] * 1.0  # the product is a new array, not a view of b
    return np.sum(b * b)


def copies_are_new_arrays(x):
    y = x * 1.0
    a, b, c, d = np.array(y), y.astype(np.float64), y.flatten(), +y
    for z in (a, b, c, d):
        z[0] = 5.0 * x[2]  # none of these reaches y
    return np.sum(y * x) + np.sum(a * b * c * d)


def asarray_and_ravel_are_the_array(x):
    y = x * 1.0
    a, r = np.asarray(y), y.ravel()
    a[0] = 5.0 * x[2]      # y itself
    r[1] = 2.0 * x[0]      # a 1-d ravel is y itself
    return np.sum(y * x)


def nested_store_through_containers(x):
    y = x * 1.0
    d = {"a": y, "b": [y]}
    d["a"][0] = 3.0 * x[1]
    d["b"][0][2] = x[0] * x[1]
    return np.sum(y * x)


def nested_store_into_row(m):
    b = m * 1.0
    b[1][2] = m[0, 0] * 3.0  # b[1] is a view: the write reaches b
    b[[0, 2]][0] = 100.0     # an int-array index is a copy: b is unchanged
    return np.sum(b * m)


def view_of_none_index(x):
    y = x * 1.0
    z = y[None]
    z[0, 2] = 4.0 * x[0]
    return np.sum(y * x)


def view_in_branches(x):
    y = x * 1.0
    v = y[1:]
    if np.sum(x) > 0.0:
        v[0] = 2.0 * x[0]
    else:
        y[1] = 3.0 * x[2]
    return np.sum(v * x[:2]) + np.sum(y)


def view_in_while(x):
    y = x * 1.0
    v = y[1:]
    k = 0
    while k < 2:
        v *= 1.5
        k += 1
    return np.sum(y * x)


def helper_writes_a_view_in_loop(x):
    y = x * 0.75
    v = y[2:3]
    v *= 0.7
    for i in range(1):
        _halve_first(v, np.tanh(y[0]) + 1.2)
    v *= 1.01              # still a view of y after the loop
    return np.sum(v * v) + np.sum(y * y)


def _halve_first(a, v):
    a[0] = a[0] * 0.5 + v


def view_of_an_unread_view(x):
    y = x * 1.0
    v = y[0:3]
    w = v[1:2]             # v is not read again, w is
    w += x[1] * 1.3
    y += y[2] * x[0]       # w sees this through v
    return np.sum(w * w) + np.sum(y * y)


def views_through_if_in_loop(x):
    y = x * 1.0
    v = y[2:4]
    w = v[0:2]
    for i in range(2):
        if np.sum(x) > 0.3:
            v *= 1.14
        else:
            v *= 1.47
    w[1] = w[0] * x[0]
    return np.sum(y * y) + np.sum(w * w)


def view_and_base_written_in_branches(x):
    y = x * 1.0
    v = y[0:3]
    if np.sum(x) > -0.2:
        y *= 0.78
        v *= 0.69
    else:
        v += np.tanh(v[0]) + 0.78
    y *= 0.69
    _halve_first(v[0:1], x[3])
    return np.sum(v * v) + np.sum(y * y)


@pytest.mark.parametrize("fn", [
    helper_writes_a_view_in_loop, view_of_an_unread_view, views_through_if_in_loop,
    view_and_base_written_in_branches])
def test_chains_of_views(api, fn):
    check(api, fn, np.array([0.3, -0.7, 1.1, 0.4]))
    check(api, fn, np.array([-0.9, 0.2, -0.3, 0.5]))


@pytest.mark.parametrize("fn", [
    copies_are_new_arrays, asarray_and_ravel_are_the_array,
    nested_store_through_containers, view_of_none_index, view_in_branches, view_in_while,
    aug_through_alias, item_through_alias_in_loop, item_through_alias_in_branch,
    alias_split_in_loop, helper_writes_its_argument, list_holds_the_array,
    folded_buffer_written_later, aug_keeps_dtype, view_sees_later_write,
    write_through_view, aug_through_view, view_written_in_loop])
def test_vectors(api, fn):
    check(api, fn, X)
    check(api, fn, Y)


@pytest.mark.parametrize("fn", [view_of_matrix_row, no_overlap_self_assignment,
                                times_one_is_a_new_array, nested_store_into_row])
def test_matrices(api, fn):
    check(api, fn, np.arange(9.0).reshape(3, 3) / 3.0 - 1.0)


def test_rows_written_by_index(api):
    check(api, rows_by_index, X)


def test_branch_both_ways(api):
    check(api, item_through_alias_in_branch, -X - 1.0)
    check(api, list_built_before_branch, X)
    check(api, list_built_before_branch, -X)


def test_writing_into_a_broadcast_is_numpys_error():
    with pytest.raises(ValueError, match="read-only"):
        writes_into_broadcast(X.copy())
    with pytest.raises(ValueError, match="read-only"):
        ms.grad(writes_into_broadcast)(X.copy())


def test_float32_stays_float32():
    g = ms.grad(aug_keeps_dtype)(X.astype(np.float32))
    assert g.dtype == np.float32
    v, _ = ms.value_and_grad(aug_through_alias)(X.astype(np.float32))
    assert v.dtype == np.float32


# -- refused, with the user's line ------------------------------------------------------

def writes_into_input(x):
    x[0] = 1.0
    return np.sum(x * x)


def aug_into_input(x):
    x += 1.0
    return np.sum(x * x)


def writes_under_transpose(m):
    b = m * 1.0
    t = b.T                # always a view
    b[0, 1] = 5.0 * m[2, 2]
    t[2, 0] = m[1, 1] ** 2  # writes b[0, 2]
    return np.sum(t * m)


def writes_under_expand_dims(m):
    b = m * 1.0
    e = np.expand_dims(b, 0)
    e[0, 1, 2] = m[0, 0] * 3.0
    return np.sum(b * m)


def writes_under_reshape(m):
    b = m * 1.0
    r = b.reshape(9)       # a view or a copy, depending on the layout
    b[0, 1] = 5.0
    return np.sum(r * r)


def writes_into_broadcast(x):
    y = x * 1.0
    v = np.broadcast_to(y, (2, 3))
    v[0, 0] = 1.0          # NumPy: assignment destination is read-only
    return np.sum(v)


def list_built_before_branch(x):
    y = x * 1.0
    items = [y, x * 2.0]
    if np.sum(x) > 0.1:
        y[0] = x[1] * 4.0  # the list holds y: it sees the write
    else:
        y *= 2.0
    return np.sum(items[0] * items[1])


def overlapping_self_assignment(m):
    b = m.copy()
    b[:, -1] = b[1]
    return np.sum(b * b)


def aliased_then_split_after_write(x):
    y = x * 1.0
    a = y
    for i in range(2):
        a[0] = a[0] * x[1]  # reaches y on the first iteration only
        a = a * 1.5
    return np.sum(y * a)


G = np.array([1.0, 2.0, 3.0])


def writes_rows_it_iterates(x):
    t = np.outer(x, x)
    for r in t:
        t[::2] += -0.66    # Python's loop sees the new rows 2.. on later iterations
        t = t * 0.5 + np.tanh(r)
    return np.sum(t * t)


def writes_through_the_row(x):
    m = np.outer(x, x)
    for row in m:
        row[0] = row[1] * 2.0  # a row is a view of m
    return np.sum(m * m)


def rows_by_index(x):
    m = np.outer(x, x)
    for i in range(3):
        m[i, 0] = m[i, 1] * 2.0
    return np.sum(m * m)


def writes_into_global(x):
    G[0] = x[0]
    return np.sum(G * x)


def same_array_on_one_path(x):
    y = x * 1.0
    if np.sum(x) > 0.0:
        a = y
    else:
        a = y * 2.0
    a[0] = 7.0             # reaches y on one path only
    return np.sum(y * x)


def writes_an_array_a_loop_appended(x):
    y = x * 1.0
    ys = []
    for i in range(3):
        y = y * 1.5
        ys.append(y)
    y[0] = 100.0           # ys[-1] is y
    return np.sum(np.stack(ys))


@pytest.mark.parametrize("fn, arg, match", [
    (writes_an_array_a_loop_appended, X, "also put in a list"),
    (writes_rows_it_iterates, X, "loop runs over"),
    (writes_through_the_row, X, "loop runs over"),
    (writes_into_global, X, "does not own"),
    (same_array_on_one_path, X, "may share memory"),
    (writes_into_input, X, "does not own"),
    (aug_into_input, X, "does not own"),
    (writes_under_reshape, np.eye(3), "may share memory"),
    (overlapping_self_assignment, np.eye(3), "overlaps the positions"),
    (aliased_then_split_after_write, X, "may share memory"),
])
def test_refused_with_location(fn, arg, match):
    with pytest.raises(UnsupportedOperationError, match=match) as info:
        ms.grad(fn)(arg.copy())
    assert "test_aliasing.py" in str(info.value)


def test_input_is_left_unchanged_when_refused():
    x = X.copy()
    with pytest.raises(UnsupportedOperationError):
        ms.grad(writes_into_input)(x)
    np.testing.assert_array_equal(x, X)


def int_array_plus_float(x):
    k = np.arange(3)
    k = k * 1
    j = k
    j += x.astype(np.int64)
    k += 0.5 * x           # NumPy: Cannot cast ufunc 'add' output from float64 to int64
    return np.sum(x)


def test_in_place_cast_error_is_numpys():
    with pytest.raises(TypeError, match="same_kind"):
        int_array_plus_float(X.copy())
    with pytest.raises(TypeError, match="same_kind"):
        ms.grad(int_array_plus_float)(X.copy())


@pytest.mark.parametrize("fn", [writes_under_transpose, writes_under_expand_dims])
def test_views_that_are_always_views(api, fn):
    check(api, fn, np.arange(9.0).reshape(3, 3) / 3.0 - 1.0)


def zero_d_view_in_loop(x):
    t = np.clip(x, -0.65, 0.75)
    first = np.squeeze(t[:1], 0)  # a 0-d view of t[0]
    for i in range(3):
        t -= first                # after the first pass first is 0
    return np.sum(t * t) + np.sum(first)


def zero_d_view_by_ellipsis(x):
    y = x * 1.0
    e = y[..., 1]                 # a 0-d view, not a NumPy scalar
    e += x[0] * 2.0
    return np.sum(y * x)


def view_of_view_carried(x):
    t = x * 1.0
    w = np.expand_dims(t[1:], 0)  # a view of a view of t
    for i in range(2):
        t *= 1.5
        w[0, 0] = w[0, 1] * x[0]
    return np.sum(t * t) + np.sum(w)


@pytest.mark.parametrize("fn", [zero_d_view_in_loop, zero_d_view_by_ellipsis,
                                view_of_view_carried])
def test_zero_d_views_and_chains(api, fn):
    check(api, fn, X)
    check(api, fn, Y)


def loop_over_a_list_of_written_arrays(x):
    t = x * 1.0
    for v in [x, t]:
        t[0] += np.max(v)     # the second item is t as written by the first iteration
    return np.sum(t * x)


def loop_over_a_tuple_with_branches(x):
    t = x * 1.0
    for v in (t, x, t):
        if np.sum(v) > 0.2:
            t *= 1.5
        else:
            t[1] = v[0] * 2.0
    return np.sum(t * x)


@pytest.mark.parametrize("fn", [loop_over_a_list_of_written_arrays,
                                loop_over_a_tuple_with_branches])
def test_unrolled_loops_read_items_as_written(api, fn):
    check(api, fn, X)
    check(api, fn, Y)


def _write_through_comprehension_item(x):
    t = [x[k] * 1.05 for k in range(3)]
    for i in t:
        i /= 2.0                      # Python's list holds i: the write reaches it
    return float(np.sum(np.concatenate(t)))


def _write_through_loop_list_item(x):
    ys = []
    for r in x:
        ys.append(r * 2.0)
    for y in ys:
        y += 1.0
    return np.sum(np.stack(ys))


@pytest.mark.parametrize("fn", [_write_through_comprehension_item, _write_through_loop_list_item])
def test_a_write_into_an_item_of_a_built_list_is_refused_not_lost(fn):
    from ad_compiler.errors import UnsupportedOperationError
    x = np.array([[-0.95, 0.9], [-0.35, -1.4], [0.55, -0.26]])
    with pytest.raises(UnsupportedOperationError, match="also put in a list") as info:
        ms.value_and_grad(fn)(x)
    assert "test_aliasing.py" in str(info.value)


def _rebinding_a_comprehension_item(x):
    t = [x[k] * 1.05 for k in range(3)]
    for i in t:
        i = i / 2.0                   # a new array: the list keeps its items
    return float(np.sum(np.concatenate(t)))


def test_rebinding_an_item_of_a_built_list_is_fine():
    x = np.array([[-0.95, 0.9], [-0.35, -1.4], [0.55, -0.26]])
    assert ms.value_and_grad(_rebinding_a_comprehension_item)(x)[0] == pytest.approx(
        _rebinding_a_comprehension_item(x.copy()))
