"""The compiler's records (ad_compiler/records.py) behave as the dataclasses they replace."""
import copy
import pickle

import numpy as np
import pytest

from ad_compiler.ad.rules import Example
from ad_compiler.errors import SourceLoc
from ad_compiler.ir.core import AType, Block, Op


def test_frozen_records_cannot_change():
    t = AType((2, 3), np.dtype(np.float32))
    with pytest.raises(AttributeError, match="immutable"):
        t.shape = (3, 2)
    with pytest.raises(AttributeError, match="immutable"):
        del t.dtype
    assert t.shape == (2, 3)


def test_equal_records_compare_and_hash_by_fields():
    a = SourceLoc("f.py", 3, 4, "y = x")
    b = SourceLoc("f.py", 3, 4, "y = x")
    c = SourceLoc("f.py", 3, 5, "y = x")
    assert a == b and hash(a) == hash(b) and a != c
    assert len({a, b, c}) == 2
    assert a != ("f.py", 3, 4, "y = x")  # another class is never equal


def test_mutable_equal_records_are_unhashable():
    e = Example((1.0,), {})
    assert e == Example((1.0,), {})
    with pytest.raises(TypeError):
        hash(e)


def test_identity_records_keep_identity_equality():
    assert Block() != Block()
    op = Op("add", [])
    assert op.params == {} and op.results == [] and op.regions == [] and op.loc is None
    assert Op("add", []).params is not op.params  # a fresh default per instance


def test_repr_lists_the_fields():
    assert repr(SourceLoc("f.py", 1, 0, "x")) == \
        "SourceLoc(file='f.py', line=1, col=0, text='x')"
    assert repr(Block()) == "Block(args=[], ops=[], results=[])"


def test_types_hash_once_and_pickle_without_the_hash():
    t = AType((4,), np.dtype(np.float64), False)
    h = hash(t)
    assert hash(t) == h == hash(AType((4,), np.dtype(np.float64)))
    for other in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t), copy.copy(t)):
        assert other == t and hash(other) == h
    assert "_hash" not in pickle.loads(pickle.dumps(t)).__dict__
