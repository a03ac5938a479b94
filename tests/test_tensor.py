"""Tensor and dtype: construction rules, printing, operators and NumPy interop.

Expected values are NumPy computed on plain arrays, closed forms, or printed text
taken from MindSpore's documentation and its printing rules.
"""
import operator
import pickle

import numpy as np
import pytest

from ad_compiler import dtype as mstype
from ad_compiler.tensor import Tensor, unwrap, wrap


# ---------------------------------------------------------------- dtype module
@pytest.mark.parametrize("d, text, np_dtype", [
    (mstype.float16, "Float16", np.float16), (mstype.float32, "Float32", np.float32),
    (mstype.float64, "Float64", np.float64), (mstype.int8, "Int8", np.int8),
    (mstype.int16, "Int16", np.int16), (mstype.int32, "Int32", np.int32),
    (mstype.int64, "Int64", np.int64), (mstype.uint8, "UInt8", np.uint8),
    (mstype.bool_, "Bool", np.bool_),
])
def test_dtype_names_and_numpy_mapping(d, text, np_dtype):
    assert str(d) == text and repr(d) == text
    assert mstype.to_numpy_dtype(d) == np.dtype(np_dtype)
    assert mstype.from_numpy_dtype(np.dtype(np_dtype)) is d
    assert mstype.from_numpy_dtype(np_dtype) is d
    assert d == np_dtype and d == np.dtype(np_dtype)


def test_dtype_helpers():
    assert mstype.to_numpy_dtype(None) is None
    assert mstype.to_numpy_dtype(np.int32) == np.dtype("int32")
    assert mstype.to_numpy_dtype("float64") == np.dtype("float64")
    assert mstype.dtype_to_nptype(mstype.float32) is np.float32
    assert mstype.float32 != mstype.float64 and mstype.float32 != "Float32"
    assert mstype.half is mstype.float16 and mstype.double is mstype.float64


def test_dtype_unknown_numpy_dtype_is_type_error():
    with pytest.raises(TypeError):
        mstype.from_numpy_dtype(np.dtype("U3"))


def test_dtype_pickles_to_the_singleton():
    assert pickle.loads(pickle.dumps(mstype.float32)) is mstype.float32


# ---------------------------------------------------------------- construction
@pytest.mark.parametrize("data, dtype, expected", [
    (2.0, None, np.float32),
    ([1.0], None, np.float32),
    ([[1.0, 2.0]], None, np.float32),
    ([1, 2.5], None, np.float32),
    ((1.0, 2.0), None, np.float32),
    (2, None, np.int64),
    ([1, 2], None, np.int64),
    (True, None, np.bool_),
    ([True, False], None, np.bool_),
    (np.array([1.0, 2.0]), None, np.float64),
    (np.array([1.0], np.float16), None, np.float16),
    (np.array([1, 2], np.int32), None, np.int32),
    (np.float64(1.5), None, np.float64),
    (np.int32(3), None, np.int32),
    ([np.float64(1.0), 2.0], None, np.float64),
    ([1, 2], mstype.float32, np.float32),
    (1.0, mstype.int32, np.int32),
    (np.array([1.0]), mstype.float32, np.float32),
    ([1.0], np.float64, np.float64),
])
def test_construction_dtype_rules(data, dtype, expected):
    t = Tensor(data, dtype)
    assert t.asnumpy().dtype == np.dtype(expected)
    assert t.dtype is mstype.from_numpy_dtype(expected)


def test_construction_from_tensor_keeps_dtype_and_copies():
    src = Tensor(np.array([1.0, 2.0]))
    t = Tensor(src)
    assert t.dtype == mstype.float64
    t[0] = 5.0
    assert src.asnumpy()[0] == 1.0


def test_construction_copies_the_ndarray():
    arr = np.array([1.0, 2.0], np.float32)
    t = Tensor(arr)
    arr[0] = 9.0
    assert t.asnumpy()[0] == 1.0


def test_construction_with_dtype_casts_values():
    assert Tensor(1.7, mstype.int32).asnumpy().item() == 1
    assert Tensor([0, 2], mstype.bool_).asnumpy().tolist() == [False, True]


