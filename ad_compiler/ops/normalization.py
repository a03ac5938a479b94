"""Activations, normalisations and embedding lookup as lowerings (no new primitives).

Each function here is ``lower(b, ...)`` over the builder interface: compositions of
existing primitives (``where``, ``exp``, ``tanh``, ``mean``, ``take`` ...), so every
adjoint is the exact derivative of the composition and reads as the chain rule.
``ops.operations`` exposes them as MindSpore's functional ops (``ops.gelu``,
``ops.layer_norm`` ...) and the layers in ``nn`` call those same functions, so a
layer computes the same code eagerly and compiled.

Invariants:

* kinks take the derivative of the branch ``where`` selects: ReLU6 is 0 at 0 and 6,
  LeakyReLU is ``alpha`` at 0, ELU is ``alpha`` at 0 (MindSpore's ELUGrad);
* the branch ``where`` does not select is kept finite (ELU evaluates ``expm1`` on
  ``min(x, 0)`` written as a ``where``), so its zero cotangent never meets ``inf``;
* normalisations use the biased variance ``mean((x - mean(x))**2)`` over the
  reduced axes, with the batch statistics differentiated (training mode);
* ``embedding`` rows at ``padding_idx`` get no gradient; the others get the
  scatter-add of their cotangents (``take``'s adjoint).
"""
from __future__ import annotations

import math

import numpy as np

from ..ad.rules import find_lowering
from .elementwise import unary
from ..ir.core import AType

_take, _reshape, _mean, _var = (find_lowering(f) for f in (np.take, np.reshape, np.mean, np.var))


def _zero_if(b, cond, x):
    return b.where(cond, b.const(0.0), x)


# -- activations -------------------------------------------------------------------------

def lower_relu6(b, x):
    """``min(max(x, 0), 6)``; derivative 1 on ``(0, 6)``, 0 elsewhere."""
    x = b.const(x)
    inner = b.where(b.less(x, b.const(6.0)), x, b.const(6.0))
    return b.where(b.greater(x, b.const(0.0)), inner, b.const(0.0))


def lower_leaky_relu(b, x, alpha=0.2):
    """``x`` where ``x > 0``, else ``alpha * x``."""
    x = b.const(x)
    return b.where(b.greater(x, b.const(0.0)), x, b.mul(x, b.const(float(alpha))))


def lower_elu(b, x, alpha=1.0):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    x = b.const(x)
    positive = b.greater(x, b.const(0.0))
    negative_part = b.where(positive, b.const(0.0), x)  # exp never sees a large x
    return b.where(positive, x, b.mul(b.const(float(alpha)), b.expm1(negative_part)))


_GELU_C = math.sqrt(2.0 / math.pi)

# erf, elementwise (``rt.erf``: math.erf per element); d erf(x) = 2/sqrt(pi) exp(-x**2)
unary("erf", "rt.erf({0})", lambda b, g, out, x: b.mul(
    g, b.mul(b.const(2.0 / math.sqrt(math.pi)), b.exp(b.neg(b.mul(x, x))))))


def lower_erf(b, x):
    """``erf(x)`` elementwise."""
    return b.erf(b.const(x))


def lower_gelu(b, x, approximate="none"):
    """``x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2)))`` with ``approximate='none'`` (or
    False), ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))`` with ``'tanh'`` (or True)."""
    if approximate not in ("tanh", True, "none", False):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    x = b.const(x)
    if approximate in ("none", False):
        phi = b.add(b.const(1.0), b.erf(b.mul(x, b.const(1.0 / math.sqrt(2.0)))))
        return b.mul(b.mul(b.const(0.5), x), phi)
    cube = b.mul(b.mul(x, x), x)
    inner = b.mul(b.const(_GELU_C), b.add(x, b.mul(b.const(0.044715), cube)))
    return b.mul(b.mul(b.const(0.5), x), b.add(b.const(1.0), b.tanh(inner)))


def lower_silu(b, x):
    """``x * sigmoid(x)``."""
    x = b.const(x)
    return b.mul(x, b.sigmoid(x))


