"""Algebra on adjoints: each rewrite fires on its pattern, stays away where it would
be wrong, and leaves gradients equal to central finite differences (float64) and
float32 in float32. Generated source is inspected to see which rewrite fired."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms

RNG = np.random.default_rng(7)


def central(f, args, pos, eps=1e-6):
    """Central finite differences of the scalar ``f(*args)`` w.r.t. ``args[pos]``."""
    x = np.array(args[pos], dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += eps
        minus[i] -= eps
        hi = f(*args[:pos], plus, *args[pos + 1:])
        lo = f(*args[:pos], minus, *args[pos + 1:])
        g[i] = (hi - lo) / (2 * eps)
    return g


def check(f, *args, pos=0, rtol=1e-6, atol=1e-7):
    """The compiled gradient against finite differences; returns the adjoint source."""
    got = ms.grad(f, grad_position=pos)(*args)
    np.testing.assert_allclose(np.asarray(got), central(f, list(args), pos), rtol=rtol, atol=atol)
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
    body = [ln for ln in src.splitlines()[1:] if not ln.strip().startswith("#")]
    assert len(body) == 11, src       # one statement per op, no stabiliser gradient
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
    want = central(lambda z: plain(z), [Z], 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