@pytest.mark.parametrize("bad", [None, "abc", [object()]])
def test_construction_rejects_non_numeric(bad):
    with pytest.raises(TypeError):
        Tensor(bad)


def test_attributes():
    t = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert t.shape == (2, 3) and isinstance(t.shape, tuple)
    assert t.ndim == 2 and t.size == 6 and len(t) == 2
    assert str(t.dtype) == "Float32"
    assert isinstance(t.T, Tensor) and t.T.shape == (3, 2)
    assert t.T.asnumpy().tolist() == [[0, 3], [1, 4], [2, 5]]


# ---------------------------------------------------------------- printing
def test_str_is_numpy_str():
    assert str(Tensor([[1.5, 2.0], [3.0, 4.0]])) == "[[1.5 2. ]\n [3.  4. ]]"
    assert str(Tensor(1.5)) == "1.5"
    assert str(Tensor([1, 2])) == "[1 2]"


@pytest.mark.parametrize("t, text", [
    (Tensor(1.5), "Tensor(shape=[], dtype=Float32, value= 1.5)"),
    (Tensor(4.0), "Tensor(shape=[], dtype=Float32, value= 4)"),
    (Tensor(0.1), "Tensor(shape=[], dtype=Float32, value= 0.1)"),
    (Tensor(11), "Tensor(shape=[], dtype=Int64, value= 11)"),
    (Tensor(True), "Tensor(shape=[], dtype=Bool, value= True)"),
    (Tensor([0.0, 6.0]),
     "Tensor(shape=[2], dtype=Float32, value= [ 0.00000000e+00,  6.00000000e+00])"),
    (Tensor([-2.0, 6.0]),
     "Tensor(shape=[2], dtype=Float32, value= [-2.00000000e+00,  6.00000000e+00])"),
    (Tensor([1, 2]), "Tensor(shape=[2], dtype=Int64, value= [1, 2])"),
    (Tensor([1]), "Tensor(shape=[1], dtype=Int64, value= [1])"),
    (Tensor([-1, 20, 3]), "Tensor(shape=[3], dtype=Int64, value= [-1, 20,  3])"),
    (Tensor([[1.5, 2.0], [3.0, 4.0]]),
     "Tensor(shape=[2, 2], dtype=Float32, value=\n"
     "[[ 1.50000000e+00,  2.00000000e+00],\n"
     " [ 3.00000000e+00,  4.00000000e+00]])"),
    (Tensor([[3], [2]]), "Tensor(shape=[2, 1], dtype=Int64, value=\n[[3],\n [2]])"),
    (Tensor([[[False], [True]]]),
     "Tensor(shape=[1, 2, 1], dtype=Bool, value=\n[[[False],\n  [ True]]])"),
    (Tensor(np.array([1.5, -2.0], np.float16)),
     "Tensor(shape=[2], dtype=Float16, value= [ 1.5000e+00, -2.0000e+00])"),
    (Tensor(np.array([1.0, 2.0])),
     "Tensor(shape=[2], dtype=Float64, value= [ 1.00000000e+00,  2.00000000e+00])"),
    (Tensor(np.zeros(0, np.float32)), "Tensor(shape=[0], dtype=Float32, value= )"),
])
def test_repr_matches_mindspore(t, text):
    assert repr(t) == text


def test_repr_summarises_past_six_entries_per_axis():
    t = Tensor(np.arange(100).reshape(10, 10))
    assert repr(t) == (
        "Tensor(shape=[10, 10], dtype=Int64, value=\n"
        "[[ 0,  1,  2 ...  7,  8,  9],\n"
        " [10, 11, 12 ... 17, 18, 19],\n"
        " [20, 21, 22 ... 27, 28, 29],\n"
        " ...\n"
        " [70, 71, 72 ... 77, 78, 79],\n"
        " [80, 81, 82 ... 87, 88, 89],\n"
        " [90, 91, 92 ... 97, 98, 99]])")


def test_repr_long_1d_breaks_lines_and_summarises_past_1000():
    text = repr(Tensor(np.arange(13, dtype=np.float32)))
    first, second = text.split("\n")
    assert first.count("e+") == 12 and first.endswith(", ")
    assert second == "  1.20000000e+01])"
    assert repr(Tensor(np.arange(2000))) == (
        "Tensor(shape=[2000], dtype=Int64, value= [   0,    1,    2 ... 1997, 1998, 1999])")


