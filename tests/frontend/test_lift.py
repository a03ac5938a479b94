"""The lift contract: arguments and their names, Parameters, out_tree, locations,
lowerings (also returning statics), static evaluation, local functions."""
import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401
from ad_compiler import nn
from ad_compiler.ad import rules
from ad_compiler.errors import (InvalidOperandError, UnsupportedOperationError,
                                UnsupportedSyntaxError)
from ad_compiler.frontend import Static, lift, tree_leaves
from ad_compiler.frontend.parse import parse_function
from ad_compiler.ir.core import AType, Value
from ad_compiler.ir.interp import interpret
from ad_compiler.ir.verifier import verify
from ad_compiler.nn import Parameter, ParameterTuple
from ad_compiler.tensor import Tensor, unwrap

F64 = np.dtype("float64")
V3 = AType((3,), F64)
V23 = AType((2, 3), F64)
TABLE = np.array([1.0, 2.0, 3.0])
TENSOR = Tensor(np.array([0.5, 0.5, 0.5]))


def hints(lifted):
    return [a.hint for a in lifted.function.args]


def prims(lifted):
    return [op.prim for op in lifted.function.body.ops]


def run(lifted, *args):
    params = [np.asarray(unwrap(p)) for p in lifted.params]
    return interpret(lifted.function, *args, *params)


# -- arguments ------------------------------------------------------------------------
def test_arguments_are_leaves_named_after_parameters():
    def f(x, pair, d, *rest, scale=2):
        return x
    lifted = lift(f, (V3, (V3, 7, [V3]), {"w": V3, "b-1": V3}, V3, "static"))
    # a hint is text (the dict key as written); codegen makes identifiers of hints
    assert hints(lifted) == ["x", "pair_0", "pair_2_0", "d_w", "d_b-1", "rest_0"]
    assert lifted.n_inputs == 6
    assert lifted.out_tree == 0


def test_missing_trailing_arguments_take_defaults_as_statics():
    def f(x, power=3, mode="cube"):
        if mode == "cube":
            return x ** power, power
        return x
    lifted = lift(f, (V3,))
    assert lifted.out_tree == (0, Static(3))
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(run(lifted, x)[0], x ** 3)


def test_tree_leaves_order_matches_argument_order():
    assert tree_leaves(((1, [2, {"a": 3, "b": (4,)}]), 5)) == [1, 2, 3, 4, 5]


# -- names of values ---------------------------------------------------------------
def test_assignment_names_the_values_it_creates():
    def f(x):
        y = np.sin(x)
        z = y
        a, b = np.cos(z), z * 2
        t = (a + b, a - b)
        return t
    lifted = lift(f, (V3,))
    names = [op.results[0].hint for op in lifted.function.body.ops if op.prim != "const"]
    assert names == ["y", "a", "b", "t_0", "t_1"]
    assert prims(lifted).count("sin") == 1  # the alias z = y created no op


def test_every_op_carries_its_statement_line_and_text():
    def f(x):
        y = np.sin(x)
        return y * 2.0
    lifted = lift(f, (V3,))
    first = lifted.function.loc.line
    sin, const, mul = lifted.function.body.ops
    assert sin.loc.file == __file__
    assert (sin.loc.line, sin.loc.text.strip()) == (first + 1, "y = np.sin(x)")
    assert sin.loc.col == sin.loc.text.index("np.sin")  # real column, indentation kept
    assert (mul.loc.line, mul.loc.text.strip()) == (first + 2, "return y * 2.0")
    assert mul.loc.col == mul.loc.text.index("y * 2.0")


# -- objects from outside ------------------------------------------------------------
class Weighted(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([1.0, 2.0, 3.0]), name="layer.w")
        self.weights = ParameterTuple([Parameter(np.ones(3), name="a"),
                                       Parameter(np.full(3, 2.0), name="b")])

    def construct(self, x):
        y = x * self.w
        for p in self.weights:
            y = y + p
        return y * self.w + getattr(self, "w")


def test_parameters_become_arguments_once_in_order_of_first_read():
    cell = Weighted()
    lifted = lift(cell, (V3,))
    verify(lifted.function)
    assert lifted.params == [cell.w, *cell.weights]
    assert hints(lifted) == ["x", "layer.w", "a", "b"]  # the Parameter names, as text
    x = np.array([1.0, -1.0, 0.5])
    np.testing.assert_allclose(run(lifted, x)[0], unwrap(cell(x)))


def test_module_arrays_and_tensors_become_named_inputs_read_at_call_time():
    def f(x):
        return x * TABLE + TENSOR
    lifted = lift(f, (V3,))
    assert not [op for op in lifted.function.body.ops if op.prim == "const"]
    assert [v.hint for v in lifted.function.args] == ["x", "TABLE", "TENSOR"]
    assert [r.describe() for r in lifted.captured.arrays] == ["TABLE", "TENSOR"]
    assert lifted.params == []


