"""Optimizers: SGD, Momentum, Adam, AdamWeightDecay, Adagrad, RMSProp (MindSpore 2.x).

Invariants:

- ``optimizer(grads)`` runs eagerly, outside compiled code: ``grads`` holds one
  gradient per entry of ``optimizer.parameters``, in that order (a wrong count is
  a RuntimeError). Each update is a few vectorised NumPy expressions per
  Parameter, in the Parameter's dtype; the Parameter gets a fresh array (its value
  is replaced, never aliased), its state arrays (moments) are updated in place.
- The learning rate of step ``t`` (counted from 0, ``global_step``) is a float, the
  ``t``-th entry of a list / 1-D Tensor (stepping past its end raises
  RuntimeError) or ``schedule(t)`` for a :class:`LearningRateSchedule`.
- Weight decay adds ``weight_decay * p`` to the gradient before the update
  (AdamWeightDecay adds it to the update instead, as MindSpore does). Without
  groups it skips every Parameter whose name contains ``gamma`` or ``beta``;
  a group's ``weight_decay`` applies to all of its Parameters. A Cell as
  ``weight_decay`` is MindSpore's dynamic decay: ``weight_decay(step)``.
- Groups: a list of dicts ``{'params': [...], 'lr': ..., 'weight_decay': ...,
  'grad_centralization': bool}`` plus optionally ``{'order_params': [...]}``, which
  fixes the order of ``optimizer.parameters`` (and so of ``grads``). Gradient
  centralization (conv Parameters only) subtracts from a gradient of rank >= 2
  whose axis 1 is a multiple of 16 its mean over the axes after the first, after
  the weight decay, as MindSpore's ``Centralization``.
- ``loss_scale`` divides the gradients first.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor, unwrap, wrap
from .cell import Cell
from .lr_schedule import LearningRateSchedule
from .parameter import Parameter, ParameterTuple

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "Adagrad", "RMSProp"]


class _LearningRate:
    """One group's learning rate: a constant, a per-step table or a schedule."""

    def __init__(self, value, who: str):
        if isinstance(value, LearningRateSchedule):
            self.kind, self.value = "schedule", value
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if value < 0:
                raise ValueError(f"For '{who}', learning_rate must be >= 0, got {value}")
            self.kind, self.value = "constant", float(value)
        elif isinstance(value, (list, tuple, Tensor, np.ndarray)):
            table = np.asarray(unwrap(value), dtype=np.float64)
            if table.ndim == 0:
                self.kind, self.value = "constant", float(table)
            elif table.ndim == 1 and table.size:
                self.kind, self.value = "table", table
            else:
                raise ValueError(f"For '{who}', a learning-rate Tensor must be 0-D or 1-D, "
                                 f"got shape {table.shape}")
        else:
            raise TypeError(f"For '{who}', learning_rate must be a float, a list, a Tensor or a "
                            f"LearningRateSchedule, got {type(value).__name__}")
        self.who = who

    def at(self, step: int) -> float:
        if self.kind == "constant":
            return self.value
        if self.kind == "schedule":
            return float(unwrap(self.value(step)))
        if step >= len(self.value):
            raise RuntimeError(f"For '{self.who}', the learning-rate list has {len(self.value)} "
                               f"entries and step {step} needs entry {step}: give one rate per "
                               f"training step, or use a LearningRateSchedule")
        return float(self.value[step])


class Optimizer(Cell):
    """Base class of the optimizers: groups, learning rates, weight decay, the step counter.

    Subclasses define ``_slots`` (state array names and initial values) and
    ``_step(p, g, lr, state)`` returning the new value of ``p``.
    """

    _slots: tuple = ()

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        who = type(self).__name__
        self.loss_scale = _positive_float(loss_scale, who, "loss_scale")
        params, settings = _groups(parameters, learning_rate, weight_decay, who)
        self.__dict__["parameters"] = ParameterTuple(params)
        self.__dict__["_settings"] = settings
        self.__dict__["_state"] = [{slot: np.full(p.shape, init, unwrap(p).dtype)
                                    for slot, init in self._initial_slots()} for p in params]
        self.__dict__["global_step"] = 0  # not an attribute write: compiled code stays valid
        self.learning_rate = learning_rate

    def _initial_slots(self):
        return self._slots

    def __call__(self, gradients):
        return self.construct(gradients)

    def construct(self, gradients):
        grads = _check_gradients(gradients, self.parameters, type(self).__name__)
        step = self.global_step
        for param, grad, (lr, decay, centralize), state in zip(self.parameters, grads,
                                                                self._settings, self._state):
            g = grad if self.loss_scale == 1.0 else grad / self.loss_scale
            rate, wd = lr.at(step), _decay_at(decay, step)
            p = unwrap(param)
            g = self._decayed(p, g, wd)
            if centralize and g.ndim >= 2 and g.shape[1] % 16 == 0:
                g = g - g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)
            new = self._step(p, g, rate, state, wd)
            param._data = new.astype(p.dtype, copy=False)
        self.__dict__["global_step"] = step + 1
        return True

    def _decayed(self, p, g, wd):
        return g + wd * p if wd else g

    def _step(self, p, g, lr, state, wd):
        raise NotImplementedError

    def get_lr(self) -> Tensor:
        """The learning rate of the next step (of the first group)."""
        return wrap(np.float32(self._settings[0][0].at(self.global_step)))

    def get_lr_parameter(self, param):
        """The learning rate of the next step for ``param`` (a Parameter)."""
        for p, (lr, _, _) in zip(self.parameters, self._settings):
            if p is param:
                return wrap(np.float32(lr.at(self.global_step)))
        raise ValueError(f"{param!r} is not optimized by this {type(self).__name__}")

    def _state_tuple(self, slot: str, prefix: str) -> ParameterTuple:
        return ParameterTuple(Parameter(wrap(s[slot]), name=f"{prefix}.{p.name}",
                                        requires_grad=False)
                              for p, s in zip(self.parameters, self._state))