def test_repr_in_a_tuple_uses_tensor_repr():
    assert repr((Tensor([1.0]),)) == "(Tensor(shape=[1], dtype=Float32, value= [ 1.00000000e+00]),)"


# ---------------------------------------------------------------- operators
A = np.array([[1.0, -2.0], [3.0, 4.5]], np.float32)
B = np.array([[0.5, 2.0], [-1.0, 3.0]], np.float32)

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
          operator.matmul, operator.floordiv, operator.mod,
          operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", BINARY, ids=lambda op: op.__name__)
def test_binary_operators_all_operand_orders(op):
    base = np.abs(A) if op is operator.pow else A
    expected = op(base, B)
    for left, right in [(Tensor(base), Tensor(B)), (Tensor(base), B), (base, Tensor(B))]:
        out = op(left, right)
        assert type(out) is Tensor
        np.testing.assert_array_equal(out.asnumpy(), expected)
        assert out.asnumpy().dtype == expected.dtype


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.pow, operator.lt, operator.eq],
                         ids=lambda op: op.__name__)
def test_operators_with_python_numbers_keep_float32(op):
    t = Tensor(np.abs(A))
    for out, expected in [(op(t, 2.0), op(np.abs(A), 2.0)), (op(3.0, t), op(3.0, np.abs(A)))]:
        assert type(out) is Tensor
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)
        assert out.asnumpy().dtype == expected.dtype
    if op not in (operator.lt, operator.eq):
        assert op(t, 2.0).dtype == mstype.float32


def test_unary_operators():
    t = Tensor(A)
    assert type(-t) is Tensor and (-t).asnumpy().tolist() == (-A).tolist()
    assert abs(t).asnumpy().tolist() == np.abs(A).tolist()
    assert (+t).asnumpy().tolist() == A.tolist()
    assert (~Tensor([True, False])).asnumpy().tolist() == [False, True]


def test_equality_with_non_arrays_is_identity():
    t = Tensor([1.0])
    assert (t == None) is False and (t != None) is True  # noqa: E711
    with pytest.raises(TypeError):
        t + "a"


def test_numpy_scalar_on_the_left():
    out = np.float32(2.0) * Tensor(A)
    assert type(out) is Tensor and out.asnumpy().tolist() == (2 * A).tolist()


# ---------------------------------------------------------------- NumPy interop
def test_ufuncs_return_tensors():
    t = Tensor(A)
    for fn in (np.sin, np.exp, np.tanh, np.square):
        out = fn(t)
        assert type(out) is Tensor
        np.testing.assert_array_equal(out.asnumpy(), fn(A))
    out = np.add(t, B)
    assert type(out) is Tensor and out.asnumpy().tolist() == (A + B).tolist()


def test_ufunc_out_writes_into_the_tensor():
    t = Tensor(np.zeros((2, 2), np.float32))
    result = np.add(Tensor(A), B, out=t)
    assert result is t
    assert t.asnumpy().tolist() == (A + B).tolist()


def test_array_functions_return_tensors():
    t = Tensor(A)
    cases = [
        (np.sum(t, axis=1), A.sum(axis=1)),
        (np.sum(t), A.sum()),
        (np.mean(t, axis=0, keepdims=True), A.mean(axis=0, keepdims=True)),
        (np.dot(t, t), A @ A),
        (np.matmul(t, B), A @ B),
        (np.concatenate([t, Tensor(B)]), np.concatenate([A, B])),
        (np.where(t > 0, t, 0), np.where(A > 0, A, 0)),
        (np.maximum(t, 0.0), np.maximum(A, 0.0)),
        (np.reshape(t, (4,)), A.reshape(4)),
        (np.transpose(t), A.T),
        (np.argmax(t), np.argmax(A)),
        (np.expand_dims(t, -1), A[..., None]),
    ]
    for out, expected in cases:
        assert type(out) is Tensor
        np.testing.assert_array_equal(out.asnumpy(), expected)


