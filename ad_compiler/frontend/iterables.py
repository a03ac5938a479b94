"""What loops run over, and the lists they build.

* :class:`Iteration` — ``n`` items, the ``i``-th computed from the loop counter:
  ``range(...)`` (``start + i * step``), the rows of an array Value (``x[i]``), a
  list built by a loop, and ``enumerate``/``zip``/``reversed`` of those. A loop
  over an Iteration is lifted as a loop op and never unrolled, unless a part is
  a static Python sequence (``zip(range(n), layers)``): then it is unrolled,
  the counter being a Python int.
* :class:`Appender` — inside a loop, the list ``ys`` created empty before it,
  when the body calls ``ys.append(v)``: it records ``v`` (once per iteration,
  not under a data-dependent condition), which the loop stacks.
* :class:`LoopList` — the same name after the loop: a ``list<T>`` Value with its
  length (known for a ``for`` loop without ``break``), which ``np.stack``,
  ``len``, ``sum``, indexing and further loops read. A list of known length is
  stacked once, right after the loop, and every reader uses that array (so the
  list has one reader and gradients flow through indexing); a list of unknown
  length can only be read item by item (``list_get``, no gradient).

Invariant: an item function ``item(b, i)`` accepts a Python int ``i`` or an int
Value; with an int it emits no arithmetic for the index.
"""
from __future__ import annotations

import numpy as np

from ..ad import rules
from ..errors import UnsupportedOperationError
from ..ir.core import AType, Value
from .comprehensions import data_dependent_length, is_comprehension_list


class Iteration:
    """``n`` items (``n``: an int, or an int Value known only at run time)."""

    def __init__(self, n, item, static: bool = False, prepare=None, sources=()):
        self.n, self._item, self.static, self._prepare = n, item, static, prepare
        self.sources = tuple(sources)  # the arrays whose rows are the items

    def item(self, b, i):
        return self._item(b, i)

    def prepare(self, b) -> None:
        """Emit what every item reads, once, before the loop."""
        if self._prepare is not None:
            self._prepare(b)

    def items(self, b) -> list:
        """All items, for an unrolled loop (``n`` must be an int)."""
        return [self.item(b, k) for k in range(self.n)]


def skip_first(it: Iteration) -> Iteration:
    """The items of ``it`` after its first (``it.n`` an int)."""
    return Iteration(it.n - 1, lambda b, i: it.item(b, affine(b, i, 1, 1)), it.static,
                     it.prepare, it.sources)


def affine(b, i, start, step: int):
    """``start + i * step`` for a counter ``i`` (an int or an int Value)."""
    if not isinstance(i, Value) and not isinstance(start, Value):
        return start + i * step
    v = i if step == 1 else b.mul(b.const(i), b.const(step), hint="step")
    if isinstance(start, Value) or start != 0:
        v = b.add(b.const(start), v, hint="index")
    return v


def over_range(r: range) -> Iteration:
    start, step = r.start, r.step
    it = Iteration(len(r), lambda b, i: affine(b, i, start, step))
    it.plain = start == 0 and step == 1  # the counter is the item
    return it


def over_dynamic_range(b, start, stop, step) -> Iteration:
    """``range(start, stop, step)`` with a run-time bound; ``step`` must be a static int."""
    if isinstance(step, Value) or not isinstance(step, (int, np.integer)) or step == 0:
        raise UnsupportedOperationError(
            "range() with run-time bounds needs a static, non-zero int step",
            hint="write the step as a Python int")
    step = int(step)
    for v in (start, stop):
        if isinstance(v, Value) and (v.type.shape != () or v.type.dtype.kind not in "iub"):
            raise UnsupportedOperationError(f"range() needs int bounds, got {v.type}")
    if abs(step) != 1:
        raise UnsupportedOperationError(
            "range() with run-time bounds supports a step of 1 or -1 only",
            hint="loop with step 1 and compute the index: i = start + k * step")
    span = b.sub(b.const(stop), b.const(start)) if step > 0 else \
        b.sub(b.const(start), b.const(stop))
    n = b.maximum(span, b.const(0), hint="n")
    return Iteration(n, lambda b, i: affine(b, i, start, step))


