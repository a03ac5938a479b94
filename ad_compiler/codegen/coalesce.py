"""One name for the values a loop or a branch hands on: no ``h_1 = h_2`` copies.

SSA gives a loop-carried quantity several values: the initial value, the region
argument, the value the body yields, the loop's result. Written with one name each,
the loop needs copies between them (``h_1 = x0`` ... ``h_1 = h_2`` ... ``h = h_1``). Two
values can share a name when one is dead where the other is born: then the copy is
a no-op and :func:`~ad_compiler.codegen.control.rebind` writes nothing::

    h = x                          h_1 = x
    for i in range(n):             for i in range(n):
        h = np.tanh(w @ h)   vs        h_2 = np.tanh(w @ h_1)
                                       h_1 = h_2
                                   h = h_1

:func:`plan` groups such values; codegen names each group once. The hand-overs:

* a loop's carried argument and its result (the name holds the final value);
* the carried argument and the value the body yields for it, when that value is
  made by an op of the body after the argument's last read (not inside that op's
  regions, where the new value could be written before a read of the old one,
  except in an ``if``'s branch before the branch makes its value);
* the initial value and the carried argument, when the initial value is made in
  the loop's block, is not read after the loop nor inside it, and bears the same
  hint (the same user variable: ``dh`` seeds the backward loop over ``dh``);
* a ``while``'s condition argument and its body argument;
* an ``if``'s result and a value a branch yields: one made in that branch, or one
  made before the ``if`` in its block with the same hint, read nowhere after the
  ``if`` nor in the other branch.

Every value hands its name on at most once and receives it at most once per path,
so the members of a group are alive one after the other. A read of a value
written in place under its input's name is a read of that name (``dh *= c`` keeps
``dh`` alive until its result's last read). A value whose name is
fixed otherwise (written in place into an input's buffer, an alias, a value
written by its float()) is in no group, and a value captured by a
loop from outside it never hands its name into the loop.
"""
from __future__ import annotations

import threading


def plan(fn, fixed: set, buffer_of: dict) -> dict:
    """``id(value) -> group`` (an int) for the values that share a name.

    ``fixed``: ids of values whose name codegen decides otherwise; ``buffer_of``:
    ``id(result) -> input`` for the results written in place under their input's
    name (a read of such a result is a read of that name)."""
    _PLAN.buffer_of = buffer_of
    try:
        groups = _Groups(fixed)
        _block(fn.body, groups)
        return groups.result()
    finally:
        _PLAN.buffer_of = {}


#: the ``buffer_of`` of the plan being made in this thread
_PLAN = threading.local()


def _key(v) -> int:
    """The id under which a read of ``v`` counts: that of the value whose name it has
    (the first buffer of a chain of in-place writes)."""
    buffer_of = _PLAN.buffer_of
    while id(v) in buffer_of:
        v = buffer_of[id(v)]
    return id(v)


class _Groups:
    def __init__(self, fixed):
        self.fixed = fixed
        self.parent: dict = {}
        self.gave: set = set()      # ids of values that handed their name on
        self.got: set = set()       # ids of values that received a name

    def find(self, key):
        while self.parent.get(key, key) != key:
            key = self.parent[key]
        return key

    def link(self, old, new, once=True, once_new=True) -> None:
        """``new`` takes ``old``'s name (``old`` is dead where ``new`` is born).

        ``once``: ``old`` hands its name on only here; ``once_new``: ``new`` receives
        one only here (the two branches of an ``if`` both hand on to its result)."""
        if id(new) in self.fixed or id(old) in self.fixed or (once and id(old) in self.gave) \
                or (once_new and id(new) in self.got):
            return
        a, b = self.find(id(old)), self.find(id(new))
        if a != b:
            self.parent[b] = a
        if once:
            self.gave.add(id(old))
        if once_new:
            self.got.add(id(new))

    def result(self) -> dict:
        return {key: self.find(key) for key in set(self.parent) | set(self.parent.values())}


def _reads(op, out: set) -> set:
    """Keys (:func:`_key`) of the values ``op`` reads: its inputs and, at any depth, its
    regions' reads."""
    out.update(_key(v) for v in op.inputs)
    for region in op.regions:
        out.update(_key(v) for v in region.results)
        for inner in region.ops:
            _reads(inner, out)
    return out


def _region_reads(op) -> set:
    out: set = set()
    for region in op.regions:
        out.update(_key(v) for v in region.results)
        for inner in region.ops:
            _reads(inner, out)
    return out


