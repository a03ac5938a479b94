"""Convolution layers: Conv1d, Conv2d and Conv2dTranspose, with MindSpore 2.x signatures.

Invariants:

- Each ``construct`` is one call of the functional form (``ops.conv2d`` ...), which
  lowers to the ``conv`` primitive (ops/conv.py), plus the bias; the padding mode
  and sizes are configuration fixed at construction.
- Parameters are ``weight`` (``(out, in / group, *kernel)``; Conv2dTranspose
  ``(in, out / group, kh, kw)``) and, with ``has_bias=True``, ``bias``
  (``(out,)``). ``has_bias`` defaults to False and ``pad_mode`` to ``'same'``,
  as in MindSpore; ``'same'`` with a stride puts the extra padding pixel at the
  bottom/right.
- Initial values: ``weight_init=None`` (MindSpore 2.x: HeUniform(sqrt(5)), i.e.
  uniform in ``±1/sqrt(fan_in)`` with ``fan_in = in / group * prod(kernel)``);
  ``bias_init=None`` uniform in the same bounds; otherwise as Dense's
  (a name, a number, an array or a Tensor).

>>> np.random.seed(0)
>>> conv = Conv2d(3, 8, 5, pad_mode='valid', has_bias=True)
>>> [(p.name, p.shape) for p in conv.trainable_params()]
[('weight', (8, 3, 5, 5)), ('bias', (8,))]
>>> conv(np.ones((2, 3, 32, 32), np.float32)).shape
(2, 8, 28, 28)
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtype as _mstype
from ..ops import conv as _conv
from ..ops import operations as ops
from .cell import Cell
from .layers import _initial_value
from .parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv2dTranspose"]


def _channels(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{what} must be positive, got {value}")
    return int(value)


class _Conv(Cell):
    """What the convolution layers share: checked configuration and the Parameters."""

    d = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                 dilation, group, has_bias, weight_init, bias_init, dtype, transposed=False,
                 nhwc=False):
        super().__init__()
        name = type(self).__name__
        self.in_channels = _channels(in_channels, f"{name} in_channels")
        self.out_channels = _channels(out_channels, f"{name} out_channels")
        self.group = _channels(group, f"{name} group")
        if self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(f"{name}: in_channels {in_channels} and out_channels "
                             f"{out_channels} must be divisible by group {group}")
        self.kernel_size = _conv.ints(kernel_size, self.d, f"{name} kernel_size")
        self.stride = _conv.ints(stride, self.d, f"{name} stride")
        self.dilation = _conv.ints(dilation, self.d, f"{name} dilation")
        self.pad_mode, self.padding_pairs = _conv.pad_mode_and_pairs(pad_mode, padding, self.d,
                                                                     name)
        self.padding = padding
        self.has_bias = bool(has_bias)
        first, second = (in_channels, out_channels) if transposed else (out_channels,
                                                                         in_channels)
        shape = (first, second // self.group) + self.kernel_size
        if nhwc:   # MindSpore's NHWC weight: (out, *kernel, in / group)
            shape = (first,) + self.kernel_size + (second // self.group,)
        self._make_parameters(shape, weight_init, bias_init, _mstype.to_numpy_dtype(dtype),
                              shape[-1] if nhwc else shape[1])

    def _make_parameters(self, shape, weight_init, bias_init, np_dtype, per_group):
        fan_in = per_group * math.prod(self.kernel_size)
        fan_out = shape[0] * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in)
        who = type(self).__name__
        self.weight = Parameter(_initial(weight_init, shape, np_dtype, fan_in, fan_out, bound,
                                         f"For '{who}', weight_init"), name="weight")
        self.bias = None
        if self.has_bias:
            self.bias = Parameter(_initial(bias_init, (self.out_channels,), np_dtype, fan_in,
                                           fan_out, bound, f"For '{who}', bias_init"),
                                  name="bias")

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}")


def _initial(init, shape, np_dtype, fan_in, fan_out, bound, what):
    if init is None:
        return np.random.uniform(-bound, bound, shape).astype(np_dtype)
    return _initial_value(init, shape, np_dtype, fan_in, fan_out, what)


def check_data_format(data_format, name: str) -> bool:
    """Whether ``data_format`` is ``'NHWC'`` (ValueError unless it is that or ``'NCHW'``)."""
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"For '{name}', data_format must be 'NCHW' or 'NHWC', got "
                         f"{data_format!r}")
    return data_format == "NHWC"


class Conv2d(_Conv):
    """2-d convolution over ``(N, C_in, H, W)``: ``(N, C_out, H_out, W_out)``.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, dilation: an int or ``(h, w)``.
        pad_mode: ``'same'`` (default; output ``ceil(H / stride)``, the extra padding
            at the bottom/right), ``'valid'`` (none) or ``'pad'`` (``padding``).
        padding: with ``'pad'``: an int, or ``(top, bottom, left, right)``.
        group: channel groups. has_bias: add ``bias`` (default False).
        weight_init, bias_init: see the module docstring.
        data_format: ``'NCHW'`` or ``'NHWC'`` (input ``(N, H, W, C_in)``, output
            ``(N, H_out, W_out, C_out)``, weight ``(out, kh, kw, in / group)``, as MindSpore).
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, data_format="NCHW", dtype=_mstype.float32):
        nhwc = check_data_format(data_format, "Conv2d")
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, dtype, nhwc=nhwc)
        self.data_format, self.nhwc = data_format, nhwc

    def construct(self, x):
        if self.nhwc:
            out = ops.conv2d(np.transpose(x, (0, 3, 1, 2)),
                             np.transpose(self.weight, (0, 3, 1, 2)), self.bias, self.stride,
                             self.pad_mode, self.padding_pairs[0] + self.padding_pairs[1],
                             self.dilation, self.group)
            return np.transpose(out, (0, 2, 3, 1))
        return ops.conv2d(x, self.weight, self.bias, self.stride, self.pad_mode,
                          self.padding_pairs[0] + self.padding_pairs[1], self.dilation,
                          self.group)


