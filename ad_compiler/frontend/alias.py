"""NumPy's aliasing at lift time: writes in place reach every name of the array.

In Python an array is an object that several names, list items and views may
share. The lifter keeps SSA Values, so it models that sharing explicitly:

* Names bound to the same lift-time Value (or the same static ndarray) hold the
  same array object: ``a = y`` binds ``y``'s Value to ``a``, and ``y[:]`` is
  ``y``'s own Value.
* A write in place (``y[i] = v``, ``y[i] += v``, ``y += v`` on an array, a helper
  writing into its argument) makes a new Value, and :meth:`AliasLifter.write`
  rebinds every holder of the old one: every name of every frame being lifted,
  and every item of the lists, dicts and tuples they hold.
* A **view** made by basic indexing (``v = y[1:]``, ``y[0]`` of a matrix) is
  recorded with its index (:attr:`AliasLifter.views`). A write into ``y``
  re-derives every view still held (``v = new_y[1:]``); a write into ``v`` is a
  write into ``y`` (``y = index_set(y, v', index)``), and so on up the chain.
* Any other result that may share memory with its operand (a primitive declared
  ``view``: ``y.T``, ``y.reshape(...)``, ``np.squeeze(y)`` ...) is recorded
  without an index: whether NumPy returns a view or a copy can depend on the
  memory layout at run time, so a write into one of them while the other is
  still held (and read later) is a located error, never a guess.
* Arrays the function does not own (its inputs, Parameters, arrays read from
  outside) are never written: that is a located error with the hint to copy.
* An assignment whose right side overlaps the positions it writes
  (``b[:, -1] = b[1]``) is a located error: NumPy's result then depends on the
  order in which it copies elements.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ..ad import rules
from ..errors import UnsupportedOperationError
from ..ir.core import AType, Value
from ..records import Equal, Frozen
from .iterables import Appender
from .values import flatten


class _Loose:
    def __repr__(self) -> str:
        return "LOOSE"


#: the index of a view whose relation to its parent is only known at run time
LOOSE = _Loose()


class Index(Frozen, Equal):
    """``parent[index]`` by basic indexing: written back with ``index_set``."""
    index: object

    _fields = ("index",)

    def __init__(self, index):
        object.__setattr__(self, "index", index)

    def read(self, lifter, parent):
        return lifter.index_value(parent, self.index)

    def write(self, lifter, parent, child):
        return rules.METHODS["__setitem__"](lifter.b, parent, self.index, child)

    def probe(self, array):
        return array[self.index]


class Transpose(Frozen, Equal):
    """``parent`` with its axes permuted (``.T``, ``np.transpose``, ``swapaxes``): always
    a view; written back by the inverse permutation."""
    axes: tuple

    _fields = ("axes",)

    def __init__(self, axes):
        object.__setattr__(self, "axes", axes)

    def read(self, lifter, parent):
        return lifter.b.transpose(parent, axes=self.axes)

    def write(self, lifter, parent, child):
        return lifter.b.transpose(child, axes=tuple(int(a) for a in np.argsort(self.axes)))

    def probe(self, array):
        return array.transpose(self.axes)


class UnitDims(Frozen, Equal):
    """``parent`` with axes of length one added or removed (``np.expand_dims``,
    ``np.squeeze``, such a reshape): always a view."""
    shape: tuple
    parent_shape: tuple

    _fields = ("shape", "parent_shape")

    def __init__(self, shape, parent_shape):
        _set = object.__setattr__
        _set(self, "shape", shape)
        _set(self, "parent_shape", parent_shape)

    def read(self, lifter, parent):
        return lifter.b.reshape(parent, shape=self.shape)

    def write(self, lifter, parent, child):
        return lifter.b.reshape(child, shape=self.parent_shape)

    def probe(self, array):
        return array.reshape(self.shape)


class Chain(Frozen, Equal):
    """A view of a view ...: ``ways`` from the parent outwards."""
    ways: tuple

    _fields = ("ways",)

    def __init__(self, ways):
        object.__setattr__(self, "ways", ways)

    def read(self, lifter, parent):
        for way in self.ways:
            parent = way.read(lifter, parent)
        return parent

    def write(self, lifter, parent, child):
        bases = [parent]
        for way in self.ways[:-1]:
            bases.append(way.read(lifter, bases[-1]))
        for way, base in zip(reversed(self.ways), reversed(bases)):
            child = way.write(lifter, base, child)
        return child

    def probe(self, array):
        for way in self.ways:
            array = way.probe(array)
        return array


class Reading(Frozen, Equal):
    """``parent`` through a primitive whose result is always a read-only view
    (``np.diagonal``, ``np.broadcast_to``): re-derived by the same op."""
    prim: str
    params: tuple   # the op's params, as sorted items

    _fields = ("prim", "params")

    def __init__(self, prim, params):
        _set = object.__setattr__
        _set(self, "prim", prim)
        _set(self, "params", params)

    def read(self, lifter, parent):
        return lifter.b.emit(self.prim, parent, **dict(self.params))

    def probe(self, array):
        return rules.get(self.prim).impl(array, **dict(self.params))


class ReadOnly:
    """A read-only view: NumPy refuses to write into it. ``way`` (exact ways, or None
    when the relation depends on the memory layout) re-derives it after a write into
    its base; without one, such a write while it is held is refused like a LOOSE view."""

    def __init__(self, way=None):
        self.way = way

    def read(self, lifter, parent):
        return self.way.read(lifter, parent)

    def write(self, lifter, parent, child):
        raise ValueError("assignment destination is read-only")

    def probe(self, array):
        return self.way.probe(array)


class View:
    """``child`` shares memory with ``parent``: exactly as ``index`` says (an
    :class:`Index`, :class:`Transpose` or :class:`UnitDims`), or, with ``index``
    LOOSE, in a way only known at run time."""

    __slots__ = ("child", "parent", "index")

    def __init__(self, child, parent, index):
        self.child, self.parent, self.index = child, parent, index


class AliasLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: array identity, views, writes in place."""

    def init_aliases(self) -> None:
        self.views: dict[int, View] = {}    # id(child) -> View (keeps both alive)
        self.foreign: set[int] = set()      # ids of Values the function does not own
        self.iterated: list = []            # arrays whose rows enclosing loops run over
        self.in_loop_list: list = []        # arrays a list built by a loop op also holds

    @contextmanager
    def iterating_over(self, arrays):
        """A ``for`` over the rows of ``arrays`` runs inside: they must not be written
        (Python's loop would see the write in the rows it has not reached)."""
        depth = len(self.iterated)
        self.iterated.extend(arrays)
        try:
            yield
        finally:
            del self.iterated[depth:]

    # -- recording -------------------------------------------------------------------
    def note_view(self, child, parent, index) -> None:
        """``child`` is a view of ``parent``: ``index`` is a basic index, a way of
        viewing (:class:`Transpose` ...) or LOOSE."""
        if child is parent or not isinstance(child, Value) or self.root(parent) is child:
            return
        if not isinstance(index, (Index, Transpose, UnitDims, Chain, ReadOnly, _Loose)):
            index = Index(index)
        self.views[id(child)] = View(child, parent, index)

    def note_result(self, result) -> None:
        """Record ``result`` of a call or attribute as a possible view of the array it
        came from through primitives that may return a view (``y.T``, reshapes); each
        item of a list or tuple result too (``np.split``)."""
        if type(result) in (list, tuple):
            for item in result:
                self.note_result(item)
            return
        if not isinstance(result, Value) or id(result) in self.views:
            return
        chain, v = [], result
        while v.producer is not None and v.producer.inputs and \
                v.producer.prim in rules.PRIMITIVES and \
                rules.get(v.producer.prim).aliases(v.producer):
            chain.append(v.producer)
            v = v.producer.inputs[0]
            if id(v) in self.views:  # a view already: this is a view of that view
                break
        if v is not result and isinstance(v, Value):
            self.note_view(result, v, _way(chain))

    def note_foreign(self, value):
        if isinstance(value, Value):
            self.foreign.add(id(value))
        return value

    def root(self, value):
        """The array ``value`` is (a view of a view of ...) a view of."""
        while isinstance(value, Value) and id(value) in self.views:
            value = self.views[id(value)].parent
        return value

    def nearest_base(self, child, bases):
        """``(k, way)``: the first of ``bases`` that ``child`` views through recorded
        exact views (``way``: how), or None."""
        ways, v = [], child
        while isinstance(v, Value) and id(v) in self.views:
            view = self.views[id(v)]
            if not isinstance(view.index, (Index, Transpose, UnitDims, Chain)):
                return None
            ways.append(view.index)
            v = view.parent
            for k, base in enumerate(bases):
                if base is v and base is not child:
                    return k, ways[0] if len(ways) == 1 else Chain(tuple(reversed(ways)))
        return None

    def is_array(self, v) -> bool:
        """An array object a write in place changes: an array of one or more
        dimensions, or a 0-d view of one (NumPy scalars are immutable)."""
        return is_array_leaf(v) or isinstance(v, Value) and id(v) in self.views

    def related(self, a, b) -> bool:
        """Whether the arrays ``a`` and ``b`` may share memory."""
        if not (self.is_array(a) and self.is_array(b)):
            return False
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return np.shares_memory(a, b)
        return self.root(a) is self.root(b)

    def held_elsewhere(self, value, frames):
        """A value held in ``frames`` that may share memory with ``value``, or None."""
        for frame in frames:
            for tree in frame.scope.env.values():
                for leaf in flatten(tree)[0]:
                    if self.related(leaf, value):
                        return leaf
        return None

    # -- writing -----------------------------------------------------------------------
    def write(self, old, new, written=None) -> None:
        """The array ``old`` now holds ``new``: every holder of ``old`` sees it.

        ``written`` maps views already given their new Value (the view a write went
        through) to it, so re-deriving their base's views keeps that Value.
        """
        self._check_owned(old)
        self._check_appended(old)
        self._check_iterated(old)
        view = self.views.get(id(old)) if isinstance(old, Value) else None
        if view is not None:
            if view.index is LOOSE:
                if self._family_held(view.parent, old):
                    raise self._ambiguous(old, view.parent)
            else:
                parent_new = view.index.write(self, view.parent, new)
                self.write(view.parent, parent_new, {**(written or {}), id(old): new})
                return
        if isinstance(old, np.ndarray):
            self._check_static_views(old)
        self._replace(old, new)
        self._rederive(old, new, written or {})

    def check_overlap(self, target, index, value) -> None:
        """``target[index] = value`` where ``value`` is a view of ``target``: refused
        when the positions read overlap those written (NumPy copies in some order)."""
        view = self.views.get(id(value)) if isinstance(value, Value) else None
        if view is None or view.parent is not target:
            return
        if view.index is LOOSE:
            raise UnsupportedOperationError(
                "the right side of this assignment may share memory with the array it "
                "writes, so NumPy's result would depend on the order it copies elements in",
                hint="assign a copy: x[i] = v.copy()")
        probe = np.empty(target.type.shape, np.int8)
        try:
            src, dst = view.index.probe(probe), probe[index]
        except Exception:  # noqa: BLE001  (an index the probe cannot take: be cautious)
            src = dst = None
        same = src is not None and src.shape == dst.shape and \
            src.__array_interface__ == dst.__array_interface__
        if not same and (src is None or np.shares_memory(src, dst)):
            raise UnsupportedOperationError(
                "the right side of this assignment is a view of the same array and "
                "overlaps the positions it writes, so NumPy's result depends on the "
                "order it copies elements in",
                hint="assign a copy: x[i] = x[j].copy()")

    # -- helpers -----------------------------------------------------------------------
    def _rederive(self, old, new, written) -> None:
        """Views of ``old`` that are still held (or whose own views are) become views
        of ``new``."""
        for view in [v for v in self.views.values() if v.parent is old]:
            child = view.child
            if id(child) not in written and not self._family_held(child, None):
                continue
            if view.index is LOOSE or isinstance(view.index, ReadOnly) and view.index.way is None:
                raise self._ambiguous(child, old)
            fresh = written.get(id(child))
            if fresh is None:
                fresh = view.index.read(self, new)
            self.note_view(fresh, new, view.index)
            self._replace(child, fresh)
            self._rederive(child, fresh, written)

    def _ambiguous(self, a, b) -> UnsupportedOperationError:
        return UnsupportedOperationError(
            f"this writes into {self._shown(a)}, which may share memory with "
            f"{self._shown(b)} or may not, depending on the run-time memory layout (a "
            "reshape or transpose is a view or a copy) or on which path ran before (a "
            "name bound to the same array only on some paths or iterations)",
            hint="make the copy explicit with .copy() where one array is derived from "
                 "the other, or write before taking the view")

    def _check_owned(self, old) -> None:
        root = self.root(old)
        if not isinstance(root, Value):
            return
        is_input = any(root is a for a in self.function.body.args)
        if is_input or id(root) in self.foreign:
            shown = self._shown(old)
            raise UnsupportedOperationError(
                f"this writes into {'' if shown == 'an array' else shown + ', '}an array "
                "the function does not own "
                "(an input, a Parameter or an array read from outside): compiled code "
                "does not change its caller's arrays",
                hint="copy it first (y = x.copy()) and write into the copy, or return "
                     "the new array")

    def _check_iterated(self, old) -> None:
        if any(self.related(old, a) for a in self.iterated):
            raise UnsupportedOperationError(
                "this writes into the array an enclosing 'for' loop runs over: Python's "
                "loop would see the write in the rows it has not reached yet",
                hint="loop over range(len(a)) and write a[i], or loop over a copy and "
                     "write into the array")

    def _from_loop_list(self, old) -> bool:
        """Whether ``old`` is an item of a list a loop or comprehension built (read from
        its stacked array or with ``list_get``), or a view of one: Python's list holds
        that same array, the compiled list holds a stacked copy."""
        lists = {id(a) for a in self.in_loop_list}
        v = self.root(old)
        for _ in range(16):
            op = getattr(v, "producer", None)
            if op is None or not op.inputs:
                return False
            if op.prim in ("getitem", "list_get") and id(op.inputs[0]) in lists:
                return True
            prim = rules.PRIMITIVES.get(op.prim)
            if prim is None or not prim.aliases(op):
                return False
            v = op.inputs[0]
        return False

    def _check_appended(self, old) -> None:
        if any(self.related(old, a) for a in self.in_loop_list) or self._from_loop_list(old):
            raise UnsupportedOperationError(
                "this writes into an array that a loop (or a comprehension) also put in a "
                "list, which in Python holds that same array and would see the write",
                hint="rebind instead of writing in place (v = v / 2.0), or put a copy in "
                     "the list: ys.append(v.copy())")
        for frame in self.frames:
            for value in frame.scope.env.values():
                if isinstance(value, Appender) and any(i is old for i in value.items):
                    raise UnsupportedOperationError(
                        f"this writes into an array already appended to {value.shown} in "
                        "this iteration", hint="append a copy: "
                        f"{value.code}.append(v.copy())")

    def _shown(self, value) -> str:
        for frame in reversed(self.frames):
            for name, v in frame.scope.env.items():
                if v is value and not name.startswith("<"):
                    return repr(name)
        return "an array"

    def _held(self, value) -> bool:
        """Whether code that runs later may read ``value`` through a name (or a
        container a name holds). Names of the frames that called this one count as
        read: the rest of their statement may still read them."""
        current = self.frames[-1] if self.frames else None
        stmt = getattr(self, "current_stmt", None)
        now = self.syntax.reads([stmt]) if stmt is not None else frozenset()
        for frame in self.frames:
            for name, tree in frame.scope.env.items():
                if frame is current and not (name in frame.live or name in now
                                             or name.startswith("<")):
                    continue
                if _contains(tree, value):
                    return True
        return False

    def _family_held(self, parent, besides) -> bool:
        """Whether ``parent`` or another view of it is held."""
        if self._held(parent):
            return True
        return any(v.child is not besides and self._family_held(v.child, besides)
                   for v in list(self.views.values()) if v.parent is parent)

    def _check_static_views(self, old) -> None:
        """A static array written with run-time values stops being static; another
        static array sharing its memory would keep the old contents."""
        for frame in self.frames:
            for value in frame.scope.env.values():
                if isinstance(value, np.ndarray) and value is not old \
                        and np.shares_memory(value, old):
                    raise UnsupportedOperationError(
                        f"this writes run-time values into {self._shown(old)}, which "
                        f"shares memory with the array {self._shown(value)}",
                        hint="make the views after the write, or copy: v = x[1:].copy()")

    def _replace(self, old, new) -> None:
        memo: dict = {}
        for frame in self.frames:
            env = frame.scope.env
            for name, tree in list(env.items()):
                env[name] = self._substitute(tree, old, new, memo)

    def _substitute(self, tree, old, new, memo: dict):
        """``tree`` with ``old`` replaced by ``new``. Lists and dicts are the same
        objects to every holder, so they change in place; one built before the
        data-dependent region being lifted is shared with the other paths, so it is
        copied once and every holder here gets the copy. Tuples are rebuilt."""
        if tree is old:
            return new
        if type(tree) is tuple:
            items = tuple(self._substitute(v, old, new, memo) for v in tree)
            return items if any(a is not b for a, b in zip(items, tree)) else tree
        if not isinstance(tree, (list, dict)):
            return tree
        if id(tree) in memo:
            return memo[id(tree)]
        memo[id(tree)] = tree
        keys = list(tree) if isinstance(tree, dict) else range(len(tree))
        changes = [(k, item) for k in keys
                   if (item := self._substitute(tree[k], old, new, memo)) is not tree[k]]
        if not changes:
            return tree
        target = tree
        if id(tree) in self.frozen_ids:
            target = self.own(list(tree) if isinstance(tree, list) else dict(tree))
            memo[id(tree)] = target
        for k, item in changes:
            target[k] = item
        return target


