"""Algebra on adjoints: each rewrite fires on its pattern, stays away where it would
be wrong, and leaves gradients equal to central finite differences (float64) and
float32 in float32. Generated source is inspected to see which rewrite fired."""
from __future__ import annotations

import re

import numpy as np
import pytest

import ad_compiler as ms
from tests.finite_differences import central_at

RNG = np.random.default_rng(7)


def check(f, *args, pos=0, rtol=1e-6, atol=1e-7):
    """The compiled gradient against finite differences; returns the adjoint source."""
    got = ms.grad(f, grad_position=pos)(*args)
    want = central_at(f, list(args), pos)
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)
    return ms.adjoint_source(f, *args, grad_position=pos)


def check_float32(f, *args):
    args32 = [np.asarray(a, np.float32) for a in args]
    got = ms.grad(f)(*args32)
    assert np.asarray(got).dtype == np.float32
    want = ms.grad(f)(*[np.asarray(a, np.float64) for a in args])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)


# -- shift invariance ---------------------------------------------------------------

def softmax_xent(z, labels):          # benchmarks/workloads.py, as users write it
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    log_p = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * log_p, axis=1))


def stable_softmax(z, w):
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    p = e / np.sum(e, axis=-1, keepdims=True)
    return np.sum(p * w)


def logsumexp_rows(z, w):             # m is used twice: its two tangents cancel
    m = np.max(z, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))
    return np.sum(lse * w)


def global_softmax(z, w):             # one shift for the whole array
    e = np.exp(z - np.max(z))
    return np.sum(w * (e / np.sum(e)))


def scaled_logits(z, w):              # the shift goes through a scale and a mean
    t = 0.5 * (z - np.max(z, axis=1, keepdims=True))
    p = np.exp(t) / np.mean(np.exp(t), axis=1, keepdims=True)
    return np.sum(np.square(p) * w)


LABELS = np.eye(5)[[1, 4, 0]]
Z = 3.0 * RNG.standard_normal((3, 5))
W = RNG.standard_normal((3, 5))
W1 = RNG.standard_normal((3, 1))

FIRES = [(softmax_xent, (Z, LABELS)), (stable_softmax, (Z, W)), (logsumexp_rows, (Z, W1)),
         (global_softmax, (Z, W)), (scaled_logits, (Z, W))]


@pytest.mark.parametrize("f, args", FIRES, ids=[f.__name__ for f, _ in FIRES])
def test_shift_gradient_is_dropped(f, args):
    src = check(f, *args)
    # the max's adjoint (which elements attain it) is not built
    assert "==" not in src and "np.asarray" not in src, src


@pytest.mark.parametrize("f, args", FIRES, ids=[f.__name__ for f, _ in FIRES])
def test_shift_float32_stays_float32(f, args):
    check_float32(f, *args)


def test_softmax_xent_adjoint_reads_like_the_hand_written_one():
    src = ms.adjoint_source(softmax_xent, Z, LABELS)
    function = src[src.index("\ndef "):]
    # one statement per op, no stabiliser gradient; ``div = sum_dlog_p`` after
    # ``sum_dlog_p /= sum_exp_s`` names a result written in place, it is no op
    body = [ln for ln in function.splitlines()[2:] if not ln.strip().startswith("#")
            and not re.fullmatch(r"\s+\w+ = \w+", ln)]
    assert len(body) == 10, src        # the constant is read where it is used
    assert "m = z.max(axis=1, keepdims=True)" in src and "s = z - m" in src


def max_used_elsewhere(z, labels):
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    log_p = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * log_p, axis=1)) + np.sum(m * m)


def shift_not_per_row(z, w):          # max over columns, softmax over rows
    e = np.exp(z - np.max(z, axis=0, keepdims=True))
    return np.sum(w * e / np.sum(e, axis=1, keepdims=True))


def sum_over_other_axis(z, w):        # shift per row, normalised per column
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    return np.sum(w * e / np.sum(e, axis=0, keepdims=True))


def not_invariant(z, w):              # a plain centred square: depends on the shift
    s = z - np.max(z, axis=1, keepdims=True)
    return np.sum(s * s * w)


def shift_of_a_square(z, w):          # exp(s) * s is not a rescaling
    s = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(s) * s
    return np.sum(w * e / np.sum(e, axis=1, keepdims=True))


KEEPS = [(max_used_elsewhere, (Z, LABELS)), (shift_not_per_row, (Z, W)),
         (sum_over_other_axis, (Z, W)), (not_invariant, (Z, W)), (shift_of_a_square, (Z, W))]


@pytest.mark.parametrize("f, args", KEEPS, ids=[f.__name__ for f, _ in KEEPS])
def test_shift_gradient_is_kept_where_it_is_not_zero(f, args):
    src = check(f, *args)
    assert "==" in src, src           # the max's adjoint is there


