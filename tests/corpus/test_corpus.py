"""Gradients of the corpus in functions.py against central finite differences.

For every case: ``ms.grad(fn, grad_position)`` equals float64 central differences of the
sum of ``fn``'s output leaves (computed here, element by element, Python floats too); the
gradient has each input's structure, type and dtype; a second call gives the same result;
the call leaves the inputs unchanged; the generated adjoint source compiles. A subset is
also run on float32 inputs.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import ad_compiler as ms
from tests.corpus.load import corpus as corpus_module, to_float64
from tests.finite_differences import central




corpus = corpus_module()
EPS = 1e-6
F64 = dict(rtol=1e-5, atol=1e-7)
F32 = dict(rtol=2e-3, atol=2e-4)


# -- helpers ---------------------------------------------------------------------------
def output_sum(out) -> float:
    """The sum of every leaf of a (nested) output, in float64 (what grad differentiates)."""
    if isinstance(out, (tuple, list)):
        return sum(output_sum(o) for o in out)
    if isinstance(out, dict):
        return sum(output_sum(o) for o in out.values())
    return float(np.sum(np.asarray(out, dtype=np.float64)))


def numeric_grad(f, value, eps=EPS):
    """Central differences of the scalar ``f`` at ``value`` (array, float or container: a
    container item by item, each array or float by tests/finite_differences.central)."""
    if isinstance(value, (tuple, list)):
        def at(i, v):
            items = list(value)
            items[i] = v
            return type(value)(items)
        return type(value)(numeric_grad(lambda v, i=i: f(at(i, v)), item, eps)
                           for i, item in enumerate(value))
    if isinstance(value, dict):
        return {k: numeric_grad(lambda v, k=k: f({**value, k: v}), item, eps)
                for k, item in value.items()}
    return central(f, value, eps)


def expected_grads(c: corpus.Case, args, eps=EPS):
    """Finite differences w.r.t. the case's grad positions, in float64, shaped like grad's."""
    args = to_float64(args)
    fn = c.fd_reference(*copy.deepcopy(args)) if c.fd_reference else c.function

    def wrt(position):
        def f(v):
            trial = copy.deepcopy(list(args))  # some functions write into their arguments
            trial[position] = v
            return output_sum(fn(*trial))
        return numeric_grad(f, args[position], eps)
    if isinstance(c.grad_position, int):
        return wrt(c.grad_position)
    return tuple(wrt(p) for p in c.grad_position)


def corpus_leaves(tree):
    """The leaves of a (nested) tuple/list/dict, in order."""
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in corpus_leaves(t)]
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in corpus_leaves(v)]
    return [tree]


def to_float32(tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(to_float32(t) for t in tree)
    if isinstance(tree, dict):
        return {k: to_float32(v) for k, v in tree.items()}
    if isinstance(tree, (np.ndarray, np.floating)) and tree.dtype.kind == "f":
        return tree.astype(np.float32)
    return tree


def assert_like(got, want, like, tol, where="grad"):
    """``got`` has the structure, type, shape and dtype of the input ``like``; values ~ want."""
    if isinstance(like, (tuple, list, dict)):
        assert type(got) is type(like), f"{where}: {type(got).__name__} for {type(like).__name__}"
        keys = list(like) if isinstance(like, dict) else range(len(like))
        assert len(got) == len(like), f"{where}: {len(got)} entries for {len(like)}"
        for k in keys:
            assert_like(got[k], want[k], like[k], tol, f"{where}[{k!r}]")
        return
    if isinstance(like, (float, np.generic)):
        assert type(got) is type(like), f"{where}: {type(got).__name__} for {type(like).__name__}"
    else:
        assert isinstance(got, np.ndarray), f"{where}: {type(got).__name__} for an ndarray"
        assert got.dtype == like.dtype and got.shape == like.shape, \
            f"{where}: {got.dtype}{got.shape} for {like.dtype}{like.shape}"
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, err_msg=where, **tol)


def grad_inputs(c: corpus.Case, args):
    """The inputs the gradient is taken for, in grad's result structure."""
    if isinstance(c.grad_position, int):
        return args[c.grad_position]
    return tuple(args[p] for p in c.grad_position)


