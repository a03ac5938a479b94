"""Data-dependent ``if``, conditional expressions, ``and``/``or``: structured ``if`` ops.

A condition that is static (a Python bool, a shape test) still selects one
branch at compile time. A condition that is an IR Value (one element: a 0-d
array, a Python number known at run time, ``np.sum(x) > 0``) lifts *both*
branches into the two regions of an ``if`` op (:func:`~ad_compiler.ir.control.build_if`).

Invariants:

* Each branch is lifted on its own copy of the environment, into a block of its
  own, inside :meth:`region`: containers (lists, dicts) built before the branch
  cannot be changed in it (their contents would depend on run-time data).
* After both branches, every variable whose value differs between them (and
  that later code may read, ``frame.live``) is merged: its leaves become values
  the ``if`` yields, converted to one type in both branches (NumPy promotion and
  broadcasting, :func:`.values.unify`). A variable only one branch assigns, with
  no value before, becomes :class:`.values.Undefined` (an error if read).
* A sure ``return``/``break``/``continue`` in one branch only: the rest of the
  enclosing block is lifted into the *other* branch, so ``if c: return a``
  followed by more code needs no flag. Otherwise jumps become flags
  (:mod:`.desugar`), and ``run_body`` runs the following statements under a
  guard ``if flag`` (:meth:`guard_rest`).
* A path that surely returned reads no variable again, nor does a path that
  surely broke or continued read a variable it did not set: such a path yields
  the other path's value where it can see it, else a zero placeholder.
* Branches are lifted into scratch blocks first (which values to yield, and as
  what type, is known only after both); ``build_if``'s region callbacks then
  move those ops into the regions and append the conversions.
* Ops are pure, so an ``if`` that yields nothing is not emitted at all.
"""
from __future__ import annotations

from contextlib import contextmanager

import gast

from ..errors import InvalidOperandError, UnsupportedOperationError
from ..ir.control import build_if
from ..ir.core import Block, ListType, Value
from . import operators
from .desugar import (CONTINUED, FLAGS, PSEUDO, RESULT, RETURNED, VALUE, hint_of,
                      signal_to_flags, sure_signal)
from .alias import LOOSE
from .values import (ABSENT, Undefined, Zero, convert, describe_tree, flatten,
                     is_dynamic_leaf, same_static, type_of, unflatten, unify, zeros)

_AMBIGUOUS_HINT = ("reduce the condition to one value with np.any(...) or np.all(...), or "
                   "select elementwise with np.where(cond, a, b)")


class Branch:
    """One lifted branch: its ops, its environment at the end, its sure jump."""

    __slots__ = ("block", "env", "signal", "result", "value")

    def __init__(self, block, env, signal, result, value):
        self.block, self.env, self.signal = block, env, signal
        self.result, self.value = result, value


class _Slot:
    """Leaf ``k`` of the values the ``if`` yields, while they are being collected."""

    def __init__(self, k: int):
        self.k = k


class _Merged:
    """A variable's tree after the ``if``: its leaves, some of them :class:`_Slot`."""

    def __init__(self, treedef, leaves):
        self.treedef, self.leaves = treedef, leaves


class FlowLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: data-dependent branches."""

    # -- conditions ---------------------------------------------------------------
    def condition(self, value, what: str):
        """A static condition as a bool, or a one-element Value (else NumPy's error)."""
        if not isinstance(value, Value):
            return operators.truth(value, what)
        t = value.type
        if isinstance(t, ListType):
            raise UnsupportedOperationError(
                f"the truth value of a list built by a loop ({what})",
                hint="test len(...) of a list built by a 'for' loop, or a value computed from it")
        if t.size != 1:
            what_size = "empty array" if t.size == 0 else "array with more than one element"
            raise InvalidOperandError(
                f"the truth value of an {what_size} is ambiguous: the condition of this "
                f"{what} has type {t}", hint=_AMBIGUOUS_HINT)
        return value

    @contextmanager
    def region(self):
        """Lift code whose execution depends on run-time data (a branch, a loop body)."""
        saved = (self.own_ids, self.frozen_ids)
        self.frozen_ids = self.frozen_ids | self.own_ids
        self.own_ids = set()
        self.depth += 1
        try:
            yield
        finally:
            self.own_ids, self.frozen_ids = saved
            self.depth -= 1

    # -- statements and expressions -------------------------------------------------
    def visit_If(self, node):
        rest = self.frame.rest
        with self.located(node.test):
            cond = self.condition(self.expr(node.test), "'if'")
        if not isinstance(cond, Value):
            self.run_body(node.body if cond else node.orelse)
            return
        _, taken = self.lift_if(cond, lambda: self.run_body(node.body),
                                lambda: self.run_body(node.orelse), rest=rest)
        if taken:
            self.frame.rest_taken = True

    def eval_IfExp(self, node):
        with self.located(node.test):
            cond = self.condition(self.expr(node.test), "conditional expression")
        if not isinstance(cond, Value):
            return self.expr(node.body if cond else node.orelse)
        return self.lift_if(cond, lambda: self.expr(node.body),
                            lambda: self.expr(node.orelse))[0]

    def eval_BoolOp(self, node):
        is_and = isinstance(node.op, gast.And)
        return self._bool_chain(node.values, is_and, "'and'" if is_and else "'or'")

    def _bool_chain(self, operands, is_and: bool, what: str):
        """``a and b and ...`` as Python evaluates it: the first operand deciding."""
        value = self.expr(operands[0])
        if len(operands) == 1:
            return value
        with self.located(operands[0]):
            cond = self.condition(value, what)
        if not isinstance(cond, Value):
            return self._bool_chain(operands[1:], is_and, what) if cond == is_and else value
        more = lambda: self._bool_chain(operands[1:], is_and, what)  # noqa: E731
        keep = lambda: value  # noqa: E731
        return self.lift_if(cond, *((more, keep) if is_and else (keep, more)))[0]

    def eval_Compare(self, node):
        return self._compare_chain(self.expr(node.left), node.ops, node.comparators)

    def _compare_chain(self, left, ops, comparators):
        """``a < b < c`` is ``a < b and b < c`` with ``b`` evaluated once, ``c`` lazily."""
        right = self.expr(comparators[0])
        result = operators.compare(self.b, type(ops[0]), left, right)
        if len(ops) == 1:
            return result
        cond = self.condition(result, "chained comparison")
        if not isinstance(cond, Value):
            return self._compare_chain(right, ops[1:], comparators[1:]) if cond else result
        return self.lift_if(cond, lambda: self._compare_chain(right, ops[1:], comparators[1:]),
                            lambda: result)[0]

    # -- lifting both branches ------------------------------------------------------
    def lift_if(self, cond: Value, then_fn, else_fn, rest=()):
        """Lift ``then_fn()``/``else_fn()`` as the regions of an ``if`` on ``cond``.

        Returns ``(value, rest_taken)``: the merged value the callables return
        (conditional expressions), and whether ``rest`` (statements that follow)
        was lifted into the branch that does not jump.
        """
        frame = self.frame
        before = frame.scope.env
        then = self.lift_branch(then_fn, dict(before))
        other = self.lift_branch(else_fn, dict(before))
        taken = bool(rest) and (then.signal is None) != (other.signal is None)
        if taken:
            open_ = then if then.signal is None else other
            self.lift_branch(lambda: self.run_rest(rest), open_.env, open_)
        for br in (then, other):
            signal_to_flags(br.env, br.signal, br.result)
            br.env[VALUE] = br.value
            if not (frame.tail or (frame.rest and not taken)):
                br.env.pop(CONTINUED, None)  # nothing follows in this iteration
        env = self.merge_branches(cond, before, then, other)
        value = env.pop(VALUE)
        frame.scope.env = env
        frame.signal, frame.result = sure_signal(env)
        return value, taken

    def lift_branch(self, fn, env: dict, into: Branch | None = None) -> Branch:
        """Run ``fn`` on ``env`` into a new block (or on, into ``into``, updated)."""
        frame = self.frame
        saved = (frame.scope.env, frame.signal, frame.result)
        frame.scope.env, frame.signal, frame.result = env, None, None
        block = Block() if into is None else into.block
        try:
            with self.region(), self.b.inside(block):
                value = fn()
            if into is None:
                return Branch(block, frame.scope.env, frame.signal, frame.result, value)
            into.env, into.signal, into.result = frame.scope.env, frame.signal, frame.result
            return into
        finally:
            frame.scope.env, frame.signal, frame.result = saved

    def guard_rest(self, flag: str, value: Value, rest) -> None:
        """``if flag: <nothing> else: <rest>`` — statements after a jump that may
        have happened (the flag is known in each branch)."""
        def jumped():
            self.frame.scope.env[flag] = True

        def go_on():
            self.frame.scope.env[flag] = False
            self.run_rest(rest)
        frame = self.frame
        saved, frame.rest = frame.rest, []  # the guarded statements end the block
        try:
            # where the paths meet: a merge that cannot be made is an error there
            with self.located(rest[0]):
                self.lift_if(value, jumped, go_on)
        finally:
            frame.rest = saved

    def run_rest(self, stmts) -> None:
        """Run the statements that end the current block (taken into a branch)."""
        frame = self.frame
        saved, frame.rest = frame.rest, []
        try:
            self.run_body(stmts)
        finally:
            frame.rest = saved

    def pending_flag(self):
        """``(name, value)`` of a flag that is a run-time Value, or None."""
        env = self.frame.scope.env
        for flag in FLAGS:
            v = env.get(flag)
            if isinstance(v, Value):
                return flag, v
        return None

    # -- merging two environments -----------------------------------------------------
    def merge_branches(self, cond, before: dict, then: Branch, other: Branch) -> dict:
        """The environment after the ``if``; emits the ``if`` op if it yields anything."""
        slots: list = []
        merged = {}
        then_jumps, other_jumps = _jumps(then.env), _jumps(other.env)
        defined: dict = {}  # id(block) -> ids of the values it defines
        for name in dict.fromkeys([*before, *then.env, *other.env]):
            old = before.get(name, ABSENT)
            a, c = then.env.get(name, ABSENT), other.env.get(name, ABSENT)
            if name not in PSEUDO and name != VALUE:
                # after a sure return nothing reads the variables; after a sure
                # break/continue a variable that path did not set is not read either
                if then_jumps == RETURNED or (then_jumps and _unset(a)):
                    a = _dont_care(c, other.block, defined)
                elif other_jumps == RETURNED or (other_jumps and _unset(c)):
                    c = _dont_care(a, then.block, defined)
            elif name == RESULT and (a is ABSENT) != (c is ABSENT):
                # the path that did not return yields a placeholder, never read
                if a is ABSENT:
                    a = _dont_care(c, other.block, defined)
                else:
                    c = _dont_care(a, then.block, defined)
            if a is old and c is old:
                continue
            merged[name] = self._merge_name(name, a, c, slots)
        results = self._emit_if(cond, then, other, slots) if slots else []
        self._note_merged_views(slots, results, before, merged)
        env = dict(before)
        for name, plan in merged.items():
            if plan is ABSENT:
                env.pop(name, None)
            elif isinstance(plan, _Merged):
                leaves = [results[x.k] if isinstance(x, _Slot) else x for x in plan.leaves]
                env[name] = unflatten(plan.treedef, leaves, self.own)
            else:
                env[name] = plan
        return env

    def _merge_name(self, name, a, c, slots):
        if name in FLAGS:
            a, c = (False if v is ABSENT else v for v in (a, c))
        elif name not in PSEUDO and name != VALUE and name not in self.frame.live:
            return Undefined(f"{name!r} is not defined after the 'if'", "assign it before")
        if a is ABSENT and c is ABSENT:
            return ABSENT
        if a is ABSENT or c is ABSENT or isinstance(a, Undefined) or isinstance(c, Undefined):
            return Undefined(
                f"local variable {name!r} is assigned in only one branch of the "
                f"data-dependent 'if' at line {self.b.loc.line if self.b.loc else '?'}, so "
                "it has no value after it on the other path",
                f"assign {name!r} before the 'if', or in both branches")
        if a is c:
            return a
        return self._merge_tree(name, a, c, slots)

    def _merge_tree(self, name, a, c, slots):
        la, da = flatten(a)
        lc, dc = flatten(c)
        shown = _shown(name)
        if da != dc:
            raise UnsupportedOperationError(
                f"the data-dependent 'if' gives {shown} different structures: "
                f"{describe_tree(da)} in one branch, {describe_tree(dc)} in the other",
                hint=f"give {shown} the same structure in both branches")
        leaves = []
        for x, y in zip(la, lc):
            if x is y or same_static(x, y):
                leaves.append(x)
                continue
            shared = [k for k, s in enumerate(slots) if s[0] is x and s[1] is y]
            if shared and self.is_array(x) and self.is_array(y):
                leaves.append(_Slot(shared[0]))  # one array under several names: one result
                continue
            if not (_dynamic(x) and _dynamic(y)):
                raise UnsupportedOperationError(
                    f"the data-dependent 'if' gives {shown} two different Python values, "
                    f"{_short(x)} and {_short(y)}: only arrays and numbers can depend on "
                    "run-time data", hint=f"give {shown} the same value in both branches")
            tx, ty = _leaf_type(x), _leaf_type(y)
            if tx.shape != ty.shape:
                # broadcasting one branch's array (or number) would change what the
                # function computes (its output's shape, a sum over it): the shape must
                # not depend on data
                raise InvalidOperandError(
                    f"the data-dependent 'if' gives {shown} different shapes: {tx} in one "
                    f"branch, {ty} in the other, so its shape would depend on run-time data",
                    hint=f"give {shown} one shape in both branches (e.g. np.zeros_like(x) "
                         "or np.full_like(x, v) instead of a number)")
            if not (tx.weak or ty.weak) and tx.dtype != ty.dtype:
                # converting one branch's array would change the dtype Python gives on
                # that path (and everything computed from it)
                raise InvalidOperandError(
                    f"the data-dependent 'if' gives {shown} different dtypes: {tx} in one "
                    f"branch, {ty} in the other, so its dtype would depend on run-time data",
                    hint=f"give {shown} one dtype in both branches (x.astype(...), or a Python "
                         "number instead of an np.float64 scalar)")
            t = unify(tx, ty)
            if t is None:
                raise InvalidOperandError(
                    f"the data-dependent 'if' gives {shown} types that do not combine: "
                    f"{_leaf_type(x)} in one branch, {_leaf_type(y)} in the other",
                    hint=f"give {shown} one shape in both branches (np.broadcast_to, "
                         "reshape), or assign it only after the 'if'")
            slots.append((x, y, t, name))
            leaves.append(_Slot(len(slots) - 1))
        return _Merged(da, leaves)

    def _note_merged_views(self, slots, results, before, merged) -> None:
        """A result that is a view of another one (or of an array the ``if`` leaves
        alone) in both branches, by the same index, is one; one that may share
        memory with it on either path, and is not already connected to it by
        views, possibly is."""
        unchanged = [v for n, tree in before.items() if n not in merged
                     for v in flatten(tree)[0] if self.is_array(v)]
        arrays = [i for i, s in enumerate(slots) if self.is_array(s[0]) or self.is_array(s[1])]

        def candidates(i):
            return [(results[j], slots[j][0], slots[j][1]) for j in arrays if j != i] + \
                [(u, u, u) for u in unchanged]
        for i in arrays:
            vx, vy = self.views.get(id(slots[i][0])), self.views.get(id(slots[i][1]))
            for target, px, py in candidates(i):
                if vx is not None and vy is not None and vx.parent is px and \
                        vy.parent is py and vx.index is not LOOSE and vx.index == vy.index:
                    self.note_view(results[i], target, vx.index)
                    break
        for i in arrays:
            if id(results[i]) in self.views:
                continue
            for target, px, py in candidates(i):
                if self.root(target) is not self.root(results[i]) and (
                        self.related(slots[i][0], px) or self.related(slots[i][1], py)):
                    self.note_view(results[i], target, LOOSE)
                    break

    def _emit_if(self, cond, then: Branch, other: Branch, slots) -> list:
        def region(branch, k):
            def fill(b):
                b.block.ops.extend(branch.block.ops)
                return [_yield(b, s[k], s[2], hint_of(s[3])) for s in slots]
            return fill
        hints = [hint_of(s[3]) for s in slots]
        return build_if(self.b, cond, region(then, 0), region(other, 1), hints=hints)


def _jumps(env):
    """The flag that is statically True in ``env`` (a sure jump on that path), or None."""
    for flag in FLAGS:
        if env.get(flag) is True:
            return flag
    return None


def _dont_care(tree, block, cache: dict):
    """A value for a path that ignores it: ``tree`` itself where it is visible on
    that path (defined before the branch), zeros where the other branch made it."""
    if _unset(tree):
        return tree
    leaves, treedef = flatten(tree)
    if not any(isinstance(x, Value) for x in leaves):
        return tree
    inner = cache.get(id(block))
    if inner is None:
        inner = cache[id(block)] = {id(r) for op in block.walk() for r in op.results}
    if not any(isinstance(x, Value) and id(x) in inner for x in leaves):
        return tree
    return unflatten(treedef, [Zero(x.type) if isinstance(x, Value) and id(x) in inner else x
                               for x in leaves])


def _unset(v) -> bool:
    return v is ABSENT or isinstance(v, Undefined)


def _yield(b, leaf, t, hint):
    return zeros(b, t) if isinstance(leaf, Zero) else convert(b, leaf, t, hint)


def _dynamic(x) -> bool:
    return isinstance(x, Zero) or is_dynamic_leaf(x)


def _leaf_type(x):
    return x.type if isinstance(x, Zero) else type_of(x)


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 40 else text[:37] + "..."


def _shown(name: str) -> str:
    return {RESULT: "the returned value", VALUE: "the conditional expression"}.get(
        name, f"the variable {name!r}")
