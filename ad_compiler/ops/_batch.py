"""Batching rules shared by the primitives' declarations (``primitive(..., batch=...)``).

A rule is ``batch(b, axes, *inputs, **params) -> (out, out_axis)`` (see
ad/rules.py): ``axes`` holds each input's batch axis or ``None``. Most rules move
the batch axis to the front and shift the primitive's axis parameters by one;
the factories here build them for a primitive by name:

* :func:`broadcasting`: elementwise ops, batched inputs aligned so NumPy's
  broadcasting keeps the batch axis apart from the example's axes;
* :func:`along` / :func:`reducing`: ops with axis parameters (``None``, "every
  axis", becomes the example's axes);
* :func:`leading`: ops that work on the trailing axes of a stack (np.linalg);
* :func:`materialized`: ops whose inputs must all carry the batch (concat).

Nothing here loops over the batch: each rule emits one op on the whole batch
(plus transposes/reshapes that place the batch axis).
"""
from __future__ import annotations

import numpy as np

from ..ad.batching import materialize, to_front
from ..errors import UnsupportedOperationError
from ..ir.core import AType
from ..ir.dims import HINT


def example_ndim(v, ax) -> int:
    """The number of axes of one example of ``v``."""
    t = v.type
    return t.ndim - (ax is not None)


def lead_ones(b, v, rank: int):
    """``v`` (batch axis first) with ones inserted after the batch axis up to ``rank``
    example axes, so broadcasting against a shared value aligns the example's axes."""
    shape = v.type.shape
    missing = rank - (len(shape) - 1)
    if missing <= 0:
        return v
    return _with_ones(b, v, shape[:1] + (1,) * missing + shape[1:])


def _with_ones(b, v, shape):
    """``v`` reshaped to ``shape``, which adds or drops axes of length 1: an expand_dims or
    squeeze when a length is known only at run time (a reshape needs them all)."""
    if not v.type.dynamic:
        return b.reshape(v, shape=shape)
    old, k, added, dropped = v.type.shape, 0, [], []
    for i, d in enumerate(shape):
        if k < len(old) and (d == old[k] or d is None and old[k] is None):
            k += 1
        elif d == 1:
            added.append(i)
    kept = len(shape) - len(added)
    if kept < len(old):  # axes of length 1 dropped: those past the matched ones
        dropped = [i for i, d in enumerate(old) if d == 1][-(len(old) - kept):]
        return b.squeeze(v, axis=tuple(dropped))
    return b.expand_dims(v, axis=tuple(added))


def _norm(a: int, n: int) -> int:
    if not -n <= a < max(n, 1):
        raise UnsupportedOperationError(f"axis {a} is out of bounds for {n} axes")
    return a % n if n else 0


def shift(axis, n: int):
    """``axis`` (an int, tuple or None) of an example with ``n`` axes, counted in the
    batched value (batch first); None stays None."""
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        return tuple(_norm(a, n) + 1 for a in axis)
    return _norm(axis, n) + 1


def broadcasting(name: str):
    """The rule of an elementwise (broadcasting) primitive."""
    def rule(b, axes, /, *inputs, **params):
        rank = max(example_ndim(v, ax) for v, ax in zip(inputs, axes))
        ins = [v if ax is None else lead_ones(b, to_front(b, v, ax), rank)
               for v, ax in zip(inputs, axes)]
        return b.emit(name, *ins, **params), 0
    rule.__name__ = f"batch_{name}"
    return rule