# -- normalisations ----------------------------------------------------------------------

def standardize(b, x, axis, eps):
    """``(x - mean) / sqrt(var + eps)`` over ``axis`` with the biased variance."""
    centered = b.sub(x, _mean(b, x, axis=axis, keepdims=True))
    var = _mean(b, b.mul(centered, centered), axis=axis, keepdims=True)
    return b.div(centered, b.sqrt(b.add(var, b.const(float(eps)))))


def _affine(b, y, weight, bias, shape):
    """``y * weight + bias`` with both reshaped to ``shape`` (None: left out)."""
    if weight is not None:
        y = b.mul(y, _reshape(b, b.const(weight), shape))
    if bias is not None:
        y = b.add(y, _reshape(b, b.const(bias), shape))
    return y


def channel_shape(ndim: int, channels: int) -> tuple:
    """``(1, C, 1, ...)``: a per-channel vector broadcast against ``(N, C, ...)``."""
    return (1, channels) + (1,) * (ndim - 2)


def lower_batch_norm_batch(b, x, weight, bias, eps):
    """Batch normalisation with the batch's statistics (training mode), differentiated."""
    x = b.const(x)
    t = b.type_of(x)
    _check_rank(t.ndim, 2, "batch_norm", "(N, C, ...)")
    axis = (0,) + tuple(range(2, t.ndim))
    return _affine(b, standardize(b, x, axis, eps), weight, bias, channel_shape(t.ndim, t.shape[1]))


def lower_batch_norm_moving(b, x, mean, var, weight, bias, eps):
    """Batch normalisation with given (moving) statistics: an affine map of ``x``."""
    x = b.const(x)
    t = b.type_of(x)
    _check_rank(t.ndim, 2, "batch_norm", "(N, C, ...)")
    shape = channel_shape(t.ndim, t.shape[1])
    scale = b.sqrt(b.add(_reshape(b, b.const(var), shape), b.const(float(eps))))
    y = b.div(b.sub(x, _reshape(b, b.const(mean), shape)), scale)
    return _affine(b, y, weight, bias, shape)


def lower_batch_norm(b, input_x, running_mean, running_var, weight, bias, training=False,
                     momentum=0.1, eps=1e-5):
    """``ops.batch_norm``: the batch's statistics when ``training``, else the running ones.

    In training mode, when ``running_mean``/``running_var`` are Parameters, the compiled
    code also sets them to ``(1 - momentum) * running + momentum * batch`` (unbiased
    batch variance) after the call; eagerly ``operations.batch_norm`` does it.
    """
    if not training:
        return lower_batch_norm_moving(b, input_x, running_mean, running_var, weight, bias, eps)
    out = lower_batch_norm_batch(b, input_x, weight, bias, eps)
    if b.parameter_of(running_mean) is not None and b.parameter_of(running_var) is not None:
        lower_update_moving(b, input_x, running_mean, running_var, 1.0 - momentum)
    return out


def lower_update_moving(b, x, mean, var, keep):
    """Write ``keep * moving + (1 - keep) * batch`` into the Parameters ``mean``/``var``."""
    x = b.stop_gradient(b.const(x))
    t = b.type_of(x)
    axis = (0,) + tuple(range(2, t.ndim))
    batch_mean = _mean(b, x, axis=axis)
    if t.size // t.shape[1] > 1:
        batch_var = _var(b, x, axis=axis, ddof=1)
    else:
        batch_var = b.mul(batch_mean, b.const(0.0))
    for target, batch in ((mean, batch_mean), (var, batch_var)):
        new = b.add(b.mul(b.const(float(keep)), target), b.mul(b.const(1.0 - keep), batch))
        b.write_parameter(target, new)


