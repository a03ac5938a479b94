"""Pooling layers and Flatten: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Flatten.

Invariants:

- MindSpore 2.x signatures and defaults: ``kernel_size=1, stride=1,
  pad_mode='valid'`` (``'same'`` and ``'pad'`` too, any case).
- MaxPool2d's gradient goes to the first maximum of each window (row-major
  order), the element the forward value picks; padding is ``-inf`` and never wins.
  ``padding``, ``dilation``, ``ceil_mode`` and ``return_indices`` take effect with
  ``pad_mode='pad'`` only (another value in another mode is a ValueError, as in
  MindSpore); ``return_indices`` makes it return ``(output, argmax)``, argmax the
  int64 flat index of each maximum in its ``(H, W)`` input plane.
- AvgPool2d ``'same'`` averages over the real pixels of each window only (the
  padding is not counted), as MindSpore; ``'pad'`` counts it unless
  ``count_include_pad=False``. ``ceil_mode`` adds windows at the end that hang
  over the input (a window starting in the end padding is dropped); they average
  over what they cover of the input and its padding.
- Inputs are ``(N, C, H, W)`` or, unbatched, ``(C, H, W)``; ``data_format='NHWC'``
  takes ``(N, H, W, C)`` (MindSpore refuses NHWC with ``'pad'``, and AvgPool2d with
  any option beyond ``'same'``/``'valid'``: so do these layers).

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

import numpy as np

from ..ops import conv as _conv
from ..ops import operations as ops
from ..ops.operations import Primitive
from .cell import Cell
from .conv import check_data_format

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "Flatten"]


class _Pool(Cell):
    def __init__(self, kernel_size, stride, pad_mode, padding, data_format):
        super().__init__()
        name = type(self).__name__
        self.nhwc = check_data_format(data_format, name)
        self.kernel_size = _conv.ints(kernel_size, 2, f"{name} kernel_size")
        self.stride = _conv.ints(stride, 2, f"{name} stride")
        self.pad_mode, pairs = _conv.pad_mode_and_pairs(pad_mode, padding, 2, name)
        self.padding = pairs[0] + pairs[1]
        self.data_format = data_format

    def _refuse_unless_pad(self, options: dict) -> None:
        """MindSpore's ValueError for ``'pad'``-only options in another mode or in NHWC."""
        name = type(self).__name__
        set_ = ", ".join(f"{k}={v!r}" for k, v in options.items() if v)
        if set_ and self.pad_mode != "pad":
            raise ValueError(f"For '{name}', {set_} needs pad_mode='pad', got pad_mode="
                             f"'{self.pad_mode}'")
        if self.nhwc and (self.pad_mode == "pad" or set_):
            raise ValueError(f"For '{name}', data_format='NHWC' is not supported with "
                             f"pad_mode='pad' or {', '.join(options)}")

    def construct(self, x):
        if self.nhwc:
            x = np.transpose(x, (0, 3, 1, 2))
        if x.ndim == 3:     # unbatched (C, H, W)
            out = self.pool(x[None])
            if self.return_indices:
                return out[0][0], out[1][0]
            return out[0]
        out = self.pool(x)
        if self.nhwc:
            return np.transpose(out, (0, 2, 3, 1))
        return out

    def extend_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode.upper()}")


class MaxPool2d(_Pool):
    """The maximum of each ``kernel_size`` window, ``stride`` apart."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, padding, data_format)
        self.dilation = _conv.ints(dilation, 2, "MaxPool2d dilation")
        self.return_indices, self.ceil_mode = bool(return_indices), bool(ceil_mode)
        self._refuse_unless_pad({"dilation": dilation if self.dilation != (1, 1) else 0,
                                 "return_indices": self.return_indices,
                                 "ceil_mode": self.ceil_mode})
        self.max_pool = ops.MaxPool(self.kernel_size, self.stride, "valid" if self.pad_mode
                                    == "pad" else self.pad_mode)

    def pool(self, x):
        if self.pad_mode == "pad":  # padding, dilation, ceil_mode, indices: this mode only
            return ops.max_pool2d(x, self.kernel_size, self.stride, self.padding,
                                  self.dilation, self.return_indices, self.ceil_mode)
        return self.max_pool(x)


class AvgPool2d(_Pool):
    """The mean of each ``kernel_size`` window, ``stride`` apart."""

    return_indices = False

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None, data_format="NCHW"):
        super().__init__(kernel_size, stride, pad_mode, padding, data_format)
        if divisor_override is not None and (isinstance(divisor_override, bool) or not
                                              isinstance(divisor_override, (int, np.integer))
                                              or divisor_override == 0):
            raise ValueError(f"For 'AvgPool2d', divisor_override must be a nonzero int or "
                             f"None, got {divisor_override!r}")
        self.ceil_mode = bool(ceil_mode)
        self.count_include_pad = bool(count_include_pad)
        self.divisor_override = divisor_override
        if self.nhwc and (self.pad_mode == "pad" or self.ceil_mode or not self.count_include_pad
                          or divisor_override is not None):
            raise ValueError("For 'AvgPool2d', data_format='NHWC' is not supported with "
                             "pad_mode='pad', ceil_mode, count_include_pad=False or "
                             "divisor_override")
        if (self.pad_mode == "pad" or self.ceil_mode or not self.count_include_pad
                or divisor_override is not None):
            self.avg_pool = _AvgPool2d(self)
        else:
            self.avg_pool = ops.AvgPool(self.kernel_size, self.stride, self.pad_mode)

    def pool(self, x):
        return self.avg_pool(x)


class _AvgPool2d(Primitive):
    """AvgPool2d's pooling with all of its options (ops.AvgPool has kernel, stride and
    pad_mode only)."""

    def __init__(self, layer: AvgPool2d):
        self.options = dict(kernel_size=layer.kernel_size, stride=layer.stride,
                            pad_mode=layer.pad_mode, padding=layer.padding,
                            ceil_mode=layer.ceil_mode, count_include_pad=layer.count_include_pad,
                            divisor_override=layer.divisor_override)

    def __ad_lower__(self, b, x):
        o = self.options
        return _conv.lower_avg_pool(b, x, o["kernel_size"], o["stride"], o["pad_mode"],
                                    o["padding"], ceil_mode=o["ceil_mode"],
                                    count_include_pad=o["count_include_pad"],
                                    divisor_override=o["divisor_override"], what="AvgPool2d")


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
