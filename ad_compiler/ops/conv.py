"""Convolution and pooling: five primitives, and the lowerings of ``ops.conv2d`` ...

The primitives (NumPy kernels in ops/windows.py, one batched matrix product each):

* ``conv(x, w)``, ``conv_transpose(y, w, size=)`` and ``conv_filter(x, y, kernel=)``
  are the three contractions of one trilinear form ``<y, conv(x, w)>``, with the
  same params (``stride``, ``dilation``, ``padding``, ``groups``). Each one's VJP
  is made of the other two, and each is bilinear, so its JVP is the sum of the
  same op with one operand replaced by its tangent. Derivatives of any order stay
  in these three primitives.
* ``max_pool(x)``, ``max_pool_scatter(x, g)``, ``max_pool_gather(x, g)``: the
  maximum of each window, and the linear maps that send a value to (read a value
  at) each window's maximum. Ties go to the first maximum in row-major window
  order, as ``np.argmax`` (and so the forward value) picks. ``x`` only selects, so
  no cotangent flows to it through scatter and gather.

Lowerings that are exact compositions emit no primitive of their own: average
pooling is a ``conv`` of each channel with a kernel of ones, divided by the
window's count (real pixels only for MindSpore's ``'same'``); adaptive average
pooling is two products with averaging matrices; ``flatten`` a reshape.

Padding follows MindSpore: ``'valid'`` none, ``'same'`` the output is
``ceil(size / stride)`` and the total padding ``max(0, (out - 1) * stride +
extent - size)`` is split with the extra pixel at the end (bottom/right),
``'pad'`` the given amounts (an int, or ``(top, bottom, left, right)``).

Invariants: params are canonical tuples of Python ints (they print and compare
stably); infer rules raise ValueError for shapes that do not fit (RuntimeError
when the channels disagree with the filters, as MindSpore does).
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType
from . import windows as _k
from .shape import reshape_to

F = "conv"


def _float_dtype(*types: AType) -> np.dtype:
    dtype = np.result_type(*(t.dtype for t in types))
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _spatial(t: AType, d: int, what: str) -> tuple:
    if t.ndim != d + 2:
        raise ValueError(f"{what} must be {d + 2}-d (N, C, ...spatial), got shape {t.shape}")
    return t.shape[2:]


def _result_size(size, kernel, stride, dilation, padding, what) -> tuple:
    out = _k.out_size(size, kernel, stride, dilation, padding)
    if min(out, default=1) < 1:
        raise ValueError(f"{what}: the input's spatial shape {tuple(size)} (padding {padding}) "
                         f"is smaller than the kernel's extent {_k.extent(kernel, dilation)}")
    return out


def _check_filters(x: AType, w: AType, groups: int, what: str) -> None:
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(f"{what}: the input has {x.shape[1]} channels but the weight "
                           f"{w.shape} expects {w.shape[1] * groups} ({w.shape[1]} per group "
                           f"x {groups} groups)")
    if w.shape[0] % groups:
        raise ValueError(f"{what}: {w.shape[0]} output channels are not divisible by "
                         f"{groups} groups")


# -- conv, conv_transpose, conv_filter ----------------------------------------------------

def _conv_infer(x: AType, w: AType, *, stride, dilation, padding, groups) -> AType:
    d = len(stride)
    size = _spatial(x, d, "conv input")
    _spatial(w, d, "conv weight")
    _check_filters(x, w, groups, "conv")
    out = _result_size(size, w.shape[2:], stride, dilation, padding, "conv")
    return AType((x.shape[0], w.shape[0]) + out, _float_dtype(x, w), False)


def _transpose_infer(y: AType, w: AType, *, size, stride, dilation, padding, groups) -> AType:
    d = len(stride)
    out = _k.out_size(size, w.shape[2:], stride, dilation, padding)
    if _spatial(y, d, "conv_transpose input") != out or y.shape[1] != w.shape[0]:
        raise ValueError(f"conv_transpose: input {y.shape} is not what a convolution by "
                         f"{w.shape} of size {size} gives ({out} spatially)")
    return AType((y.shape[0], w.shape[1] * groups) + tuple(size), _float_dtype(y, w), False)


def _filter_infer(x: AType, y: AType, *, kernel, stride, dilation, padding, groups) -> AType:
    d = len(stride)
    out = _k.out_size(_spatial(x, d, "conv_filter input"), kernel, stride, dilation, padding)
    if _spatial(y, d, "conv_filter cotangent") != out or y.shape[0] != x.shape[0]:
        raise ValueError(f"conv_filter: {y.shape} does not match a convolution of {x.shape}")
    return AType((y.shape[1], x.shape[1] // groups) + tuple(kernel), _float_dtype(x, y), False)


def _conv_vjp(b, ct, out, x, w, **p):
    xt, wt = b.type_of(x), b.type_of(w)
    return (b.fit(b.conv_transpose(ct, w, size=xt.shape[2:], **p), x),
            b.fit(b.conv_filter(x, ct, kernel=wt.shape[2:], **p), w))


def _transpose_vjp(b, ct, out, y, w, *, size, **p):
    return (b.fit(b.conv(ct, w, **p), y),
            b.fit(b.conv_filter(ct, y, kernel=b.type_of(w).shape[2:], **p), w))


def _filter_vjp(b, ct, out, x, y, *, kernel, **p):
    return (b.fit(b.conv_transpose(y, ct, size=b.type_of(x).shape[2:], **p), x),
            b.fit(b.conv(x, ct, **p), y))


def _bilinear_jvp(op):
    """The JVP of a bilinear primitive: ``op(t0, b) + op(a, t1)``."""
    def jvp(b, t, out, a, c, **p):
        terms = [b.emit(op, ta, c, **p) if k == 0 else b.emit(op, a, ta, **p)
                 for k, ta in enumerate(t) if ta is not None]
        if not terms:
            return None
        return terms[0] if len(terms) == 1 else b.add(*terms)
    return jvp


def _p2(stride=(1, 1), dilation=(1, 1), padding=((0, 0), (0, 0)), groups=1):
    return dict(stride=stride, dilation=dilation, padding=padding, groups=groups)


_CONV_EXAMPLES = [
    ((1, 2, 4, 5), (3, 2, 2, 3), _p2()),
    ((2, 4, 5, 5), (4, 2, 3, 2), _p2((2, 1), (1, 2), ((1, 0), (0, 2)), 2)),
    ((1, 1, 6, 4), (2, 1, 2, 2), _p2((3, 2), (2, 1), ((0, 1), (1, 1)))),
    ((2, 3, 7), (2, 3, 3), dict(stride=(2,), dilation=(1,), padding=((1, 1),), groups=1)),
]

primitive(
    "conv", emit=f"conv({{0}}, {{1}}, {{stride}}, {{dilation}}, {{padding}}, {{groups}})",
    impl=_k.conv, globals={"conv": _k.conv}, family=F, infer=_conv_infer, vjp=_conv_vjp,
    jvp=_bilinear_jvp("conv"),
    examples=[ex(x, w, **p) for x, w, p in _CONV_EXAMPLES],
)
primitive(
    "conv_transpose",
    emit=f"conv_transpose({{0}}, {{1}}, {{size}}, {{stride}}, {{dilation}}, {{padding}}, "
         "{groups})",
    impl=_k.conv_transpose, globals={"conv_transpose": _k.conv_transpose}, family=F,
    infer=_transpose_infer, vjp=_transpose_vjp, jvp=_bilinear_jvp("conv_transpose"),
    examples=[ex((x[0], w[0]) + _k.out_size(x[2:], w[2:], p["stride"], p["dilation"],
                                           p["padding"]), w, size=x[2:], **p)
              for x, w, p in _CONV_EXAMPLES],
)
primitive(
    "conv_filter",
    emit=f"conv_filter({{0}}, {{1}}, {{kernel}}, {{stride}}, {{dilation}}, {{padding}}, "
         "{groups})",
    impl=_k.conv_filter, globals={"conv_filter": _k.conv_filter}, family=F,
    infer=_filter_infer, vjp=_filter_vjp, jvp=_bilinear_jvp("conv_filter"),
    examples=[ex(x, (x[0], w[0]) + _k.out_size(x[2:], w[2:], p["stride"], p["dilation"],
                                              p["padding"]), kernel=w[2:], **p)
              for x, w, p in _CONV_EXAMPLES],
)


# -- max pooling ------------------------------------------------------------------------------

def _pool_infer(x: AType, *, kernel, stride, dilation, padding) -> AType:
    out = _result_size(_spatial(x, len(kernel), "max_pool input"), kernel, stride, dilation,
                       padding, "max_pool")
    return AType(x.shape[:2] + out, _float_dtype(x), False)


def _scatter_infer(x: AType, g: AType, **p) -> AType:
    if _pool_infer(x, **p).shape != g.shape:
        raise ValueError(f"max_pool_scatter: {g.shape} is not the pooled shape of {x.shape}")
    return AType(x.shape, _float_dtype(g), False)


def _gather_infer(x: AType, g: AType, **p) -> AType:
    if x.shape != g.shape:
        raise ValueError(f"max_pool_gather: {g.shape} is not the input's shape {x.shape}")
    return AType(_pool_infer(x, **p).shape, _float_dtype(g), False)


def _linear_in_g(op):
    def jvp(b, t, out, x, g, **p):
        return None if t[1] is None else b.emit(op, x, t[1], **p)
    return jvp


_POOL = "{kernel}, {stride}, {dilation}, {padding}"
_POOL_EXAMPLES = [
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(2, 2), dilation=(1, 1), padding=((0, 0), (0, 0)))),
    ((2, 1, 5, 4), dict(kernel=(3, 2), stride=(2, 1), dilation=(1, 2), padding=((1, 1), (0, 1)))),
    ((1, 2, 5), dict(kernel=(2,), stride=(1,), dilation=(1,), padding=((0, 1),))),
]

primitive(
    "max_pool", emit=f"max_pool({{0}}, {_POOL})", impl=_k.max_pool,
    globals={"max_pool": _k.max_pool}, family=F, infer=_pool_infer,
    vjp=lambda b, ct, out, x, **p: (b.fit(b.max_pool_scatter(x, ct, **p), x),),
    jvp=lambda b, t, out, x, **p: b.max_pool_gather(x, t[0], **p),
    examples=[ex(x, **p) for x, p in _POOL_EXAMPLES],
)
primitive(
    "max_pool_scatter", emit=f"max_pool_scatter({{0}}, {{1}}, {_POOL})",
    impl=_k.max_pool_scatter, globals={"max_pool_scatter": _k.max_pool_scatter}, family=F,
    infer=_scatter_infer, jvp=_linear_in_g("max_pool_scatter"),
    vjp=lambda b, ct, out, x, g, **p: (None, b.fit(b.max_pool_gather(x, ct, **p), g)),
    examples=[ex(x, x[:2] + _k.out_size(x[2:], p["kernel"], p["stride"], p["dilation"],
                                        p["padding"]), **p) for x, p in _POOL_EXAMPLES],
)
primitive(
    "max_pool_gather", emit=f"max_pool_gather({{0}}, {{1}}, {_POOL})",
    impl=_k.max_pool_gather, globals={"max_pool_gather": _k.max_pool_gather}, family=F,
    infer=_gather_infer, jvp=_linear_in_g("max_pool_gather"),
    vjp=lambda b, ct, out, x, g, **p: (None, b.fit(b.max_pool_scatter(x, ct, **p), g)),
    examples=[ex(x, x, **p) for x, p in _POOL_EXAMPLES],
)