def along(name: str, *keys: str, none: str = "flatten"):
    """The rule of a one-input primitive whose params ``keys`` are axes of its input.

    An axis ``None`` means: ``none="flatten"`` the flattened example (argmax, cumsum),
    ``none="all"`` every axis of the example (a reduction), ``none="same"`` the
    flattened example reshaped back (roll).
    """
    keys = keys or ("axis",)

    def rule(b, axes, x, /, *rest, **params):
        if any(ax is not None for ax in axes[1:]):
            raise UnsupportedOperationError(f"vmap: '{name}' with a batched second input")
        n = example_ndim(x, axes[0])
        x = to_front(b, x, axes[0])
        new = dict(params)
        flat = False
        for k in keys:
            if params.get(k) is None and none != "all":
                flat = True
            elif params.get(k) is None:
                new[k] = tuple(range(1, n + 1))
            else:
                new[k] = shift(params[k], n)
        shape = x.type.shape
        if flat:
            x = b.reshape(x, shape=(shape[0], int(np.prod(shape[1:], dtype=np.int64))))
            new.update({k: 1 for k in keys if params.get(k) is None})
        out = b.emit(name, x, *rest, **new)
        if flat and none == "same":
            out = b.reshape(out, shape=shape)
        elif flat and params.get("keepdims"):
            out = b.reshape(out, shape=(shape[0],) + (1,) * n)
        return out, 0
    rule.__name__ = f"batch_{name}"
    return rule


def reducing(name: str):
    """A reduction over ``axis`` (None: every axis of the example)."""
    return along(name, "axis", none="all")


def leading(name: str):
    """A primitive that works on the trailing axes of a stack (np.linalg's): the batch
    axis goes first, everything else as it was."""
    def rule(b, axes, /, *inputs, **params):
        ins = [materialize(b, v, ax) for v, ax in zip(inputs, axes)]
        return b.emit(name, *ins, **params), 0
    rule.__name__ = f"batch_{name}"
    return rule


def materialized(name: str, axis_of=lambda n: n):
    """A primitive of several inputs joined along ``axis`` (concat, stack): every input
    carries the batch first; ``axis_of(n)`` is the number of axes ``axis`` counts in,
    for examples with ``n`` axes."""
    def rule(b, axes, *inputs, axis, **params):
        n = example_ndim(inputs[0], axes[0])
        ins = [materialize(b, v, ax) for v, ax in zip(inputs, axes)]
        return b.emit(name, *ins, axis=shift(axis, axis_of(n)), **params), 0
    rule.__name__ = f"batch_{name}"
    return rule


def refuse(name: str, why: str):
    """A rule that refuses (a case vmap cannot batch yet), naming the primitive."""
    def rule(b, axes, *inputs, **params):
        raise UnsupportedOperationError(f"vmap does not batch '{name}' {why}")
    return rule


# -- products -------------------------------------------------------------------------

def batch_matmul(b, axes, x, y):
    """``x @ y`` on a batch: a batched 1-D operand becomes a row (1, k) / a column (k, 1)
    (except a row against a shared matrix),
    batched operands get ones after the batch axis so the matrix stacks broadcast, and
    the added row/column axes are reshaped away."""
    (ax, ay), nx, ny = axes, example_ndim(x, axes[0]), example_ndim(y, axes[1])
    # a batched vector times a shared matrix is already a matrix product: (B, k) @ (k, n)
    row = ax is not None and nx == 1 and (ay is not None or ny > 2)
    col = ay is not None and ny == 1
    if ax is not None:
        x = to_front(b, x, ax)
        x = _with_ones(b, x, (x.type.shape[0], 1) + x.type.shape[1:]) if row else x
    if ay is not None:
        y = to_front(b, y, ay)
        y = _with_ones(b, y, y.type.shape + (1,)) if col else y
    rank = max(nx + row, ny + col)
    x = lead_ones(b, x, rank) if ax is not None and nx + row > 1 else x
    y = lead_ones(b, y, rank) if ay is not None else y
    out = b.matmul(x, y)
    shape = list(out.type.shape)
    if col:
        shape.pop(-1)
    if row:
        shape.pop(-2 if not col and ny >= 2 else -1)
    return (out if tuple(shape) == out.type.shape else _with_ones(b, out, tuple(shape))), 0


def _free_letter(subscripts: str) -> str:
    from .einsum import LETTERS
    return next(c for c in LETTERS if c not in subscripts)