def test_static_calls_run_at_compile_time():
    def f(x):
        n = len(x)
        idx = np.arange(n) * 2
        return x + idx[1], list(range(n)), float(np.float32(1.5))
    lifted = lift(f, (V3,))
    assert lifted.out_tree == (0, [Static(0), Static(1), Static(2)], Static(1.5))
    assert prims(lifted) == ["const", "add"]


# -- lowerings ------------------------------------------------------------------------
class Doubler:
    """An object with a lowering: calls inside lifted code and lift() itself use it."""

    def __call__(self, x):
        return 2 * x

    def __ad_lower__(self, b, x):
        return b.mul(x, b.const(2.0))


DOUBLE = Doubler()


def test_lowering_of_a_called_object_and_of_the_lifted_object():
    def f(x):
        return DOUBLE(x) + 1.0
    assert prims(lift(f, (V3,))) == ["const", "mul", "const", "add"]
    lifted = lift(DOUBLE, (V3,))
    assert hints(lifted) == ["x0"]
    assert prims(lifted) == ["const", "mul"]


class FakeGradOp:
    """Like ops.GradOperation: called on a static Cell, its lowering returns a static
    gradient function, itself an object with a lowering that reads Parameters."""

    def __ad_lower__(self, b, net):
        return FakeGradFn(net)


class FakeGradFn:
    def __init__(self, net):
        self.net = net

    def __ad_lower__(self, b, x, y):
        z = b.read_parameter(self.net.z)  # the Parameter becomes an input of the lift
        return b.mul(y, z)


class SeedNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.z = Parameter(np.array([1.0], np.float32), name="z")

    def construct(self, x, y):
        return (x * self.z) @ y


