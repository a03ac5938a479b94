"""Normalisation layers: BatchNorm1d, BatchNorm2d, LayerNorm, GroupNorm.

Invariants:

- Each ``construct`` calls the functional op of ``ops/normalization.py`` (the same
  lowering eagerly and compiled); which one is chosen by configuration only
  (``self.training``, ``use_batch_statistics``), so compiled code specialises on it.
- MindSpore's defaults: BatchNorm ``eps=1e-5, momentum=0.9``, parameters ``gamma``,
  ``beta`` (trainable) and ``moving_mean``/``moving_variance`` (``requires_grad=False``,
  named ``mean``/``variance`` when standalone, ``bn.moving_mean`` ... when nested);
  LayerNorm ``epsilon=1e-7``; GroupNorm ``eps=1e-5``.
- Training mode (``set_train()``) normalises with the batch's statistics (biased
  variance) and differentiates through them; eval mode (the default: ``training``
  starts False) uses the moving statistics, an affine map of the input.
- The moving statistics are updated at each call with batch statistics as
  ``moving = momentum * moving + (1 - momentum) * batch`` with the *unbiased* batch
  variance: eagerly by ``ops.batch_norm``, in compiled gradient code as a recorded
  Parameter write performed after the call (``LiftBuilder.write_parameter``; see
  docs/nn.md for which transforms perform it).
"""
from __future__ import annotations

import numpy as np

from .. import dtype as _mstype
from .. import ops as _ops
from ..ops.operations import _layer_norm_axes as _layer_norm
from ..tensor import unwrap
from .cell import Cell
from .layers import _initial_value
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "update_moving"]


def _param(init, shape, dtype, name, requires_grad=True) -> Parameter:
    return Parameter(_initial_value(init, shape, _mstype.to_numpy_dtype(dtype)), name=name,
                     requires_grad=requires_grad)


def _positive(value, what: str, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{owner} {what} must be a positive int, got {value!r}")
    return int(value)


def update_moving(x, mean: Parameter, var: Parameter, momentum: float) -> None:
    """``moving = momentum * moving + (1 - momentum) * batch`` for both statistics of
    ``x`` (N, C, ...), with the unbiased batch variance."""
    data = np.asarray(unwrap(x))
    axis = (0,) + tuple(range(2, data.ndim))
    count = data.size // data.shape[1]
    batch_mean = data.mean(axis=axis)
    batch_var = data.var(axis=axis, ddof=1) if count > 1 else np.zeros_like(batch_mean)
    for moving, batch in ((mean, batch_mean), (var, batch_var)):
        old = unwrap(moving)
        moving.set_data((momentum * old + (1.0 - momentum) * batch).astype(old.dtype))


class _BatchNorm(Cell):
    _ranks: tuple = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCHW", dtype=_mstype.float32):
        super().__init__()
        owner = type(self).__name__
        self.num_features = _positive(num_features, "num_features", owner)
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"{owner} momentum must be in [0, 1], got {momentum!r}")
        if data_format != "NCHW":
            raise ValueError(f"{owner} supports data_format='NCHW' only, got {data_format!r}")
        if use_batch_statistics not in (None, True, False):
            raise ValueError(f"{owner} use_batch_statistics must be None, True or False")
        self.eps, self.momentum, self.affine = float(eps), float(momentum), bool(affine)
        self.use_batch_statistics = use_batch_statistics
        c = self.num_features
        self.moving_mean = _param(moving_mean_init, (c,), dtype, "mean", requires_grad=False)
        self.moving_variance = _param(moving_var_init, (c,), dtype, "variance",
                                      requires_grad=False)
        self.gamma = _param(gamma_init, (c,), dtype, "gamma", requires_grad=self.affine)
        self.beta = _param(beta_init, (c,), dtype, "beta", requires_grad=self.affine)

    def batch_statistics(self) -> bool:
        """Whether this call normalises with the batch's statistics."""
        if self.use_batch_statistics is None:
            return bool(self.training)
        return self.use_batch_statistics

    def __call__(self, x):
        self._check_input(x)
        return self.construct(x)

    def _check_input(self, x) -> None:
        shape = np.shape(unwrap(x))
        if len(shape) not in self._ranks or shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}({self.num_features}) expects an input of "
                             f"{' or '.join(str(r) for r in self._ranks)} dimensions with "
                             f"{self.num_features} channels on axis 1, got shape {shape}")

    def construct(self, x):
        # ops.batch_norm's momentum weighs the batch: MindSpore's layer momentum weighs the
        # moving statistics
        return _ops.batch_norm(x, self.moving_mean, self.moving_variance, self.gamma,
                               self.beta, self.batch_statistics(), 1.0 - self.momentum, self.eps)

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma}, beta={self.beta}, moving_mean={self.moving_mean}, "
                f"moving_variance={self.moving_variance}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` inputs per channel ``C``."""
    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)`` inputs per channel ``C``."""
    _ranks = (4,)


class LayerNorm(Cell):
    """Normalise over axes ``begin_norm_axis:`` and scale by ``gamma``/``beta`` of shape
    ``normalized_shape`` (the axes ``begin_params_axis:``); ``epsilon`` 1e-7."""

    def __init__(self, normalized_shape, begin_norm_axis=-1, begin_params_axis=-1,
                 gamma_init="ones", beta_init="zeros", epsilon=1e-7, dtype=_mstype.float32):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(f"LayerNorm normalized_shape must be a tuple or list, "
                            f"got {type(normalized_shape).__name__}")
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.begin_norm_axis, self.begin_params_axis = begin_norm_axis, begin_params_axis
        self.epsilon = float(epsilon)
        self.gamma = _param(gamma_init, self.normalized_shape, dtype, "gamma")
        self.beta = _param(beta_init, self.normalized_shape, dtype, "beta")

    def construct(self, input_x):
        return _layer_norm(input_x, self.gamma, self.beta, self.begin_norm_axis,
                           self.begin_params_axis, self.epsilon)

    def extend_repr(self) -> str:
        return (f"normalized_shape={list(self.normalized_shape)}, "
                f"begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma={self.gamma}, beta={self.beta}")


class GroupNorm(Cell):
    """Split the channels of ``(N, C, ...)`` into ``num_groups`` groups, normalise each
    over its channels and positions, then scale per channel by ``gamma``/``beta``."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=_mstype.float32):
        super().__init__()
        self.num_groups = _positive(num_groups, "num_groups", "GroupNorm")
        self.num_channels = _positive(num_channels, "num_channels", "GroupNorm")
        if self.num_channels % self.num_groups:
            raise ValueError(f"GroupNorm num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.eps, self.affine = float(eps), bool(affine)
        c = self.num_channels
        self.gamma = _param(gamma_init, (c,), dtype, "gamma", requires_grad=self.affine)
        self.beta = _param(beta_init, (c,), dtype, "beta", requires_grad=self.affine)

    def construct(self, x):
        return _ops.group_norm(x, self.num_groups, self.gamma, self.beta, self.eps)

    def extend_repr(self) -> str:
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}"