def batch_einsum(b, axes, /, *operands, subscripts, **params):
    """An einsum with one more letter: the batch axis, first in the batched operands
    and in the output (subscripts are canonical: explicit and ellipsis-free)."""
    z = _free_letter(subscripts)
    terms, out = subscripts.split("->")
    terms = [z + t if ax is not None else t for t, ax in zip(terms.split(","), axes)]
    ins = [to_front(b, v, ax) for v, ax in zip(operands, axes)]
    return b.einsum(*ins, subscripts=",".join(terms) + "->" + z + out, **params), 0


def tensordot_rule(b, batch_axes, x, y, **params):
    """``np.tensordot`` on a batch: the same contraction written as an einsum."""
    from .einsum import LETTERS
    (xa, ya) = params["axes"]
    nx, ny = example_ndim(x, batch_axes[0]), example_ndim(y, batch_axes[1])
    letters = iter(LETTERS)
    xs = [next(letters) for _ in range(nx)]
    ys = [next(letters) for _ in range(ny)]
    for i, j in zip(xa, ya):
        ys[j] = xs[i]
    out = [c for i, c in enumerate(xs) if i not in xa] + \
        [c for j, c in enumerate(ys) if j not in ya]
    subscripts = f"{''.join(xs)},{''.join(ys)}->{''.join(out)}"
    return batch_einsum(b, batch_axes, x, y, subscripts=subscripts)


# -- shapes -------------------------------------------------------------------------

def _one(rule):
    """A rule of a one-input primitive written as ``rule(b, x, n, **params) -> out``: ``x``
    has its batch axis first, ``n`` is the number of axes of an example."""
    def batch(b, axes, x, /, **params):
        n = example_ndim(x, axes[0])
        return rule(b, to_front(b, x, axes[0]), n, **params), 0
    batch.__name__ = f"batch_{rule.__name__}"
    return batch


@_one
def batch_reshape(b, x, n, *, shape):
    return b.reshape(x, shape=x.type.shape[:1] + tuple(shape))


@_one
def batch_broadcast_to(b, x, n, *, shape):
    x = lead_ones(b, x, len(shape))
    return b.broadcast_to(x, shape=x.type.shape[:1] + tuple(shape))


@_one
def batch_transpose(b, x, n, *, axes=None):
    perm = tuple(reversed(range(n))) if axes is None else tuple(_norm(a, n) for a in axes)
    return b.transpose(x, axes=(0,) + tuple(a + 1 for a in perm))


@_one
def batch_expand_dims(b, x, n, *, axis):
    return b.expand_dims(x, axis=shift(axis, n + (len(axis) if isinstance(axis, tuple) else 1)))


@_one
def batch_squeeze(b, x, n, *, axis=None):
    if axis is None:
        axis = tuple(i for i, d in enumerate(x.type.shape[1:]) if d == 1)
    return b.squeeze(x, axis=shift(axis, n))


@_one
def batch_slice_axis(b, x, n, *, axis, start, stop):
    return b.slice_axis(x, axis=shift(axis, n), start=start, stop=stop)


@_one
def batch_pad(b, x, n, *, pad_width):
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (n, 2))
    return b.pad(x, pad_width=((0, 0),) + tuple((int(p), int(q)) for p, q in widths))


@_one
def batch_tile(b, x, n, *, reps):
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    x = lead_ones(b, x, len(reps))
    return b.tile(x, reps=(1,) * (x.type.ndim - len(reps)) + reps)


@_one
def batch_diagonal(b, x, n, *, offset, axis1, axis2):
    return b.diagonal(x, offset=offset, axis1=shift(axis1, n), axis2=shift(axis2, n))


def batch_diagonal_put(b, axes, t, *, shape, offset, axis1, axis2):
    n = len(shape)
    t = to_front(b, t, axes[0])
    return b.diagonal_put(t, shape=(b.batch_size,) + tuple(shape), offset=offset,
                          axis1=shift(axis1, n), axis2=shift(axis2, n)), 0


def matrix_stack(name: str):
    """tril/triu: the trailing two axes of an example."""
    def rule(b, axes, x, /, **params):
        n = example_ndim(x, axes[0])
        x = to_front(b, x, axes[0])
        if n == 1:  # NumPy makes a 1-D example the rows of a square matrix
            size, m = x.type.shape
            x = b.broadcast_to(b.reshape(x, shape=(size, 1, m)), shape=(size, m, m))
        return b.emit(name, x, **params), 0
    rule.__name__ = f"batch_{name}"
    return rule


