"""NumPy kernels of convolution and pooling, which generated code calls by name.

Every kernel works on ``(N, C, *spatial)`` arrays with any number of spatial
axes. Padding is explicit (``pad``); ``xp`` below is the padded input.

* ``conv(x, w)``: ``y[n, g*O/G + o, s] =
  sum_{c, k} xp[n, g*C/G + c, s*stride + k*dilation] w[g*O/G + o, c, k]``: the
  ``(N, C, *out, *kernel)`` view of the windows (:func:`windows`,
  ``sliding_window_view``, no copy) as a matrix (im2col), times the filters, one
  batched matrix product with the groups as its batch axis;
* ``conv_filter(x, y, kernel)``: its adjoint in ``w``, the same window matrix
  transposed times ``y``;
* ``conv_transpose(y, w, size)``: its adjoint in ``x`` (the gradient a
  convolution of an input of spatial shape ``size`` sends back, also what
  ``Conv2dTranspose`` computes): ``y`` times the filters gives what each kernel
  tap sends back from each window (col2im), and a loop over the kernel taps adds
  them into ``xp``, each tap's windows being one strided view of it (:func:`taps`);
* ``max_pool``: the maximum of each window of ``xp`` padded with ``-inf``, an
  ``np.maximum`` over the taps' views;
  ``max_pool_scatter(x, g)`` sends each ``g[n, c, s]`` to the position of the
  maximum of window ``s`` (the first in row-major window order on ties, the one
  ``np.argmax`` picks, or the first NaN); ``max_pool_gather(x, g)`` reads ``g`` at
  those positions. The two are each other's adjoints;
  ``max_pool(x) == max_pool_gather(x, x)``.

Loops run over kernel taps (at most ``prod(kernel)`` iterations, each a whole-array
NumPy operation), never over pixels. Params are canonical tuples: ``stride`` and
``dilation`` one int per spatial axis, ``padding`` one ``(before, after)`` pair per
spatial axis.

Results have the NumPy result dtype of the float inputs (float32 stays float32).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..backends import numpy_only


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
    """``(G, C/G * prod(kernel), N * prod(out))``: the windows as columns of a matrix.

    Kernel-major (im2col transposed): the copy's innermost axis is the output's
    last spatial axis, long runs of the input, not the few taps of a kernel row.
    """
    n, c = win.shape[:2]
    d = (win.ndim - 2) // 2
    grouped = win.reshape((n, groups, c // groups) + win.shape[2:])
    order = (1, 2) + tuple(range(3 + d, 3 + 2 * d)) + (0,) + tuple(range(3, 3 + d))
    return grouped.transpose(order).reshape(groups, -1, n * int(np.prod(win.shape[2:2 + d])))


def _by_group(y, groups):
    """``(N, O, *spatial)`` as ``(G, O/G, N * prod(spatial))``."""
    n, o = y.shape[:2]
    d = y.ndim - 2
    grouped = y.reshape((n, groups, o // groups) + y.shape[2:])
    return grouped.transpose((1, 2, 0) + tuple(range(3, 3 + d))).reshape(groups, o // groups, -1)


def _ungroup(m, n, spatial):
    """``(G, O/G, N * prod(spatial))`` back to ``(N, O, *spatial)``."""
    groups, k = m.shape[:2]
    d = len(spatial)
    out = m.reshape((groups, k, n) + tuple(spatial))
    out = out.transpose((2, 0, 1) + tuple(range(3, 3 + d)))
    return out.reshape((n, groups * k) + tuple(spatial))


def conv(x, w, stride, dilation, padding, groups):
    """The grouped, strided, dilated cross-correlation of ``x`` with the filters ``w``."""
    dtype = _float(x, w)
    win = windows(pad(x, padding), w.shape[2:], stride, dilation)
    cols = _columns(win, groups).astype(dtype, copy=False)
    filters = w.reshape(groups, w.shape[0] // groups, -1).astype(dtype, copy=False)
    return _ungroup(filters @ cols, x.shape[0], win.shape[2:2 + len(stride)])


def conv_filter(x, y, kernel, stride, dilation, padding, groups):
    """The adjoint of :func:`conv` in its filters: ``(O, C/G, *kernel)``."""
    dtype = _float(x, y)
    win = windows(pad(x, padding), kernel, stride, dilation)
    cols = _columns(win, groups).astype(dtype, copy=False)
    ym = _by_group(y, groups).astype(dtype, copy=False)
    dw = ym @ np.swapaxes(cols, 1, 2)  # (G, O/G, C/G * K)
    return dw.reshape((y.shape[1], x.shape[1] // groups) + tuple(kernel))


def taps(kernel, stride, dilation, out):
    """Each kernel tap in row-major order, as the index of the ``(N, C, *out)`` part of the
    padded input that the tap reads for every window (a strided view, no copy)."""
    return [(slice(None),) * 2 + tuple(slice(t * dl, t * dl + (n - 1) * s + 1, s)
                                       for t, dl, n, s in zip(tap, dilation, out, stride))
            for tap in np.ndindex(*kernel)]


def _crop(xp, size, padding):
    return xp[(slice(None),) * 2 + tuple(slice(lo, lo + n) for n, (lo, _) in zip(size, padding))]


def conv_transpose(y, w, size, stride, dilation, padding, groups):
    """The adjoint of :func:`conv` in its input, of spatial shape ``size``.

    One batched matrix product gives, for every window, what each kernel tap sends
    back (col2im); a loop over the taps (not the pixels) adds them into the padded
    input, each tap's windows being one strided view of it.
    """
    d = len(size)
    kernel, out = tuple(w.shape[2:]), tuple(y.shape[2:])
    dtype = _float(y, w)
    n, o = y.shape[:2]
    c = w.shape[1] * groups
    wm = w.reshape(groups, o // groups, -1).astype(dtype, copy=False)
    cols = np.swapaxes(wm, 1, 2) @ _by_group(y, groups).astype(dtype, copy=False)
    cols = cols.reshape((groups, c // groups) + kernel + (n,) + out)  # (G, C/G, *K, N, *out)
    to_nc = (2, 0, 1) + tuple(range(3, 3 + d))  # one tap's (G, C/G, N, *out) as (N, C, *out)
    xp = np.zeros((n, c) + tuple(m + lo + hi for m, (lo, hi) in zip(size, padding)), dtype)
    for tap, index in zip(np.ndindex(*kernel), taps(kernel, stride, dilation, out)):
        xp[index] += cols[(slice(None),) * 2 + tap].transpose(to_nc).reshape((n, c) + out)
    return _crop(xp, size, padding)


# -- max pooling ---------------------------------------------------------------------------

def _pool_taps(x, kernel, stride, dilation, padding):
    """The input padded with ``-inf`` and the index of each tap's view of it."""
    xp = pad(x, padding, -np.inf)
    return xp, taps(kernel, stride, dilation, out_size(x.shape[2:], kernel, stride, dilation,
                                                       padding))