def assert_same_values(got, want, where="value"):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_values(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert type(got) is dict and got.keys() == want.keys(), where
        for k in want:
            assert_same_values(got[k], want[k], f"{where}[{k!r}]")
    else:
        assert type(got) is type(want), where
        np.testing.assert_array_equal(got, want, err_msg=where)


def params(kind, cases=None):
    """One pytest param per case, marked xfail(strict) where a known failure is listed."""
    inherits = {"none": (), "source": ("source",), "grad": ("grad",), "fd": ("fd", "grad"),
                "f32": ("f32", "fd", "grad")}[kind]
    out = []
    for c in corpus.CORPUS if cases is None else cases:
        reason = next((c.xfail[k] for k in inherits if k in c.xfail), None)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


# -- the corpus itself -----------------------------------------------------------------
def test_corpus_is_large_and_well_named():
    functions = {c.function for c in corpus.CORPUS}
    assert len(functions) >= 130
    names = [c.name for c in corpus.CORPUS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("c", params("none"))
def test_inputs_are_away_from_kinks_and_branch_boundaries(c):
    """Differences at 1e-3 agree with those at 1e-6: no kink, tie or boundary nearby.

    This checks the corpus, not the compiler: a failure means a badly chosen input."""
    fine = expected_grads(c, c.make())
    coarse = expected_grads(c, c.make(), eps=1e-3)
    for f, g in zip(corpus_leaves(fine), corpus_leaves(coarse)):
        np.testing.assert_allclose(g, f, rtol=1e-3, atol=1e-4)


# -- gradients -------------------------------------------------------------------------
@pytest.mark.parametrize("c", params("fd"))
def test_gradient_matches_finite_differences(c):
    args = c.make()
    got = ms.grad(c.function, grad_position=c.grad_position)(*args)
    assert_like(got, expected_grads(c, args), grad_inputs(c, c.make()), F64)


@pytest.mark.parametrize("c", params("grad"))
def test_second_call_gives_the_same_gradient(c):
    grad_fn = ms.grad(c.function, grad_position=c.grad_position)
    first = grad_fn(*c.make())
    second = grad_fn(*c.make())
    again = ms.grad(c.function, grad_position=c.grad_position)(*c.make())
    assert_same_values(second, first)
    assert_same_values(again, first)


@pytest.mark.parametrize("c", params("grad"))
def test_inputs_are_not_modified_nor_shared_with_the_gradient(c):
    args = c.make()
    before = copy.deepcopy(args)
    got = ms.grad(c.function, grad_position=c.grad_position)(*args)
    assert_same_values(args, before, "input")
    for g in corpus_leaves(got):
        for arg in corpus_leaves(list(args)):
            assert not (isinstance(g, np.ndarray) and isinstance(arg, np.ndarray)
                        and np.shares_memory(g, arg)), "a gradient shares memory with an input"


@pytest.mark.parametrize("c", params("f32", [c for c in corpus.CORPUS if c.f32]))
def test_float32_inputs_give_float32_gradients(c):
    args = to_float32(c.make())
    got = ms.grad(c.function, grad_position=c.grad_position)(*args)
    assert_like(got, expected_grads(c, c.make()), grad_inputs(c, args), F32)


@pytest.mark.parametrize("c", params("source"))
def test_adjoint_source_compiles(c):
    source = ms.adjoint_source(c.function, *c.make(), grad_position=c.grad_position)
    compile(source, f"<adjoint of {c.name}>", "exec")
    assert f"def {c.function.__name__}" in source


@pytest.mark.parametrize("fn", [corpus.bn_types_differ, corpus.rt_scalar_or_array])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_branches_giving_arrays_of_different_shapes_are_an_error(fn, sign):
    # broadcasting the 0-d branch would change the function's output (and triple the
    # gradient of the path taken): the shape must not depend on run-time data
    from ad_compiler.errors import InvalidOperandError
    with pytest.raises(InvalidOperandError, match="different shapes"):
        ms.grad(fn)(sign * np.array([0.5, 0.25, 0.1]))