def batch_solve(b, axes, a, rhs):
    """``np.linalg.solve``: a 1-D right-hand side of an example becomes a column, and
    both stacks get ones after the batch axis so they broadcast."""
    vector = example_ndim(rhs, axes[1]) == 1
    rank = max(example_ndim(a, axes[0]), example_ndim(rhs, axes[1]) + vector)
    a, rhs = materialize(b, a, axes[0]), materialize(b, rhs, axes[1])
    if vector:
        rhs = b.reshape(rhs, shape=rhs.type.shape + (1,))
    out = b.solve(lead_ones(b, a, rank), lead_ones(b, rhs, rank))
    return (b.reshape(out, shape=out.type.shape[:-1]) if vector else out), 0


def quantile_like(name: str):
    """np.quantile and friends: the result starts with the axes of ``q`` (if any)."""
    inner = along(name, "axis", none="flatten")

    def rule(b, axes, x, /, **params):
        out, _ = inner(b, axes, x, **params)
        return out, int(np.ndim(params.get("q", 0.5)))
    rule.__name__ = f"batch_{name}"
    return rule


def batch_quantile_weights(b, axes, x, /, **params):
    """Weights of shape ``q.shape + x.shape``: the batch axis follows the axes of ``q``."""
    n = example_ndim(x, axes[0])
    x = to_front(b, x, axes[0])
    axis = params.get("axis")
    new = dict(params, axis=tuple(range(1, n + 1)) if axis is None else shift(axis, n))
    return b.quantile_weights(x, **new), int(np.ndim(params["q"]))


# -- lists ---------------------------------------------------------------------------

def batch_list_get(b, axes, lst, i):
    if axes[1] is not None:
        raise UnsupportedOperationError("vmap: a list index that differs between examples")
    return b.list_get(lst, i), axes[0]


def batch_list_zeros(b, axes, lst):
    return b.list_zeros(lst), axes[0]


def batch_list_add_at(b, axes, acc, i, v):
    """Item ``i`` of the list cotangent ``acc`` plus ``v``: a shared ``acc`` broadcast
    across the batch first when ``v`` differs between examples."""
    if axes[1] is not None:
        raise UnsupportedOperationError("vmap: a list index that differs between examples")
    if axes[2] is not None:
        acc, v = materialize(b, acc, axes[0]), to_front(b, v, axes[2])
    return b.list_add_at(acc, i, v), 0


def batch_list_add(b, axes, x, y):
    """Two list cotangents added item by item (NumPy broadcasts a shared one's items)."""
    return b.list_add(x, y), 0


def batch_stack_list(b, axes, lst, *, axis=0, **params):
    n = lst.type.elem.ndim - 1
    return b.stack_list(lst, axis=shift(axis, n + 1), **params), 0


def batch_unstack(b, axes, x, *, axis=0, elem=None):
    n = example_ndim(x, axes[0])
    x = to_front(b, x, axes[0])
    a = shift(axis, n)
    shape = x.type.shape[:a] + x.type.shape[a + 1:]
    return b.unstack(x, axis=a, elem=AType(shape, x.type.dtype)), 0


# -- indexing --------------------------------------------------------------------------

def _index_out_axis(index, dyn_types) -> int:
    """Where the batch axis of ``x[:, *index]`` is: first, unless advanced indices that
    are not adjacent send the broadcast index axes to the front (NumPy's rule)."""
    if not any(t.ndim >= 1 for t in dyn_types):
        return 0
    adv = [k for k, item in enumerate(index) if type(item) in (int, str)]
    if adv == list(range(adv[0], adv[-1] + 1)):
        return 0
    return len(np.broadcast_shapes(*(t.shape for t in dyn_types)))


