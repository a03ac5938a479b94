"""MindSpore ``ops`` spellings of convolution and pooling: ``ops.conv2d``, ``ops.max_pool2d``
..., and the class forms ``ops.MaxPool`` / ``ops.AvgPool`` (lowerings in ops/conv.py)."""
from __future__ import annotations

from ..errors import UnsupportedOperationError
from . import conv as _conv
from .operations import Primitive, functional

conv1d = functional(_conv.lower_conv1d, "conv1d")
conv2d = functional(_conv.lower_conv2d, "conv2d")
conv_transpose2d = functional(_conv.conv_transpose2d)
max_pool2d = functional(_conv.max_pool2d)
avg_pool2d = functional(_conv.avg_pool2d)
adaptive_avg_pool2d = functional(_conv.adaptive_avg_pool2d)
flatten = functional(_conv.flatten)


class _Pool(Primitive):
    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        if data_format != "NCHW":
            raise UnsupportedOperationError(f"{type(self).__name__}(data_format="
                                            f"{data_format!r}) is not supported",
                                            hint="use 'NCHW' and transpose the input")
        self.pad_mode = _conv.pad_mode_and_pairs(pad_mode, 0, 2, type(self).__name__,
                                                 ("same", "valid"))[0]
        self.kernel_size, self.strides, self.data_format = kernel_size, strides, data_format


class MaxPool(_Pool):
    """``ops.MaxPool(kernel_size=1, strides=1, pad_mode='valid')(x)``: the maximum of each
    window (pad_mode 'same' or 'valid'; the gradient goes to the first maximum)."""

    def __ad_lower__(self, b, x):
        return _conv.lower_max_pool(b, x, self.kernel_size, self.strides,
                                    pad_mode=self.pad_mode, what="ops.MaxPool")


class AvgPool(_Pool):
    """``ops.AvgPool(kernel_size=1, strides=1, pad_mode='valid')(x)``: the mean of each
    window ('same' averages over the real pixels only)."""

    def __ad_lower__(self, b, x):
        return _conv.lower_avg_pool(b, x, self.kernel_size, self.strides, self.pad_mode,
                                    what="ops.AvgPool")


__all__ = ["conv1d", "conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d",
            "adaptive_avg_pool2d", "flatten", "MaxPool", "AvgPool"]
