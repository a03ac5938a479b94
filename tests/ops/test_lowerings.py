"""Lowerings (np.*, math.*, operator.*, methods, attributes) against plain NumPy.

Each case lowers a call twice, into IR (run by the reference interpreter) and
eagerly (EagerBuilder), and compares both with NumPy computing the same call;
the gradient of the lowered IR is then checked against finite differences of
the NumPy expression, so composite lowerings (softmax, clip, dot ...) are
differentiated correctly and not only evaluated.
"""
from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers the primitives)
from ad_compiler.ad import rules
from ad_compiler.errors import UnsupportedOperationError
from ad_compiler.ir.builder import EagerBuilder
from ad_compiler.ir.core import AType
from ad_compiler.ops import nn_ops


def low(obj):
    lower = rules.find_lowering(obj)
    assert lower is not None, f"no lowering for {obj!r}"
    return lower


M, A = rules.METHODS, rules.ATTRIBUTES

# (id, lowering call on builder values, input shapes (float = Python float), NumPy oracle)
CASES = [
    ("np.sum-axis1-keepdims", lambda b, x: low(np.sum)(b, x, axis=1, keepdims=True), [(2, 3)],
     lambda x: np.sum(x, axis=1, keepdims=True)),
    ("np.sum-all", lambda b, x: low(np.sum)(b, x), [(2, 3)], np.sum),
    ("x.sum-axis0", lambda b, x: M["sum"](b, x, axis=0), [(2, 3)], lambda x: x.sum(axis=0)),
    ("x.sum-keep_dims", lambda b, x: M["sum"](b, x, 1, keep_dims=True), [(2, 3)],
     lambda x: x.sum(1, keepdims=True)),
    ("np.mean-axis-tuple", lambda b, x: low(np.mean)(b, x, axis=(0, 2)), [(2, 3, 4)],
     lambda x: np.mean(x, axis=(0, 2))),
    ("x.mean", lambda b, x: M["mean"](b, x), [(2, 3)], lambda x: x.mean()),
    ("np.max-axis1", lambda b, x: low(np.max)(b, x, axis=1), [(2, 3)],
     lambda x: np.max(x, axis=1)),
    ("np.amin", lambda b, x: low(np.amin)(b, x, axis=0, keepdims=True), [(2, 3)],
     lambda x: np.amin(x, axis=0, keepdims=True)),
    ("x.max", lambda b, x: M["max"](b, x), [(4,)], lambda x: x.max()),
    ("x.T", lambda b, x: A["T"](b, x), [(2, 3)], lambda x: x.T),
    ("x.reshape-args", lambda b, x: M["reshape"](b, x, 2, 3), [(6,)], lambda x: x.reshape(2, 3)),
    ("x.reshape-tuple", lambda b, x: M["reshape"](b, x, (3, -1)), [(6,)],
     lambda x: x.reshape((3, -1))),
    ("np.reshape", lambda b, x: low(np.reshape)(b, x, (3, 2)), [(2, 3)],
     lambda x: np.reshape(x, (3, 2))),
    ("x.flatten", lambda b, x: M["flatten"](b, x), [(2, 3)], lambda x: x.flatten()),
    ("x.transpose-args", lambda b, x: M["transpose"](b, x, 2, 0, 1), [(2, 3, 4)],
     lambda x: x.transpose(2, 0, 1)),
    ("x.transpose-tuple", lambda b, x: M["transpose"](b, x, (1, 0, -1)), [(2, 3, 4)],
     lambda x: x.transpose((1, 0, -1))),
    ("np.transpose", lambda b, x: low(np.transpose)(b, x), [(2, 3, 4)], np.transpose),
    ("np.expand_dims", lambda b, x: low(np.expand_dims)(b, x, (0, -1)), [(2, 3)],
     lambda x: np.expand_dims(x, (0, -1))),
    ("np.squeeze-all", lambda b, x: low(np.squeeze)(b, x), [(1, 3, 1)], np.squeeze),
    ("x.squeeze-axis", lambda b, x: M["squeeze"](b, x, 0), [(1, 3, 1)], lambda x: x.squeeze(0)),
    ("np.concatenate", lambda b, x, y: low(np.concatenate)(b, [x, y], axis=1), [(2, 3), (2, 1)],
     lambda x, y: np.concatenate([x, y], axis=1)),
    ("np.concatenate-None", lambda b, x, y: low(np.concatenate)(b, (x, y), axis=None),
     [(2, 3), (4,)], lambda x, y: np.concatenate((x, y), axis=None)),
    ("np.stack", lambda b, x, y: low(np.stack)(b, [x, y, x], axis=-1), [(2, 3), (2, 3)],
     lambda x, y: np.stack([x, y, x], axis=-1)),
    ("np.broadcast_to", lambda b, x: low(np.broadcast_to)(b, x, (4, 3)), [(3,)],
     lambda x: np.broadcast_to(x, (4, 3))),
    ("np.pad", lambda b, x: low(np.pad)(b, x, ((1, 0), (2, 1))), [(2, 3)],
     lambda x: np.pad(x, ((1, 0), (2, 1)))),
    ("np.matmul-batched", lambda b, x, y: low(np.matmul)(b, x, y), [(2, 2, 3), (3, 4)],
     np.matmul),
    ("operator.matmul-vec", lambda b, x, y: low(operator.matmul)(b, x, y), [(3,), (3,)],
     operator.matmul),
    ("np.dot-1d-1d", lambda b, x, y: low(np.dot)(b, x, y), [(3,), (3,)], np.dot),
    ("np.dot-2d-1d", lambda b, x, y: low(np.dot)(b, x, y), [(2, 3), (3,)], np.dot),
    ("np.dot-1d-2d", lambda b, x, y: low(np.dot)(b, x, y), [(3,), (3, 2)], np.dot),
    ("np.dot-2d-2d", lambda b, x, y: low(np.dot)(b, x, y), [(2, 3), (3, 2)], np.dot),
    ("np.dot-scalar", lambda b, x, y: low(np.dot)(b, x, y), [float, (2, 3)], np.dot),
    ("x.dot", lambda b, x, y: M["dot"](b, x, y), [(2, 3), (3,)], lambda x, y: x.dot(y)),
    ("math.exp", lambda b, a: low(math.exp)(b, a), [float], math.exp),
    ("math.log", lambda b, a: low(math.log)(b, a), [float], math.log),
    ("math.log-base", lambda b, a: low(math.log)(b, a, 3.0), [float], lambda a: math.log(a, 3.0)),
    ("math.sin*cos", lambda b, a: low(operator.mul)(b, low(math.sin)(b, a), low(math.cos)(b, a)),
     [float], lambda a: math.sin(a) * math.cos(a)),
    ("math.tanh", lambda b, a: low(math.tanh)(b, a), [float], math.tanh),
    ("math.sqrt", lambda b, a: low(math.sqrt)(b, a), [float], math.sqrt),
    ("np.power-static", lambda b, x: low(np.power)(b, x, 3), [(3,)], lambda x: np.power(x, 3)),
    ("x**2.5", lambda b, x: low(operator.pow)(b, x, 2.5), [(3,)], lambda x: x ** 2.5),
    ("2.0**x", lambda b, x: low(operator.pow)(b, 2.0, x), [(3,)], lambda x: 2.0 ** x),
    ("x**y", lambda b, x, y: low(np.power)(b, x, y), [(2, 3), (3,)], np.power),
    ("np.clip", lambda b, x: low(np.clip)(b, x, -0.5, 0.7), [(5,)],
     lambda x: np.clip(x, -0.5, 0.7)),
    ("np.where", lambda b, x, y: low(np.where)(b, low(operator.gt)(b, x, y), x, 0.5),
     [(2, 3), (3,)], lambda x, y: np.where(x > y, x, 0.5)),
    ("np.true_divide", lambda b, x, y: low(np.true_divide)(b, x, y), [(3,), (3,)], np.true_divide),
    ("abs", lambda b, x: low(abs)(b, x), [(3,)], abs),
    ("x.astype-f32", lambda b, x: M["astype"](b, x, np.float32), [(3,)],
     lambda x: x.astype(np.float32)),
    ("softmax", lambda b, x: nn_ops.lower_softmax(b, x, axis=-1), [(2, 3)],
     lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    ("softmax-axis0", lambda b, x: nn_ops.lower_softmax(b, x, axis=0), [(2, 3)],
     lambda x: np.exp(x) / np.exp(x).sum(0, keepdims=True)),
    ("log_softmax", lambda b, x: nn_ops.lower_log_softmax(b, x, axis=1), [(2, 3)],
     lambda x: x - np.log(np.exp(x).sum(1, keepdims=True))),
]


def _values(adcheck, key, specs):
    """Inputs away from 0 (kinks, poles); positive for logs, roots and real powers."""
    positive = key.startswith(("math.log", "math.sqrt", "np.power")) or "**" in key
    rng = adcheck.rng_for(key)
    domain = "positive" if positive else "nonzero"
    return [float(adcheck.draw(rng, (), domain)) if s is float else adcheck.draw(rng, s, domain)
            for s in specs]


def _lowered(adcheck, lower, values):
    b, args = adcheck.new_function("lowered", [AType.of(v) for v in values])
    return adcheck.finish(b, "lowered", [b.const(lower(b, *args))])


@pytest.mark.parametrize("key, lower, specs, oracle", CASES, ids=[c[0] for c in CASES])
def test_lowering_evaluates_like_numpy(adcheck, key, lower, specs, oracle):
    values = _values(adcheck, key, specs)
    expected = oracle(*values)
    (compiled,) = adcheck.run(_lowered(adcheck, lower, values), *values)
    eager = lower(EagerBuilder(), *values)
    for got in (compiled, eager):
        assert np.shape(got) == np.shape(expected)
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("key, lower, specs, oracle",
                         [c for c in CASES if "astype" not in c[0]], ids=[
                             c[0] for c in CASES if "astype" not in c[0]])
def test_lowering_gradient_matches_numpy_finite_differences(adcheck, key, lower, specs, oracle):
    values = _values(adcheck, key, specs)
    fn = _lowered(adcheck, lower, values)
    rng = adcheck.rng_for(key + "-ct")
    weight = adcheck.like(np.asarray(oracle(*values)), rng)
    grads = adcheck.run(adcheck.reverse(fn), *values, weight)

    def scalar(vals):
        return adcheck.inner(weight, oracle(*vals))

    for i in range(len(values)):
        adcheck.assert_close(grads[i], adcheck.numeric_grad(scalar, values, i), f"{key} d/d{i}")


def test_softmax_is_stable_for_large_inputs(adcheck):
    x = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1000.0, -1000.0]])
    shifted = x - x.max(axis=-1, keepdims=True)
    with np.errstate(all="raise"):
        soft = nn_ops.lower_softmax(EagerBuilder(), x)
        logsoft = nn_ops.lower_log_softmax(EagerBuilder(), x)
    np.testing.assert_allclose(soft, np.exp(shifted) / np.exp(shifted).sum(-1, keepdims=True))
    np.testing.assert_allclose(logsoft, shifted - np.log(np.exp(shifted).sum(-1, keepdims=True)))


