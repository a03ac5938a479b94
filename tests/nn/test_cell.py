"""Cell: registration, Parameter naming, traversal order, modes."""
import numpy as np
import pytest

from ad_compiler import nn
from ad_compiler.nn import Cell, Parameter, ParameterTuple
from ad_compiler.tensor import Tensor


def _p(*shape, **kw):
    return Parameter(np.ones(shape, np.float32), **kw)


class Leaf(Cell):
    def __init__(self):
        super().__init__()
        self.weight = _p(2)
        self.bias = _p(1)

    def construct(self, x):
        return x * self.weight + self.bias


class Block(Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = Leaf()
        self.fc2 = Leaf()


class Net(Cell):
    def __init__(self):
        super().__init__()
        self.scale = _p(1)
        self.block = Block()
        self.head = Leaf()


# ---------------------------------------------------------------- naming
def test_unnamed_parameter_takes_attribute_name():
    leaf = Leaf()
    assert [p.name for p in leaf.trainable_params()] == ["weight", "bias"]


def test_explicit_name_is_kept_at_top_level():
    class C(Cell):
        def __init__(self):
            super().__init__()
            self.w = _p(1, name="z")

    assert C().w.name == "z"


def test_sub_cell_prefixes_nested_paths():
    names = [p.name for p in Net().trainable_params()]
    assert names == ["scale", "block.fc1.weight", "block.fc1.bias", "block.fc2.weight",
                     "block.fc2.bias", "head.weight", "head.bias"]


def test_sub_cell_prefix_replaces_explicit_names():
    # MindSpore renames every Parameter of a sub-cell to its attribute path.
    class Inner(Cell):
        def __init__(self):
            super().__init__()
            self.z = _p(1, name="z")

    class Outer(Cell):
        def __init__(self, net):
            super().__init__()
            self.net = net

    inner = Inner()
    Outer(inner)
    assert inner.z.name == "net.z"


def test_auto_prefix_false_leaves_names():
    class Outer(Cell):
        def __init__(self):
            super().__init__(auto_prefix=False)
            self.fc = Leaf()

    assert [p.name for p in Outer().trainable_params()] == ["weight", "bias"]


def test_parameters_and_names_gives_attribute_paths():
    pairs = list(Net().parameters_and_names())
    assert [name for name, _ in pairs][:3] == ["scale", "block.fc1.weight", "block.fc1.bias"]
    assert all(p.name == name for name, p in pairs)


def test_sequential_and_cell_list_children_are_numbered():
    seq = nn.SequentialCell(Leaf(), nn.ReLU(), Leaf())
    assert [p.name for p in seq.trainable_params()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    cl = nn.CellList([Leaf(), Leaf()])
    assert [p.name for p in cl.trainable_params()] == ["0.weight", "0.bias", "1.weight", "1.bias"]

    class Holder(Cell):
        def __init__(self):
            super().__init__()
            self.seq = nn.SequentialCell([Leaf()])

    assert [p.name for p in Holder().trainable_params()] == ["seq.0.weight", "seq.0.bias"]


# ---------------------------------------------------------------- traversal
def test_trainable_params_own_first_then_sub_cells():
    class C(Cell):
        def __init__(self):
            super().__init__()
            self.sub = Leaf()
            self.own = _p(3)

    net = C()
    assert net.trainable_params() == [net.own, net.sub.weight, net.sub.bias]


def test_trainable_params_lists_each_parameter_once():
    shared = _p(2)

    class Twin(Cell):
        def __init__(self):
            super().__init__()
            self.a = Leaf()
            self.b = Leaf()
            self.b.weight = shared
            self.a.weight = shared

    twin = Twin()
    params = twin.trainable_params()
    assert len(params) == 3 and sum(p is shared for p in params) == 1

    leaf = Leaf()

    class SameCellTwice(Cell):
        def __init__(self):
            super().__init__()
            self.x = leaf
            self.y = leaf

    assert len(SameCellTwice().trainable_params()) == 2


def test_requires_grad_false_is_left_out_of_trainable_params():
    class C(Cell):
        def __init__(self):
            super().__init__()
            self.w = _p(1)
            self.frozen = _p(1, requires_grad=False)

    net = C()
    assert net.trainable_params() == [net.w]
    assert list(net.get_parameters()) == [net.w, net.frozen]
    assert net.untrainable_params() == [net.frozen]
    assert list(net.parameters_dict()) == ["w", "frozen"]


def test_cells_and_names_and_name_cells():
    net = Net()
    assert [n for n, _ in net.cells_and_names()] == ["", "block", "block.fc1", "block.fc2", "head"]
    assert list(net.name_cells()) == ["block", "head"]
    assert list(net.cells()) == [net.block, net.head]


# ---------------------------------------------------------------- attribute handling
def test_attributes_are_plain_attributes():
    net = Net()
    assert getattr(net, "scale") is net._params["scale"]
    assert getattr(net, "block") is net._cells["block"]
    assert "scale" in vars(net) and "block" in vars(net)


def test_reassignment_keeps_position_and_replaces_value():
    class C(Cell):
        def __init__(self):
            super().__init__()
            self.a = _p(1)
            self.b = _p(1)

    net = C()
    new_a = _p(2)
    net.a = new_a
    assert net.a is new_a and net.trainable_params() == [new_a, net.b]
    assert new_a.name == "a"


def test_assigning_none_empties_the_slot():
    net = Net()
    net.head = None
    net.scale = None
    assert net.head is None and net.scale is None
    assert [n for n, _ in net.cells_and_names()] == ["", "block", "block.fc1", "block.fc2"]
    assert all(not p.name.startswith("head") for p in net.trainable_params())
    assert net.trainable_params()[0].name == "block.fc1.weight"


def test_assigning_a_tensor_to_a_parameter_attribute_sets_its_data():
    leaf = Leaf()
    w = leaf.weight
    leaf.weight = Tensor(np.array([5.0, 6.0], np.float32))
    assert leaf.weight is w and w.asnumpy().tolist() == [5.0, 6.0]


def test_wrong_types_for_registered_slots():
    net = Net()
    with pytest.raises(TypeError):
        net.scale = "not a parameter"
    with pytest.raises(TypeError):
        net.block = 3
    with pytest.raises(TypeError):
        net.block = _p(1)
    with pytest.raises(TypeError):
        net.scale = Leaf()


def test_registering_before_init_is_attribute_error():
    class Broken(Cell):
        def __init__(self):
            self.w = _p(1)
            super().__init__()

    with pytest.raises(AttributeError):
        Broken()


def test_plain_attributes_and_delattr():
    net = Net()
    net.flag = True
    assert net.flag is True and "flag" not in net._params
    del net.head
    assert "head" not in net._cells and not hasattr(net, "head")


def test_insert_param_and_child_are_reachable_by_getattr():
    c = Cell()
    w = _p(1)
    c.insert_param_to_cell("w", w)
    c.insert_child_to_cell("leaf", Leaf())
    assert c.w is w and w.name == "w" and isinstance(c.leaf, Leaf)
    assert [p.name for p in c.trainable_params()] == ["w", "weight", "bias"]
    with pytest.raises(KeyError):
        c.insert_param_to_cell("a.b", _p(1))


def test_parameter_sequences_are_registered():
    class C(Cell):
        def __init__(self):
            super().__init__()
            self.ws = [_p(1), _p(2)]
            self.named = ParameterTuple([_p(3, name="k")])

    net = C()
    assert [p.name for p in net.trainable_params()] == ["ws.0", "ws.1", "k"]
    net.ws = 5
    assert [p.name for p in net.trainable_params()] == ["k"]


# ---------------------------------------------------------------- calling and modes
def test_call_runs_construct_with_args_and_kwargs():
    class Add(Cell):
        def construct(self, x, y=1.0):
            return x + y

    assert Add()(2.0, y=3.0) == 5.0
    with pytest.raises(AttributeError, match="For 'Cell', the method 'construct' is not defined"):
        Cell()(1.0)


def test_set_data_is_visible_through_the_cell():
    leaf = Leaf()
    x = Tensor(np.array([1.0, 2.0], np.float32))
    before = leaf(x).asnumpy().tolist()
    leaf.weight.set_data(Tensor(np.array([3.0, 4.0], np.float32)))
    after = leaf(x).asnumpy().tolist()
    assert before == [2.0, 3.0] and after == [1.0 * 3 + 1, 2.0 * 4 + 1]


def test_set_train_is_recursive_and_returns_self():
    net = Net()
    assert net.training is False
    assert net.set_train() is net
    assert all(c.training for _, c in net.cells_and_names())
    net.set_train(False)
    assert not any(c.training for _, c in net.cells_and_names())
    assert net.set_grad() is net


def test_repr_lists_children():
    assert repr(nn.SequentialCell(nn.ReLU(), nn.Tanh())) == (
        "SequentialCell<\n  (0): ReLU<>\n  (1): Tanh<>\n  >")