def lower_layer_norm(b, input_x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``ops.layer_norm``: normalise over the trailing ``normalized_shape`` axes."""
    x = b.const(input_x)
    t = b.type_of(x)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(t.shape[t.ndim - len(shape):]) != shape or len(shape) > t.ndim:
        raise ValueError(f"layer_norm: normalized_shape {shape} does not match the trailing "
                         f"axes of an input of shape {t.shape}")
    axis = tuple(range(t.ndim - len(shape), t.ndim))
    return _affine(b, standardize(b, x, axis, eps), weight, bias, shape)


def lower_layer_norm_axes(b, x, gamma, beta, begin_norm_axis, begin_params_axis, eps):
    """MindSpore's LayerNorm: statistics over axes ``begin_norm_axis:``, ``gamma``/``beta``
    of the shape of axes ``begin_params_axis:``."""
    x = b.const(x)
    ndim = b.type_of(x).ndim
    norm_axis = _axis_index(begin_norm_axis, ndim, "begin_norm_axis")
    params_axis = _axis_index(begin_params_axis, ndim, "begin_params_axis")
    y = standardize(b, x, tuple(range(norm_axis, ndim)), eps)
    shape = b.type_of(x).shape[params_axis:]
    return _affine(b, y, gamma, beta, tuple(shape))


def lower_group_norm(b, input_x, num_groups, weight=None, bias=None, eps=1e-5):
    """``ops.group_norm``: channels split into ``num_groups``, each normalised over its
    channels and every spatial position."""
    x = b.const(input_x)
    t = b.type_of(x)
    _check_rank(t.ndim, 2, "group_norm", "(N, C, ...)")
    n, c = t.shape[0], t.shape[1]
    if c % num_groups:
        raise ValueError(f"group_norm: {c} channels cannot be split into {num_groups} groups")
    grouped = _reshape(b, x, (n, num_groups, -1))
    y = _reshape(b, standardize(b, grouped, (2,), eps), tuple(t.shape))
    return _affine(b, y, weight, bias, channel_shape(t.ndim, c))


def lower_embedding(b, input, weight, padding_idx=None):  # noqa: A002 - MindSpore's name
    """``weight[input]``: rows of the table; the ``padding_idx`` row gets no gradient."""
    table = b.const(weight)
    ids = b.const(input)
    if b.type_of(ids).dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be integers, got {b.type_of(ids).dtype}")
    rows = b.type_of(table).shape[0]
    out = _take(b, table, ids, axis=0)
    if padding_idx is None:
        return out
    padding = padding_idx + rows if padding_idx < 0 else padding_idx
    is_padding = b.expand_dims(b.equal(ids, b.const(padding)), axis=-1)
    return b.where(is_padding, b.stop_gradient(out), out)


# -- dropout --------------------------------------------------------------------------

def dropout_mask(shape: tuple, dtype, keep: float):
    """``draw()``: kept elements ``1 / keep``, dropped ``0``, from ``np.random`` (an element
    is kept when its ``random_sample`` is below ``keep``)."""
    def draw():
        return ((np.random.random_sample(shape) < keep) / keep).astype(dtype)
    return draw


def lower_dropout(b, input, p=0.5, training=True, seed=None):  # noqa: A002 - MindSpore's name
    """``ops.dropout``: zero each element with probability ``p``, scale the rest by
    ``1 / (1 - p)``; the identity when not ``training`` or ``p == 0``. The mask is drawn
    at each call, eagerly or by the gradient function before it runs the compiled code;
    the gradient goes through it (a product with a constant)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: p must be a float in [0, 1), got {p!r}")
    x = b.const(input)
    if not training or p == 0.0:
        return x
    t = b.type_of(x)
    mask_type = AType(tuple(t.shape), t.dtype)
    mask = b.random_input(mask_type, dropout_mask(mask_type.shape, t.dtype, 1.0 - p),
                          "dropout in training mode")
    return b.mul(x, b.const(mask))


def _axis_index(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"LayerNorm {what}={axis} is out of range for a {ndim}-d input")
    return axis + ndim if axis < 0 else axis


def _check_rank(ndim: int, least: int, what: str, expected: str) -> None:
    if ndim < least:
        raise ValueError(f"{what}: expected an input of shape {expected}, got {ndim} dimension(s)")
