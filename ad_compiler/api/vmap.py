"""``vmap``: a function of one example made into a function of a batch, by a source
transform (MindSpore's ``ops.vmap(fn, in_axes=0, out_axes=0)``).

The function is lifted for the signature of one example, each op is rewritten
by its primitive's batching rule (ad/batching.py), and the result is compiled
like a gradient: ordinary NumPy on the whole batch, cached per input signature.
Gradients inline as IR, so ``vmap(grad(f))`` gives per-example gradients in one
batched sweep.

>>> import numpy as np
>>> import ad_compiler as ms
>>> def loss(w, x):
...     return np.sum(np.tanh(x @ w))
>>> w, xs = np.ones(2), np.array([[1.0, 0.0], [0.0, 2.0]])
>>> ms.vmap(ms.grad(loss), in_axes=(None, 0))(w, xs).round(4)
array([[0.42  , 0.    ],
       [0.    , 0.1413]])
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..ad.rules import register_lowering
from ..codegen.compile import add_origin_notes
from ..errors import GradTypeError, GradValueError
from ..ir.core import AType
from ..tensor import wrap
from .grad import check_callable, refuse_local
from .signature import TENSOR, flatten, leaf_kind, signature, spec_of

Axes = Any  # int | None | tuple of those (nested like the arguments)


def vmap(fn: Callable[..., Any], in_axes: Axes = 0, out_axes: Axes = 0) -> "Vmapped":
    """``fn`` applied to every example of a batch at once.

    ``in_axes``: an int (every argument carries its examples along that axis), or a
    tuple with one entry per positional argument: an int, ``None`` (the argument is
    shared by all examples) or, for a tuple/list argument, a tuple of entries for its
    items. ``out_axes`` likewise for the outputs: where each output's batch axis goes
    (``None``: the output is the same for every example and is returned once).
    """
    _check_axes("in_axes", in_axes)
    _check_axes("out_axes", out_axes)
    return Vmapped(fn, in_axes, out_axes)


def _check_axes(name, axes) -> None:
    if axes is None or type(axes) is int:
        return
    if isinstance(axes, (tuple, list)):
        for a in axes:
            _check_axes(name, a)
        return
    raise GradTypeError(f"{name} must be an int, None, or a tuple of them, but got "
                        f"{type(axes).__name__} {axes!r}")


class Vmapped:
    """The batched function ``vmap`` returns; called with batched arguments."""

    def __init__(self, fn, in_axes, out_axes):
        self.fn, self.in_axes, self.out_axes = fn, in_axes, out_axes
        self.__name__ = f"vmap_{getattr(fn, '__name__', 'fn')}"
        self._entries: dict = {}

    def __repr__(self) -> str:
        return f"vmap({getattr(self.fn, '__name__', self.fn)!r}, in_axes={self.in_axes!r}, " \
               f"out_axes={self.out_axes!r})"

    # -- the plan: per-example specs, leaf axes, batch size ---------------------
    def _plan(self, args):
        axes = self.in_axes
        if isinstance(axes, (tuple, list)):
            if len(axes) != len(args):
                raise GradValueError(f"in_axes has {len(axes)} entries but {self.__name__} was "
                                     f"called with {len(args)} arguments",
                                     hint="give one in_axes entry per positional argument")
        else:
            axes = (axes,) * len(args)
        leaf_axes: list = []
        specs = tuple(_example_spec(a, ax, leaf_axes, f"argument {i}")
                      for i, (a, ax) in enumerate(zip(args, axes)))
        sizes = {size for _, size in leaf_axes if size is not None}
        if not sizes:
            raise GradValueError("vmap needs at least one batched argument (in_axes are all None)",
                                 hint="give the batched argument an int in_axes entry")
        if len(sizes) > 1:
            raise GradValueError(f"the batched arguments have different batch sizes {sorted(sizes)}",
                                 hint="every batched argument must hold the same number of "
                                      "examples along its in_axes")
        return specs, [ax for ax, _ in leaf_axes], sizes.pop()

    def _build(self, args, differentiable=False):
        from ..ad.batching import batch_function
        from ..frontend import lift
        from ..passes.pipeline import optimize
        from .compiler import check_complex
        from .state import make_reader
        specs, leaf_axes, size = self._plan(args)
        lifted = lift(self.fn, specs)
        check_complex(lifted, self.fn)
        n_extra = len(lifted.function.args) - len(leaf_axes)
        outs = _out_axes(self.out_axes, lifted.out_tree, len(lifted.function.outputs))
        batched = batch_function(lifted.function, leaf_axes + [None] * n_extra, outs, size,
                                 name=self.__name__, differentiable=differentiable)
        return lifted, optimize(batched), size, make_reader(lifted.captured)

    def entry_for(self, args):
        from ..codegen.cache import lookup_or_build, table_for
        from ..frontend import owner_of
        from .state import current_entry
        key = ("vmap", _hashable(self.in_axes), _hashable(self.out_axes), signature(args))
        table = table_for(self.fn)
        table = self._entries if table is None else table
        owner = owner_of(self.fn)

        def build():
            lifted, ir, size, reader = self._build(args)
            return lifted, ir, size, reader, _compiled(ir)
        return current_entry(lambda stale: lookup_or_build(table, key, build, stale),
                             lambda e: () if e[3] is None else e[3](owner), self.fn)

    def source(self, *args) -> str:
        """The generated Python source of the batched function for these arguments."""
        return self.entry_for(args)[0][4].source

    def __call__(self, *args):
        check_callable(self.fn)
        (lifted, _, size, _, compiled), state = self.entry_for(args)
        leaves, kinds, _ = flatten(args)
        params = [p.asnumpy() for p in lifted.params]
        try:
            outs = compiled.fn(*leaves, *params, *state)
        except BaseException as exc:
            add_origin_notes(exc)
            raise
        return _fill(lifted.out_tree, list(outs), TENSOR in kinds, size, self.out_axes)

    def __ad_lower__(self, b, *args):
        """Inline the batched function into a function being compiled."""
        from ..frontend import owner_of
        from ..ir.clone import inline
        lifted, ir, size, _ = self._build(args, differentiable=True)
        leaves = [b.const(v) for v in flatten(args)[0]]
        params = [b.read_parameter(p) for p in lifted.params]
        captured = b.read_captured(lifted.captured, owner_of(self.fn)) if lifted.captured else []
        outs = inline(b, ir, leaves + params + captured)
        return _fill(lifted.out_tree, list(outs), False, size, self.out_axes, b)


def _compiled(ir):
    from ..codegen import compile_function
    return compile_function(ir)


def _hashable(axes):
    return tuple(_hashable(a) for a in axes) if isinstance(axes, (tuple, list)) else axes


def _example_spec(x, ax, leaf_axes: list, where: str):
    """The spec of one example of ``x`` batched along ``ax``; appends ``(axis, size)``
    per dynamic leaf to ``leaf_axes`` (flatten's order)."""
    kind = leaf_kind(x)
    if isinstance(ax, (tuple, list)):
        if type(x) not in (tuple, list) or len(x) != len(ax):
            raise GradValueError(f"in_axes entry {ax!r} for {where} must match its structure, "
                                 f"but {where} is {type(x).__name__}")
        return type(x)(_example_spec(v, a, leaf_axes, f"{where}[{k}]")
                       for k, (v, a) in enumerate(zip(x, ax)))
    if kind is None:
        t = type(x)
        if t in (tuple, list):
            return t(_example_spec(v, ax, leaf_axes, f"{where}[{k}]") for k, v in enumerate(x))
        if t is dict:
            return {k: _example_spec(v, ax, leaf_axes, f"{where}[{k!r}]") for k, v in x.items()}
        if ax is not None:
            raise GradValueError(f"{where} is {type(x).__name__} {x!r}, which has no axis to "
                                 f"batch along (in_axes {ax})",
                                 hint="give it in_axes None, or pass an array")
        return x
    spec = spec_of(x)
    if ax is None:
        leaf_axes.append((None, None))
        return spec
    if spec.weak or not -spec.ndim <= ax < spec.ndim:
        raise GradValueError(f"in_axes {ax} is out of bounds for {where}, of shape "
                             f"{spec.shape if not spec.weak else 'a Python number'}",
                             hint="in_axes must name an axis of the argument")
    ax %= spec.ndim
    shape = spec.shape[:ax] + spec.shape[ax + 1:]
    leaf_axes.append((ax, spec.shape[ax]))
    return AType(shape, spec.dtype)


def _out_axes(out_axes, tree, n: int) -> list:
    """The batch axis of each output leaf (``out_axes`` follows the output's structure)."""
    axes = [0] * n

    def assign(t, ax):
        if isinstance(ax, (tuple, list)):
            if not isinstance(t, (tuple, list)) or len(t) != len(ax):
                raise GradValueError(f"out_axes {out_axes!r} does not match the structure of "
                                     "the function's output")
            for ti, ai in zip(t, ax):
                assign(ti, ai)
        elif isinstance(t, int) and not isinstance(t, bool):
            axes[t] = ax
        elif isinstance(t, (tuple, list)):
            for ti in t:
                assign(ti, ax)
        elif isinstance(t, dict):
            for ti in t.values():
                assign(ti, ax)
    assign(tree, out_axes)
    return axes


def _fill(tree, outs, as_tensor, size, out_axes, b=None):
    """The output structure ``tree`` filled from ``outs``; a constant output (the same
    whatever the inputs) repeated along its out axis."""
    def fill(t, ax):
        if isinstance(t, int) and not isinstance(t, bool):
            v = outs[t]
            return wrap(np.asarray(v)) if as_tensor else v
        if isinstance(t, (tuple, list)):
            axs = ax if isinstance(ax, (tuple, list)) else (ax,) * len(t)
            return type(t)(fill(ti, ai) for ti, ai in zip(t, axs))
        if isinstance(t, dict):
            return {k: fill(v, ax) for k, v in t.items()}
        value = getattr(t, "value", t)
        if ax is None or not isinstance(value, (int, float, np.number, np.ndarray)) \
                or isinstance(value, bool):
            return value
        arr = np.asarray(value)
        arr = np.broadcast_to(np.expand_dims(arr, ax), arr.shape[:ax] + (size,) + arr.shape[ax:])
        return b.const(np.array(arr)) if b is not None else np.array(arr)
    return fill(tree, out_axes)


def _static_lowering(b, fn, in_axes=0, out_axes=0):
    """``vmap(f, ...)`` inside compiled code is made at compile time."""
    refuse_local(fn)
    return vmap(fn, in_axes, out_axes)


register_lowering(vmap, _static_lowering)
