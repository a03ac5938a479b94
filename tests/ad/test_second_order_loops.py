"""Gradients of gradients through loops (reverse over reverse).

The adjoint of a loop saves per-iteration values in lists (its tape) and its
backward loop reads them with ``list_get``; differentiating that adjoint again
sends a list cotangent back to the loop that stacked the tape. Every second
derivative here is checked against central differences of a first derivative:
one derived by hand where it is short, else the compiled gradient itself (whose
first derivatives ``check_grad`` verifies against central differences of the
function), and against forward over reverse (``ms.hessian``).
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import ad_compiler as ms
from tests.corpus.load import checkable_cases, to_float64
from ad_compiler.codegen import compile_function
from ad_compiler.ir.builder import Builder
from ad_compiler.ir.control import build_for
from ad_compiler.ir.core import AType, Block, Function, Value
from ad_compiler.ir.interp import interpret
from tests.finite_differences import central


X = np.array([0.3, -0.4, 0.8])
POSITIVE = np.array([0.5, 1.0, 1.5])
W = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6], [0.3, 0.2, 0.1]])


def looped(x):
    for _ in range(3):
        x = np.sin(x)
    return np.sum(x)


def looped_gradient(x):
    """d looped / dx, by hand: the chain rule through sin(sin(sin(x)))."""
    s1 = np.sin(x)
    s2 = np.sin(s1)
    return np.cos(x) * np.cos(s1) * np.cos(s2)


def looped_second(x):
    """d/dx of looped_gradient, by hand."""
    s1 = np.sin(x)
    s2 = np.sin(s1)
    c0, c1, c2 = np.cos(x), np.cos(s1), np.cos(s2)
    return (-np.sin(x) * c1 * c2 - c0 * np.sin(s1) * c0 * c2
            - c0 * c1 * np.sin(s2) * c1 * c0)


def grad_sum(x):
    return np.sum(ms.grad(looped)(x))


def grad_grad_sum(x):
    return np.sum(ms.grad(grad_sum)(x))


def grow(x):
    while np.sum(x) < 10.0:
        x = x * 1.5 + np.sin(x)
    return np.sum(x * x)


def with_break(x):
    s = x
    for _ in range(5):
        s = np.tanh(s) * x
        if np.sum(s) > 1.0:
            break
    return np.sum(s * s)


def with_continue(x):
    s = x
    for _ in range(4):
        s = np.tanh(s) + 0.3 * x
        if np.sum(s) < 0.5:
            continue
        s = s * 0.9
    return np.sum(s * s)


def while_with_break(x):
    while np.sum(x * x) < 50.0:
        x = x * 1.7 + np.sin(x)
        if np.max(x) > 4.0:
            break
    return np.sum(x ** 2)


def run_time_range(x, n):
    s = x
    for _ in range(n):
        s = np.sin(s) * x[0]
    return np.sum(s ** 2)


def early_return(x):
    for _ in range(4):
        x = np.sin(x) + 0.5 * x
        if np.sum(x) > 2.5:
            return np.sum(x ** 3)
    return np.sum(x ** 2)


def stacked(x):
    ys = []
    h = x
    for _ in range(3):
        h = np.tanh(h * x)
        ys.append(h)
    return np.sum(np.stack(ys) ** 2)


def first_of_while_list(x):
    ys = []
    while np.sum(x) < 10.0:
        x = x * 2.0
        ys.append(np.sin(x))
    return np.sum(ys[0] ** 3)


def while_list_read_in_a_loop(x):
    ys = []
    while np.sum(x) < 10.0:
        x = x * 2.0
        ys.append(np.sin(x))
    s = 0.0
    for i in range(2):
        s = s + np.sum(ys[i] ** 2)
    return s


def while_list_items_in_branches(x):
    ys = []
    while np.sum(x * x) < 10.0:
        x = x * 2.0
        ys.append(x * x)
    if np.sum(x) > 0:
        return np.sum(ys[1] * x)
    return np.sum(ys[0])


def nested(x):
    for _ in range(2):
        for _ in range(3):
            x = np.sin(x) * 1.1
    return np.sum(x ** 2)


def rnn(x, w):
    h = x
    for _ in range(3):
        h = np.tanh(w @ h)
        if np.sum(h) > 0:
            h = h * 0.5
    return np.sum(h * h)


def rows(x):
    s = np.zeros(x.shape[1])
    for row in x:
        s = np.sin(s + row) * row
    return np.sum(s ** 2)


def python_floats(x):
    acc = 0.0
    for _ in range(4):
        acc = acc + float(np.sum(x)) ** 2 * 0.1
    return acc * np.sum(x)


CASES = {
    "for": (looped, (X,)),
    "while": (grow, (POSITIVE,)),
    "break taken": (with_break, (X * 3,)),
    "break not taken": (with_break, (X,)),
    "continue": (with_continue, (X,)),
    "while with break": (while_with_break, (X,)),
    "run-time range": (run_time_range, (X, np.array(3))),
    "early return taken": (early_return, (X,)),
    "early return not taken": (early_return, (X * 0.1,)),
    "list stacked by a for": (stacked, (X,)),
    "item of a while-built list": (first_of_while_list, (POSITIVE,)),
    "while-built list read in a loop": (while_list_read_in_a_loop, (POSITIVE,)),
    "while-built list in a branch": (while_list_items_in_branches, (POSITIVE / 4,)),
    "while-built list in the other branch": (while_list_items_in_branches, (-POSITIVE / 4,)),
    "nested loops": (nested, (X,)),
    "branch in a loop": (rnn, (X, W)),
    "rows of an array": (rows, (np.array([[0.3, -0.4], [0.8, 0.1], [0.2, 0.5]]),)),
    "python floats": (python_floats, (X,)),
}


# -- values -----------------------------------------------------------------------------

def test_the_gradient_of_a_gradient_through_a_loop_is_the_hand_derived_one():
    got = ms.grad(grad_sum)(X)
    want = central(lambda x: np.sum(looped_gradient(x)), X)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got, looped_second(X), rtol=1e-12)


def test_third_order_through_a_loop_is_the_hand_derived_one():
    got = ms.grad(grad_grad_sum)(X)
    want = central(lambda x: np.sum(looped_second(x)), X)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", list(CASES))
def test_reverse_over_reverse_matches_central_differences(name):
    fn, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ms.check_grad(fn, args, order=2, modes=("rev",))


@pytest.mark.parametrize("name", list(CASES))
def test_reverse_over_reverse_agrees_with_forward_over_reverse(name):
    fn, args = CASES[name]
    v = np.linspace(0.3, 1.1, args[0].size).reshape(args[0].shape)

    def along(*a):
        return np.sum(ms.grad(fn)(*a) * v)
    got = ms.grad(along)(*args)
    hessian = ms.hessian(fn)(*args)
    want = np.tensordot(hessian, v, axes=v.ndim)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    fd = central(lambda x: along(x, *args[1:]), args[0])
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_the_weights_of_a_loop_get_second_derivatives_too():
    def along(x, w):
        return np.sum(ms.grad(rnn, 1)(x, w) * W)
    got = ms.grad(along, 1)(X, W)
    fd = central(lambda w: along(X, w), W)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, x", [(looped, X), (grow, POSITIVE), (with_break, X * 3)])
def test_float32_stays_float32(fn, x):
    def along(x):
        return np.sum(ms.grad(fn)(x))
    got = ms.grad(along)(x.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ms.grad(along)(x), rtol=2e-4, atol=1e-5)


def test_an_item_of_a_while_built_list_has_a_gradient():
    # once refused: the list's length is known only at run time
    got = ms.grad(first_of_while_list)(POSITIVE)
    want = central(first_of_while_list, POSITIVE)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_an_item_past_the_end_is_python_s_index_error():
    with pytest.raises(IndexError):
        ms.grad(first_of_while_list)(np.array([4.0, 4.0, 4.0]))   # the loop never runs


# -- the generated code -------------------------------------------------------------------

def test_the_second_order_adjoint_is_readable_code():
    source = ms.adjoint_source(grad_sum, X)
    assert source == ms.adjoint_source(grad_sum, X)            # deterministic
    assert len(re.findall(r"^\s*for \w+ in range", source, re.M)) == 4
    # the backward loop of the gradient stacks what the second backward loop reads,
    # in iteration order; each item's cotangent is stacked too, never added into a list
    assert "dx_tape.reverse()" in source and "rt.list_add_at" not in source
    assert re.search(r"^\s+dx_\d+ = dx_tape_1\[i_2\]$", source, re.M)
    assert ";" not in source and "list_get" not in source
    print(source)


def test_the_tape_of_a_while_is_read_by_its_count():
    source = ms.adjoint_source(lambda x: np.sum(ms.grad(grow)(x)), POSITIVE)
    assert len(re.findall(r"n_iter\w* = x, 0$", source, re.M)) == 1  # one counter, reused
    assert "for i_1 in range(n_iter):" in source


def test_a_list_read_at_other_indices_accumulates_its_cotangent():
    source = ms.adjoint_source(while_list_read_in_a_loop, POSITIVE)
    assert "rt.list_add_at(" in source and "rt.list_zeros(" in source


# -- a reversed loop's lists -------------------------------------------------------------

def test_a_reversed_loop_stacks_iteration_i_at_item_i():
    i64 = AType((), np.dtype(np.int64), True)
    n = Value(i64, "n")
    body = Block(args=[n])
    b = Builder(body)
    square = b.mul(b.const(1.0), b.const(1.0))   # keeps the loop body non-empty

    def step(b, i, state):
        return [b.add(state[0], square)], [b.cast(i, dtype=np.float64)]
    _, items = build_for(b, n, [b.const(0.0)], step, reverse=True)
    body.results = [b.stack_list(items, axis=0, length=4)]
    fn = Function("reversed_items", body)
    expected = np.arange(4.0)
    np.testing.assert_array_equal(interpret(fn, 4)[0], expected)
    np.testing.assert_array_equal(compile_function(fn).fn(4)[0], expected)


# -- the corpus -------------------------------------------------------------------------



CORPUS = checkable_cases()


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_the_corpus_goes_reverse_over_reverse(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ms.check_grad(case.function, to_float64(case.make()), order=2, modes=("rev",))
