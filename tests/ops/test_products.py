"""Products end to end: np.einsum, np.tensordot, np.dot, np.inner, np.vdot, np.outer,
np.matmul and their ``ops`` spellings, through ``ms.grad`` / ``ms.value_and_grad``.

Each case compiles a user-style function (a smooth scalar of the product) and
checks the value against plain Python and every gradient against central finite
differences in float64 of that same plain function; float32 inputs must give
float32 gradients. The rules themselves are also checked to second order by
the registry test (test_rules.py) through the primitives' examples.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import ops
from ad_compiler.ad import rules
from ad_compiler.errors import AdCompilerError
from ad_compiler.ir.builder import Builder
from ad_compiler.ir.core import AType, Value


def _scalar(y):
    """A smooth scalar of ``y`` whose gradient differs per element."""
    return np.sum(np.sin(y) + y * y)


def einsum_loss(subscripts, n):
    """A user-style loss of ``np.einsum(subscripts, ...)`` of ``n`` operands."""
    if n == 1:
        def f(a):
            return _scalar(np.einsum(subscripts, a))
    elif n == 2:
        def f(a, b):
            return _scalar(np.einsum(subscripts, a, b))
    else:
        def f(a, b, c):
            return _scalar(np.einsum(subscripts, a, b, c, optimize=True))
    return f


def check(f, shapes, seed=0):
    """Value and every gradient of compiled ``f`` against plain ``f``, float64 and float32."""
    rng = np.random.default_rng(seed)
    xs = [rng.uniform(-1.0, 1.0, s) for s in shapes]
    positions = tuple(range(len(xs)))
    value, grads = ms.value_and_grad(f, grad_position=positions)(*xs)
    grads = grads if isinstance(grads, tuple) else (grads,)
    np.testing.assert_allclose(value, f(*xs), rtol=1e-12)
    assert [g.shape for g in grads] == [x.shape for x in xs]
    ms.check_grad(f, xs, atol=1e-6, rtol=1e-5)
    xs32 = [x.astype(np.float32) for x in xs]
    grads32 = ms.grad(f, grad_position=positions)(*xs32)
    grads32 = grads32 if isinstance(grads32, tuple) else (grads32,)
    for g32, g in zip(grads32, grads):
        assert g32.dtype == np.float32
        np.testing.assert_allclose(g32, g, rtol=1e-3, atol=1e-4)


EINSUM_CASES = [
    ("ii->", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("...i->...", [(2, 3, 4)]),
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]),
    ("...ij,...jk->...ik", [(1, 2, 3), (2, 3, 2)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ij,ij->i", [(1, 3), (2, 3)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("ij,j->", [(2, 3), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("i,ij,j->", [(2,), (2, 3), (3,)]),
    ("bi,bj,bk->bijk", [(2, 2), (2, 3), (2, 2)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES,
                         ids=[f"{s}-{'x'.join(map(str, sh))}" for s, sh in EINSUM_CASES])
def test_einsum_gradients(subscripts, shapes):
    check(einsum_loss(subscripts, len(shapes)), shapes)


def td_int(a, b):
    return _scalar(np.tensordot(a, b, 2))


def td_zero(a, b):
    return _scalar(np.tensordot(a, b, axes=0))


def td_ints(a, b):
    return _scalar(np.tensordot(a, b, axes=(0, 1)))


def td_seqs(a, b):
    return _scalar(np.tensordot(a, b, axes=([2, 0], [0, 2])))


def td_negative(a, b):
    return _scalar(np.tensordot(a, b, axes=((-1,), (-2,))))


def td_ops(a, b):
    return _scalar(ops.tensor_dot(a, b, ((0, 1), (1, 2))))


@pytest.mark.parametrize("f,shapes", [
    (td_int, [(2, 3, 4), (3, 4, 2)]), (td_zero, [(2, 3), (2,)]), (td_ints, [(3, 2), (2, 3)]),
    (td_seqs, [(4, 2, 3), (3, 2, 4)]), (td_negative, [(2, 3), (4, 3, 2)]),
    (td_ops, [(1, 2, 3), (3, 1, 2)]),
], ids=["int", "zero", "pair-of-ints", "pair-of-sequences", "negative", "ops.tensor_dot"])
def test_tensordot_gradients(f, shapes):
    check(f, shapes)


def dot(a, b):
    return _scalar(np.dot(a, b))


def dot_method(a, b):
    return _scalar(a.dot(b))


def inner(a, b):
    return _scalar(np.inner(a, b))


def vdot(a, b):
    return np.sin(np.vdot(a, b))


def outer(a, b):
    return _scalar(np.outer(a, b))


def matmul(a, b):
    return _scalar(a @ b)


PRODUCT_CASES = [
    (dot, [(), (3,)]), (dot, [(3,), (3,)]), (dot, [(2, 3), (3,)]), (dot, [(3,), (3, 2)]),
    (dot, [(2, 3), (3, 2)]), (dot, [(2, 3, 4), (4,)]), (dot, [(3,), (2, 3, 4)]),
    (dot, [(2, 3, 4), (2, 4, 3)]), (dot, [(2, 4), (3, 4, 2)]), (dot_method, [(2, 2, 3), (3, 2)]),
    (inner, [(3,), (3,)]), (inner, [(2, 3), (4, 3)]), (inner, [(2, 2, 3), (3,)]),
    (inner, [(), (2, 3)]),
    (vdot, [(2, 3), (3, 2)]), (vdot, [(4,), (2, 2)]),
    (outer, [(2, 3), (2,)]), (outer, [(2, 2), (3, 1)]),
    (matmul, [(2, 1, 2, 3), (3, 3, 2)]), (matmul, [(3,), (2, 3, 4)]), (matmul, [(2, 2, 3), (3,)]),
]


@pytest.mark.parametrize("f,shapes", PRODUCT_CASES,
                         ids=[f"{f.__name__}-{'x'.join(map(str, s))}" for f, s in PRODUCT_CASES])
def test_product_gradients(f, shapes):
    check(f, shapes)


def ms_products(a, b):
    return (_scalar(ops.einsum("bij,bjk->bik", a, b)) + _scalar(ops.bmm(a, b))
            + _scalar(ops.BatchMatMul(transpose_a=True)(a.transpose(0, 2, 1), b))
            + _scalar(ops.dot(a, b[0])) + _scalar(ops.inner(a, b.transpose(0, 2, 1)))
            + _scalar(ops.outer(a[0], b[0])) + _scalar(ops.mm(a[0], b[1])))


def test_mindspore_spellings():
    check(ms_products, [(2, 2, 3), (2, 3, 2)])


def sublists(a, b):
    return _scalar(np.einsum(a, [0, 1], b, [1, 2], [0, 2]))


def test_einsum_sublist_form():
    check(sublists, [(2, 3), (3, 2)])


# -- dtypes: NumPy's, operand for operand ------------------------------------------------

def einsum_with_float(a):
    return np.einsum("ij,->ij", a, 2.0)


def dot_with_float(a):
    return np.dot(a, 2.0)


def einsum_f32(a, b):
    return np.einsum("ij,jk->ik", a, b)


@pytest.mark.parametrize("f,args", [
    (einsum_with_float, [np.ones((2, 2), np.float32)]),
    (dot_with_float, [np.ones((2, 2), np.float32)]),
    (einsum_f32, [np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)]),
    (einsum_f32, [np.ones((2, 3), np.float32), np.ones((3, 2))]),
], ids=["einsum-python-float", "dot-python-float", "einsum-f32", "einsum-f32-f64"])
def test_result_dtype_is_numpys(f, args):
    def loss(*xs):
        return np.sum(f(*xs))
    value = ms.value_and_grad(loss, grad_position=tuple(range(len(args))))(*args)[0]
    assert np.asarray(value).dtype == np.asarray(loss(*args)).dtype
    grads = ms.grad(loss, grad_position=tuple(range(len(args))))(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    assert [g.dtype for g in grads] == [a.dtype for a in args]


# -- readable code --------------------------------------------------------------------------

def matmul_loss(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b))


def diagonal_loss(a):
    return np.sum(np.sin(np.einsum("ii->i", a)))


def test_adjoint_is_one_einsum_per_operand():
    source = ms.adjoint_source(matmul_loss, np.ones((2, 3)), np.ones((3, 4)),
                               grad_position=(0, 1))
    assert "np.einsum('ij,jk->ik', a, b)" not in source  # the value is not needed
    assert source.count("= np.einsum(") == 2, source
    source = ms.adjoint_source(diagonal_loss, np.ones((3, 3)))
    assert "np.einsum('i,ia->ia', " in source and "eye" in source, source  # by an identity


def test_tensordot_emits_np_tensordot():
    source = ms.adjoint_source(td_seqs, np.ones((4, 2, 3)), np.ones((3, 2, 4)),
                               grad_position=(0, 1))
    assert "np.tensordot(" in source and "np.einsum" not in source, source


# -- bad input: typed, located errors ----------------------------------------------------

def too_few_operands(a):
    return np.einsum("ij,jk->ik", a)


def bad_letters(a):
    return np.einsum("ij->ijk", a)


def size_mismatch(a, b):
    return np.einsum("ij,ij->", a, b)


def bad_axes(a, b):
    return np.tensordot(a, b, axes=([0], [0]))


def repeated_output(a):
    return np.einsum("ij->ii", a)


@pytest.mark.parametrize("f,shapes,text", [
    (too_few_operands, [(2, 3)], "operand"), (bad_letters, [(2, 3)], "'k'"),
    (size_mismatch, [(2, 3), (3, 2)], "size"), (bad_axes, [(2, 3), (3, 2)], "shape-mismatch"),
    (repeated_output, [(2, 2)], "more than once"),
], ids=["operand-count", "unknown-output-letter", "sizes", "tensordot-axes", "repeated-output"])
def test_bad_input_is_a_located_value_error(f, shapes, text):
    xs = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError):
        f(*xs)  # NumPy refuses it too
    with pytest.raises(AdCompilerError) as info:
        ms.grad(f, grad_position=tuple(range(len(xs))))(*xs)
    assert isinstance(info.value, ValueError)
    assert text in str(info.value) and "test_products.py" in str(info.value)


# -- subscripts: every form NumPy accepts gives NumPy's value; what it refuses, we refuse --

SUBSCRIPTS = [
    ("ij,jk", [(2, 3), (3, 4)]), ("ba", [(2, 3)]), ("Ab", [(2, 3)]), ("...", [(2, 3)]),
    ("...ij->...ji", [(4, 2, 3)]), ("i...->...", [(2, 3, 4)]), ("...ii->...i", [(2, 3, 3)]),
    ("ij...,jk...->ik...", [(2, 3, 4), (3, 2, 4)]), ("...i,...i", [(3, 2), (2,)]),
    ("..., ...", [(2, 3), (3,)]), ("i,i,i", [(3,), (3,), (3,)]), ("iji->j", [(2, 3, 2)]),
    ("iii->i", [(2, 2, 2)]), ("iii", [(2, 2, 2)]), ("ij->", [(1, 3)]), ("", [()]),
    (",", [(), ()]), ("ii", [(1, 1)]), ("a...b,b...c", [(2, 3, 4), (4, 3, 5)]),
    ("ij->...ij", [(2, 3)]), ("i->...", [(2,)]), ("ij,ij->ij", [(1, 3), (2, 1)]),
    ("i j -> j i", [(2, 3)]),
]
REFUSED = [
    ("...->", [(2, 3)]), ("ij->jj", [(2, 2)]), ("i->j", [(2,)]), ("ij", [(2,)]),
    ("ij,j", [(2, 3)]), ("i.j", [(2, 3)]), ("...i...->i", [(2, 3)]), ("ij->i->j", [(2, 3)]),
    ("i1", [(2, 2)]), ("ii->i", [(2, 3)]), ("i,i", [(2,), (3,)]),
]


def _operands(shapes):
    rng = np.random.default_rng(1)
    return [rng.standard_normal(s) for s in shapes]


def _lowered(subscripts, xs):
    """The IR value ``np.einsum(subscripts, *xs)`` lowers to (its type is inferred)."""
    return rules.find_lowering(np.einsum)(Builder(), subscripts,
                                          *(Value(AType.of(x), "x") for x in xs))


@pytest.mark.parametrize("subscripts,shapes", SUBSCRIPTS, ids=[s for s, _ in SUBSCRIPTS])
def test_subscripts_like_numpy(subscripts, shapes):
    xs = _operands(shapes)
    want = np.einsum(subscripts, *xs)
    got = ops.einsum(subscripts, *xs)  # eager: the lowering on concrete arrays
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert _lowered(subscripts, xs).type.shape == np.shape(want)


@pytest.mark.parametrize("subscripts,shapes", REFUSED, ids=[s for s, _ in REFUSED])
def test_subscripts_numpy_refuses_are_value_errors(subscripts, shapes):
    xs = _operands(shapes)
    with pytest.raises(ValueError):
        np.einsum(subscripts, *xs)
    with pytest.raises(ValueError):
        _lowered(subscripts, xs)
