"""What a loop carries from one iteration to the next, and what it leaves after it.

A :class:`Plan` lists the loop-carried variables (see :mod:`.loops` for which
they are), each split into leaves: a dynamic leaf is one of the loop op's
carried values (``plan.inits[k]``), a static leaf (:class:`Fixed`) must not
change. The flags of :mod:`.desugar` (``<returned>``, ``<result>``, ``<break>``)
are carried the same way.

Invariants:

* ``plan.inits`` are Values defined before the loop (a counter first, when the
  loop is a ``while`` over a ``for``'s counter); ``plan.hints`` name them.
* At the end of the body (:meth:`CarryLifter.next_values`) every dynamic leaf is
  converted to its initial type; a leaf whose dtype must grow raises
  :class:`Retry` with the promoted types, and the loop is lifted again; a leaf
  whose shape changes, or an array whose dtype changes, raises
  :class:`ShapeChange` (never broadcast nor promoted). A
  ``return`` first seen in the body also raises :class:`Retry`: its value then
  becomes carried, starting from zeros.
"""
from __future__ import annotations

import gast

from ..errors import InvalidOperandError, UnsupportedOperationError, UnsupportedSyntaxError
from ..ir.core import Value
from .desugar import (BROKE, CONTINUED, FLAGS, RESULT, RETURNED, hint_of, signal_to_flags,
                      sure_signal)
from .iterables import Appender, LoopList
from .alias import LOOSE
from .comprehensions import data_dependent_length, is_comprehension_list
from .values import (ABSENT, Undefined, Zero, convert, describe_tree, flatten,
                     is_dynamic_leaf, placeholder, same_static, type_of, unflatten, unify, zeros)


class Retry(Exception):
    """Lift the body again: carried types were promoted, or a returned value appeared."""

    def __init__(self, promote=None, why=None, result=ABSENT, carry=(), split=(),
                 loosen=()):
        super().__init__("retry")
        self.promote, self.why, self.result = promote or {}, why, result
        self.carry, self.split, self.loosen = tuple(carry), tuple(split), tuple(loosen)


class ShapeChange(InvalidOperandError):
    """A carried value has another shape (or, an array before and after, another dtype)
    after an iteration than before it, so its type after the loop depends on how many
    times the loop ran (see :meth:`~.loops.LoopLifter.loop_settling_shapes`)."""

    _FIX = {"shape": "(np.broadcast_to, keepdims=True, np.zeros_like(x))",
            "dtype": "(x.astype(...), or a Python number instead of an np.float64 scalar)"}

    def __init__(self, name, t0, t1, what="shape"):
        super().__init__(
            f"the variable {_shown(name)} changes {what} in the loop: {t0} before an "
            f"iteration, {t1} after it, so its {what} after the loop would depend on how "
            "many times the loop runs",
            hint=f"give {_shown(name)} its final {what} before the loop {self._FIX[what]}, "
                 "or loop over range(n) with a constant n")


class Fixed:
    """A static leaf of a carried variable: it must not change in the loop."""

    def __init__(self, value):
        self.value = value


class Carry:
    """One carried variable: its tree, and per leaf an index into ``plan.inits`` or a
    :class:`Fixed`."""

    def __init__(self, name, treedef, slots):
        self.name, self.treedef, self.slots = name, treedef, slots


class Plan:
    """What one loop carries: ``inits`` are the initial Values, one per dynamic leaf."""

    def __init__(self, node, it):
        self.node, self.it = node, it
        self.carries: list = []
        self.inits: list = []
        self.hints: list = []
        self.counter = False
        self.lists: dict = {}       # id(list) -> (list, names appending to it)
        self.stores: list = []
        self.cond_always = False    # the while condition is statically True
        self.n = None               # the trip count Value of a 'for'
        self.before: dict = {}      # the frame's names before the loop
        self.wanted = frozenset()   # names the body or later code may read
        self.outer: list = []       # (frame, its names) of the calling frames
        # one array object held by several names is one carried value (one slot)
        self.shared: dict = {}      # id(array leaf) -> slot
        self.keep: list = []        # the leaves ``shared`` keys, kept alive
        self.split: set = set()     # names that stop sharing their array in the loop
        self.loosened: set = set()  # (child, parent) slots whose view the body breaks
        self.appended: list = []    # slots whose last value a list built by the loop holds
        self.views: list = []       # (child slot, parent slot, index or LOOSE)

    def flag_args(self, args) -> list:
        return [args[c.slots[0]] for c in self.carries if c.name in (RETURNED, BROKE)]


class CarryLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: carried values of loops."""

    def loop_plan(self, node, it) -> Plan:
        syn, frame = self.syntax, self.frame
        before = frame.scope.env
        plan = Plan(node, it)
        body = node.body
        reads = syn.reads(body) | (syn.reads([node.test]) if it is None else frozenset())
        plan.stores = syn.stores(body + ([] if it is None else [node.target]))
        # a comprehension's list made in the body starts empty there: not the loop's
        plan.lists = self._appended_lists(
            [n for n in syn.appends(body)
             if not (is_comprehension_list(n) and n in plan.stores)], before)
        appending = {n for _, names in plan.lists.values() for n in names}
        returns, breaks = syn.returns(body), syn.breaks(body)
        if it is not None and (returns or breaks):
            plan.counter = True
            hint = index_hint(node, it)
            plan.inits.append(self.b.const(0, hint=hint))
            plan.hints.append(hint)
        for name in plan.stores:
            value = before.get(name, ABSENT)
            if (value is ABSENT or isinstance(value, Undefined) or name in appending
                    or (name not in reads and name not in frame.live)):
                continue
            self._carry(plan, name, value)
        plan.wanted = reads | frame.live
        self._carry_aliases(plan, before, plan.wanted)
        for flag, needed in ((RETURNED, returns), (BROKE, breaks)):
            if needed:
                self._carry(plan, flag, False)
        plan.before = before
        plan.outer = [(f, dict(f.scope.env)) for f in self.frames[:-1]]
        return plan

    def _carry_aliases(self, plan, before, wanted) -> None:
        """Names holding an array that may share memory with a carried one are
        carried too: a write in place through either name changes both."""
        carried = {c.name for c in plan.carries}
        grew = True
        while grew:
            grew = False
            arrays = [leaf for leaf in plan.keep]
            for name, tree in before.items():
                if name in carried or name not in wanted or name.startswith("<"):
                    continue
                if any(self.related(leaf, a) for leaf in flatten(tree)[0] for a in arrays):
                    self._carry(plan, name, tree)
                    carried.add(name)
                    grew = True
        self._note_plan_views(plan)

    def _note_plan_views(self, plan) -> None:
        """The carried arrays that are exact views of other carried arrays."""
        plan.views = []
        for c, init in enumerate(plan.inits):
            found = self.nearest_base(init, plan.inits)
            if found is not None and (c, found[0]) not in plan.loosened:
                plan.views.append((c, *found))

    def _carry(self, plan, name, tree) -> None:
        leaves, treedef = flatten(tree)
        slots = []
        for leaf in leaves:
            if is_dynamic_leaf(leaf):
                shared = self.is_array(leaf) and name not in plan.split
                if shared and id(leaf) in plan.shared:
                    slots.append(plan.shared[id(leaf)])
                    continue
                if shared:
                    plan.shared[id(leaf)] = len(plan.inits)
                    plan.keep.append(leaf)
                slots.append(len(plan.inits))
                plan.inits.append(self.b.const(leaf, hint=hint_of(name)))
                plan.hints.append(hint_of(name))
            else:
                slots.append(Fixed(leaf))
        plan.carries.append(Carry(name, treedef, slots))

    def _appended_lists(self, names, before) -> dict:
        found: dict = {}
        for name in names:
            lst = before.get(name)
            if not isinstance(lst, list) or (id(lst) not in self.own_ids
                                             and id(lst) not in self.frozen_ids):
                continue
            if lst and is_comprehension_list(name):  # a nested clause: unrolled if it can be
                raise data_dependent_length()
            if lst:
                raise UnsupportedOperationError(
                    f"{name} holds {len(lst)} item(s) before the loop that appends to it",
                    hint=f"start {name} empty before the loop (keep the first item in a "
                         "variable and concatenate after the loop)")
            found.setdefault(id(lst), (lst, []))[1].append(name)
        for name, value in before.items():  # other names of the same list
            if id(value) in found and value is found[id(value)][0] \
                    and name not in found[id(value)][1]:
                found[id(value)][1].append(name)
        return found

    def enter_region(self, plan, before, args) -> list:
        """Bind the carried variables (and appenders) to a region's arguments."""
        env = dict(before)
        for carry in plan.carries:
            if carry.name in FLAGS or carry.name == RESULT:
                continue  # inside the body, no jump has happened yet
            env[carry.name] = unflatten(carry.treedef, [args[s] if isinstance(s, int) else
                                                        s.value for s in carry.slots], self.own)
        self._note_carried_views(plan, args)
        appenders = []
        for lst, names in plan.lists.values():
            app = Appender(self, names[0])
            appenders.append((names, app))
            for name in names:
                env[name] = app
        self.frame.scope.env = env
        return appenders

    def _note_carried_views(self, plan, args) -> None:
        """The carried arrays share memory as their initial values do: exactly
        (a view by basic indexing) or possibly (a view of unknown layout, a name
        that stops sharing its array on later iterations, an array a calling
        function holds)."""
        offset = len(args) - len(plan.inits)
        exact = set()
        for c, p, index in plan.views:
            self.note_view(args[offset + c], args[offset + p], index)
            exact.add(c)
        for k, init in enumerate(plan.inits):
            if self.is_array(init) and any(self.related(init, a) for a in self.iterated):
                self.iterated.append(args[offset + k])  # until the enclosing 'for' ends
            if k in exact or not self.is_array(init):
                continue
            outside = self.held_elsewhere(init, [f for f, _ in plan.outer])
            if outside is not None:
                self.note_view(args[offset + k], outside, LOOSE)
                continue
            for j, other in enumerate(plan.inits[:k]):  # the earlier one is the root
                if self.is_array(other) and self.related(init, other) \
                        and self.root(args[offset + j]) is not args[offset + k]:
                    self.note_view(args[offset + k], args[offset + j], LOOSE)
                    break

    def next_values(self, plan, args) -> list:
        """The carried values at the end of the body, typed as the loop carries them."""
        frame, b = self.frame, self.b
        env = frame.scope.env
        signal_to_flags(env, frame.signal, frame.result)
        frame.signal = frame.result = None
        env.pop(CONTINUED, None)
        nxt = [None] * len(plan.inits)
        if plan.counter:
            nxt[0] = b.add(args[0], b.const(1), hint=plan.hints[0])
        promote, why = {}, None
        carried_result = any(c.name == RESULT for c in plan.carries)
        ends: dict = {}  # slot -> (the leaf it ends with, the name that holds it)
        split: list = []
        for carry in plan.carries:
            tree = self._carried_tree(carry, env, args)
            leaves, treedef = flatten(tree)
            if treedef != carry.treedef:
                raise UnsupportedOperationError(
                    f"the variable {_shown(carry.name)} changes structure in the loop: "
                    f"{describe_tree(carry.treedef)} before, {describe_tree(treedef)} after",
                    hint="keep the same structure in every iteration")
            for leaf, slot in zip(leaves, carry.slots):
                if isinstance(slot, Fixed):
                    _check_fixed(carry.name, slot.value, leaf)
                    continue
                if not is_dynamic_leaf(leaf):
                    raise UnsupportedOperationError(
                        f"the variable {_shown(carry.name)} is an array or number before an "
                        f"iteration and {leaf!r} after it",
                        hint=f"keep {_shown(carry.name)} an array or number in every iteration")
                t0, t1 = plan.inits[slot].type, type_of(leaf)
                u = unify(t0, t1)
                if u is None:
                    raise InvalidOperandError(
                        f"the variable {_shown(carry.name)} changes type in the loop: {t0} "
                        f"before an iteration, {t1} after it, and the two do not combine",
                        hint=f"give {_shown(carry.name)} the same shape in every iteration")
                if slot in ends and ends[slot][0] is not leaf:
                    split.append(carry.name)  # a name sharing the array was rebound
                    continue
                ends[slot] = (leaf, carry.name)
                if u.shape != t1.shape or u.shape != t0.shape:
                    raise ShapeChange(carry.name, t0, t1)
                if not (t0.weak or t1.weak) and t0.dtype != t1.dtype:
                    raise ShapeChange(carry.name, t0, t1, "dtype")
                if u != t0:
                    promote[slot], why = u, (carry.name, t0, t1)
                else:
                    nxt[slot] = convert(b, leaf, t0, plan.hints[slot])
        self._check_aliasing(plan, env, ends, split)
        if not promote:
            self._check_exit(plan, nxt)
        if not carried_result and RESULT in env:
            raise Retry(promote, why, env[RESULT])
        if promote:
            raise Retry(promote, why)
        return nxt

    def _check_aliasing(self, plan, env, ends, split) -> None:
        """Lift again when the body changed a name through a write in place that the
        loop does not carry, or when names that shared an array (or a view) at the
        start of an iteration no longer do at its end."""
        carried = {c.name for c in plan.carries}
        appending = {n for _, names in plan.lists.values() for n in names}
        missing = [n for n, v in env.items()
                   if n not in carried and n in plan.before and n not in plan.stores
                   and n in plan.wanted and n not in appending and not n.startswith("<")
                   and v is not plan.before[n]
                   and any(self.is_array(x) for x in flatten(plan.before[n])[0])]
        broken = []
        for c, p, index in plan.views:
            child, parent = ends.get(c, (None,))[0], ends.get(p, (None,))[0]
            if child is not None and self.nearest_base(child, [parent]) != (0, index):
                broken.append((c, p))
        for f, names in plan.outer:
            changed = [n for n, v in f.scope.env.items() if names.get(n, v) is not v]
            if changed:
                raise UnsupportedOperationError(
                    f"this loop writes into an array that the calling function holds as "
                    f"{changed[0]!r}", hint="return the new array from the function "
                    "instead of writing into its argument, or copy it first")
        if missing or split or broken:
            raise Retry(carry=missing, split=split, loosen=broken)

    def recarry(self, plan, before, names, split, loosen) -> None:
        """Carry ``names`` too; give each name of ``split`` its own slots; the views
        of ``loosen`` (child, parent slot) hold only possibly from now on."""
        plan.split.update(split)
        plan.loosened.update(loosen)
        taken: set = set()
        for carry in plan.carries:
            for j, slot in enumerate(carry.slots):
                if not isinstance(slot, int):
                    continue
                if slot in taken and carry.name in plan.split:
                    carry.slots[j] = len(plan.inits)
                    plan.inits.append(plan.inits[slot])
                    plan.hints.append(hint_of(carry.name))
                taken.add(slot)
        for name in names:
            self._carry(plan, name, before[name])
        self._note_plan_views(plan)

    def _carried_tree(self, carry, env, args):
        if carry.name in FLAGS:
            return env.get(carry.name, False)
        tree = env.get(carry.name, ABSENT)
        if tree is ABSENT and carry.name == RESULT:  # no return on this path: pass it on
            return unflatten(carry.treedef, [args[s] if isinstance(s, int) else s.value
                                             for s in carry.slots])
        if tree is ABSENT or isinstance(tree, Undefined):
            raise UnsupportedOperationError(
                f"the variable {carry.name!r} has no value at the end of the loop body",
                hint=f"assign {carry.name!r} on every path through the body")
        return tree

    def _check_exit(self, plan, nxt) -> None:
        if not plan.cond_always:
            return
        flags = [nxt[c.slots[0]] for c in plan.carries if c.name in (RETURNED, BROKE)]
        if all(f.producer is not None and f.producer.prim == "const"
               and f.producer.params["value"] is False for f in flags):
            raise UnsupportedSyntaxError(
                "infinite loop: the condition of this 'while' is always True and its "
                "'break'/'return' is never reached", hint="make the exit depend on the data")

    def bind_after(self, plan, before, results, stacked) -> None:
        frame = self.frame
        self._note_carried_views(plan, results[:len(plan.inits)])  # as in the body
        for k in plan.appended:
            self.in_loop_list.append(results[k])
        env = dict(before)
        for carry in plan.carries:
            env[carry.name] = unflatten(carry.treedef, [
                results[s] if isinstance(s, int) else s.value for s in carry.slots], self.own)
        carried = {c.name for c in plan.carries}
        line = self.b.loc.line if self.b.loc else "?"
        for name in plan.stores:
            if name not in carried:
                env[name] = Undefined(
                    f"local variable {name!r} is assigned in the loop at line {line} but has "
                    "no value before it, so it is undefined after the loop (which may run "
                    "zero times)", f"assign {name!r} before the loop")
        length = plan.it.n if plan.it is not None and not plan.counter and \
            not isinstance(plan.it.n, Value) else None
        for k, (names, _) in enumerate(stacked):
            value = results[len(plan.inits) + k]
            value.hint = names[0]
            stacked = None if length is None else self.b.stack_list(
                value, axis=0, length=length, hint=names[0] + "_array")
            lst = LoopList(value, length, names[0], stacked)
            # its items are the arrays Python's list holds (alias._from_loop_list)
            self.in_loop_list.extend(v for v in (value, stacked) if v is not None)
            for name in names:
                env[name] = lst
        env.pop(BROKE, None)
        env.pop(CONTINUED, None)
        if plan.cond_always and not any(c.name == BROKE for c in plan.carries):
            env[RETURNED] = True  # the loop can only end by returning
        frame.scope.env = env
        frame.signal, frame.result = sure_signal(env)


def index_hint(node, it) -> str:
    """The loop counter is named after the target when it is the item (range(n))."""
    plain = isinstance(node.target, gast.Name) and getattr(it, "plain", False)
    return node.target.id if plain else "i"


def zeros_tree(b, tree):
    leaves, treedef = flatten(placeholder(tree))
    return unflatten(treedef, [zeros(b, x.type) if isinstance(x, Zero) else x
                               for x in leaves])


def stackable(b, app) -> Value:
    item = app.items[0]
    if not is_dynamic_leaf(item):
        raise UnsupportedOperationError(
            f"{app.name}.append() of {type(item).__name__} in a loop: only arrays and numbers "
            "can be stacked", hint="append one array per iteration (np.stack a tuple first)")
    return b.const(item, hint=app.name)


def _check_fixed(name, old, new) -> None:
    if new is old or same_static(new, old):
        return
    raise UnsupportedOperationError(
        f"the variable {_shown(name)} changes from {old!r} to {new!r} in the loop: only "
        "arrays and numbers can change from one iteration to the next",
        hint=f"keep {_shown(name)} the same in every iteration, or make it an array")


def _shown(name: str) -> str:
    return "returned value" if name == RESULT else repr(name)