def over_rows(lifter, x: Value) -> Iteration:
    """The rows ``x[i]`` of an array (``__getitem__`` with the counter), or, without an
    indexing lowering, the items of ``unstack(x)`` read with ``list_get``."""
    if not x.type.shape:
        raise UnsupportedOperationError("iteration over a 0-d array",
                                        hint="a scalar has no items; check x.ndim first")
    getitem = rules.METHODS.get("__getitem__")
    rows: list = []

    def prepare(b):
        if getitem is None:
            elem = AType(x.type.shape[1:], x.type.dtype)
            rows[:] = [b.unstack(x, axis=0, elem=elem, hint=(x.hint or "x") + "_rows")]

    def item(b, i):
        if getitem is not None:
            row = getitem(b, x, i)
            lifter.note_view(row, x, (i,))  # a row is a view: writing it writes x
            return row
        if not rows:
            prepare(b)
        return b.list_get(rows[0], b.const(i), hint="row")
    n = x.type.shape[0]
    if n is None:  # a run-time length (ir/dims.py): a loop op with that trip count
        n = lifter.b.dim(x, axis=0, hint="n")
    return Iteration(n, item, prepare=prepare, sources=(x,))


def over_list(lst: "LoopList") -> Iteration:
    """The items of a list a loop built: rows of its stack (differentiable), or
    without an indexing lowering ``list_get``."""
    n = lst.require_length("iterating over")
    getitem = rules.METHODS.get("__getitem__")
    stacked: list = []

    def prepare(b):
        if getitem is not None:
            stacked[:] = [lst.stack(b)]

    def item(b, i):
        if getitem is None:
            return lst.get(b, i)
        if not stacked:
            prepare(b)
        return getitem(b, stacked[0], i)
    return Iteration(n, item, prepare=prepare)


def enumerated(it: Iteration, start=0) -> Iteration:
    return Iteration(it.n, lambda b, i: (affine(b, i, start, 1), it.item(b, i)),
                     it.static, it.prepare, it.sources)


def zipped(b, parts: list) -> Iteration:
    ns = [p.n for p in parts]
    static_ns = [n for n in ns if not isinstance(n, Value)]
    dynamic = [n for n in ns if isinstance(n, Value)]
    n = min(static_ns) if static_ns else None
    for d in dynamic:
        n = d if n is None else b.minimum(b.const(n), d, hint="n")

    def prepare(b):
        for p in parts:
            p.prepare(b)
    return Iteration(n, lambda b, i: tuple(p.item(b, i) for p in parts),
                     any(p.static for p in parts), prepare,
                     [s for p in parts for s in p.sources])


def reversed_(b, it: Iteration) -> Iteration:
    n = it.n

    def item(b, i):
        if isinstance(n, Value) or isinstance(i, Value):
            return it.item(b, b.sub(b.sub(b.const(n), b.const(1)), b.const(i), hint="index"))
        return it.item(b, n - 1 - i)
    return Iteration(n, item, it.static, it.prepare, it.sources)


def over_static(seq) -> Iteration:
    items = list(seq)
    return Iteration(len(items), lambda b, i: items[i], static=True)


def shown_list(name: str) -> str:
    """How a message names a list: the user's name, or, for the list a
    comprehension builds (a name the user never wrote), what it is."""
    return "the comprehension's list" if is_comprehension_list(name) else name


class Appender:
    """``ys`` inside the loop that appends to it (see the module docstring)."""

    def __init__(self, lifter, name: str):
        self._lifter, self.name, self.depth = lifter, name, lifter.depth
        self.shown = shown_list(name)
        self.code = name if self.shown == name else "..."  # in a hint's code
        self.items: list = []

    def append(self, value):
        if self._lifter.depth != self.depth and is_comprehension_list(self.name):
            raise data_dependent_length()
        if self._lifter.depth != self.depth:
            raise UnsupportedOperationError(
                f"{self.shown}.append() in a nested loop, or under a data-dependent condition "
                "('if', or after a 'continue'/'break' that may have happened), of the loop "
                f"that builds {self.shown}",
                hint="append on every iteration: append np.where(cond, v, fill) and filter "
                     "afterwards, or build the list with a Python-level loop")
        if self.items:
            raise UnsupportedOperationError(
                f"{self.shown}.append() more than once per iteration of the loop that builds it",
                hint="append one value per iteration (a tuple of arrays: append "
                     "np.stack((a, b)) instead)")
        self.items.append(value)

    def _misuse(self, what: str):
        return UnsupportedOperationError(
            f"{what} {self.shown} inside the loop that appends to it",
            hint=f"keep the values you need in variables; {self.shown} can be read after "
                 "the loop")

    def __len__(self):
        raise self._misuse("len() of")

    def __getitem__(self, index):
        raise self._misuse("reading an item of")

    def __iter__(self):
        raise self._misuse("iterating over")


