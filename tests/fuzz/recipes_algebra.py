"""Recipes of the patterns the algebra passes rewrite (docs/optimizations.md).

Not callables but spellings: stable softmax, log-softmax and log-sum-exp (the
shift by the max, with the reductions over the shifted axis or, to check that
nothing is dropped then, another one), a shift by the max that is not cancelled,
the logistic function spelled out, log-losses through it, additions of folded
zero arrays, doubled products with constants and reductions of broadcasts. Their
keys start with ``pattern.``; they belong to the ``algebra`` feature.
"""
from __future__ import annotations

from .recipes import Reject


def _axes(g, x):
    """(shift axis, reduction axis): the same one mostly, sometimes another."""
    nd = g.val(x).ndim
    axis = g.choice([str(i) for i in range(nd)] + ["-1", "None"])
    other = axis if g.coin(0.75) else g.choice([str(i) for i in range(nd)] + ["None"])
    return axis, other


def _max(x, axis):
    return f"np.max({x}, axis={axis}, keepdims=True)"


def stable_softmax(g):
    x = g.arr()
    a, r = _axes(g, x)
    e = f"np.exp({x} - {_max(x, a)})"
    return f"{e} / np.sum({e}, axis={r}, keepdims=True)"


def _log_softmax(g):
    """An array and its stable log-softmax, spelled out."""
    x = g.arr()
    a, r = _axes(g, x)
    s = f"({x} - {_max(x, a)})"
    return x, f"{s} - np.log(np.sum(np.exp({s}), axis={r}, keepdims=True))"


def stable_log_softmax(g):
    return _log_softmax(g)[1]


def stable_logsumexp(g):
    x = g.arr()
    a, r = _axes(g, x)
    return (f"{_max(x, a)} + np.log(np.sum(np.exp({x} - {_max(x, a)}), axis={r}, "
            f"keepdims=True))")


def softmax_xent(g):
    x, log_p = _log_softmax(g)
    return f"-np.sum({g.partner(x)} * ({log_p}))"


def shift_by_max(g):
    x = g.arr()
    a, _ = _axes(g, x)
    return g.choice([f"np.square({x} - {_max(x, a)})", f"({x} - {_max(x, a)}) * {g.partner(x)}",
                     f"np.exp({x} - {_max(x, a)}) * ({x} - {_max(x, a)})"])


def g_logistic(x, ones):
    return f"{ones[0]} / ({ones[1]} + np.exp(-{x}))"


def sigmoid_literal(g):
    x = g.num()
    one = g.choice([("1", "1"), ("1.0", "1.0")])
    return g.choice([g_logistic(x, one), f"{one[0]} / (np.exp(-{x}) + {one[1]})"])


def log_sigmoid_loss(g):
    x = g.arr()
    y = g.partner(x)
    p = g_logistic(f"(np.tanh({x}) * 3.0)", ("1", "1"))
    return g.choice([f"np.log({p})", f"{y} * np.log({p}) + (1 - {y}) * np.log(1 - {p})",
                     f"np.log(1 - {p}) * {y}", f"np.log({p}) + {p} * {y}"])


def zeros_add(g):
    x = g.arr()
    shape = g.val(x).shape
    return g.choice([f"{x} + np.zeros_like({x})", f"np.zeros({shape}) + {x} * 2.0",
                     f"{x} - np.zeros({shape})", f"{x} * np.ones({shape})",
                     f"{x} + np.zeros((2,) + {shape})"])


def doubled_term(g):
    x = g.arr()
    c = g.choice(["0.00025", "0.5", "3.0"])
    return g.choice([f"{c} * np.sum({x} * {x})", f"{c} * np.sum(np.square({x}))",
                     f"{c} * {x} * {x}"])


def broadcast_reduce(g):
    x = g.arr()
    shape = g.val(x).shape
    if len(shape) > 2:
        raise Reject
    return g.choice([f"np.sum(np.broadcast_to({x}, (3,) + {shape}), axis=0)",
                     f"np.mean(np.broadcast_to({x}, (2,) + {shape}), axis=0, keepdims=True)",
                     f"np.sum(np.broadcast_to({x}, (2,) + {shape}), axis=-1)"])


RECIPES = {f"pattern.{f.__name__}": f for f in (
    stable_softmax, stable_log_softmax, stable_logsumexp, softmax_xent, shift_by_max,
    sigmoid_literal, log_sigmoid_loss, zeros_add, doubled_term, broadcast_reduce)}
FEATURES = {k: "algebra" for k in RECIPES}
