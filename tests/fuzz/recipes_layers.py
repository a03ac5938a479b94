"""Recipes for the activations, normalisations, embedding and dropout functional ops
(ad_compiler/ops/normalization.py, exposed in ops/operations.py).

Normalisations use a large epsilon (0.1) so that a row of nearly equal values does
not make the finite differences ill-conditioned; dropout is generated in eval mode
(a random mask cannot be compared with plain Python draw for draw); embedding without
``padding_idx`` (its rows get no gradient by definition, like ``stop_gradient``, so
finite differences do not apply).
"""
from __future__ import annotations

from .recipes import Reject

_OPS = "ad_compiler.ops.operations."


def _unary(fmt):
    return lambda g: fmt.format(g.arr(1, 2))


def _at_least_2d(g) -> str:
    x = g.arr(2, 2)
    if g.val(x).shape[1] < 1:
        raise Reject
    return x


def _layer_norm(g):
    x = g.arr(1, 2)
    last = g.val(x).shape[-1:]
    return f"ops.layer_norm({x}, {last!r}, None, None, 0.1)"


def _batch_norm(g):
    x = _at_least_2d(g)
    c = g.val(x).shape[1]
    if g.coin():
        return f"ops.batch_norm({x}, None, None, None, None, True, 0.1, 0.1)"
    return f"ops.batch_norm({x}, np.zeros({c}), np.ones({c}) * 2.0, np.ones({c}), None, False)"


def _embedding(g):
    table = g.arr(2, 2)
    rows = g.val(table).shape[0]
    ids = [i % rows for i in (0, 1, 0, 2)]
    return f"ops.embedding(np.array({ids}), {table})"


def _layer_norm_axes(g):
    x = _at_least_2d(g)
    return (f"ms.nn.normalization._layer_norm({x}, np.ones({g.val(x).shape[1:]!r}), None, "
            f"{g.choice(['1', '-1'])}, 1, 0.1)")


_GELU_MODES = ["'none'", "'tanh'"]

RECIPES = {
    _OPS + "relu6": lambda g: f"ops.relu6({g.arr(1, 2)} * 4.0)",
    _OPS + "leaky_relu": lambda g: f"ops.leaky_relu({g.arr(1, 2)}, {g.choice(['0.2', '0.01'])})",
    _OPS + "elu": lambda g: f"ops.elu({g.arr(1, 2)}, {g.choice(['1.0', '0.5'])})",
    _OPS + "gelu": lambda g: f"ops.gelu({g.arr(1, 2)}, {g.choice(_GELU_MODES)})",
    _OPS + "erf": _unary("ops.erf({0})"),
    _OPS + "silu": _unary("ops.silu({0})"),
    _OPS + "layer_norm": _layer_norm,
    _OPS + "layer_norm_axes": _layer_norm_axes,
    _OPS + "group_norm": lambda g: f"ops.group_norm({_at_least_2d(g)}, 1, None, None, 0.1)",
    _OPS + "batch_norm": _batch_norm,
    _OPS + "embedding": _embedding,
    _OPS + "dropout": lambda g: f"ops.dropout({g.arr(1, 2)}, 0.5, False)",
}