class LoopList:
    """A list a loop built with ``append`` (see the module docstring)."""

    def __init__(self, value: Value | None, length, name: str, stacked: Value | None = None):
        self.value, self.length, self.name = value, length, name
        self.shown = shown_list(name)
        self.code = name if self.shown == name else "..."  # in a hint's code
        self.stacked = stacked  # its items stacked on axis 0, made once after the loop

    @classmethod
    def of_stack(cls, stacked, length: int) -> "LoopList":
        """The list whose items are the rows of ``stacked`` (the one leaf of a list of
        known length, see values.flatten: a data-dependent ``if`` merged two of them, or
        a placeholder of its type)."""
        return cls(None, length, getattr(stacked, "hint", None) or "list", stacked)

    @property
    def elem(self) -> AType:
        if self.value is None:
            t = self.stacked.type
            return AType(t.shape[1:], t.dtype)
        return self.value.type.elem

    def require_length(self, what: str) -> int:
        if self.length is None:
            raise UnsupportedOperationError(
                f"{what} {self.shown} needs its length, which is known only at run time "
                "(it was built by a 'while' loop or a loop with 'break')",
                hint="build it in a 'for' loop over range(n) without 'break', or stack "
                     "the values in the loop yourself")
        return self.length

    def stack(self, b, axis=0) -> Value:
        """The items stacked on ``axis``: one ``stack_list`` for every reader (a list
        has one cotangent), moved to ``axis`` by a transpose."""
        self.require_length("stacking")
        ndim = len(self.elem.shape) + 1
        axis = int(axis)
        if not -ndim <= axis < ndim:
            raise ValueError(f"axis {axis} is out of bounds for stacking {self.shown} "
                             f"(the result has {ndim} dimensions)")
        axis %= ndim
        if axis == 0:
            return self.stacked
        perm = list(range(1, ndim))
        perm.insert(axis, 0)
        return b.transpose(self.stacked, axes=tuple(perm))

    def get(self, b, index) -> Value:
        """``ys[index]``: an item of the stacked list when it has a known length and
        indexing is declared (so gradients flow), else a ``list_get``."""
        getitem = rules.METHODS.get("__getitem__")
        if getitem is not None and self.length is not None:
            return getitem(b, self.stack(b), index)
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            index = int(index)
            if index < 0 or self.length is not None:
                n = self.require_length("negative indexing of")
                if not -n <= index < n:
                    raise IndexError(f"list index {index} out of range for {self.shown} "
                                     f"of length {n}")
                index %= n
        elif not (isinstance(index, Value) and index.type.shape == ()
                  and index.type.dtype.kind in "iu"):
            raise UnsupportedOperationError(
                f"indexing {self.shown}, a list built by a loop, with {index!r}",
                hint="index it with an int, or np.stack it and slice the array")
        return b.list_get(self.value, b.const(index), hint=self.name + "_item")

    def __len__(self):
        return self.require_length("len() of")

    def append(self, value):
        if is_comprehension_list(self.name):  # nested clauses: unrolled if they can be
            raise data_dependent_length()
        raise UnsupportedOperationError(
            f"{self.shown}.append() after the loop that built {self.shown}",
            hint=f"collect everything in one loop, or start a new list and "
                 f"np.concatenate([np.stack({self.code}), ...]) afterwards")

    def __iter__(self):
        raise UnsupportedOperationError(
            f"using {self.shown}, a list built by a loop, as a Python sequence here",
            hint=f"stack it (np.stack({self.code})), or loop over it with 'for'")

    def __repr__(self) -> str:
        return f"<list {self.name}: list<{self.elem}>, length {self.length}>"