def _ops_of(adcheck, lower, values):
    return [op.prim for op in _lowered(adcheck, lower, values).body.ops]


def test_identity_movements_emit_no_op(adcheck):
    v = np.ones(3)
    assert _ops_of(adcheck, lambda b, x: A["T"](b, x), [v]) == []
    assert _ops_of(adcheck, lambda b, x: M["reshape"](b, x, 3), [v]) == []
    assert _ops_of(adcheck, lambda b, x: low(np.squeeze)(b, x), [v]) == []
    assert _ops_of(adcheck, lambda b, x: M["transpose"](b, x, 0), [v]) == []


def test_static_exponent_lowers_to_pow_scalar(adcheck):
    assert _ops_of(adcheck, lambda b, x: low(operator.pow)(b, x, 3), [np.ones(3)]) == ["pow_scalar"]
    # ** 2 is a square, emitted as x * x (faster than x ** 2 on Python floats)
    assert _ops_of(adcheck, lambda b, x: low(operator.pow)(b, x, 2), [np.ones(3)]) == ["square"]
    assert "pow" in _ops_of(adcheck, lambda b, x, y: low(operator.pow)(b, x, y),
                            [np.ones(3), 2.0])


def test_float32_lowerings_stay_float32(adcheck):
    x = np.ones((2, 3), np.float32)
    for lower in (lambda b, v: low(np.mean)(b, v, axis=0), lambda b, v: nn_ops.lower_softmax(b, v),
                  lambda b, v: low(operator.mul)(b, v, 2.0), lambda b, v: low(np.clip)(b, v, 0, 1)):
        (out,) = adcheck.run(_lowered(adcheck, lower, [x]), x)
        assert out.dtype == np.float32


def test_np_dot_out_is_rejected(adcheck):
    with pytest.raises(UnsupportedOperationError, match="np.dot"):
        _lowered(adcheck, lambda b, x, y: low(np.dot)(b, x, y, np.empty(2)),
                 [np.ones((2, 3)), np.ones(3)])


def test_reduction_out_argument_is_rejected(adcheck):
    with pytest.raises(UnsupportedOperationError, match="out="):
        _lowered(adcheck, lambda b, x: low(np.sum)(b, x, 0, None, np.empty(3)), [np.ones((2, 3))])


def test_bad_reshape_is_a_value_error(adcheck):
    with pytest.raises(ValueError, match="cannot reshape"):
        _lowered(adcheck, lambda b, x: M["reshape"](b, x, 4, 2), [np.ones(6)])