def _layout(index, dyn_types, ndim: int) -> tuple[int, int]:
    """``(p, r)`` for ``x[index]`` (``x`` of ``ndim`` axes): the index arrays broadcast to
    ``r`` axes, which NumPy places after the first ``p`` axes the slices keep when the
    advanced items (ints and arrays) are adjacent, first (``p = 0``) otherwise."""
    r = len(np.broadcast_shapes(*(t.shape for t in dyn_types)))
    adv = [k for k, item in enumerate(index) if type(item) in (int, str)]
    if not adv or adv != list(range(adv[0], adv[-1] + 1)):
        return 0, r
    kept = ndim - sum(item is not None and item is not Ellipsis for item in index)
    return sum(kept if item is Ellipsis else 1 for item in index[:adv[0]]), r


def _reorder(b, v, p: int, r: int, lead: int, to_example: bool):
    """``v`` (``lead`` batch axes first) from the layout ``(R, rest)`` of a read through
    an array of examples to NumPy's ``(rest[:p], R, rest[p:])`` (``to_example``), or back."""
    if not p or not r:
        return v
    n = v.type.ndim
    first, second = (range(lead + r, lead + r + p), range(lead, lead + r)) if to_example \
        else (range(lead + p, lead + p + r), range(lead, lead + p))
    return b.transpose(v, axes=tuple(range(lead)) + tuple(first) + tuple(second)
                       + tuple(range(lead + p + r, n)))


def _example_numbers(b, r: int):
    """``arange(B)`` with ``r`` axes of length 1 after it: one per block and ``r``."""
    key = (id(b.block), r)
    cached = b.example_numbers.get(key)
    if cached is None or cached[0] is not b.block:
        size = b.batch_size
        value = b.const(np.arange(size).reshape((size,) + (1,) * r), hint="example")
        cached = b.example_numbers[key] = (b.block, value)
    return cached[1]


def _examples_first(b, dyn, axes, r: int) -> list:
    """The index arrays, the batched ones with their examples first and ones up to ``r``
    axes after them (so they broadcast against the shared ones)."""
    return [v if ax is None else lead_ones(b, to_front(b, v, ax), r) for v, ax in zip(dyn, axes)]


def _example_index(b, index, dyn, axes, r: int):
    """``(index, dyn)`` with each example's own positions: an array of example numbers
    first, then the index arrays (:func:`_examples_first`)."""
    index = tuple(f"#{int(item[1:]) + 1}" if type(item) is str else item for item in index)
    return ("#0",) + index, [_example_numbers(b, r), *_examples_first(b, dyn, axes, r)]


def _example_types(dyn, axes) -> list:
    """The types of one example's index arrays; a boolean mask that differs between
    examples is refused (each example would select its own number of elements)."""
    if any(ax is not None and v.type.dtype.kind == "b" for v, ax in zip(dyn, axes)):
        raise UnsupportedOperationError(
            "vmap does not batch a boolean mask that differs between examples: each example "
            "would select its own number of elements", hint=HINT)
    return [AType(_example_shape(v, ax), v.type.dtype) for v, ax in zip(dyn, axes)]


def index_read(name: str):
    """``x[index]`` on a batch: ``x[:, *index]`` when the index arrays are shared by the
    batch; otherwise each example reads its own positions, ``x[examples, *index]`` (a
    shared ``x``: ``x[*index]``, the examples an axis of the index arrays)."""
    def rule(b, axes, x, *dyn, index):
        types = _example_types(dyn, axes[1:])
        if all(ax is None for ax in axes[1:]):
            x = to_front(b, x, axes[0])
            return (b.emit(name, x, *dyn, index=(slice(None),) + tuple(index)),
                    _index_out_axis(index, types))
        p, r = _layout(index, types, example_ndim(x, axes[0]))
        if axes[0] is None:
            return b.gather(x, *_examples_first(b, dyn, axes[1:], r), index=index), p
        index, dyn = _example_index(b, index, dyn, axes[1:], r)
        out = b.gather(to_front(b, x, axes[0]), *dyn, index=index)
        return _reorder(b, out, p, r, 1, True), 0
    rule.__name__ = f"batch_{name}"
    return rule