def test_second_order_through_a_dropped_shift():
    v = RNG.standard_normal((3, 5))
    g = ms.grad(softmax_xent)

    def directional(z, labels):
        return np.sum(g(z, labels) * v)

    def plain(z):
        return np.sum(ms.grad(softmax_xent)(z, LABELS) * v)
    got = ms.grad(directional)(Z, LABELS)
    want = central_at(lambda z: plain(z), [Z], 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def softmax_max_spelled_twice(z, w):  # two equal maxes: they move together
    p = np.exp(z - np.max(z, axis=1, keepdims=True)) / np.sum(
        np.exp(z - np.max(z, axis=1, keepdims=True)), axis=1, keepdims=True)
    return np.sum(p * w)


def test_equal_shifts_spelled_twice_are_dropped_together():
    src = check(softmax_max_spelled_twice, Z, W)
    assert "==" not in src, src


# -- the algebra pass on hand-built IR (exact rewrites: bit for bit) ------------------

from ad_compiler.passes.algebra import algebra, gradient_algebra  # noqa: E402
from ad_compiler.passes.dce import dce  # noqa: E402


def _algebra(ir, build, *types):
    b, args = ir.new(*[(f"a{i}", t) for i, t in enumerate(types)])
    fn = ir.finish(b, *build(b, *args))
    return dce(ir.run(gradient_algebra, fn))


def test_adding_a_folded_zero_array_is_dropped(ir):
    new = _algebra(ir, lambda b, x: [b.sin(b.add(b.mul(x, b.const(2.0)),
                                                 b.const(np.zeros((2, 3)))))], ir.arr(2, 3))
    assert ir.prims(new) == ["const", "mul", "sin"]


def test_subtracting_zeros_like_is_dropped(ir):
    new = _algebra(ir, lambda b, x: [b.sub(b.cos(x), b.zeros_like(x))], ir.arr(3))
    assert ir.prims(new) == ["cos"]


def test_a_zero_that_broadcasts_the_other_operand_stays(ir):
    new = _algebra(ir, lambda b, x: [b.add(x, b.const(np.zeros((2, 3))))], ir.arr(3))
    assert "add" in ir.prims(new)


def test_zero_minus_x_stays(ir):             # 0 - x is -x: not the same zero sign
    new = _algebra(ir, lambda b, x: [b.sub(b.const(np.zeros(3)), x)], ir.arr(3))
    assert "sub" in ir.prims(new)


def test_a_doubled_product_with_a_constant_is_one_product(ir):
    def build(b, x):
        return [b.add(b.mul(b.const(0.00025), x), b.mul(b.const(0.00025), x))]
    new = _algebra(ir, build, ir.arr(4))
    assert ir.prims(new) == ["const", "mul"]
    assert new.body.ops[0].params["value"] == 0.0005


def test_a_doubled_product_used_elsewhere_stays(ir):
    def build(b, x):
        t = b.mul(b.const(3.0), x)
        return [b.add(t, t), t]
    new = _algebra(ir, build, ir.arr(4))
    assert ir.prims(new).count("add") == 1


def test_a_doubled_product_of_arrays_stays(ir):
    new = _algebra(ir, lambda b, x, y: [b.add(b.mul(x, y), b.mul(x, y))], ir.arr(3), ir.arr(3))
    assert "add" in ir.prims(new)


# -- sums of broadcasts, divisions cancelled: exact up to rounding ---------------------

def bcast_sum(u, v):
    return np.sum(u * np.sum(np.broadcast_to(v, (3, 4)), axis=0))


def bcast_mean_kept(u, v):             # axis 1 replicated too: the result is a broadcast
    return np.sum(u * np.mean(np.broadcast_to(v, (2, 3, 4)), axis=0, keepdims=True))


def bcast_sum_other_axis(u, v):          # axis 1 was not replicated: stays a reduction
    return np.sum(u[:, 0] * np.sum(np.broadcast_to(v, (3, 4)), axis=1))


@pytest.mark.parametrize("f, fires", [(bcast_sum, True), (bcast_mean_kept, True),
                                      (bcast_sum_other_axis, False)])
def test_reductions_of_broadcasts(f, fires):
    u, v = RNG.standard_normal((3, 4)), RNG.standard_normal(4)
    src = check(f, u, v, pos=0)
    code = "\n".join(ln for ln in src.splitlines() if not ln.strip().startswith("#"))
    assert (".sum(" not in code and ".mean(" not in code) == fires, src
    check(f, u, v, pos=1)
    check_float32(f, u, v)


def logistic_loss(w, x, y):          # benchmarks/workloads.py
    p = 1 / (1 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


X = RNG.standard_normal((6, 3))
Y = (RNG.random(6) < 0.5).astype(np.float64)
WL = RNG.standard_normal(3)


def _code(src) -> str:
    return "\n".join(ln for ln in src.splitlines() if not ln.strip().startswith("#"))


def _divisions(src) -> int:
    return _code(src).count("/") + _code(src).count("divide")


def test_log_loss_through_a_sigmoid_cancels_its_divisions():
    src = check(logistic_loss, WL, X, Y)
    assert _divisions(src) == 1, src          # only the forward 1 / (1 + e)
    assert _code(src).count("np.exp(") == 1, src
    check_float32(logistic_loss, WL, X, Y)


def log_sigmoid_float_ones(a, w):
    return np.sum(w * np.log(1.0 / (np.exp(-a) + 1.0)))


def test_the_logistic_function_with_float_ones_is_a_sigmoid():
    src = check(log_sigmoid_float_ones, WL, WL)
    assert _divisions(src) == 1, src


def exp_used_elsewhere(a):
    e = np.exp(-a)
    p = 1 / (1 + e)
    return np.sum(np.log(p) + e)


def not_the_logistic_function(a):
    p = 2 / (1 + np.exp(-a))
    return np.sum(np.log(p))


def log_and_another_use(a, w):       # dp = w/p + w: not every term cancels
    p = 1 / (1 + np.exp(-a))
    return np.sum(w * np.log(p) + w * p)


@pytest.mark.parametrize("f", [exp_used_elsewhere, not_the_logistic_function])
def test_other_spellings_are_not_a_sigmoid(f):
    src = check(f, WL)
    assert _divisions(src) > 1, src           # the literal adjoint divides by p


def test_divisions_that_do_not_all_cancel_stay():
    src = check(log_and_another_use, WL, WL)
    assert _divisions(src) > 1, src


def test_a_division_cancelled_to_its_numerator_keeps_names(ir):
    def build(b, x, y):
        q = b.div(x, b.exp(y))
        return [b.mul(q, b.exp(y), hint="product"), x]
    b, (x, y) = ir.new(("x", ir.arr(3)), ("y", ir.arr(3)))
    fn = ir.finish(b, *build(b, x, y))
    new = dce(gradient_algebra(fn))
    assert new.outputs[0] is new.args[0] and new.args[0].hint == "x"


def rounding_rewrites_everywhere(x, y):
    a = x / np.exp(y) * np.exp(y)
    b = np.sum(np.broadcast_to(x, (7, 3)), axis=0)
    return np.sum(a * b + np.zeros(3))


def test_forward_values_stay_pythons_bit_for_bit():
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    value, grads = ms.value_and_grad(rounding_rewrites_everywhere, grad_position=(0, 1))(x, y)
    assert value == rounding_rewrites_everywhere(x, y)
    np.testing.assert_allclose(grads[0], central_at(rounding_rewrites_everywhere, [x, y], 0),
                               rtol=1e-6)
    np.testing.assert_allclose(grads[1], central_at(rounding_rewrites_everywhere, [x, y], 1),
                               rtol=1e-6, atol=1e-7)


def test_only_exact_rewrites_in_the_shared_pipeline(ir):
    def build(b, x):
        return [b.add(b.mul(b.const(0.25), x), b.mul(b.const(0.25), x)), b.add(x, b.zeros_like(x))]
    b, (x,) = ir.new(("x", ir.arr(3)))
    fn = ir.finish(b, *build(b, x))
    assert ir.prims(dce(algebra(fn))).count("add") == 2


def cubic_over_quadratic(x):
    return np.sum(x ** 3 / (1 + x * x) + x ** 4 * 0.1)


def test_small_integer_powers_of_arrays_are_products_in_a_gradient():
    x = RNG.standard_normal(5)
    src = check(cubic_over_quadratic, x)
    assert "**" not in _code(src).replace("** 2", ""), src
    check_float32(cubic_over_quadratic, x)
    value, _ = ms.value_and_grad(cubic_over_quadratic)(x)
    assert value == cubic_over_quadratic(x)          # the forward keeps Python's x ** 3


# -- like terms collected, x ** 2 as a product, one division: up to rounding ----------

from ad_compiler.ir.interp import interpret  # noqa: E402


def _close(ir, build, *types):
    """The rewritten function (gradient algebra, then dce), checked against the
    original on random inputs up to rounding."""
    b, args = ir.new(*[(f"a{i}", t) for i, t in enumerate(types)])
    fn = ir.finish(b, *build(b, *args))
    new = dce(gradient_algebra(fn))
    for seed in (0, 1):
        inputs = ir.sample(fn, seed)
        for got, want in zip(interpret(new, *inputs), interpret(fn, *inputs)):
            tol = 1e-5 if np.asarray(want).dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
            assert np.asarray(got).dtype == np.asarray(want).dtype
    return new


def test_a_log_loss_through_a_sigmoid_is_p_minus_y():
    src = check(logistic_loss, WL, X, Y)
    lines = [ln for ln in _code(src).splitlines()[1:] if "y" in ln.split("=")[-1].split()]
    assert len(lines) == 1 and "-= y" in lines[0], src     # (p - y) / n: one op reads y
    assert "1 - y" not in src and "c - y" not in src, src
    check_float32(logistic_loss, WL, X, Y)


def test_cancelled_terms_are_dropped_and_equal_ones_merged(ir):
    def build(b, x, y, z):   # x*y*(1 - z) - (1 - x)*y*z  ==  x*y - y*z
        one = b.const(1.0)
        return [b.sub(b.mul(b.mul(x, y), b.sub(one, z)), b.mul(b.mul(b.sub(one, x), y), z))]
    new = _close(ir, build, ir.arr(4), ir.arr(4), ir.arr(4))
    assert ir.prims(new).count("mul") + ir.prims(new).count("sub") <= 3, new


def test_a_common_factor_multiplies_the_sum_once(ir):
    def build(b, x, y, z, w):   # -2*x*y - 2*x*z + w  ->  w - (y + z) * x * 2
        two = b.const(2.0)
        return [b.add(b.sub(b.neg(b.mul(b.mul(x, y), two)), b.mul(b.mul(x, z), two)), w)]
    new = _close(ir, build, ir.arr(5), ir.arr(5), ir.arr(5), ir.arr(5))
    assert ir.prims(new).count("mul") == 2 and "neg" not in ir.prims(new), new


def test_a_product_of_sums_that_does_not_cancel_stays(ir):
    def build(b, x, y, z, w):   # multiplied out it would take more ops
        return [b.add(b.mul(b.add(x, y), z), w)]
    new = _close(ir, build, ir.arr(3), ir.arr(3), ir.arr(3), ir.arr(3))
    assert ir.prims(new) == ["add", "mul", "add"]


def test_a_cancellation_that_would_change_the_shape_stays(ir):
    def build(b, x, y, z):   # x*y - x*y is zeros of shape (3, 4); z alone is (4,)
        return [b.add(b.sub(b.mul(x, y), b.mul(x, y)), z)]
    new = _close(ir, build, ir.arr(3, 4), ir.arr(3, 4), ir.arr(4))
    assert new.outputs[0].type.shape == (3, 4)


def test_terms_used_elsewhere_are_not_recomputed(ir):
    def build(b, x, y):
        t = b.mul(x, y)
        return [b.sub(b.add(t, b.mul(x, y)), b.mul(y, x)), t]
    new = _close(ir, build, ir.arr(3), ir.arr(3))
    assert ir.prims(new).count("mul") <= 2


def test_float32_terms_stay_float32(ir):
    def build(b, x, y):
        one = b.const(1.0)
        return [b.sub(b.mul(x, b.sub(one, y)), b.mul(b.sub(one, x), y))]
    t32 = ir.arr(6)
    t32 = type(t32)(t32.shape, np.dtype("float32"))
    new = _close(ir, build, t32, t32)
    assert new.outputs[0].type.dtype == np.float32 and "mul" not in ir.prims(new)


def test_a_square_is_a_product_shared_with_x_times_x():
    def f(x):
        return np.sum(np.exp(-x * x) + x ** 3 / (1 + x * x))
    x = RNG.standard_normal(6)
    src = check(f, x)
    assert "**" not in _code(src), src
    assert len(re.findall(r"\bx \* x\b", _code(src))) == 1, src
    check_float32(f, x)


def test_a_reciprocal_times_a_value_is_one_division():
    def f(x, w):
        return np.sum(np.sin(w) / (1 + x * x))   # d/dw: cos(w) * (1 / (1 + x*x))
    x, w = RNG.standard_normal(4), RNG.standard_normal(4)
    src = check(f, x, w, pos=1)
    code = _code(src)
    assert _divisions(src) == 1 and re.search(r"cos\w* /=? ", code), src   # cos(w) / (1 + x*x)
    check_float32(lambda w, x: f(x, w), w, x)


def test_the_elementwise_chain_takes_no_more_numpy_calls_than_this():
    from benchmarks.workloads import elementwise_chain
    x = RNG.standard_normal(10)
    src = check(elementwise_chain, x)
    # the names of results written in place (``dx = mul_pow_scalar_x``) are no calls
    function = _code(src[src.index("\ndef ") + 1:])   # the def, after the module's header
    statements = [ln for ln in function.splitlines()[1:-1] if "= f64_" not in ln
                  and not re.fullmatch(r"\s+\w+ = \w+", ln)]
    assert len(statements) <= 18, src
    check_float32(elementwise_chain, x)
