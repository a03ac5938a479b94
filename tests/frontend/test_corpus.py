"""A corpus of small user-style functions: lift, verify, interpret, compare with Python.

Every case is lifted with the ATypes of its example inputs (ndarrays are
dynamic, everything else static), the IR is verified, run by the reference
interpreter and compared, structure and values, with calling the function
itself on the same inputs.
"""
import copy
import math

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers primitives)
from ad_compiler import nn
from ad_compiler.api.state import make_reader
from ad_compiler.frontend import Static, lift, owner_of
from ad_compiler.ir.core import AType
from ad_compiler.ir.interp import interpret
from ad_compiler.ir.verifier import verify
from ad_compiler.nn import Parameter
from ad_compiler.tensor import unwrap

RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


# -- module-level state the corpus reads ------------------------------------------
SCALE = 0.5
OFFSET = np.array([1.0, 2.0, 3.0])
NAMES = ("a", "b")


def _poly(x, power=2, *, shift=0.0):
    return x ** power + shift


def _kw_product(**kw):
    return kw["a"] * kw["b"]


def _first_and_rest(x, *rest):
    return x, len(rest)


def make_scaler(k, bias):
    def scaled(x):
        return k * x + bias
    return scaled


# -- the corpus -------------------------------------------------------------------
def f_poly(x):
    return 3.0 * x ** 2 + 2.0 * x - 1.0


def f_trig(x, y):
    a = np.sin(x)
    b = np.cos(y)
    return a * b + a / (1.0 + b * b)


def f_matmul(a, b):
    return np.tanh(a @ b)


def f_reduce(x):
    s = np.sum(x, axis=1)
    m = x.mean()
    return s * m


def f_unpack(x, y):
    p = (x, y)
    a, b = p
    (c, d), e = (b, a), x
    return c + d * e


def f_swap(x, y):
    x, y = y, x
    return x - 2.0 * y


def f_chained(x):
    a = b = np.exp(x)
    return a + b


def f_reassign(x):
    x = x * 2
    x = x + 1
    x = np.tanh(x)
    return x


def f_augmented(x, y):
    acc = x * 1.0  # a fresh array: NumPy's += would write into x itself
    acc += y
    acc *= 2.0
    acc -= x
    acc /= 3.0
    acc **= 2
    return acc


def f_module_constants(x):
    return x * SCALE + OFFSET


def f_helper_defaults(x):
    return _poly(x) + _poly(x, 3, shift=1.0) + _poly(power=1, x=x)


def f_kwargs_and_star(x, y):
    first, n_rest = _first_and_rest(x, y, y)
    return _kw_product(a=first, b=y) * n_rest


def f_local_def(x):
    def sq(t):
        return t * t
    return sq(x) + sq(np.sin(x))


def f_local_lambda(x):
    g = lambda t, s=2.0: t * s  # noqa: E731
    return g(x) + g(x, s=3.0)


def f_local_closure_late_binding(x):
    def add_y(t):
        return t + y
    y = np.cos(x)
    return add_y(x)


def f_mode(x, mode="sum"):
    if mode == "sum":
        return np.sum(x)
    elif mode == "mean":
        return np.mean(x)
    else:
        return x


def f_shape_branch(x):
    if x.ndim == 2:
        y = np.sum(x, axis=0)
    else:
        y = x
    return y * 2.0


def f_early_return(x, n):
    if n > 2:
        return x * n
    x = x + 1
    return x


def f_for_range(x):
    for i in range(3):
        x = x * 0.5 + i
    return x


def f_for_break_continue(x):
    total = x
    for k in (1.0, 2.0, 3.0, 4.0, 5.0):
        if k == 2.0:
            continue
        if k > 4.0:
            break
        total = total + k * x
    return total


def f_ternary(x, flag):
    y = x * 2 if flag else x / 2
    return y


def f_bool_ops(x, a=None):
    if a is not None and a > 1:
        return x * a
    if a is None or a < 0:
        return -x
    return x


def f_compare(x, y):
    mask = x >= 0.5
    return np.where(x > y, x, y), mask


def f_containers(pair, d):
    a, b = pair
    return a * d["w"] + b, [a, b]


def f_statics_out(x):
    n = len(x)
    half = int(x.shape[1] / 2)
    return x * 2, x.shape, n, half, None, "done"


def f_star_sum(*xs):
    return sum(xs)


def f_methods(x):
    y = x.T @ x
    z = y.reshape(-1)
    return z.astype(np.float32), x.sum(axis=0)


def f_static_numpy(x):
    w = np.ones((3,)) * 2.0
    return x * w + np.arange(3) + math.pi


def f_list_building(x):
    outs = []
    for p in range(1, 4):
        outs.append(x ** p)
    return outs[0] + outs[1] * outs[2]


def f_dict_display(x, y):
    d = {"x": x, **{"y": y}}
    return {"sum": d["x"] + d["y"], "names": NAMES}


def f_walrus(x):
    return (y := np.sin(x)) * y


def f_isinstance(x, t):
    if isinstance(t, tuple):
        return x * len(t)
    return x


closure_fn = make_scaler(3.0, OFFSET)


# -- Cells --------------------------------------------------------------------------
class MatMulOp:
    """An operation object with a lowering, as ``ops.MatMul()`` is."""

    def __call__(self, x, y):
        return np.matmul(unwrap(x), unwrap(y))

    def __ad_lower__(self, b, x, y):
        return b.matmul(x, y)