class GradNetWrtX(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad_op = FakeGradOp()

    def construct(self, x, y):
        gradient_function = self.grad_op(self.net)
        return gradient_function(x, y)


def test_lowerings_may_return_statics_and_read_parameters():
    net = SeedNet()
    lifted = lift(GradNetWrtX(net), (AType((2, 3), np.dtype("float32")),
                                     AType((3, 3), np.dtype("float32"))))
    verify(lifted.function)
    assert lifted.params == [net.z]
    assert prims(lifted) == ["mul"]


def test_value_indexing_goes_through_the_getitem_method(monkeypatch):
    seen = []

    def getitem(b, value, index):
        seen.append(index)
        return b.mul(value, b.const(1.0))
    monkeypatch.setitem(rules.METHODS, "__getitem__", getitem)

    def f(x, i):
        a, b = x  # unpacking an array indexes it
        return x[i, 1:], a + b
    lift(f, (V23, 0))
    assert seen == [0, 1, (0, slice(1, None, None))]


def test_value_methods_and_missing_ones():
    def ok(x):
        return x.sum(axis=0).T, x.ndim, x.dtype, x.size
    lifted = lift(ok, (V23,))
    assert lifted.out_tree[1:] == (Static(2), Static(F64), Static(6))

    def bad(x):
        return x.byteswap()
    with pytest.raises(UnsupportedOperationError, match="no supported attribute or method"):
        lift(bad, (V3,))


# -- local functions, lambdas, parsing ----------------------------------------------
def pick(fn, k):
    return fn


def test_lambda_is_found_inside_a_longer_line():
    fn = pick(lambda x, y: x * y - np.sin(x), 3)  # a lambda among other code
    lifted = lift(fn, (V3, V3))
    assert prims(lifted) == ["mul", "sin", "sub"]
    assert lifted.function.body.ops[0].loc.col == \
        lifted.function.body.ops[0].loc.text.index("x * y")


def test_two_lambdas_with_the_same_parameters_on_one_line_are_ambiguous():
    f, g = (lambda x: x * 2), (lambda x: x * 3)
    with pytest.raises(UnsupportedSyntaxError, match="2 lambdas"):
        lift(f, (V3,))
    assert g is not f


def test_nested_definitions_keep_real_lines_after_dedent():
    class Holder:
        def method(self, x):
            return x + 1.0
    parsed = parse_function(Holder.method)
    loc = parsed.source.loc(parsed.node.body[0].value)
    assert loc.text.strip() == "return x + 1.0"
    assert loc.col == loc.text.index("x + 1.0")
    assert parse_function(Holder.method) is parsed  # cached


def test_closure_cells_and_local_functions():
    k = 3.0

    def f(x):
        def inner(t, scale=k):
            return t * scale + offset
        offset = np.cos(x)
        return inner(x) + inner(x, scale=0.5)
    lifted = lift(f, (V3,))
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(run(lifted, x)[0], f(x))


def test_inlining_errors_note_the_call_chain():
    def inner(x):
        return x > 0 and x

    def outer(x):
        return inner(x) * 2
    with pytest.raises(InvalidOperandError) as info:
        lift(outer, (V3,))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "called at" in notes and "return inner(x) * 2" in notes


def test_compile_time_raise_and_assert_report_the_line():
    def f(x, mode):
        assert x.ndim == 1, "vectors only"
        if mode not in ("a", "b"):
            raise ValueError(f"bad mode {mode}")
        return x
    with pytest.raises(ValueError, match="bad mode c") as info:
        lift(f, (V3, "c"))
    assert type(info.value) is ValueError  # the user's own exception, unchanged
    assert any('raise ValueError(f"bad mode {mode}")' in n for n in info.value.__notes__)
    with pytest.raises(AssertionError) as info:
        lift(f, (V23, "a"))
    assert "vectors only" in str(info.value)
    assert any("assert x.ndim == 1" in n for n in info.value.__notes__)


def test_result_values_are_ir_values():
    def f(x):
        return [x, (x * 2,)]
    lifted = lift(f, (V3,))
    assert lifted.out_tree == [0, (1,)]
    assert all(isinstance(v, Value) for v in lifted.function.outputs)
    assert lifted.function.outputs[0] is lifted.function.args[0]


class Base(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([1.0, 2.0, 3.0]), name="w")

    def construct(self, x):
        return x * self.w


class Derived(Base):
    def construct(self, x):
        return super().construct(x) + super(Derived, self).construct(x) * 2.0


def test_super_in_construct():
    cell = Derived()
    lifted = lift(cell, (V3,))
    assert lifted.params == [cell.w]
    x = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(run(lifted, x)[0], unwrap(cell(x)))


def test_non_array_attributes_of_parameters_are_static():
    class Named(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.ones(3), name="w", requires_grad=False)

        def construct(self, x):
            if self.w.requires_grad:
                return x
            return x * self.w, self.w.name, self.w.shape
    lifted = lift(Named(), (V3,))
    assert lifted.out_tree == (0, Static("w"), (Static(3),))


OUTSIDE = []


def test_containers_built_inside_may_change_outside_ones_may_not():
    def f(x, **kw):
        idx = list(range(2))
        idx.append(2)
        kw["extra"] = x
        acc = {"first": x}
        acc.update(kw)
        return acc["extra"] * len(idx), idx

    def g(x):
        OUTSIDE.append(x)
        return x
    lifted = lift(f, (V3,))
    assert lifted.out_tree == (0, [Static(0), Static(1), Static(2)])
    with pytest.raises(UnsupportedOperationError, match="did not create"):
        lift(g, (V3,))
    assert OUTSIDE == []


def test_parameters_inside_static_containers_are_inputs():
    class Holder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.table = {"a": Parameter(np.ones(3), name="pa"),
                          "b": Parameter(np.full(3, 2.0), name="pb")}

        def construct(self, x):
            for name, p in self.table.items():
                x = x * p
            return x + self.table["a"] + self.table.get("b")
    cell = Holder()
    lifted = lift(cell, (V3,))
    assert [p.name for p in lifted.params] == ["pa", "pb"]
    assert "const" not in prims(lifted)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(run(lifted, x)[0], unwrap(cell(x)))


class Nested(nn.Cell):
    """A Cell holding a Cell of its own class: not recursion, the depth is fixed."""

    def __init__(self, depth):
        super().__init__()
        self.child = Nested(depth - 1) if depth else None

    def construct(self, x):
        if self.child is not None:
            x = self.child(x) * 2.0
        return x + 1.0


class Loop(nn.Cell):
    def construct(self, x):
        return self(x)


def test_cells_of_their_own_class_are_not_recursion_but_self_calls_are():
    lifted = lift(Nested(2), (V3,))
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(run(lifted, x)[0], ((x + 1) * 2 + 1) * 2 + 1)
    with pytest.raises(RecursionError, match="Loop.construct"):
        lift(Loop(), (V3,))


# -- starred assignment targets --------------------------------------------------------

def starred_list(x):
    items = [x, x * 2.0, np.exp(x)]
    first, *rest = items
    rest.append(first)
    return items[0] * items[-1] + rest[0] * rest[2] + len(rest)


def starred_rows(x):
    a, *mid, z = x
    return a * z + np.sin(mid[0]) * len(mid)


def starred_in_loop_target(x):
    total = 0.0
    for *head, last in [(x, 1.0, 2.0), (x * x, 3.0, 4.0)]:
        total = total + head[0] * last + head[1]
    return total


def starred_empty(x):
    *none, last = (x,)
    return last * (len(none) + 1)


@pytest.mark.parametrize("fn, arg", [
    (starred_list, np.array([0.3, 0.8])), (starred_rows, np.arange(8.0).reshape(4, 2) / 8),
    (starred_in_loop_target, np.array([0.5, -1.5])), (starred_empty, np.array([2.0])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_starred_targets_take_the_middle_items_as_a_list(flow, fn, arg):
    flow.check(fn, arg)
