"""Pooling layers and Flatten: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Flatten.

Invariants:

- MindSpore 2.x signatures and defaults: ``kernel_size=1, stride=1,
  pad_mode='valid'`` (``'same'`` and ``'pad'`` too, any case).
- MaxPool2d's gradient goes to the first maximum of each window (row-major
  order), the element the forward value picks; padding is ``-inf`` and never wins.
- AvgPool2d ``'same'`` averages over the real pixels of each window only (the
  padding is not counted), as MindSpore; ``'pad'`` counts it unless
  ``count_include_pad=False``.
- Inputs are 4-d ``(N, C, H, W)`` (ValueError otherwise).

>>> import numpy as np
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> MaxPool2d(2, 2)(x)[0, 0]
array([[ 5.,  7.],
       [13., 15.]])
>>> AvgPool2d(3, 2, pad_mode='same')(x)[0, 0]   # padding: one row below, one column right
array([[ 5. ,  6.5],
       [11. , 12.5]])
"""
from __future__ import annotations

from ..ops import conv as _conv
from ..ops import operations as ops
from .cell import Cell
from .conv import _data_format

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Flatten"]


class _Pool(Cell):
    def __init__(self, kernel_size, stride, pad_mode, padding, data_format):
        super().__init__()
        name = type(self).__name__
        _data_format(data_format, name)
        self.kernel_size = _conv.ints(kernel_size, 2, f"{name} kernel_size")
        self.stride = _conv.ints(stride, 2, f"{name} stride")
        self.pad_mode, pairs = _conv.pad_mode_and_pairs(pad_mode, padding, 2, name)
        self.padding = pairs[0] + pairs[1]
        self.data_format = data_format

    def extend_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode.upper()}")


class MaxPool2d(_Pool):
    """The maximum of each ``kernel_size`` window, ``stride`` apart."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, padding, data_format)
        if return_indices or ceil_mode:
            raise ValueError("MaxPool2d: return_indices=True and ceil_mode=True are not "
                             "supported")
        self.dilation = _conv.ints(dilation, 2, "MaxPool2d dilation")
        self.max_pool = ops.MaxPool(self.kernel_size, self.stride, "valid" if self.pad_mode
                                    == "pad" else self.pad_mode)

    def construct(self, x):
        if self.pad_mode == "pad":  # padding and dilation take effect in this mode only
            return ops.max_pool2d(x, self.kernel_size, self.stride, self.padding,
                                  self.dilation)
        return self.max_pool(x)


class AvgPool2d(_Pool):
    """The mean of each ``kernel_size`` window, ``stride`` apart."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, padding, data_format)
        if ceil_mode:
            raise ValueError("AvgPool2d: ceil_mode=True is not supported")
        self.count_include_pad = bool(count_include_pad)
        self.divisor_override = divisor_override
        self.avg_pool = ops.AvgPool(self.kernel_size, self.stride, "valid" if self.pad_mode
                                    == "pad" else self.pad_mode)

    def construct(self, x):
        if self.pad_mode == "pad" or self.divisor_override:
            return ops.avg_pool2d(x, self.kernel_size, self.stride, self.padding, False,
                                  self.count_include_pad, self.divisor_override)
        return self.avg_pool(x)


class AdaptiveAvgPool2d(Cell):
    """``(…, H, W)`` averaged into ``output_size`` bins (an int or ``(h, w)``; None keeps
    that axis), bin ``i`` covering ``[floor(i*H/h), ceil((i+1)*H/h))``."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, x):
        return ops.adaptive_avg_pool2d(x, self.output_size)


class Flatten(Cell):
    """Axes ``start_dim .. end_dim`` merged into one (default: all but the first)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def construct(self, x):
        return ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)