# ------------------------------------------------------------------ argument handling
def _positive_float(value, who: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"For '{who}', {what} must be a positive float, got {value!r}")
    return float(value)


def _nonnegative(value, who: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{who}', {what} must be a float, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"For '{who}', {what} must be >= 0, got {value}")
    return float(value)


def _in_open_unit(value, who: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"For '{who}', {what} must be a float, got {type(value).__name__}")
    if not 0.0 < value < 1.0:
        raise ValueError(f"For '{who}', {what} must be in (0, 1), got {value!r}")
    return float(value)


def _check_bool(value, who: str, what: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{who}', {what} must be a bool, got {type(value).__name__}")
    return value


def _check_parameter_list(params, who: str) -> list:
    params = list(params)
    if not params:
        raise ValueError(f"For '{who}', the parameters list is empty")
    for p in params:
        if not isinstance(p, Parameter):
            raise TypeError(f"For '{who}', every parameter must be a Parameter, got "
                            f"{type(p).__name__}; pass net.trainable_params()")
    return params


def _weight_decay(value, who: str):
    """A float >= 0, or a Cell mapping the step to the decay (MindSpore's dynamic decay)."""
    if isinstance(value, Cell):
        return value
    return _nonnegative(value, who, "weight_decay")


def _decay_at(decay, step: int) -> float:
    return float(np.asarray(unwrap(decay(step)))) if isinstance(decay, Cell) else decay


def _centralization(group, who: str, params) -> bool:
    """A group's ``grad_centralization`` flag: a bool, for Parameters of conv layers only."""
    flag = group.get("grad_centralization", False)
    if not isinstance(flag, bool):
        raise TypeError(f"For '{who}', grad_centralization must be a bool, got "
                        f"{type(flag).__name__}")
    bad = [p.name for p in params if flag and "conv" not in p.name]
    if bad:
        raise ValueError(f"For '{who}', grad centralization applies to convolution layers "
                         f"only (Parameters named '...conv...'), got {bad}")
    return flag


def _groups(parameters, learning_rate, weight_decay, who):
    """``(parameters in order, [(learning rate, weight decay, grad centralization) per
    parameter])``."""
    wd = _weight_decay(weight_decay, who)
    entries = list(parameters) if not isinstance(parameters, Parameter) else [parameters]
    if not entries or not isinstance(entries[0], dict):
        params = _check_parameter_list(entries, who)
        lr = _LearningRate(learning_rate, who)
        # MindSpore's default decay filter: no decay for normalisation scales and shifts
        return params, [(lr, 0.0 if "gamma" in p.name or "beta" in p.name else wd, False)
                        for p in params]
    params, settings, order = [], {}, None
    for group in entries:
        if "order_params" in group:
            order = _check_parameter_list(group["order_params"], who)
            continue
        group_lr = _LearningRate(group.get("lr", learning_rate), who)
        group_wd = _weight_decay(group.get("weight_decay", weight_decay), who)
        members = _check_parameter_list(group["params"], who)
        centralize = _centralization(group, who, members)
        for p in members:
            if id(p) in settings:
                raise RuntimeError(f"For '{who}', the Parameter '{p.name}' is in two groups")
            params.append(p)
            settings[id(p)] = (group_lr, group_wd, centralize)
    if order is not None:
        missing = [p.name for p in order if id(p) not in settings]
        if missing:
            raise ValueError(f"For '{who}', order_params holds Parameters in no group: {missing}")
        params = order
    return params, [settings[id(p)] for p in params]


def _check_gradients(gradients, params, who: str) -> list:
    if isinstance(gradients, (Tensor, np.ndarray)):
        gradients = (gradients,)
    if not isinstance(gradients, (tuple, list)):
        raise TypeError(f"For '{who}', gradients must be a tuple of Tensors, got "
                        f"{type(gradients).__name__}")
    if len(gradients) != len(params):
        raise RuntimeError(f"For '{who}', got {len(gradients)} gradients for {len(params)} "
                           f"parameters: pass one gradient per entry of optimizer.parameters, "
                           f"in that order")
    grads = []
    for p, g in zip(params, gradients):
        arr = np.asarray(unwrap(g))
        if arr.shape != p.shape:
            raise ValueError(f"For '{who}', the gradient of '{p.name}' has shape {arr.shape}, "
                             f"expected {p.shape}")
        grads.append(arr.astype(unwrap(p).dtype, copy=False))
    return grads


# ------------------------------------------------------------------ the optimizers
class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum, dampening and Nesterov.

    ``v = g`` on the first step, then ``v = momentum * v + (1 - dampening) * g``;
    ``p -= lr * (g + momentum * v)`` with Nesterov, else ``p -= lr * v``. Without
    momentum ``p -= lr * g``.
    """

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0,
                 weight_decay=0.0, nesterov=False, loss_scale=1.0):
        self.momentum = _nonnegative(momentum, "SGD", "momentum")
        self.dampening = _nonnegative(dampening, "SGD", "dampening")
        self.nesterov = bool(nesterov)
        if self.nesterov and (self.momentum <= 0.0 or self.dampening != 0.0):
            raise ValueError("For 'SGD', nesterov needs momentum > 0 and dampening = 0")
        super().__init__(learning_rate, params, weight_decay, loss_scale)

    def _initial_slots(self):
        return (("accum", 0.0),) if self.momentum > 0 else ()

    def _step(self, p, g, lr, state, wd):
        if self.momentum <= 0:
            return p - lr * g
        v = state["accum"]
        if self.global_step == 0:
            v[...] = g
        else:
            v *= self.momentum
            v += (1.0 - self.dampening) * g
        return p - lr * (g + self.momentum * v if self.nesterov else v)

    @property
    def accum(self) -> ParameterTuple:
        return self._state_tuple("accum", "accum")


class Momentum(Optimizer):
    """``v = momentum * v + g``; ``p -= lr * v`` (``lr * (g + momentum * v)`` with Nesterov)."""

    _slots = (("moments", 0.0),)

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
                 use_nesterov=False):
        self.momentum = _nonnegative(momentum, "Momentum", "momentum")
        self.use_nesterov = bool(use_nesterov)
        super().__init__(learning_rate, params, weight_decay, loss_scale)

    def _step(self, p, g, lr, state, wd):
        v = state["moments"]
        v *= self.momentum
        v += g
        return p - lr * (g + self.momentum * v if self.use_nesterov else v)

    @property
    def moments(self) -> ParameterTuple:
        return self._state_tuple("moments", "moments")


class _AdamBase(Optimizer):
    _slots = (("moment1", 0.0), ("moment2", 0.0))

    def _moments(self, g, state):
        m, v = state["moment1"], state["moment2"]
        m *= self.beta1
        m += (1.0 - self.beta1) * g
        v *= self.beta2
        v += (1.0 - self.beta2) * np.square(g)
        return m, v

    @property
    def moment1(self) -> ParameterTuple:
        return self._state_tuple("moment1", "moment1")

    @property
    def moment2(self) -> ParameterTuple:
        return self._state_tuple("moment2", "moment2")


class Adam(_AdamBase):
    """Adam: ``p -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + eps)``.

    ``t`` counts from 1; ``eps`` is not bias-corrected. With ``use_nesterov`` the
    numerator is ``beta1 * m + (1 - beta1) * g``. With ``use_amsgrad`` (MindSpore's
    ``ApplyAdamWithAmsgrad``; ``use_nesterov`` is then not used) the denominator is
    ``sqrt(vhat) + eps``, ``vhat = max(vhat, v)`` (state ``vhat``, starting at 0).
    """

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0,
                 use_amsgrad=False, **kwargs):
        self.beta1 = _in_open_unit(beta1, "Adam", "beta1")
        self.beta2 = _in_open_unit(beta2, "Adam", "beta2")
        self.eps = _positive_float(eps, "Adam", "eps")
        for what, flag in (("use_locking", use_locking), ("use_nesterov", use_nesterov),
                           ("use_amsgrad", use_amsgrad), ("use_lazy", kwargs.get("use_lazy", False)),
                           ("use_offload", kwargs.get("use_offload", False))):
            _check_bool(flag, "Adam", what)
        unknown = sorted(set(kwargs) - {"use_lazy", "use_offload"})
        if unknown:
            raise TypeError(f"For 'Adam', unexpected keyword arguments {unknown}; the extra "
                            f"ones are use_lazy and use_offload")
        if kwargs.get("use_lazy") and kwargs.get("use_offload"):
            raise ValueError("For 'Adam', 'use_lazy' and 'use_offload' can not both be True")
        if use_amsgrad and (kwargs.get("use_lazy") or kwargs.get("use_offload")):
            raise ValueError("For 'Adam', 'use_amsgrad' can not be combined with 'use_lazy' "
                             "or 'use_offload'")
        self.use_nesterov, self.use_amsgrad = use_nesterov, use_amsgrad
        self.use_lazy = kwargs.get("use_lazy", False)  # dense gradients: the same update
        self.use_offload = kwargs.get("use_offload", False)
        super().__init__(learning_rate, params, weight_decay, loss_scale)

    def _initial_slots(self):
        return self._slots + ((("vhat", 0.0),) if self.use_amsgrad else ())

    def _step(self, p, g, lr, state, wd):
        m, v = self._moments(g, state)
        t = self.global_step + 1
        lr_t = lr * np.sqrt(1.0 - self.beta2 ** t) / (1.0 - self.beta1 ** t)
        if self.use_amsgrad:
            vhat = state["vhat"]
            np.maximum(vhat, v, out=vhat)
            return p - lr_t * m / (np.sqrt(vhat) + self.eps)
        num = self.beta1 * m + (1.0 - self.beta1) * g if self.use_nesterov else m
        return p - lr_t * num / (np.sqrt(v) + self.eps)

    @property
    def vhat(self) -> ParameterTuple:
        if not self.use_amsgrad:
            raise AttributeError("'Adam' has 'vhat' only with use_amsgrad=True")
        return self._state_tuple("vhat", "vhat")


class AdamWeightDecay(_AdamBase):
    """Adam without bias correction, decay in the update: ``p -= lr * (m / (sqrt(v) + eps) + wd * p)``."""

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-6,
                 weight_decay=0.0):
        self.beta1 = _in_open_unit(beta1, "AdamWeightDecay", "beta1")
        self.beta2 = _in_open_unit(beta2, "AdamWeightDecay", "beta2")
        self.eps = _positive_float(eps, "AdamWeightDecay", "eps")
        super().__init__(learning_rate, params, weight_decay)

    def _decayed(self, p, g, wd):
        return g  # the decay goes into the update, below

    def _step(self, p, g, lr, state, wd):
        m, v = self._moments(g, state)
        update = m / (np.sqrt(v) + self.eps)
        if wd:
            update = update + wd * p
        return p - lr * update


class Adagrad(Optimizer):
    """``accum += g**2``; ``p -= lr * g / sqrt(accum)``; ``accum`` starts at ``accum``."""

    def __init__(self, params, accum=0.1, learning_rate=0.001, update_slots=True,
                 loss_scale=1.0, weight_decay=0.0):
        self.initial_accum = _nonnegative(accum, "Adagrad", "accum")
        self.update_slots = bool(update_slots)
        super().__init__(learning_rate, params, weight_decay, loss_scale)

    def _initial_slots(self):
        return (("accum", self.initial_accum),)

    def _step(self, p, g, lr, state, wd):
        acc = state["accum"]
        if self.update_slots:
            acc += np.square(g)
        return p - lr * g / np.sqrt(acc)

    @property
    def accum(self) -> ParameterTuple:
        return self._state_tuple("accum", "accum")


class RMSProp(Optimizer):
    """RMSProp as MindSpore: ``s = decay * s + (1 - decay) * g**2`` (``s`` starts at 1),
    ``m = momentum * m + lr * g / sqrt(s + eps)``, ``p -= m``; centered subtracts
    ``mean_grad**2`` from ``s`` inside the root, ``mean_grad = decay * mean_grad + (1 - decay) * g``.
    """

    _slots = (("mean_square", 1.0), ("moment", 0.0), ("mean_grad", 0.0))

    def __init__(self, params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, loss_scale=1.0, weight_decay=0.0):
        self.decay = _nonnegative(decay, "RMSProp", "decay")
        self.momentum = _nonnegative(momentum, "RMSProp", "momentum")
        self.epsilon = _positive_float(epsilon, "RMSProp", "epsilon")
        self.centered = bool(centered)
        super().__init__(learning_rate, params, weight_decay, loss_scale)

    def _step(self, p, g, lr, state, wd):
        s, mom = state["mean_square"], state["moment"]
        s *= self.decay
        s += (1.0 - self.decay) * np.square(g)
        denom = s + self.epsilon
        if self.centered:
            mg = state["mean_grad"]
            mg *= self.decay
            mg += (1.0 - self.decay) * g
            denom = denom - np.square(mg)
        mom *= self.momentum
        mom += lr * g / np.sqrt(denom)
        return p - mom
