"""Convolution and pooling: five primitives, and the lowerings of ``ops.conv2d`` ...

The primitives (NumPy kernels in ops/windows.py: the convolutions one batched matrix
product each, pooling and the col2im of ``conv_transpose`` a loop over kernel taps):

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

import math

import numpy as np

from ..ad.batching import materialize, move_axis, to_front
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


# -- batching (vmap): the examples folded into an axis the kernel already loops over ----------

def _fold(b, v, ax, into: int, grouped: bool, groups: int):
    """``v`` (examples along ``ax``) with its examples merged into the example's axis
    ``into`` of length ``n``: example ``k``'s item ``c`` at ``k * n + c``, or, ``grouped``,
    groups-major: ``g * (B * n / G) + k * (n / G) + c`` for ``c`` in group ``g``."""
    v = to_front(b, v, ax)
    size, shape = v.type.shape[0], v.type.shape[1:]
    if grouped and groups > 1:
        v = b.reshape(v, shape=(size,) + shape[:into] + (groups, shape[into] // groups)
                      + shape[into + 1:])
        v = move_axis(b, v, 0, into + 1)
    else:
        v = move_axis(b, v, 0, into)
    return b.reshape(v, shape=shape[:into] + (size * shape[into],) + shape[into + 1:])


def _unfold(b, v, at: int, grouped: bool, groups: int):
    """The inverse of :func:`_fold`: the examples merged into axis ``at`` of ``v`` put on
    an axis of their own, at ``at``."""
    shape, size = v.type.shape, b.batch_size
    n = shape[at] // size
    if grouped and groups > 1:
        v = b.reshape(v, shape=shape[:at] + (groups, size, n // groups) + shape[at + 1:])
        v = move_axis(b, v, at + 1, at)
    return b.reshape(v, shape=shape[:at] + (size, n) + shape[at + 1:])


def _conv_batching(name: str, first, second, both):
    """The batching rule of a convolution primitive ``name(u, v)``; each case (input 0
    batched, input 1 batched, both) gives how each input folds its examples, as
    ``(axis, groups-major)`` (None: shared), and how the result unfolds them. Folded
    into N (axis 0) the examples are more images; folded into the channels they are
    more filters or groups: with both inputs batched each example is ``groups`` more
    groups. One call of the kernel, no loop over the examples."""
    def rule(b, axes, u, v, **p):
        fold_u, fold_v, (at, grouped) = both if None not in axes else (
            first if axes[1] is None else second)
        groups = p["groups"]
        ins = [w if f is None else _fold(b, w, ax, f[0], f[1], groups)
               for w, ax, f in zip((u, v), axes, (fold_u, fold_v))]
        if None not in axes:
            p = dict(p, groups=groups * b.batch_size)
        return _unfold(b, b.emit(name, *ins, **p), at, grouped, groups), at
    rule.__name__ = f"batch_{name}"
    return rule


def _pool_batching(name: str):
    """Pooling works on each image and channel alone: the examples become more images."""
    def rule(b, axes, *inputs, **p):
        ins = [_fold(b, materialize(b, v, ax), 0, 0, False, 1) for v, ax in zip(inputs, axes)]
        return _unfold(b, b.emit(name, *ins, **p), 0, False, 1), 0
    rule.__name__ = f"batch_{name}"
    return rule


_CONV = "stride={stride}, dilation={dilation}, padding={padding}, groups={groups})"


def _p2(stride=(1, 1), dilation=(1, 1), padding=((0, 0), (0, 0)), groups=1):
    return dict(stride=stride, dilation=dilation, padding=padding, groups=groups)


_CONV_EXAMPLES = [
    ((1, 2, 4, 5), (3, 2, 2, 3), _p2()),
    ((2, 4, 5, 5), (4, 2, 3, 2), _p2((2, 1), (1, 2), ((1, 0), (0, 2)), 2)),
    ((1, 1, 6, 4), (2, 1, 2, 2), _p2((3, 2), (2, 1), ((0, 1), (1, 1)))),
    ((2, 3, 7), (2, 3, 3), dict(stride=(2,), dilation=(1,), padding=((1, 1),), groups=1)),
]

primitive(
    "conv", emit="conv({0}, {1}, " + _CONV,
    impl=_k.conv, globals={"conv": _k.conv}, family=F, infer=_conv_infer, vjp=_conv_vjp,
    jvp=_bilinear_jvp("conv"),
    batch=_conv_batching("conv", ((0, False), None, (0, False)), (None, (0, True), (1, True)),
                         ((1, False), (0, False), (1, False))),
    examples=[ex(x, w, **p) for x, w, p in _CONV_EXAMPLES],
)
primitive(
    "conv_transpose",
    emit="conv_transpose({0}, {1}, size={size}, " + _CONV,
    impl=_k.conv_transpose, globals={"conv_transpose": _k.conv_transpose}, family=F,
    infer=_transpose_infer, vjp=_transpose_vjp, jvp=_bilinear_jvp("conv_transpose"),
    batch=_conv_batching("conv_transpose", ((0, False), None, (0, False)),
                         (None, (1, False), (1, True)), ((1, False), (0, False), (1, False))),
    examples=[ex((x[0], w[0]) + _k.out_size(x[2:], w[2:], p["stride"], p["dilation"],
                                           p["padding"]), w, size=x[2:], **p)
              for x, w, p in _CONV_EXAMPLES],
)
primitive(
    "conv_filter",
    emit="conv_filter({0}, {1}, kernel={kernel}, " + _CONV,
    impl=_k.conv_filter, globals={"conv_filter": _k.conv_filter}, family=F,
    infer=_filter_infer, vjp=_filter_vjp, jvp=_bilinear_jvp("conv_filter"),
    batch=_conv_batching("conv_filter", ((1, True), None, (1, False)),
                         (None, (1, True), (0, True)), ((1, False), (1, False), (0, False))),
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


_POOL = "kernel={kernel}, stride={stride}, dilation={dilation}, padding={padding})"
_POOL_EXAMPLES = [
    ((1, 2, 4, 4), dict(kernel=(2, 2), stride=(2, 2), dilation=(1, 1), padding=((0, 0), (0, 0)))),
    ((2, 1, 5, 4), dict(kernel=(3, 2), stride=(2, 1), dilation=(1, 2), padding=((1, 1), (0, 1)))),
    ((1, 2, 5), dict(kernel=(2,), stride=(1,), dilation=(1,), padding=((0, 1),))),
]

primitive(
    "max_pool", emit="max_pool({0}, " + _POOL, impl=_k.max_pool,
    globals={"max_pool": _k.max_pool}, family=F, infer=_pool_infer,
    vjp=lambda b, ct, out, x, **p: (b.fit(b.max_pool_scatter(x, ct, **p), x),),
    jvp=lambda b, t, out, x, **p: b.max_pool_gather(x, t[0], **p),
    batch=_pool_batching("max_pool"),
    examples=[ex(x, **p) for x, p in _POOL_EXAMPLES],
)
primitive(
    "max_pool_scatter", emit="max_pool_scatter({0}, {1}, " + _POOL,
    impl=_k.max_pool_scatter, globals={"max_pool_scatter": _k.max_pool_scatter}, family=F,
    infer=_scatter_infer, jvp=_linear_in_g("max_pool_scatter"),
    batch=_pool_batching("max_pool_scatter"),
    vjp=lambda b, ct, out, x, g, **p: (None, b.fit(b.max_pool_gather(x, ct, **p), g)),
    examples=[ex(x, x[:2] + _k.out_size(x[2:], p["kernel"], p["stride"], p["dilation"],
                                        p["padding"]), **p) for x, p in _POOL_EXAMPLES],
)
primitive(
    "max_pool_gather", emit="max_pool_gather({0}, {1}, " + _POOL,
    impl=_k.max_pool_gather, globals={"max_pool_gather": _k.max_pool_gather}, family=F,
    infer=_gather_infer, jvp=_linear_in_g("max_pool_gather"),
    batch=_pool_batching("max_pool_gather"),
    vjp=lambda b, ct, out, x, g, **p: (None, b.fit(b.max_pool_scatter(x, ct, **p), g)),
    examples=[ex(x, x, **p) for x, p in _POOL_EXAMPLES],
)



def _argmax_infer(x: AType, **p) -> AType:
    return AType(_pool_infer(x, **p).shape, np.dtype(np.int64), False)


primitive(
    "max_pool_argmax", emit="max_pool_argmax({0}, " + _POOL, impl=_k.max_pool_argmax,
    globals={"max_pool_argmax": _k.max_pool_argmax}, family=F, infer=_argmax_infer,
    nondiff=True, examples=[ex(x, **p) for x, p in _POOL_EXAMPLES],
    batch=_pool_batching("max_pool_argmax"),
)


# -- static arguments --------------------------------------------------------------------------

def ints(value, d: int, what: str, minimum: int = 1) -> tuple:
    """An int or a sequence of ``d`` ints (each ``>= minimum``) as a tuple of ``d`` ints."""
    items = (value,) * d if isinstance(value, (int, np.integer)) else value
    if not isinstance(items, (tuple, list)) or len(items) != d or any(
            isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in items):
        raise TypeError(f"{what} must be an int or a tuple of {d} ints, got {value!r}")
    if any(v < minimum for v in items):
        raise ValueError(f"{what} must be >= {minimum}, got {value!r}")
    return tuple(int(v) for v in items)


def explicit_padding(padding, d: int, what: str) -> tuple:
    """``padding`` (an int, ``d`` ints for both sides, or ``2d`` ints ``(before, after)`` per
    axis: MindSpore's ``(top, bottom, left, right)``) as ``d`` pairs."""
    items = padding if isinstance(padding, (tuple, list)) else (padding,)
    if len(items) == 2 * d:
        flat = ints(tuple(items), 2 * d, what, 0)
        return tuple((flat[2 * i], flat[2 * i + 1]) for i in range(d))
    return tuple((p, p) for p in ints(padding, d, what, 0))


def same_padding(size, kernel, stride, dilation) -> tuple:
    """MindSpore's ``'same'``: ``ceil(size / stride)`` outputs, the extra pixel at the end."""
    pads = []
    for n, e, s in zip(size, _k.extent(kernel, dilation), stride):
        total = max(0, (-(-n // s) - 1) * s + e - n)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def pad_mode_and_pairs(pad_mode, padding, d: int, what: str,
                       modes=("same", "valid", "pad")) -> tuple[str, tuple]:
    """``pad_mode`` (any case) checked, and ``padding`` as ``d`` pairs (zero unless 'pad')."""
    if not isinstance(pad_mode, str):
        raise TypeError(f"{what}: pad_mode must be a str, got {type(pad_mode).__name__}")
    mode = pad_mode.lower()
    if mode not in modes:
        raise ValueError(f"{what}: pad_mode must be one of {', '.join(map(repr, modes))}, "
                         f"got {pad_mode!r}")
    pairs = explicit_padding(padding, d, f"{what} padding")
    if mode != "pad" and any(lo or hi for lo, hi in pairs):
        raise ValueError(f"{what}: padding must be 0 when pad_mode is {pad_mode!r}, got "
                         f"{padding!r}; use pad_mode='pad' for explicit padding")
    return mode, pairs


def resolve_padding(pad_mode, padding, size, kernel, stride, dilation, what) -> tuple:
    """The ``(before, after)`` pairs of ``pad_mode`` ('same', 'valid' or 'pad')."""
    mode, pairs = pad_mode_and_pairs(pad_mode, padding, len(kernel), what)
    return same_padding(size, kernel, stride, dilation) if mode == "same" else pairs


# -- lowerings ---------------------------------------------------------------------------------

def _array(b, x, d, what):
    x = b.const(x)
    t = b.type_of(x)
    if t.ndim != d + 2:
        raise ValueError(f"{what}: the input must be {d + 2}-d (N, C, {'H, W' if d == 2 else 'L'}),"
                         f" got shape {t.shape}")
    return x, t


def lower_conv(b, x, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1,
               groups=1, *, d=2, what="ops.conv2d"):
    """A ``d``-d convolution (MindSpore's ``ops.conv2d`` arguments), plus ``bias``."""
    x, t = _array(b, x, d, what)
    w = b.const(weight)
    wt = b.type_of(w)
    if wt.ndim != d + 2:
        raise ValueError(f"{what}: the weight must be {d + 2}-d (C_out, C_in / groups, kernel), "
                         f"got shape {wt.shape}")
    groups = ints(groups, 1, f"{what} groups")[0]
    stride, dilation = ints(stride, d, f"{what} stride"), ints(dilation, d, f"{what} dilation")
    _check_filters(t, wt, groups, what)
    pads = resolve_padding(pad_mode, padding, t.shape[2:], wt.shape[2:], stride, dilation, what)
    _result_size(t.shape[2:], wt.shape[2:], stride, dilation, pads, what)  # eager runs no infer
    out = b.conv(x, w, stride=stride, dilation=dilation, padding=pads, groups=groups)
    return out if bias is None else _add_bias(b, out, bias, d)


def _add_bias(b, out, bias, d):
    bias = b.const(bias)
    return b.add(out, reshape_to(b, bias, (-1,) + (1,) * d))


def lower_conv2d(b, input, weight, bias=None, stride=1, pad_mode="valid", padding=0,
                 dilation=1, groups=1):
    """``ops.conv2d``: ``(N, C_in, H, W)`` by ``(C_out, C_in / groups, kh, kw)``; pad_mode
    'valid', 'same' (extra pixel bottom/right) or 'pad' (``padding`` an int, ``(h, w)`` or
    ``(top, bottom, left, right)``)."""
    return lower_conv(b, input, weight, bias, stride, pad_mode, padding, dilation, groups)


def lower_conv1d(b, input, weight, bias=None, stride=1, pad_mode="valid", padding=0,
                 dilation=1, groups=1):
    """``ops.conv1d``: ``(N, C_in, L)`` by ``(C_out, C_in / groups, k)``."""
    return lower_conv(b, input, weight, bias, stride, pad_mode, padding, dilation, groups,
                      d=1, what="ops.conv1d")


def lower_conv_transpose(b, input, weight, bias=None, stride=1, padding=0, output_padding=0,
                         groups=1, dilation=1, *, d=2, what="ops.conv_transpose2d"):
    """The transposed convolution: the input gradient of a convolution by ``weight``
    (``(C_in, C_out / groups, kernel)``), of size ``(n - 1) * stride - before - after +
    extent + output_padding`` per axis."""
    y, t = _array(b, input, d, what)
    w = b.const(weight)
    wt = b.type_of(w)
    groups = ints(groups, 1, f"{what} groups")[0]
    if wt.ndim != d + 2 or wt.shape[0] != t.shape[1] or t.shape[1] % groups:
        raise RuntimeError(f"{what}: the input has {t.shape[1]} channels, the weight {wt.shape}"
                           f" expects {wt.shape[0] if wt.ndim else '?'} ({groups} groups)")
    stride, dilation = ints(stride, d, f"{what} stride"), ints(dilation, d, f"{what} dilation")
    pads = explicit_padding(padding, d, f"{what} padding")
    extra = ints(output_padding, d, f"{what} output_padding", 0)
    if any(e >= max(s, dl) for e, s, dl in zip(extra, stride, dilation)):
        raise ValueError(f"{what}: output_padding {extra} must be smaller than the stride "
                         f"{stride} or the dilation {dilation}")
    size = tuple((n - 1) * s - lo - hi + e + x for n, s, (lo, hi), e, x in
                 zip(t.shape[2:], stride, pads, _k.extent(wt.shape[2:], dilation), extra))
    if min(size) < 1:
        raise ValueError(f"{what}: the output would have spatial shape {size}")
    out = b.conv_transpose(y, w, size=size, stride=stride, dilation=dilation, padding=pads,
                           groups=groups)
    return out if bias is None else _add_bias(b, out, bias, d)


def conv_transpose2d(b, input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """``ops.conv_transpose2d``: ``(N, C_in, H, W)`` by ``(C_in, C_out / groups, kh, kw)``;
    ``padding`` an int, ``(h, w)`` or ``(top, bottom, left, right)``."""
    return lower_conv_transpose(b, input, weight, bias, stride, padding, output_padding,
                                groups, dilation)


def ceil_padding(size, kernel, stride, dilation, pads) -> tuple:
    """``pads`` with the extra pixels at the end that ``ceil_mode`` needs: the output has
    ``ceil((n + lo + hi - extent) / stride) + 1`` windows per axis, less one when the
    last would start in the end padding (as PyTorch and MindSpore's pooling kernels)."""
    out = []
    for n, e, s, (lo, hi) in zip(size, _k.extent(kernel, dilation), stride, pads):
        count = -(-(n + lo + hi - e) // s) + 1
        if (count - 1) * s >= n + lo:
            count -= 1
        out.append((lo, hi + max(0, (count - 1) * s + e - (n + lo + hi))))
    return tuple(out)


def lower_max_pool(b, x, kernel_size, stride=None, padding=0, dilation=1, *, pad_mode="pad",
                   ceil_mode=False, return_indices=False, d=2, what="ops.max_pool2d"):
    """Max pooling of each channel; padding never wins (it is ``-inf``). With
    ``return_indices``, also the int64 flat index in each ``(H, W)`` plane of the input
    of each window's maximum (no derivative)."""
    x, t = _array(b, x, d, what)
    kernel = ints(kernel_size, d, f"{what} kernel_size")
    stride = kernel if stride is None else ints(stride, d, f"{what} stride")
    dilation = ints(dilation, d, f"{what} dilation")
    pads = resolve_padding(pad_mode, padding, t.shape[2:], kernel, stride, dilation, what)
    if any(max(p) > k // 2 for p, k in zip(pads, kernel)) and pad_mode == "pad":
        raise ValueError(f"{what}: padding {padding} must be at most half the kernel {kernel}")
    if ceil_mode:
        pads = ceil_padding(t.shape[2:], kernel, stride, dilation, pads)
    _result_size(t.shape[2:], kernel, stride, dilation, pads, what)
    params = dict(kernel=kernel, stride=stride, dilation=dilation, padding=pads)
    out = b.max_pool(x, **params)
    if return_indices:
        return out, b.max_pool_argmax(x, hint="argmax", **params)
    return out


def max_pool2d(b, x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
               ceil_mode=False):
    """``ops.max_pool2d``: the maximum of each window (the gradient goes to the first maximum
    of a window, in row-major order); ``(output, argmax)`` with ``return_indices``."""
    return lower_max_pool(b, x, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                          return_indices=return_indices)


def lower_avg_pool(b, x, kernel_size=1, stride=1, pad_mode="valid", padding=0, *, d=2,
                   ceil_mode=False, count_include_pad=True, divisor_override=None,
                   what="ops.avg_pool2d"):
    """Average pooling: a convolution of each channel with a kernel of ones, divided by the
    window's count (real pixels only under ``'same'``, as MindSpore). ``count_include_pad``
    counts the padding, not the extra pixels ``ceil_mode`` adds at the end."""
    x, t = _array(b, x, d, what)
    kernel = ints(kernel_size, d, f"{what} kernel_size")
    stride = ints(stride, d, f"{what} stride")
    ones = (1,) * d
    given = resolve_padding(pad_mode, padding, t.shape[2:], kernel, stride, ones, what)
    pads = ceil_padding(t.shape[2:], kernel, stride, ones, given) if ceil_mode else given
    _result_size(t.shape[2:], kernel, stride, ones, pads, what)
    dtype = _float_dtype(t)
    params = dict(stride=stride, dilation=ones, padding=pads, groups=1)
    flat = reshape_to(b, x, (-1, 1) + t.shape[2:])
    window = b.const(np.ones((1, 1) + kernel, dtype), hint="window")
    sums = b.conv(flat, window, **params)
    out_shape = t.shape[:2] + b.type_of(sums).shape[2:]
    sums = reshape_to(b, sums, out_shape)
    if divisor_override:
        return b.div(sums, b.const(float(divisor_override)))
    if count_include_pad and pad_mode.lower() != "same" and pads == given:
        return b.div(sums, b.const(float(math.prod(kernel))))
    if count_include_pad and pad_mode.lower() != "same":   # the padding counts, the extra not
        size = tuple(n + lo + hi for n, (lo, hi) in zip(t.shape[2:], given))
        extra = tuple((0, hi - g) for (_, hi), (_, g) in zip(pads, given))
        counts = _k.conv(np.ones((1, 1) + size, dtype), np.ones((1, 1) + kernel, dtype),
                         stride=stride, dilation=ones, padding=extra, groups=1)[0, 0]
    else:
        counts = _k.conv(np.ones((1, 1) + t.shape[2:], dtype), np.ones((1, 1) + kernel, dtype),
                         **params)[0, 0]
    return b.div(sums, b.const(counts, hint="counts"))


def avg_pool2d(b, input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """``ops.avg_pool2d``: the mean of each window (zero padding counted unless
    ``count_include_pad=False``; ``ceil_mode`` windows past the end count real pixels and
    padding only)."""
    return lower_avg_pool(b, input_x, kernel_size, stride, "pad", padding, ceil_mode=ceil_mode,
                          count_include_pad=count_include_pad,
                          divisor_override=divisor_override)


def _averaging(n_in: int, n_out: int, dtype) -> np.ndarray:
    """``(n_out, n_in)``: row ``i`` averages ``[floor(i*n/m), ceil((i+1)*n/m))``."""
    a = np.zeros((n_out, n_in), dtype)
    for i in range(n_out):  # one row per output position, at compile time
        lo, hi = (i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


def adaptive_avg_pool2d(b, input, output_size):
    """``ops.adaptive_avg_pool2d``: ``(…, H, W)`` averaged into ``output_size`` bins
    (an int, or ``(h, w)`` where None keeps that size), as two matrix products."""
    x = b.const(input)
    t = b.type_of(x)
    if t.ndim not in (3, 4):
        raise ValueError(f"ops.adaptive_avg_pool2d: the input must be 3-d or 4-d, got {t.shape}")
    sizes = (output_size, output_size) if not isinstance(output_size, (tuple, list)) \
        else tuple(output_size)
    if len(sizes) != 2:
        raise ValueError(f"ops.adaptive_avg_pool2d: output_size must be an int or a pair, got "
                         f"{output_size!r}")
    h, w = (n if s is None else ints(s, 1, "output_size")[0]
            for s, n in zip(sizes, t.shape[-2:]))
    dtype = _float_dtype(t)
    rows = b.const(_averaging(t.shape[-2], h, dtype), hint="rows")
    cols = b.const(_averaging(t.shape[-1], w, dtype).T.copy(), hint="cols")
    return b.matmul(b.matmul(rows, x), cols)


def flatten(b, input, order="C", *, start_dim=1, end_dim=-1):
    """``ops.flatten``: axes ``start_dim .. end_dim`` merged into one (C order)."""
    if order != "C":
        raise UnsupportedOperationError(f"ops.flatten(order={order!r}) is not supported",
                                        hint="use order='C'")
    x = b.const(input)
    shape = b.type_of(x).shape
    nd = max(len(shape), 1)
    lo, hi = (ints(v, 1, "ops.flatten dims", -nd)[0] % nd for v in (start_dim, end_dim))
    if lo > hi:
        raise ValueError(f"ops.flatten: start_dim {start_dim} is after end_dim {end_dim}")
    if not shape:
        return reshape_to(b, x, (1,))
    return reshape_to(b, x, shape[:lo] + (math.prod(shape[lo:hi + 1]),) + shape[hi + 1:])