def _maximum(xp, index):
    result = xp[index[0]].copy()
    for tap in index[1:]:
        np.maximum(result, xp[tap], out=result)
    return result


def max_pool(x, kernel, stride, dilation, padding):
    """The maximum of each window (padding never wins: it is ``-inf``)."""
    xp, index = _pool_taps(x, kernel, stride, dilation, padding)
    return _maximum(xp, index)


def _argmax_taps(x, kernel, stride, dilation, padding):
    """``(N, C, *out)``: the tap (row-major within the window) of each window's maximum.

    As ``np.argmax``: the first maximum on ties, the first NaN if there is one. The
    taps are visited last to first, so the first one equal to the maximum wins.
    """
    numpy_only("the position of each window's maximum", x)
    xp, index = _pool_taps(x, kernel, stride, dilation, padding)
    best = _maximum(xp, index)
    which = np.zeros(best.shape, np.intp)
    nan = best.dtype.kind == "f" and bool(np.isnan(best).any())
    for t in range(len(index) - 1, -1, -1):
        value = xp[index[t]]
        np.copyto(which, t, where=value == best)
        if nan:
            np.copyto(which, t, where=np.isnan(value))
    return which, index, xp.shape


def max_pool_argmax(x, kernel, stride, dilation, padding):
    """The pooled shape: the flat index, in each ``(H, W)`` plane of ``x`` itself (not
    padded), of each window's first maximum, as int64 (MindSpore's ``return_indices``)."""
    which, _, _ = _argmax_taps(x, kernel, stride, dilation, padding)
    taps = np.unravel_index(which, kernel)
    grids = np.meshgrid(*(np.arange(n) for n in which.shape[2:]), indexing="ij")
    coords = tuple(g * s + t * dl - lo for g, s, t, dl, (lo, _)
                   in zip(grids, stride, taps, dilation, padding))
    return np.ravel_multi_index(coords, x.shape[2:]).astype(np.int64)


def max_pool_scatter(x, g, kernel, stride, dilation, padding):
    """``x``'s shape: each ``g`` value added at its window's maximum."""
    which, index, full = _argmax_taps(x, kernel, stride, dilation, padding)
    dtype = _float(g)
    g = np.asarray(g, dtype=dtype)
    out = np.zeros(full, dtype)
    zero = np.zeros((), dtype)
    for t, tap in enumerate(index):
        out[tap] += np.where(which == t, g, zero)
    return _crop(out, x.shape[2:], padding)


def max_pool_gather(x, g, kernel, stride, dilation, padding):
    """``g`` read at the maximum of each window of ``x``: the pooled shape."""
    which, index, _ = _argmax_taps(x, kernel, stride, dilation, padding)
    gp = pad(np.asarray(g, dtype=_float(g)), padding)
    result = np.zeros(which.shape, gp.dtype)
    for t, tap in enumerate(index):
        np.copyto(result, gp[tap], where=which == t)
    return result
