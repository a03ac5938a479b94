"""NumPy kernels of convolution and pooling, which generated code calls by name.

Every kernel works on ``(N, C, *spatial)`` arrays with any number of spatial
axes, through one view: :func:`windows` gives ``(N, C, *out, *kernel)`` with
``windows[n, c, s, k] = xp[n, c, s * stride + k * dilation]`` over the padded
input ``xp`` (``np.lib.stride_tricks.sliding_window_view``, no copy). The
products are one batched matrix product per call (im2col), groups as its batch
axis; there is no Python loop over pixels or kernel taps.

Params are canonical tuples: ``stride`` and ``dilation`` one int per spatial
axis, ``padding`` one ``(before, after)`` pair per spatial axis.

* ``conv(x, w)``: ``y[n, g*O/G + o, s] =
  sum_{c, k} xp[n, g*C/G + c, s*stride + k*dil] w[g*O/G + o, c, k]``;
* ``conv_transpose(y, w, size)``: its adjoint in ``x`` (the gradient a convolution
  of an input of spatial shape ``size`` sends back), a stride-1 convolution of
  ``y`` with zeros inserted between its pixels by the flipped, transposed kernel;
* ``conv_filter(x, y, kernel)``: its adjoint in ``w``;
* ``max_pool``: the maximum of each window of ``x`` padded with ``-inf``;
  ``max_pool_scatter(x, g)`` sends each ``g[n, c, s]`` to the position of the
  maximum of window ``s`` (the first in row-major window order on ties, the one
  ``np.argmax`` picks); ``max_pool_gather(x, g)`` reads ``g`` at those positions.
  The two are each other's adjoints; ``max_pool(x) == max_pool_gather(x, x)``.

Results have the NumPy result dtype of the float inputs (float32 stays float32).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def extent(kernel, dilation) -> tuple:
    """The span of each dilated kernel axis."""
    return tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation))


def out_size(size, kernel, stride, dilation, padding) -> tuple:
    """The spatial shape of a convolution's (or pooling's) result."""
    return tuple((n + lo + hi - e) // s + 1 for n, e, s, (lo, hi)
                 in zip(size, extent(kernel, dilation), stride, padding))


def pad(x, padding, value=0.0):
    """``x`` padded on its spatial axes (a view-free copy only when needed)."""
    if not any(lo or hi for lo, hi in padding):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(padding), constant_values=value)


def windows(xp, kernel, stride, dilation):
    """The ``(N, C, *out, *kernel)`` view of the windows of the padded input ``xp``."""
    d = len(kernel)
    view = sliding_window_view(xp, extent(kernel, dilation), axis=tuple(range(2, 2 + d)))
    return view[(slice(None),) * 2 + tuple(slice(None, None, s) for s in stride)
                + tuple(slice(None, None, k) for k in dilation)]


def _float(*arrays):
    dtype = np.result_type(*arrays)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _columns(win, groups):
    """``(G, N * prod(out), C/G * prod(kernel))``: the windows as rows of a matrix."""
    n, c = win.shape[:2]
    d = (win.ndim - 2) // 2
    grouped = win.reshape((n, groups, c // groups) + win.shape[2:])
    order = (1, 0) + tuple(range(3, 3 + d)) + (2,) + tuple(range(3 + d, 3 + 2 * d))
    return grouped.transpose(order).reshape(groups, n * int(np.prod(win.shape[2:2 + d])), -1)


def _ungroup(m, n, spatial):
    """``(G, N * prod(spatial), K)`` back to ``(N, G * K, *spatial)``."""
    groups, k = m.shape[0], m.shape[-1]
    d = len(spatial)
    out = m.reshape((groups, n) + tuple(spatial) + (k,))
    out = out.transpose((1, 0, 2 + d) + tuple(range(2, 2 + d)))
    return out.reshape((n, groups * k) + tuple(spatial))


def conv(x, w, stride, dilation, padding, groups):
    """The grouped, strided, dilated cross-correlation of ``x`` with the filters ``w``."""
    dtype = _float(x, w)
    win = windows(pad(x, padding), w.shape[2:], stride, dilation)
    cols = _columns(win, groups).astype(dtype, copy=False)
    filters = w.reshape(groups, w.shape[0] // groups, -1).transpose(0, 2, 1).astype(dtype)
    return _ungroup(cols @ filters, x.shape[0], win.shape[2:2 + len(stride)])


def conv_filter(x, y, kernel, stride, dilation, padding, groups):
    """The adjoint of :func:`conv` in its filters: ``(O, C/G, *kernel)``."""
    dtype = _float(x, y)
    win = windows(pad(x, padding), kernel, stride, dilation)
    cols = _columns(win, groups).astype(dtype, copy=False)
    d = len(kernel)
    n, o = y.shape[:2]
    ym = y.reshape((n, groups, o // groups) + y.shape[2:])
    ym = ym.transpose((1, 0) + tuple(range(3, 3 + d)) + (2,)).reshape(groups, -1, o // groups)
    dw = np.swapaxes(cols, 1, 2) @ ym.astype(dtype, copy=False)  # (G, C/G * K, O/G)
    return np.swapaxes(dw, 1, 2).reshape((o, x.shape[1] // groups) + tuple(kernel))


def conv_transpose(y, w, size, stride, dilation, padding, groups):
    """The adjoint of :func:`conv` in its input, of spatial shape ``size``."""
    d = len(size)
    kernel = w.shape[2:]
    spread = y
    if any(s > 1 for s in stride):  # zeros between the pixels, where no window starts
        spread = np.zeros(y.shape[:2] + tuple((n - 1) * s + 1 for n, s in
                                              zip(y.shape[2:], stride)), dtype=y.dtype)
        spread[(slice(None),) * 2 + tuple(slice(None, None, s) for s in stride)] = y
    full = tuple(n + lo + hi for n, (lo, hi) in zip(size, padding))
    edges = tuple((e - 1, f - m) for e, f, m in zip(extent(kernel, dilation), full,
                                                   spread.shape[2:]))
    o, c = w.shape[:2]
    flipped = w.reshape((groups, o // groups, c) + kernel).swapaxes(1, 2)
    flipped = flipped.reshape((groups * c, o // groups) + kernel)
    flipped = flipped[(Ellipsis,) + (slice(None, None, -1),) * d]
    xp = conv(pad(spread, edges), flipped, (1,) * d, dilation, ((0, 0),) * d, groups)
    return xp[(slice(None),) * 2 + tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, padding))]


# -- max pooling ---------------------------------------------------------------------------

def _pool_windows(x, kernel, stride, dilation, padding):
    win = windows(pad(x, padding, -np.inf), kernel, stride, dilation)
    d = len(kernel)
    return win.reshape(win.shape[:2 + d] + (-1,)), d


def max_pool(x, kernel, stride, dilation, padding):
    """The maximum of each window (padding never wins: it is ``-inf``)."""
    win, d = _pool_windows(x, kernel, stride, dilation, padding)
    return win.max(axis=-1)


def _argmax_positions(x, kernel, stride, dilation, padding):
    """``(N, C, prod(out))``: the flat index, in the padded input, of each window's maximum."""
    win, d = _pool_windows(x, kernel, stride, dilation, padding)
    taps = np.unravel_index(win.argmax(axis=-1), kernel)
    out = win.shape[2:2 + d]
    grids = np.meshgrid(*(np.arange(n) for n in out), indexing="ij")
    full = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], padding))
    coords = tuple(g * s + t * dl for g, s, t, dl in zip(grids, stride, taps, dilation))
    flat = np.ravel_multi_index(coords, full)
    return flat.reshape(x.shape[:2] + (-1,)), full


