"""Builtins on run-time values, and the lists loops build: calls tried before the
general handlers of :mod:`.calls`.

* ``range``/``enumerate``/``zip``/``reversed`` over ``range``, arrays, lists a
  loop built: an :class:`~.iterables.Iteration` (a loop op, never unrolled).
* ``len`` (static), ``sum``, ``max``/``min`` of one-element values (``maximum``/
  ``minimum``), ``float``/``int``/``bool`` of a one-element value.
* ``np.stack``/``np.array``/``np.asarray``/``np.concatenate``/``ops.stack``/
  ``ops.concat`` (and ``ops.Stack``/``ops.Concat``) of a list a loop built:
  ``stack_list``.
* ``math`` functions of one-element run-time values return a Python float, as
  in Python: the result goes through ``pyfloat``.

Choices: ``float(v)`` is the weak Python float ``pyfloat`` gives (so it meets
float32 arrays as a Python float does); ``int(v)`` of a float or array value is
a 0-d int64 array (truncated toward zero, ``np.asarray(v, dtype=int64)``): no
primitive makes a Python int, and an int64 0-d array indexes and counts the
same way. ``bool(v)`` is ``v != 0``.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..ad import rules
from ..errors import UnsupportedOperationError
from ..ir.core import Value
from .comprehensions import data_dependent_length, is_comprehension_list
from .calls import NOT_HANDLED, unsupported_call
from .exprs import holds_value
from .iterables import (Appender, Iteration, LoopList, enumerated, over_dynamic_range,
                        over_static, reversed_, zipped)
from .statics import _READERS, _is_builtin_method_of


_BUILTINS = {id(f): "_" + f.__name__ for f in (range, enumerate, zip, reversed, len, sum,
                                                 max, min, float, int, bool, abs, map, filter,
                                                 sorted, list, tuple, complex)}

#: id(math function) -> lowering, for a math function that needs one of its own here;
#: the others lower through their primitives' aliases (ops/elementwise*.py)
_MATH_EXTRA: dict = {}


class BuiltinLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: builtins on Values and loop-built lists."""

    def call_frontend(self, callee, args, kwargs):
        """Methods of the lists loops build; changes of frozen containers."""
        owner = getattr(callee, "__self__", None)
        if isinstance(owner, (Appender, LoopList)):
            return callee(*args, **kwargs)
        if (owner is not None and id(owner) in self.frozen_ids
                and _is_builtin_method_of(callee, (list, dict, set))
                and callee.__name__ not in _READERS):
            if any(v is owner and is_comprehension_list(n)
                   for n, v in self.frame.scope.env.items()):
                raise data_dependent_length()
            raise UnsupportedOperationError(
                f"{type(owner).__name__}.{callee.__name__}() changes a {type(owner).__name__} "
                "built before this data-dependent branch or loop",
                hint="append in a loop to a list created empty just before it (it becomes "
                     "a stacked output), or build a new container inside the branch")
        return NOT_HANDLED

    def call_builtin(self, callee, args, kwargs):
        name = _BUILTINS.get(id(callee))
        if name is not None and getattr(builtins, name[1:]) is callee:
            return getattr(self, name)(*args, **kwargs)
        if _is_stacker(callee) and args and isinstance(args[0], LoopList):
            return self._stack_loop_list(callee, *args, **kwargs)
        if getattr(callee, "__module__", None) == "math" and holds_value(args):
            return self._math(callee, args, kwargs)
        return NOT_HANDLED

    # -- iteration ------------------------------------------------------------------
    def _iterable(self, x) -> bool:
        return isinstance(x, (range, Value, LoopList, Iteration))

    def _part(self, x) -> Iteration:
        it = self.iteration(x)
        return over_static(x) if it is None else it

    def _range(self, *args, **kwargs):
        if kwargs or not holds_value(list(args)):
            return NOT_HANDLED
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        return over_dynamic_range(self.b, start, stop, step)

    def _enumerate(self, seq, start=0):
        if not self._iterable(seq):
            return NOT_HANDLED
        return enumerated(self.iteration(seq), start)

    def _zip(self, *seqs, strict=False):
        if not any(self._iterable(s) for s in seqs):
            return NOT_HANDLED
        return zipped(self.b, [self._part(s) for s in seqs])

    def _reversed(self, seq):
        if isinstance(seq, range):
            return seq[::-1]
        if not self._iterable(seq):
            return NOT_HANDLED
        return reversed_(self.b, self.iteration(seq))

    # -- reductions and conversions -----------------------------------------------------
    def _len(self, obj):
        if isinstance(obj, (LoopList, Appender)):
            return len(obj)
        if isinstance(obj, Iteration):
            if isinstance(obj.n, Value):
                raise UnsupportedOperationError("len() of a range with run-time bounds",
                                                hint="compute it from the bounds")
            return obj.n
        return NOT_HANDLED

    # -- map, filter, sorted, list(...) of run-time sequences: unrolled ----------------
    def _map(self, func, *seqs):
        """``map(f, *seqs)``: ``f`` called on each item now (the items of an array are
        its rows); an iterator over the results, as Python's is."""
        if not seqs:
            return NOT_HANDLED
        lists = [self.sequence_items(s, "map") for s in seqs]
        return iter([self.call(func, list(group), {}) for group in zip(*lists)])

    def _filter(self, func, seq):
        kept = []
        for item in self.sequence_items(seq, "filter"):
            test = item if func is None else self.call(func, [item], {})
            if isinstance(test, Value) or (isinstance(test, (list, tuple))
                                           and holds_value(list(test))):
                raise UnsupportedOperationError(
                    "filter() with a condition on run-time values: the number of items "
                    "kept would depend on the data",
                    hint="keep every item and mask: np.where(cond, v, 0.0), or x[mask] "
                         "on an array")
            if test:
                kept.append(item)
        return iter(kept)

    def _sorted(self, seq, *, key=None, reverse=False):
        items = self.sequence_items(seq, "sorted")
        keys = items if key is None else [self.call(key, [item], {}) for item in items]
        if any(isinstance(k, Value) or isinstance(k, (list, tuple)) and holds_value(list(k))
               for k in keys):
            raise UnsupportedOperationError(
                "sorted() by run-time values: the order would depend on the data",
                hint="sort by a key known when compiling (sorted(items, key=...)), or "
                     "sort the array with np.sort")
        order = sorted(range(len(items)), key=keys.__getitem__, reverse=bool(reverse))
        return self.own([items[i] for i in order])

    def _list(self, *args):
        return self._container(list, args)

    def _tuple(self, *args):
        return self._container(tuple, args)

    def _container(self, kind, args):
        """``list(x)``/``tuple(x)`` of an array (its rows) or of a zip/enumerate over
        arrays: the items, unrolled."""
        if len(args) != 1 or not isinstance(args[0], (Value, Iteration, LoopList)):
            return NOT_HANDLED
        items = kind(self.sequence_items(args[0], kind.__name__))
        return self.own(items) if kind is list else items

    def sequence_items(self, seq, what: str) -> list:
        """The items of ``seq`` as a Python list, for code that runs per item now: the
        rows of an array, the items of a range, a zip/enumerate of them, a list a loop
        built, or a Python sequence or iterator."""
        if isinstance(seq, (Value, Iteration, LoopList, range)):
            it = self.iteration(seq)
            if isinstance(it.n, Value):
                raise UnsupportedOperationError(
                    f"{what}() over a sequence whose length is known only at run time",
                    hint="loop over it with 'for' instead")
            it.prepare(self.b)
            return it.items(self.b)
        return self.static_items(seq)

    def _sum(self, items, start=0):
        if type(items) in _ITERATORS:  # map/filter results, iter(...): Python's left fold
            items = list(items)  # consumed: from here on the list stands for it
            return self.call_sum(items, start) if holds_value(items) else sum(items, start)
        if isinstance(items, LoopList):
            items = items.stack(self.b)
        elif not isinstance(items, Value):
            return NOT_HANDLED
        if not items.type.shape:
            raise UnsupportedOperationError("sum() of a 0-d array: it is not iterable",
                                            hint="a scalar is its own sum")
        total = rules.find_lowering(np.sum)(self.b, items, axis=0)
        return total if _is_zero(start) else self.b.add(self.b.const(start), total)

    def _max(self, *args, **kwargs):
        return self._extremum("maximum", np.max, args, kwargs)

    def _min(self, *args, **kwargs):
        return self._extremum("minimum", np.min, args, kwargs)

    def _extremum(self, prim, reduce, args, kwargs):
        if kwargs:
            return NOT_HANDLED
        if len(args) == 1 and isinstance(args[0], LoopList):
            lst = args[0]
            if lst.elem.shape != ():
                return NOT_HANDLED
            return rules.find_lowering(reduce)(self.b, lst.stack(self.b))
        items = list(args[0]) if len(args) == 1 and isinstance(
            args[0], (list, tuple, *_ITERATORS)) else list(args)
        python = max if prim == "maximum" else min
        if not holds_value(items) or any(
                isinstance(v, Value) and v.type.shape != () for v in items):
            if len(args) == 1 and type(args[0]) in _ITERATORS:  # consumed: decide here
                if holds_value(items):
                    raise unsupported_call(python)
                return python(items)
            return NOT_HANDLED  # arrays: Python's own error (ambiguous comparison)
        out = items[0]
        for v in items[1:]:
            out = self.b.emit(prim, self.b.const(out), self.b.const(v), hint=prim[:3])
        return self._python_float(out, items)

    def _abs(self, x):
        if not (isinstance(x, Value) and x.type.weak):
            return NOT_HANDLED  # arrays: the abs primitive, through its lowering
        return self._python_float(self.b.abs(x), [x])

    def _python_float(self, out, inputs):
        """``out`` as a Python float if Python would give one: every input is a Python
        number (a weak Value or a static int/float) and ``out`` is a float64 0-d."""
        python = all(v.type.weak if isinstance(v, Value) else isinstance(v, (int, float))
                     and not isinstance(v, np.generic) for v in inputs)
        t = out.type if isinstance(out, Value) else None
        if python and t is not None and not t.weak and t.shape == () \
                and t.dtype == np.float64:
            return self.b.pyfloat(out)
        return out

    def _float(self, *args):
        if len(args) != 1 or not isinstance(args[0], Value):
            return NOT_HANDLED
        v = self._scalar(args[0], "float")
        if v.type.weak and v.type.dtype.kind == "f":
            return v
        if v.type.dtype.kind not in "fiub":
            raise UnsupportedOperationError(f"float() of a {v.type} value",
                                            hint="take the real part first (np.real)")
        return self.b.pyfloat(v, hint="float_")

    def _complex(self, real=0.0, imag=0.0):
        """``complex(re, im)`` of one-element real values: a Python complex."""
        if not holds_value([real, imag]):
            return NOT_HANDLED
        parts = [self._scalar(v, "complex") if isinstance(v, Value) else self.b.const(v)
                 for v in (real, imag)]
        if any(self.b.type_of(v).dtype.kind not in "fiub" for v in parts):
            raise UnsupportedOperationError(
                "complex() of a complex value computed in the function",
                hint="write re + 1j * im, or take np.real / np.imag first")
        return self.b.pycomplex(*parts, hint="complex_")

    def _int(self, *args):
        if len(args) != 1 or not isinstance(args[0], Value):
            return NOT_HANDLED
        v = self._scalar(args[0], "int")
        if v.type.weak and v.type.dtype.kind in "iu":
            return v
        if v.type.weak and v.type.dtype.kind == "b":
            return self.b.add(v, self.b.const(0), hint="int_")
        return self.b.cast(v, dtype=np.dtype(np.int64), hint="int_")

    def _bool(self, *args):
        if len(args) != 1 or not isinstance(args[0], Value):
            return NOT_HANDLED
        v = self._scalar(args[0], "bool")
        zero = False if v.type.dtype.kind == "b" else 0
        return self.b.not_equal(v, self.b.const(zero), hint="bool_")

    def _scalar(self, v: Value, what: str) -> Value:
        """The number ``float(v)``, ``int(v)``, ``bool(v)`` or a ``math`` function converts:
        ``v`` itself when 0-d; a one-element array where the installed NumPy converts it
        (a TypeError, as NumPy's, elsewhere; ``bool`` takes any one-element array)."""
        t = v.type
        if t.shape == ():
            return v
        converts = _CONVERTS_ONE_ELEMENT or what == "bool"
        if getattr(t, "size", 0) != 1 or not converts:
            which = "one-element" if converts else "0-dimensional"
            raise UnsupportedOperationError(
                f"{what}() of an array of type {t}: only {which} arrays can be "
                "converted to Python scalars (NumPy raises TypeError)",
                hint="reduce it first (np.sum(x), x[0]) or keep it an array")
        return self.b.reshape(v, shape=())

    # -- lists built by loops and math -------------------------------------------------
    def _stack_loop_list(self, callee, lst, axis=0, *rest, dtype=None, **kwargs):
        as_array = callee is np.array or callee is np.asarray
        if as_array:  # np.array(ys, dtype): the second argument is the dtype
            axis, dtype = 0, axis if axis != 0 else dtype
        axis = getattr(callee, "axis", axis)  # ops.Stack(axis=1)(ys)
        if rest or kwargs:
            return NOT_HANDLED
        concat = _is_stacker(callee) == "concat"
        if concat and axis != 0:
            return NOT_HANDLED
        out = lst.stack(self.b, 0 if concat else axis)
        if concat:
            shape = out.type.shape
            if len(shape) < 2:
                raise UnsupportedOperationError(
                    f"concatenating {lst.name}: its items are 0-d", hint="use np.stack")
            out = self.b.reshape(out, shape=(shape[0] * shape[1],) + shape[2:])
        if dtype is not None and np.dtype(dtype) != out.type.dtype:
            out = self.b.cast(out, dtype=np.dtype(dtype))
        return out

    def _math(self, callee, args, kwargs):
        """``math.f(x)`` of one-element values: the ``math_f`` primitive (ops/pymath.py),
        which calls ``math.f`` itself on the number the user's call would receive."""
        extra = _MATH_EXTRA.get(id(callee))
        lower = extra or rules.find_lowering(callee)
        if lower is None:
            return NOT_HANDLED
        args = [self._scalar(a, f"math.{callee.__name__}") if isinstance(a, Value) else a
                for a in args]
        out = lower(self.b, *args, **kwargs)
        if isinstance(out, Value) and out.type.dtype.kind in "fiub" and not out.type.weak:
            out = self.b.pyfloat(out, hint=out.hint)
        return out


def _converts_one_element() -> bool:
    """Whether the installed NumPy converts a one-element array of one or more dimensions
    to a Python scalar (``float(np.ones(1))``; deprecated in 1.25, an error since 2.4)."""
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            float(np.ones(1))
    except TypeError:
        return False
    return True


_CONVERTS_ONE_ELEMENT = _converts_one_element()

#: the iterators map/filter (and iter() of a list) give in lifted code
_ITERATORS = (type(iter([])), type(iter(())))


def _is_zero(v) -> bool:
    return not isinstance(v, Value) and isinstance(v, (int, float)) and v == 0


def _is_stacker(callee):
    """``"stack"``/``"concat"`` for the callables that stack/concatenate a list."""
    from ..ops import operations as ops
    if any(callee is f for f in (np.stack, np.array, np.asarray, ops.stack)) \
            or isinstance(callee, ops.Stack):
        return "stack"
    if any(callee is f for f in (np.concatenate, ops.concat)) or isinstance(callee, ops.Concat):
        return "concat"
    return None