class Conv1d(_Conv):
    """1-d convolution over ``(N, C_in, L)``: ``(N, C_out, L_out)``; weight
    ``(out, in / group, kernel_size)``. Arguments as :class:`Conv2d` (ints; ``padding``
    an int or ``(left, right)``)."""

    d = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None, dtype=_mstype.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, dtype)

    def construct(self, x):
        return ops.conv1d(x, self.weight, self.bias, self.stride, self.pad_mode,
                          self.padding_pairs[0], self.dilation, self.group)


class Conv2dTranspose(_Conv):
    """The transposed 2-d convolution (the input gradient of a Conv2d), weight
    ``(in, out / group, kh, kw)``. Output size per axis: ``'same'`` ``H * stride``;
    ``'valid'`` ``H * stride + max(extent - stride, 0)``; ``'pad'`` ``(H - 1) * stride
    - top - bottom + extent + output_padding``, ``extent = dilation * (k - 1) + 1``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, output_padding=0, dilation=1, group=1, has_bias=False,
                 weight_init=None, bias_init=None, dtype=_mstype.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                         dilation, group, has_bias, weight_init, bias_init, dtype,
                         transposed=True)
        self.output_padding = output_padding
        self._pads, self._extra = self._transposed_padding(output_padding)

    def _transposed_padding(self, output_padding):
        if self.pad_mode == "pad":
            pairs = self.padding_pairs
            return pairs[0] + pairs[1], _conv.ints(output_padding, 2, "output_padding", 0)
        extents = [(k - 1) * d + 1 for k, d in zip(self.kernel_size, self.dilation)]
        pads, extra = [], []
        for e, s in zip(extents, self.stride):
            total = max(0, e - s) if self.pad_mode == "same" else 0
            pads += [total // 2, total - total // 2]
            extra.append(max(0, s - e))
        return tuple(pads), tuple(extra)

    def construct(self, x):
        return ops.conv_transpose2d(x, self.weight, self.bias, self.stride, self._pads,
                                    self._extra, self.group, self.dilation)
