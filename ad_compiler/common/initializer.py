"""Initializers, as ``mindspore.common.initializer``: objects that fill a new array.

``initializer(init, shape, dtype)`` returns a Tensor of ``shape`` filled by ``init``:
an Initializer instance, a name (``'normal'``, ``'zeros'``, ``'xavier_uniform'`` ...),
a number, or an array / Tensor of that shape. Layers' ``weight_init``/``bias_init``
accept the same. Random initializers draw from ``np.random``'s global generator, so
``np.random.seed`` (or ``ms.set_seed`` where available) makes them reproducible.

Fans follow MindSpore: for a 2-d shape ``(out, in)``, ``fan_in = in``,
``fan_out = out``; for a convolution weight ``(out, in, *kernel)`` both are
multiplied by the kernel size; a 1-d shape has ``fan_in = fan_out = shape[0]``.

>>> np.random.seed(0)
>>> w = initializer(HeUniform(), (4, 3))
>>> w.shape, bool(np.all(np.abs(w.asnumpy()) <= np.sqrt(6 / 3)))
((4, 3), True)
>>> initializer('ones', (2,)).asnumpy()
array([1., 1.], dtype=float32)
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtype as _mstype
from ..tensor import Tensor, unwrap

__all__ = ["Initializer", "initializer", "Normal", "Uniform", "XavierUniform", "XavierNormal",
           "HeUniform", "HeNormal", "TruncatedNormal", "One", "Zero", "Constant"]


class Initializer:
    """Base class: ``init(shape)`` returns a float64 ndarray of ``shape``."""

    def __call__(self, shape) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        config = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({config})"


class Zero(Initializer):
    def __call__(self, shape):
        return np.zeros(shape)


class One(Initializer):
    def __call__(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    """Every element ``value``."""

    def __init__(self, value):
        self.value = value

    def __call__(self, shape):
        return np.full(shape, self.value, dtype=float)


class Normal(Initializer):
    """``N(mean, sigma**2)``; MindSpore's defaults ``sigma=0.01, mean=0.0``."""

    def __init__(self, sigma=0.01, mean=0.0):
        self.sigma, self.mean = sigma, mean

    def __call__(self, shape):
        return np.random.normal(self.mean, self.sigma, shape)


class Uniform(Initializer):
    """``U(-scale, scale)``; MindSpore's default ``scale=0.07``."""

    def __init__(self, scale=0.07):
        self.scale = scale

    def __call__(self, shape):
        return np.random.uniform(-self.scale, self.scale, shape)


class TruncatedNormal(Initializer):
    """``N(mean, sigma**2)`` redrawn outside ``[a, b]``; defaults ``sigma=0.01, mean=0,
    a=-2, b=2`` (absolute bounds, as MindSpore)."""

    def __init__(self, sigma=0.01, mean=0.0, a=-2.0, b=2.0):
        if not a < b:
            raise ValueError(f"TruncatedNormal needs a < b, got a={a}, b={b}")
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def __call__(self, shape):
        out = np.random.normal(self.mean, self.sigma, shape)
        bad = (out < self.a) | (out > self.b)
        while np.any(bad):
            out[bad] = np.random.normal(self.mean, self.sigma, int(np.sum(bad)))
            bad = (out < self.a) | (out > self.b)
        return out


def _fans(shape) -> tuple[int, int]:
    shape = tuple(shape)
    if len(shape) < 1:
        raise ValueError("a fan-based initializer needs at least a 1-d shape")
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity: str, negative_slope) -> float:
    """MindSpore's ``calculate_gain`` for the names it knows."""
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d", "conv3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if negative_slope is None else negative_slope
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unknown nonlinearity {nonlinearity!r}")


class XavierUniform(Initializer):
    """``U(-b, b)`` with ``b = gain * sqrt(6 / (fan_in + fan_out))``."""

    def __init__(self, gain=1):
        self.gain = gain

    def __call__(self, shape):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return np.random.uniform(-bound, bound, shape)


class XavierNormal(Initializer):
    """``N(0, s**2)`` with ``s = gain * sqrt(2 / (fan_in + fan_out))``."""

    def __init__(self, gain=1):
        self.gain = gain

    def __call__(self, shape):
        fan_in, fan_out = _fans(shape)
        return np.random.normal(0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)), shape)


class _He(Initializer):
    def __init__(self, negative_slope=0, mode="fan_in", nonlinearity="leaky_relu"):
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape) -> float:
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


class HeUniform(_He):
    """``U(-b, b)`` with ``b = gain * sqrt(3 / fan)``; ``HeUniform(math.sqrt(5))`` is
    ``U(±1/sqrt(fan_in))``, Dense's and Conv's default."""

    def __call__(self, shape):
        bound = math.sqrt(3.0) * self._std(shape)
        return np.random.uniform(-bound, bound, shape)


class HeNormal(_He):
    """``N(0, (gain / sqrt(fan))**2)``."""

    def __call__(self, shape):
        return np.random.normal(0.0, self._std(shape), shape)


_NAMES = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal,
    "uniform": Uniform, "truncatednormal": TruncatedNormal, "truncated_normal": TruncatedNormal,
    "xavier_uniform": XavierUniform, "xavieruniform": XavierUniform,
    "xavier_normal": XavierNormal, "xaviernormal": XavierNormal,
    "he_uniform": HeUniform, "heuniform": HeUniform, "he_normal": HeNormal, "henormal": HeNormal,
}


def as_initializer(init) -> Initializer | None:
    """The Initializer an ``init`` argument names (None for arrays and Tensors)."""
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        try:
            return _NAMES[init.lower()]()
        except KeyError:
            raise ValueError(f"unknown initializer {init!r}; expected one of "
                             f"{sorted(set(_NAMES))}, a number, an array or a Tensor") from None
    if isinstance(init, (int, float)) and not isinstance(init, bool):
        return Constant(init)
    return None


def initial_array(init, shape, np_dtype, what: str = "For 'initializer', init") -> np.ndarray:
    """An ndarray of ``shape`` and ``np_dtype`` from any ``init`` form; ``what`` names the
    argument in the errors (an array of another shape is a ValueError, as in MindSpore)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    maker = as_initializer(init)
    if maker is not None:
        return np.asarray(maker(shape)).astype(np_dtype)
    if isinstance(init, (Tensor, np.ndarray, list, tuple)):
        arr = np.asarray(unwrap(init))
        if arr.shape != shape:
            raise ValueError(f"{what} must have shape {shape}, got an array of shape "
                             f"{arr.shape}")
        return arr.astype(np_dtype)
    raise TypeError(f"an initializer must be an Initializer, a name, a number, an array or a "
                    f"Tensor, got {type(init).__name__}")


def initializer(init, shape=None, dtype=_mstype.float32) -> Tensor:
    """A Tensor of ``shape`` and ``dtype`` filled by ``init`` (see the module docstring)."""
    if shape is None:
        if isinstance(init, (Tensor, np.ndarray)):
            shape = np.shape(unwrap(init))
        else:
            raise ValueError("initializer needs a shape unless init is an array or a Tensor")
    return Tensor(initial_array(init, shape, _mstype.to_numpy_dtype(dtype)))
