"""Recipes of convolution and pooling (ad_compiler/ops/conv.py): ops.conv1d, conv2d,
conv_transpose2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d, flatten and the class forms
ops.MaxPool / ops.AvgPool.

The generator holds 1-d and 2-d arrays: a recipe reshapes one into ``(1, 1, H, W)``
(a 1-d array of length n is ``(1, 1, 1, n)``), takes the filters from the first
elements of another array (so they get gradients too), and indexes ``[0, 0]`` to
return a 2-d array.
"""
from __future__ import annotations

from .recipes import NOT_GENERATED, Reject


def _image(g):
    """An array as ``(name.reshape(1, 1, h, w), h, w)``."""
    x = g.arr()
    shape = g.val(x).shape
    h, w = shape if len(shape) == 2 else (1, shape[0])
    return f"{x}.reshape(1, 1, {h}, {w})", h, w


def _kernel(g, h, w):
    kh, kw = g.choice([1, 2]) if h > 1 else 1, g.choice([1, 2]) if w > 1 else 1
    return kh, kw


def _filters(g, shape):
    """``shape`` filled from the first elements of an array big enough."""
    size = 1
    for d in shape:
        size *= d
    names = [n for n in g.arrays() if g.val(n).size >= size]
    if not names:
        raise Reject("no array holds enough filter values")
    return f"{g.choice(names)}.reshape(-1)[:{size}].reshape{shape}"


def _conv2d(g):
    image, h, w = _image(g)
    kh, kw = _kernel(g, h, w)
    mode = g.choice(["'valid'", "'same'", "'pad', 1"])
    stride = g.choice(["1", "2", "(1, 2)"])
    bias = g.choice(["None", _filters(g, (1,))])
    return f"ops.conv2d({image}, {_filters(g, (1, 1, kh, kw))}, {bias}, {stride}, {mode})[0, 0]"


def _conv1d(g):
    x = g.arr(max_nd=1)
    n = g.val(x).shape[0]
    k = g.choice([1, 2, 3]) if n >= 3 else 1
    mode = g.choice(["'valid'", "'same'", "'pad', 1"])
    return (f"ops.conv1d({x}.reshape(1, 1, {n}), {_filters(g, (1, 1, k))}, None, "
            f"{g.choice(['1', '2'])}, {mode})[0, 0]")


def _conv_transpose2d(g):
    image, h, w = _image(g)
    kh, kw = g.choice([1, 2]), g.choice([1, 2, 3])
    stride = g.choice(["1", "2"])
    return (f"ops.conv_transpose2d({image}, {_filters(g, (1, 1, kh, kw))}, None, {stride})"
            "[0, 0]")


def _pool(fmt, padded=False):
    def recipe(g):
        image, h, w = _image(g)
        kh, kw = _kernel(g, h, w)
        stride = g.choice(["1", "2", f"({kh}, {kw})"])
        extra = ", 0"
        if padded and kh == kw == 2:
            extra = g.choice([", 0", ", 1"])
        return fmt.format(x=image, k=f"({kh}, {kw})", s=stride, p=extra,
                          mode=g.choice(["'valid'", "'same'", "'SAME'"]))
    return recipe


def _adaptive(g):
    image, h, w = _image(g)
    size = g.choice(["1", f"({max(h - 1, 1)}, {w})", f"(None, {max(w // 2, 1)})",
                     f"({h + 1}, 2)"])
    return f"ops.adaptive_avg_pool2d({image}, {size})[0, 0]"


def _flatten(g):
    x = g.arr()
    if g.val(x).ndim == 2:
        return g.choice([f"ops.flatten({x})", f"ops.flatten({x}, start_dim=0)",
                         f"ops.flatten({x}[None], start_dim=1, end_dim=2)"])
    return f"ops.flatten({x}[None])"


P = "ad_compiler.ops.operations."
RECIPES = {
    P + "conv2d": _conv2d,
    P + "conv1d": _conv1d,
    P + "conv_transpose2d": _conv_transpose2d,
    P + "max_pool2d": _pool("ops.max_pool2d({x}, {k}, {s}{p})[0, 0]", padded=True),
    P + "avg_pool2d": _pool("ops.avg_pool2d({x}, {k}, {s}{p})[0, 0]", padded=True),
    "ad_compiler.ops.operations_conv.MaxPool": _pool("ops.MaxPool({k}, {s}, {mode})({x})[0, 0]"),
    "ad_compiler.ops.operations_conv.AvgPool": _pool("ops.AvgPool({k}, {s}, {mode})({x})[0, 0]"),
    P + "adaptive_avg_pool2d": _adaptive,
    P + "flatten": _flatten,
}

NOT_GENERATED["ad_compiler.ops.operations_conv._Pool"] = "abstract base of MaxPool/AvgPool"
