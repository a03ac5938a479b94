"""Loops: ``for`` and ``while`` lifted as loop ops; ``for`` over static sequences unrolled.

* ``for`` over ``range`` (static ints: the trip count is known at compile time;
  run-time bounds: computed), over the rows of an array, over a list a loop
  built, and ``enumerate``/``zip``/``reversed`` of those: a ``for`` op
  (:func:`~ad_compiler.ir.control.build_for`), never unrolled — unless the body
  needs the index as a Python int (it indexes a Python list or slices with it),
  which no loop op can express: then the loop is unrolled, as a loop over a
  static Python list or tuple always is.
* ``while`` with a data-dependent condition: a ``while`` op. A condition that
  is static and False skips the loop; static and True needs a data-dependent
  ``break`` or ``return``, else it is an infinite loop (an error).
* ``break`` or ``return`` in a ``for`` body: the loop becomes a ``while`` over
  its counter whose condition also tests the flags (:mod:`.desugar`).

Invariants:

* Loop-carried values are the variables the body assigns that had a value
  before the loop and are read in the body (or the condition) or after the
  loop; each is split into leaves (:mod:`.values`). A Python number carried
  becomes a weak constant. Other names the body assigns are undefined after
  the loop (an error only if read).
* The body's carried values must keep their types. If a value's dtype changes
  (``s = 0`` then ``s = s + x[i]`` with float32 ``x``), the initial value is
  promoted to the unified type and the body lifted again, at most
  :data:`MAX_ROUNDS` times; types that do not unify are a located error. A
  shape that changes, or the dtype of an array, is Python's only if the
  iterations that change it surely run and are unrolled first
  (:meth:`LoopLifter.loop_settling_shapes`).
* ``ys = []`` before the loop and ``ys.append(v)`` in it give a stacked output:
  after the loop ``ys`` is a :class:`~.iterables.LoopList`.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidOperandError, UnsupportedSyntaxError
from ..ir.control import build_for, build_while
from ..ir.core import Block, Value
from ..ir.names import rename
from .comprehensions import DataDependentLength
from .carry import CarryLifter, Retry, ShapeChange, index_hint, stackable, zeros_tree
from .desugar import BROKE, CONTINUED, RESULT
from .iterables import (Appender, Iteration, LoopList, over_list, over_range, over_rows,
                        skip_first)
from .values import ABSENT, Mark, StaticIndexNeeded, convert, flatten

#: how many iterations a loop over a static sequence may unroll to
MAX_UNROLL = 10_000
#: how many times a loop body is lifted while its carried types settle
MAX_ROUNDS = 4


class _LiveItems:
    """The items of a compile-time ndarray a ``for`` runs over, each read when its
    iteration starts, as Python's iterator reads them: a write in place into the array
    in an earlier iteration (run on the compile-time array) reaches the later items
    (``for v in a: a /= 2``: the second ``v`` is halved)."""

    def __init__(self, array: np.ndarray):
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, k):
        return self.array[k]

    def __iter__(self):
        return (self.array[k] for k in range(len(self.array)))


class LoopLifter(CarryLifter):
    """Mixin of :class:`~.to_ssa.Lifter`: ``for`` and ``while``."""

    def visit_For(self, node):
        with self.located(node.iter):
            seq = self.expr(node.iter)
            it = self.iteration(seq)
            items = self.static_items(seq) if it is None else \
                it.items(self.b) if it.static else None
            if isinstance(seq, np.ndarray) and seq.ndim:
                items = _LiveItems(seq)
        # a compile-time array whose items are read live (_LiveItems) cannot see a write
        # of a run-time value into it: that is refused, as for a run-time array's rows
        live = [items.array] if isinstance(items, _LiveItems) else []
        with self.iterating_over(live if it is None else it.sources):
            if items is not None:
                self.unroll(node, items)
                return
            self.loop_settling_shapes(node, it)

    def visit_While(self, node, rounds=MAX_ROUNDS):
        if not self._may_run(node):
            return
        self.loop_settling_shapes(node, None, rounds)

    def loop_settling_shapes(self, node, it, rounds=MAX_ROUNDS) -> None:
        """The loop op, after its first iterations if they change a carried value's type.

        In Python a value that changes shape in an iteration (``a = a.max(axis=0,
        keepdims=True)``, ``acc = acc + x`` from ``acc = 0.0``), or an array whose dtype
        changes (``x = x + np.float64(0.5)`` on float32 ``x``), has the new type only if
        the loop ran. Iterations that surely run (a constant trip count; a ``while``
        whose condition is True before them at compile time) are unrolled before the
        loop op, one at a time, until the types settle (all of them when the body
        appends to a list, which must start empty); a ``break`` or ``return`` in one
        that may happen guards the rest of the loop. Otherwise the value after the loop
        would depend on how many times it ran: a located error.
        """
        try:
            self.loop_op_or_unrolled(node, it)
            return
        except ShapeChange:
            if rounds == 0 or not self._can_peel(node, it):
                raise
        if it is None:  # a while whose condition is True now: its next iteration runs
            self.unroll(node, [None], then=lambda: self.visit_While(node, rounds - 1))
            return
        whole = bool(self.syntax.appends(node.body))  # a list starts empty
        with self.located(node.iter):
            items = it.items(self.b) if whole or it.n == 0 else [it.item(self.b, 0)]
        if whole or it.n <= 1:
            self.unroll(node, items)
            return
        rest = skip_first(it)
        self.unroll(node, items, then=lambda: self.loop_settling_shapes(node, rest, rounds - 1))

    def loop_op_or_unrolled(self, node, it) -> None:
        """The loop op, or, if its body needs the counter as a Python int (an index
        into a Python list, a comprehension's filter ``if k != 1``), the loop unrolled
        (a ``for`` with a constant trip count only). A loop of a comprehension with
        several clauses or a filter (``comprehension`` attribute) is unrolled
        whenever its trip count is constant: one loop op would append a number of
        items that is not one per iteration."""
        static = it is not None and not isinstance(it.n, Value) and it.n <= MAX_UNROLL
        if not (static and getattr(node, "comprehension", None)):
            try:
                self.structured_loop(node, it)
                return
            except (StaticIndexNeeded, DataDependentLength):
                if not static:
                    raise
        with self.located(node.iter):
            items = it.items(self.b)
        self.unroll(node, items)

    def _can_peel(self, node, it) -> bool:
        """Whether the loop's next iteration surely runs, or it runs none: a constant trip
        count, a ``while`` condition True at compile time."""
        if it is None:
            return self._may_run(node, surely=True)
        return not isinstance(it.n, Value) and it.n <= MAX_UNROLL

    def iteration(self, seq) -> Iteration | None:
        """The Iteration a ``for`` over ``seq`` runs, or None for a static sequence."""
        if isinstance(seq, Iteration):
            return seq
        if isinstance(seq, range):
            return over_range(seq)
        if isinstance(seq, LoopList):
            return over_list(seq)
        if isinstance(seq, Value):
            return over_rows(self, seq)
        return None

    def static_items(self, seq) -> list:
        if isinstance(seq, Appender):
            iter(seq)  # raises its error
        raw = []
        for item in seq:
            raw.append(item)
            if len(raw) > MAX_UNROLL:
                raise UnsupportedSyntaxError(f"a 'for' loop over more than {MAX_UNROLL} "
                                             "Python items is too long to unroll",
                                             hint="loop over range(n) or over an array")
        self.captures.iterated(seq, raw)  # a CellList of the owner: its items are checked
        return [self.outside(item) for item in raw]

    # -- unrolled loops -----------------------------------------------------------------
    def unroll(self, node, items, then=None) -> None:
        """Run the body once per item (a ``while`` body: items ``[None]``), then ``then()``
        (the rest of the loop) if given; a data-dependent ``break``/``return`` guards the
        remaining iterations.

        Items that are arrays are held under a name of their own while the loop runs
        (as Python's iterator holds them): a write in place in an earlier iteration
        reaches the item a later one reads.
        """
        frame = self.frame
        saved_live = frame.live
        frame.live = frame.live | self.syntax.reads(node.body)
        held = None
        if any(self.is_array(leaf) for item in items for leaf in flatten(item)[0]):
            # named by how many loops of this frame hold items now (not by id(): the
            # generated code's names must be the same at every run)
            held = f"for-items-{sum(str(k).startswith('for-items-') for k in frame.scope.env)}"
            frame.scope.env[held] = tuple(items)
            frame.live = frame.live | {held}
        try:
            self._unroll_from(node, items, 0, held, then)
        finally:
            frame.live = saved_live
            for flag in (BROKE, CONTINUED, held):
                frame.scope.env.pop(flag, None)
            if frame.signal in ("break", "continue"):
                frame.signal = None

    def _unroll_from(self, node, items, start: int, held=None, then=None) -> None:
        frame = self.frame
        for k in range(start, len(items)):
            if hasattr(node, "target"):  # a for (a while has none)
                self.assign(node.target, items[k] if held is None else frame.scope.env[held][k])
            self.run_block_body(node.body)
            signal, frame.signal = frame.signal, None
            if signal == "return":
                frame.signal = signal
                return
            if signal == "break":
                return
            frame.scope.env.pop(CONTINUED, None)
            pending = self.pending_flag()
            if pending is not None and (k + 1 < len(items) or then is not None):
                flag, value = pending

                def stop(flag=flag):
                    self.frame.scope.env[flag] = True

                def go_on(flag=flag, k=k):
                    self.frame.scope.env[flag] = False
                    self._unroll_from(node, items, k + 1, held, then)
                self.lift_if(value, stop, go_on)
                return
        if then is not None:
            then()

    # -- loop ops ------------------------------------------------------------------------
    def _may_run(self, node, surely=False) -> bool:
        """False if the ``while`` condition is statically False before the loop (with
        ``surely``: True only if it is statically True)."""
        frame = self.frame
        saved = frame.scope.env
        frame.scope.env = dict(saved)
        try:
            with self.b.inside(Block()), self.region(), self.located(node.test):
                cond = self.condition(self.expr(node.test), "'while'")
        finally:
            frame.scope.env = saved
        if surely:
            return not isinstance(cond, Value) and bool(cond)
        return cond is not False

    def structured_loop(self, node, it) -> None:
        plan = self.loop_plan(node, it)
        frame = self.frame
        before = frame.scope.env
        original = list(plan.inits)
        if it is not None:
            it.prepare(self.b)
            plan.n = it.n if isinstance(it.n, Value) else self.b.const(it.n, hint="n")
        why = None
        for _ in range(MAX_ROUNDS):
            try:
                results, stacked = self._emit(plan, before)
                break
            except Retry as retry:
                for k, t in retry.promote.items():
                    plan.inits[k] = convert(self.b, original[k], t, plan.hints[k])
                if retry.carry or retry.split or retry.loosen:
                    self.recarry(plan, before, retry.carry, retry.split, retry.loosen)
                    original = original + plan.inits[len(original):]
                if retry.result is not ABSENT:
                    self._carry(plan, RESULT, zeros_tree(self.b, retry.result))
                    original = original + plan.inits[len(original):]
                why = retry.why or why
            finally:
                frame.scope.env, frame.signal, frame.result = before, None, None
        else:
            name, t0, t1 = why
            raise InvalidOperandError(
                f"the variable {name!r} changes type in the loop: {t0} before an iteration, "
                f"{t1} after it", hint=f"give {name!r} its final type before the loop "
                "(e.g. np.zeros(shape, dtype) or x.astype(...))")
        self.bind_after(plan, before, results, stacked)

    def _emit(self, plan, before) -> tuple[list, list]:
        """One attempt: the loop op; returns (its results, the appenders it stacked)."""
        it, node, b = plan.it, plan.node, self.b
        stacked: list = []

        def body(counter, args):
            with self.region():
                appenders = self.enter_region(plan, before, args)
                saved_live = self.frame.live
                self.frame.live = saved_live | self.syntax.reads(node.body) | (
                    self.syntax.reads([node.test]) if it is None else frozenset())
                try:
                    if it is not None:
                        mark = Mark(b.block)
                        self.assign(node.target, it.item(b, counter), mark)
                    self.run_block_body(node.body)
                    nxt = self.next_values(plan, args)
                finally:
                    self.frame.live = saved_live
                stacked[:] = [(names, app) for names, app in appenders if app.items]
                # a carried array the iteration also appended is, after the loop, the
                # list's last item too (Python's list holds the object itself)
                plan.appended = [k for k, v in enumerate(nxt)
                                 if any(self.related(v, app.items[0]) for _, app in stacked)]
                return nxt, [stackable(b, app) for _, app in stacked]

        if it is not None and not plan.counter:
            results = build_for(b, plan.n, plan.inits, lambda b, i, args: body(i, args),
                                index_hint=index_hint(node, it), hints=plan.hints)
        else:
            results = build_while(b, plan.inits, lambda b, args: self._test(plan, before, args),
                                  lambda b, args: body(args[0] if plan.counter else None, args),
                                  hints=plan.hints)
        regions = b.block.ops[-1].regions
        for region in regions:  # region arguments named as the variables
            rename(region.args[len(region.args) - len(plan.hints):], plan.hints, regions)
        return results, stacked

    def _test(self, plan, before, args):
        """The loop condition: the flags first, then the counter or the user's test."""
        b, it = self.b, plan.it
        with self.region():
            self.enter_region(plan, before, args)
            flags = plan.flag_args(args)

            def test():
                if it is not None:
                    return b.less(args[0], plan.n, hint="going")
                with self.located(plan.node.test):
                    cond = self.condition(self.expr(plan.node.test), "'while'")
                    if cond is True:
                        plan.cond_always = True
                        if not flags:
                            raise UnsupportedSyntaxError(
                                "infinite loop: the condition of this 'while' is always True "
                                "and its body has no 'break' or 'return'",
                                hint="give the loop a data-dependent condition, or 'break'")
                return cond
            cond = self._unless_flags(flags, test)
        return cond if isinstance(cond, Value) else b.const(bool(cond), hint="going")

    def _unless_flags(self, flags, test):
        """``False if flags[0] else (False if flags[1] else test())``."""
        if not flags:
            return test()
        return self.lift_if(flags[0], lambda: False,
                            lambda: self._unless_flags(flags[1:], test))[0]

