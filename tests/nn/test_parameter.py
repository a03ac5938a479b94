"""Parameter and ParameterTuple: naming, printing, set_data rules."""
import numpy as np
import pytest

from ad_compiler import dtype as mstype
from ad_compiler.nn import Parameter, ParameterTuple
from ad_compiler.tensor import Tensor


def test_repr_and_str():
    w = Parameter(Tensor(np.ones((2, 2), np.float32)), name="w")
    text = "Parameter (name=w, shape=(2, 2), dtype=Float32, requires_grad=True)"
    assert repr(w) == text and str(w) == text
    b = Parameter(np.zeros(3), name="b", requires_grad=False)
    assert repr(b) == "Parameter (name=b, shape=(3,), dtype=Float64, requires_grad=False)"


def test_unnamed_parameter_is_called_parameter():
    assert Parameter(1.0).name == "Parameter"


def test_is_a_tensor_with_tensor_dtype_rules():
    p = Parameter(2.0)
    assert isinstance(p, Tensor) and p.dtype == mstype.float32 and p.shape == ()
    assert Parameter([1, 2]).dtype == mstype.int64
    assert Parameter(np.ones(2, np.float16)).dtype == mstype.float16


def test_parameter_copies_its_initial_value():
    src = np.ones(2, np.float32)
    p = Parameter(src)
    src[0] = 5.0
    assert p.asnumpy().tolist() == [1.0, 1.0]


def test_computations_give_plain_tensors():
    p = Parameter(np.array([1.0, 2.0], np.float32), name="p")
    for out in (p * 2, p + p, np.sin(p), np.sum(p), p[0], p.T, -p, p.reshape(2, 1)):
        assert type(out) is Tensor


def test_set_data_replaces_in_place():
    p = Parameter(np.zeros((2, 2), np.float32), name="w")
    holder = [p]
    assert p.set_data(Tensor(np.full((2, 2), 3.0, np.float32))) is p
    assert holder[0].asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert p.dtype == mstype.float32


def test_set_data_copies_the_new_value():
    p = Parameter(np.zeros(2, np.float32))
    new = Tensor(np.ones(2, np.float32))
    p.set_data(new)
    new[0] = 7.0
    assert p.asnumpy().tolist() == [1.0, 1.0]


def test_set_data_casts_down_the_conversion_order():
    p = Parameter(np.zeros(2, np.float32))
    p.set_data(Tensor(np.array([1, 2], np.int32)))
    assert p.dtype == mstype.float32 and p.asnumpy().tolist() == [1.0, 2.0]


def test_set_data_refuses_precision_loss():
    p = Parameter(np.zeros(2, np.float32))
    with pytest.raises(TypeError):
        p.set_data(Tensor(np.zeros(2, np.float64)))
    q = Parameter(np.zeros(2, np.int32))
    with pytest.raises(TypeError):
        q.set_data(1.5)


def test_set_data_with_python_number_fills():
    p = Parameter(np.zeros((2, 3), np.float32))
    p.set_data(2.5)
    assert p.asnumpy().tolist() == [[2.5] * 3] * 2 and p.dtype == mstype.float32


def test_set_data_shape_change_is_value_error():
    p = Parameter(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError):
        p.set_data(Tensor(np.zeros((3,), np.float32)))


def test_name_and_requires_grad_are_checked():
    p = Parameter(1.0)
    p.name = "x"
    p.requires_grad = False
    assert (p.name, p.requires_grad) == ("x", False)
    with pytest.raises(TypeError):
        p.name = 3
    with pytest.raises(TypeError):
        p.requires_grad = 1


def test_parameters_hash_by_identity():
    a, b = Parameter(np.ones(2)), Parameter(np.ones(2))
    assert len({a, b, a}) == 2


def test_clone():
    p = Parameter(np.ones(2, np.float32), name="w", requires_grad=False)
    c = p.clone()
    assert c is not p and c.name == "w" and c.requires_grad is False
    c.set_data(Tensor(np.zeros(2, np.float32)))
    assert p.asnumpy().tolist() == [1.0, 1.0]


def test_parameter_tuple():
    a, b = Parameter(1.0, name="a"), Parameter(2.0, name="b")
    pt = ParameterTuple([a, b])
    assert isinstance(pt, tuple) and pt == (a, b) and pt[1] is b
    assert ParameterTuple(x for x in (a,)) == (a,)
    clones = pt.clone("copy")
    assert [p.name for p in clones] == ["copy.a", "copy.b"]


def test_parameter_tuple_rejects_non_parameters():
    with pytest.raises(TypeError):
        ParameterTuple([Parameter(1.0), Tensor(1.0)])
    with pytest.raises(TypeError):
        ParameterTuple([np.ones(2)])


def test_parameter_tuple_rejects_duplicate_explicit_names():
    with pytest.raises(ValueError):
        ParameterTuple([Parameter(1.0, name="w"), Parameter(2.0, name="w")])
    same = Parameter(1.0, name="w")
    assert len(ParameterTuple([same, same])) == 2