def test_array_functions_with_container_and_plain_results():
    t = Tensor(A)
    parts = np.split(t, 2)
    assert isinstance(parts, list) and all(type(p) is Tensor for p in parts)
    assert parts[1].asnumpy().tolist() == A[1:].tolist()
    assert np.shape(t) == (2, 2)
    assert np.allclose(t, A) is True
    eig = np.linalg.eigh(Tensor(np.eye(2)))
    assert type(eig.eigenvalues) is Tensor


def test_asarray_gives_the_underlying_array():
    t = Tensor(A)
    assert np.asarray(t) is t.asnumpy()
    assert type(np.array(t)) is np.ndarray
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


# ---------------------------------------------------------------- methods and conversions
def test_methods_return_tensors_with_numpy_values():
    t = Tensor(A)
    cases = [
        (t.sum(), A.sum()), (t.sum(axis=0), A.sum(axis=0)),
        (t.sum(axis=1, keepdims=True), A.sum(axis=1, keepdims=True)),
        (t.mean(), A.mean()), (t.mean(axis=1, keep_dims=True), A.mean(axis=1, keepdims=True)),
        (t.reshape(4), A.reshape(4)), (t.reshape((1, 4)), A.reshape(1, 4)),
        (t.reshape(1, 4), A.reshape(1, 4)), (t.transpose(), A.T), (t.transpose(1, 0), A.T),
        (t.max(), A.max()), (t.min(axis=0), A.min(axis=0)), (t.abs(), np.abs(A)),
        (t.astype(mstype.int32), A.astype(np.int32)), (t.copy(), A),
    ]
    for out, expected in cases:
        assert type(out) is Tensor
        np.testing.assert_array_equal(out.asnumpy(), expected)
        assert out.asnumpy().dtype == np.asarray(expected).dtype


def test_copy_is_independent():
    t = Tensor(A)
    c = t.copy()
    c[0, 0] = 100.0
    assert t.asnumpy()[0, 0] == A[0, 0]


def test_indexing():
    t = Tensor(A)
    row = t[1]
    assert type(row) is Tensor and row.asnumpy().tolist() == A[1].tolist()
    elem = t[0, 1]
    assert type(elem) is Tensor and elem.shape == () and float(elem) == -2.0
    assert t[Tensor([1, 0])].asnumpy().tolist() == A[[1, 0]].tolist()
    assert t[t > 0].asnumpy().tolist() == A[A > 0].tolist()
    t[0, 0] = Tensor(7.0)
    assert t.asnumpy()[0, 0] == 7.0


def test_iteration_and_len():
    rows = list(Tensor(A))
    assert len(rows) == 2 and all(type(r) is Tensor for r in rows)
    assert [float(x) for x in Tensor([1.0, 2.0])] == [1.0, 2.0]
    with pytest.raises(TypeError):
        len(Tensor(1.0))


def test_scalar_conversions():
    assert float(Tensor([2.5])) == 2.5 and int(Tensor(3)) == 3
    assert bool(Tensor(1.0)) is True and bool(Tensor([0.0])) is False
    assert [10, 20, 30][Tensor(1)] == 20
    assert Tensor(2.5).item() == 2.5
    assert f"{Tensor(2.0):.2f}" == "2.00"
    with pytest.raises(ValueError):
        bool(Tensor([1.0, 2.0]))


def test_tensors_hash_by_identity():
    a, b = Tensor([1.0]), Tensor([1.0])
    assert len({a, b}) == 2 and {a: 1}[a] == 1


# ---------------------------------------------------------------- wrap / unwrap
def test_wrap_shares_memory_and_keeps_dtype():
    arr = np.array([1.0, 2.0])
    t = wrap(arr)
    assert type(t) is Tensor and t.asnumpy() is arr and t.dtype == mstype.float64
    s = wrap(np.float32(1.5))
    assert s.shape == () and s.dtype == mstype.float32
    assert wrap(t) is t


def test_unwrap():
    arr = np.array([1.0])
    assert unwrap(wrap(arr)) is arr
    for x in (arr, 2.0, "x", None, [1]):
        assert unwrap(x) is x


def test_pickle_roundtrip():
    t = pickle.loads(pickle.dumps(Tensor(A)))
    assert type(t) is Tensor and t.asnumpy().tolist() == A.tolist()