class Scale(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([0.5, -1.0, 2.0], np.float32), name="w")

    def construct(self, x):
        return x * self.w


class TinyNet(nn.Cell):
    def __init__(self, activation=None, reduction="mean"):
        super().__init__()
        self.z = Parameter(np.array([1.5], np.float32), name="z")
        self.scale = Scale()
        self.matmul = MatMulOp()
        self.dense = nn.Dense(3, 2)
        self.activation = activation
        self.reduction = reduction

    def helper(self, x):
        return x * self.z + self.z

    def construct(self, x, y):
        x = self.helper(self.scale(x))
        out = self.matmul(x, y)
        out = self.dense(out)
        if self.activation is not None:
            out = self.activation(out)
        if self.reduction == "mean":
            return np.mean(out)
        return out


seq_net = nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2))
loss_fn = nn.MSELoss()


def f_forward(inputs, labels):
    logits = seq_net(inputs)
    loss = loss_fn(logits, labels)
    return loss, logits


X23, Y23, X3, Y3 = rand(2, 3), rand(2, 3), rand(3), rand(3)
F32 = rand(4, 3, dtype=np.float32)

CASES = [
    (f_poly, (X23,)),
    (f_trig, (X23, Y23)),
    (f_matmul, (rand(2, 3), rand(3, 4))),
    (f_reduce, (X23,)),
    (f_unpack, (X3, Y3)),
    (f_swap, (X3, Y3)),
    (f_chained, (X3,)),
    (f_reassign, (X23,)),
    (f_augmented, (X3, Y3)),
    (f_module_constants, (X3,)),
    (f_helper_defaults, (X3,)),
    (f_kwargs_and_star, (X3, Y3)),
    (f_local_def, (X3,)),
    (f_local_lambda, (X3,)),
    (f_local_closure_late_binding, (X3,)),
    (f_mode, (X23,)),
    (f_mode, (X23, "mean")),
    (f_mode, (X23, "none")),
    (f_shape_branch, (X23,)),
    (f_shape_branch, (X3,)),
    (f_early_return, (X3, 3)),
    (f_early_return, (X3, 1)),
    (f_for_range, (X3,)),
    (f_for_break_continue, (X3,)),
    (f_ternary, (X3, True)),
    (f_ternary, (X3, False)),
    (f_bool_ops, (X3, 3.0)),
    (f_bool_ops, (X3,)),
    (f_bool_ops, (X3, 0.5)),
    (f_compare, (X3, Y3)),
    (f_containers, ((X3, Y3), {"w": rand(3)})),
    (f_statics_out, (rand(3, 4),)),
    (f_star_sum, (X3, Y3, rand(3))),
    (f_methods, (X23,)),
    (f_static_numpy, (X3,)),
    (f_list_building, (X3,)),
    (f_dict_display, (X3, Y3)),
    (f_walrus, (X3,)),
    (f_isinstance, (X3, (1, 2))),
    (f_isinstance, (X3, 7)),
    (closure_fn, (X3,)),
    (lambda x, y: x * y + np.sin(x), (X3, Y3)),
    (TinyNet(), (F32, rand(3, 3, dtype=np.float32))),
    (TinyNet(activation=nn.Tanh(), reduction="none"), (F32, rand(3, 3, dtype=np.float32))),
    (f_forward, (F32, rand(4, 2, dtype=np.float32))),
]


def spec_of(value):
    if isinstance(value, np.ndarray):
        return AType.of(value)
    if isinstance(value, (tuple, list)):
        return type(value)(spec_of(v) for v in value)
    if isinstance(value, dict):
        return {k: spec_of(v) for k, v in value.items()}
    return value


def leaves(tree):
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in leaves(v)]
    if isinstance(tree, (tuple, list)):
        return [leaf for v in tree for leaf in leaves(v)]
    return [tree]


def rebuild(out_tree, outputs):
    if isinstance(out_tree, int):
        return outputs[out_tree]
    if isinstance(out_tree, Static):
        return out_tree.value
    if isinstance(out_tree, dict):
        return {k: rebuild(v, outputs) for k, v in out_tree.items()}
    return type(out_tree)(rebuild(v, outputs) for v in out_tree)


def assert_same(got, want):
    want = unwrap(want)
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want)
        for k in want:
            assert_same(got[k], want[k])
    elif isinstance(want, (np.ndarray, np.generic)):
        got = np.asarray(got)
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        assert type(got) is type(want) and got == want


def case_id(case):
    fn = case[0]
    return getattr(fn, "__name__", type(fn).__name__)


@pytest.mark.parametrize("fn, args", CASES, ids=[case_id(c) for c in CASES])
def test_lifted_matches_python(fn, args):
    lifted = lift(fn, tuple(spec_of(a) for a in args))
    verify(lifted.function)
    dynamic = [v for v in leaves(args) if isinstance(v, np.ndarray)]
    assert lifted.n_inputs == len(dynamic)
    reader = make_reader(lifted.captured)
    captured = reader(owner_of(fn)) if reader else ()  # arrays read from outside, now
    assert len(lifted.function.args) == len(dynamic) + len(lifted.params) + len(captured)
    params = [np.asarray(unwrap(p)) for p in lifted.params]
    outputs = interpret(lifted.function, *dynamic, *params, *captured)
    assert_same(rebuild(lifted.out_tree, outputs), fn(*copy.deepcopy(args)))


def test_corpus_is_large_enough():
    assert len({case_id(c) for c in CASES}) >= 25