def max_pool_argmax(x, kernel, stride, dilation, padding):
    """The pooled shape: the flat index, in each ``(H, W)`` plane of ``x`` itself (not
    padded), of each window's first maximum, as int64 (MindSpore's ``return_indices``)."""
    win, d = _pool_windows(x, kernel, stride, dilation, padding)
    taps = np.unravel_index(win.argmax(axis=-1), kernel)
    out = win.shape[2:2 + d]
    grids = np.meshgrid(*(np.arange(n) for n in out), indexing="ij")
    coords = tuple(g * s + t * dl - lo for g, s, t, dl, (lo, _)
                   in zip(grids, stride, taps, dilation, padding))
    return np.ravel_multi_index(coords, x.shape[2:]).astype(np.int64)


def max_pool_scatter(x, g, kernel, stride, dilation, padding):
    """``x``'s shape: each ``g`` value added at its window's maximum."""
    flat, full = _argmax_positions(x, kernel, stride, dilation, padding)
    n, c = x.shape[:2]
    size = int(np.prod(full))
    base = (np.arange(n * c) * size).reshape(n, c, 1)
    summed = np.bincount((flat + base).ravel(), weights=np.asarray(g).ravel(),
                         minlength=n * c * size)
    out = summed.reshape((n, c) + full).astype(_float(g), copy=False)
    return out[(slice(None),) * 2 + tuple(slice(lo, lo + m) for m, (lo, _)
                                          in zip(x.shape[2:], padding))]


def max_pool_gather(x, g, kernel, stride, dilation, padding):
    """``g`` read at the maximum of each window of ``x``: the pooled shape."""
    flat, full = _argmax_positions(x, kernel, stride, dilation, padding)
    gp = pad(np.asarray(g, dtype=_float(g)), padding).reshape(x.shape[:2] + (-1,))
    out_shape = out_size(x.shape[2:], kernel, stride, dilation, padding)
    return np.take_along_axis(gp, flat, axis=2).reshape(x.shape[:2] + out_shape)