def _way(chain):
    """How the result of ``chain`` (view ops, last first) views its operand."""
    ways = [_op_way(op) for op in reversed(chain)]
    exact = None if not ways or any(w is LOOSE for w in ways) else \
        ways[0] if len(ways) == 1 else Chain(tuple(ways))
    if any(rules.get(op.prim).view == "readonly" for op in chain):
        return ReadOnly(exact)
    return LOOSE if exact is None else exact


def _op_way(op):
    """How one view op's result views its input 0 (LOOSE when that depends on the layout)."""
    if rules.get(op.prim).view == "readonly":
        return Reading(op.prim, tuple(sorted(op.params.items())))
    if op.prim == "transpose":
        return Transpose(tuple(op.params["axes"]))
    if op.prim == "getitem" and len(op.inputs) == 1 and (  # a basic index of constants
            op.result.type.ndim or Ellipsis in op.params["index"]):
        return Index(op.params["index"])
    if op.prim in ("reshape", "expand_dims", "squeeze"):
        a, b = op.inputs[0].type.shape, op.result.type.shape
        if [d for d in a if d != 1] == [d for d in b if d != 1]:
            return UnitDims(tuple(b), tuple(a))
    return LOOSE


def is_array_leaf(v) -> bool:
    """An array object that a write in place changes (not a number or NumPy scalar)."""
    if isinstance(v, Value):
        t = v.type
        return isinstance(t, AType) and not t.weak and t.ndim > 0
    return isinstance(v, np.ndarray)


def _contains(tree, value, depth: int = 0) -> bool:
    if tree is value:
        return True
    if depth > 20:
        return False
    if isinstance(tree, dict):
        return any(_contains(v, value, depth + 1) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return any(_contains(v, value, depth + 1) for v in tree)
    return False