class _Uses:
    """For one block: where each value is last read (``len(ops)`` when yielded)."""

    def __init__(self, block, live_out=None):
        self.block = block
        self.index = {id(r): j for j, op in enumerate(block.ops) for r in op.results}
        self.last: dict = {}
        for j, op in enumerate(block.ops):
            for key in _reads(op, set()):
                self.last[key] = j
        for v in block.results if live_out is None else live_out:
            self.last[_key(v)] = len(block.ops)
        self.inner = [None] * len(block.ops)  # region reads, computed when asked

    def reads_inside(self, j) -> set:
        if self.inner[j] is None:
            self.inner[j] = _region_reads(self.block.ops[j])
        return self.inner[j]

    def dead_from(self, v, j) -> bool:
        """``v`` is not read after op ``j``, nor inside op ``j``'s regions."""
        return self.last_read(v) <= j and _key(v) not in self.reads_inside(j)

    def last_read(self, v) -> int:
        """The index of the last op reading ``v``'s name (-1: none; ``len(ops)``: yielded)."""
        return self.last.get(_key(v), -1)

    def made_here(self, v) -> int | None:
        """The index of the op of this block that makes ``v`` (None: made elsewhere)."""
        return self.index.get(id(v))

    def local(self, v, j) -> bool:
        """``v`` is an argument of the block or made by one of its ops before op ``j``."""
        m = self.made_here(v)
        return (m is not None and m < j) or any(v is a for a in self.block.args)


def _live_out(op, region) -> list | None:
    """The values ``region`` of ``op`` reads at its end (None: the values it yields).

    A loop body appends the stacked values that are its own arguments at its top
    (codegen/control.py), so those are not read at its end; a ``while``'s condition
    passes its arguments on to the body."""
    if op.prim == "while" and region is op.regions[0]:
        return list(region.results) + list(region.args)
    if op.prim in ("for", "while"):
        k = op.params["n_carried"]
        return list(region.results[:k]) + [v for v in region.results[k:]
                                            if not any(v is a for a in region.args)]
    return None


def _block(block, groups, live_out=None) -> None:
    uses = _Uses(block, live_out)
    for j, op in enumerate(block.ops):
        if op.prim == "for":
            _for(op, j, uses, groups)
        elif op.prim == "while":
            _while(op, j, uses, groups)
        elif op.prim == "if":
            _if(op, j, uses, groups)
        for region in op.regions:
            _block(region, groups, _live_out(op, region))


def _carried(groups, uses, j, op, inits, heads, args, region, nexts, outs) -> None:
    """``heads``: the arguments the loop starts with (a ``while``'s condition's), ``args``
    the body's, ``nexts`` what the body yields for them."""
    body = _Uses(region, _live_out(op, region))
    for init, head, arg, nxt, out in zip(inits, heads, args, nexts, outs):
        groups.link(head, out, once=False, once_new=False)
        m = body.made_here(nxt)
        if m is not None and list(nexts).count(nxt) == 1 and _free_from(body, arg, nxt, m):
            groups.link(arg, nxt)
        if uses.local(init, j) and init.hint == head.hint and list(inits).count(init) == 1 \
                and uses.dead_from(init, j):
            groups.link(init, head)


def _free_from(uses, arg, nxt, m) -> bool:
    """``arg`` is not read once op ``m`` of the block starts writing ``nxt``: after op
    ``m``, and inside it (for an ``if`` making ``nxt``: not after each branch's value
    for it is made)."""
    if uses.dead_from(arg, m):
        return True
    op = uses.block.ops[m]
    if op.prim != "if" or uses.last_read(arg) > m:
        return False
    s = next(k for k, r in enumerate(op.results) if r is nxt)
    return all(_free_after_yield(branch, s, arg) for branch in op.regions)


def _for(op, j, uses, groups) -> None:
    k = op.params["n_carried"]
    (region,) = op.regions
    args = region.args[1:1 + k]
    _carried(groups, uses, j, op, op.inputs[1:1 + k], args, args, region,
             region.results[:k], op.results[:k])


def _while(op, j, uses, groups) -> None:
    k = op.params["n_carried"]
    cond, body = op.regions
    for c, b in zip(cond.args, body.args):
        groups.link(c, b, once=False, once_new=False)
    _carried(groups, uses, j, op, op.inputs[:k], cond.args[:k], body.args[:k], body,
             body.results[:k], op.results[:k])


def _if(op, j, uses, groups) -> None:
    branches = op.regions
    for s, res in enumerate(op.results):
        for n, branch in enumerate(branches):
            y = branch.results[s]
            if list(branch.results).count(y) != 1:
                continue
            if any(y is r for o in branch.ops for r in o.results):
                groups.link(y, res, once_new=False)
            elif uses.local(y, j) and y.hint == res.hint and uses.last_read(y) <= j \
                    and _key(y) not in _branch_reads(branch, yields=False) \
                    and all(_free_after_yield(b, s, y) for b in branches if b is not branch):
                groups.link(y, res, once_new=False)


def _free_after_yield(branch, s, y) -> bool:
    """``y`` is not read in ``branch`` once the value it yields in place ``s`` is made
    (then written under ``y``'s name)."""
    uses = _Uses(branch, [v for k, v in enumerate(branch.results) if k != s])
    m = uses.made_here(branch.results[s])
    if m is None:  # bound at the branch's end, after every read of the branch
        return uses.last_read(y) < len(branch.ops)
    return uses.dead_from(y, m)


def _branch_reads(branch, yields=True) -> set:
    out = {_key(v) for v in branch.results} if yields else set()
    for inner in branch.ops:
        _reads(inner, out)
    return out