def index_update(name: str):
    """``acc[index] (+)= v`` on a batch: ``acc[:, *index]`` when the index arrays are
    shared and adjacent, else ``acc[examples, *index]``; ``v`` aligned with the
    selection."""
    from .indexing import selection_shape

    def rule(b, axes, acc, v, *dyn, index):
        types = _example_types(dyn, axes[2:])
        shared = all(ax is None for ax in axes[2:]) and _index_out_axis(index, types) == 0
        rank = len(selection_shape(_example_shape(acc, axes[0]), index, types))
        acc = materialize(b, acc, axes[0])
        if shared:
            if axes[1] is not None:
                v = lead_ones(b, to_front(b, v, axes[1]), rank)
            return b.emit(name, acc, v, *dyn, index=(slice(None),) + tuple(index)), 0
        p, r = _layout(index, types, acc.type.ndim - 1)
        if axes[1] is not None:
            v = _reorder(b, lead_ones(b, to_front(b, v, axes[1]), rank), p, r, 1, False)
        elif v.type.ndim and p and r:
            v = b.reshape(v, shape=(1,) * (rank - v.type.ndim) + v.type.shape)
            v = _reorder(b, v, p, r, 0, False)
        index, dyn = _example_index(b, index, dyn, axes[2:], r)
        return b.emit(name, acc, v, *dyn, index=index), 0
    rule.__name__ = f"batch_{name}"
    return rule


def batch_winners(b, axes, *dyn, index, shape):
    """Which writes of ``x[index] = v`` survive, for each example's own index arrays."""
    types = _example_types(dyn, axes)
    p, r = _layout(index, types, len(shape))
    index, dyn = _example_index(b, index, dyn, axes, r)
    out = b.index_winners(*dyn, index=index, shape=(b.batch_size,) + tuple(shape))
    return _reorder(b, out, p, r, 1, True), 0


def batch_norm(b, axes, x, *, ord=None, axis=None, keepdims=False):
    """np.linalg.norm: ``axis=None`` is the flattened example's 2-norm for ``ord=None``,
    else the norm of the example's axes (a matrix norm for a 2-D example)."""
    rule = along("norm", "axis", none="flatten" if ord is None else "all")
    return rule(b, axes, x, ord=ord, axis=axis, keepdims=keepdims)


def batch_recurrence(b, axes, a, c, *, axis, reverse=False):
    """The linear recurrence along ``axis``: both inputs carry the batch first."""
    n = max(example_ndim(a, axes[0]), example_ndim(c, axes[1]))
    a = lead_ones(b, materialize(b, a, axes[0]), n)
    c = lead_ones(b, materialize(b, c, axes[1]), n)
    return b.recurrence(a, c, axis=shift(axis, n), reverse=reverse), 0


# -- predicates ---------------------------------------------------------------------------

def all_of_close(name: str, **fixed):
    """``np.allclose`` / ``np.array_equal`` (``fixed``: rtol=atol=0): ``np.isclose`` on the
    batch, then ``np.all`` over each example's axes."""
    def rule(b, axes, x, y, /, **params):
        if name == "array_equal" and _example_shape(x, axes[0]) != _example_shape(y, axes[1]):
            return b.const(np.zeros(b.batch_size, dtype=bool)), 0  # shapes differ: False
        close, _ = broadcasting("isclose")(b, axes, x, y, **{**params, **fixed})
        return b.all(close, axis=tuple(range(1, close.type.ndim)), keepdims=False), 0
    rule.__name__ = f"batch_{name}"
    return rule


def _example_shape(v, ax) -> tuple:
    shape = v.type.shape
    return shape if ax is None else shape[:ax] + shape[ax + 1:]


def batch_searchsorted(b, axes, a, v, /, **params):
    """``np.searchsorted`` of values batched into a sorted array shared by the batch."""
    if axes[0] is not None:
        raise UnsupportedOperationError(
            "vmap does not batch 'searchsorted' into a sorted array that differs between "
            "examples (np.searchsorted takes one 1-D array)")
    return b.searchsorted(a, v, **params), axes[1]
