"""List comprehensions and generator expressions, desugared to loops with appends.

``ys = [f(v) for v in xs]`` becomes, just before its statement::

    _comp0 = []
    for _comp0_v in xs:
        _comp0.append(f(_comp0_v))
    ys = _comp0

which the lifter already handles (a loop over an array with an appended list, or
an unrolled loop over a static list). The loop variables are renamed, so they do
not leak into the function as in Python 3. Several ``for`` clauses become nested
loops and ``if`` filters an ``if`` around what follows them::

    [f(a, b) for a in xs if p(a) for b in ys]   ->   for a in xs:
                                                          if p(a):
                                                              for b in ys:
                                                                  tmp.append(f(a, b))

A filter that depends on run-time data makes the list's length data-dependent,
which the lifter rejects with its usual message about appends under run-time
branches. A filter or an inner clause that depends only on the outer counters
(``for j in range(i, 3)``, ``if i % 2 == 0``) is fine: the loops of a
comprehension with several clauses, a filter, or a comprehension in its element
(a list of lists, both comprehensions) carry its list's name in a
``comprehension`` attribute and are unrolled whenever their trip counts are
constant (:mod:`.loops`), so the inner bounds and filters see Python ints. Comprehensions in a nested ``def`` are
rewritten in its body, and a ``lambda`` whose body holds one is lifted as the
``def`` it means; those in a ``while`` condition, async ones, and dict and set
comprehensions are left for the fence to reject. Every new node carries the
comprehension's location.
"""
from __future__ import annotations

from functools import partial

import gast

from ..errors import UnsupportedOperationError
from .nodes import walk

_BODIES = ("body", "orelse", "finalbody")
#: the names of the lists comprehensions build start with it (not a valid user name
#: in practice: a leading underscore and a counter)
PREFIX = "_comp"


def is_comprehension_list(name: str) -> bool:
    """Whether ``name`` is the list a rewritten comprehension builds."""
    return name.startswith(PREFIX) and name[len(PREFIX):].isdigit()


class DataDependentLength(UnsupportedOperationError):
    """A comprehension's list would get a run-time number of items: a ``for`` over a
    constant number of items is then unrolled (:mod:`.loops`)."""


def data_dependent_length():
    """The error for a comprehension whose filter or inner ``for`` is inside a loop
    lifted to a loop op (over range(), array rows ...), which appends one item per
    iteration, or whose filter depends on run-time data."""
    return DataDependentLength("a list comprehension with an 'if' filter or a second 'for' clause over "
               "range(), array rows or run-time conditions: its length is not one item "
               "per iteration of a compiled loop",
               hint="filter and nest over Python lists or tuples (those loops are unrolled), "
                    "or compute every item and mask with np.where(cond, v, 0.0)")


def desugar_comprehensions(node) -> None:
    """Rewrite, in place, the simple comprehensions of ``node``'s statements, and
    give each ``lambda`` whose body holds one an ``as_def`` (see :func:`lambda_as_def`)."""
    found = walk(node)
    if not any(isinstance(n, (gast.ListComp, gast.GeneratorExp)) for n in found):
        return  # nothing to rewrite
    counter = [0]
    for lam in [n for n in found if isinstance(n, gast.Lambda)]:
        lambda_as_def(lam, counter)
    _rewrite_bodies(node, counter)


def lambda_as_def(node, counter=None):
    """A ``lambda`` whose body holds a comprehension, as the ``def`` it means
    (``def <lambda>(args): return body``, comprehensions rewritten), kept on the
    lambda as ``as_def`` (the fence and the lifter read it); None for other lambdas."""
    if not any(isinstance(n, (gast.ListComp, gast.GeneratorExp)) for n in walk(node.body)):
        return None
    if getattr(node, "as_def", None) is None:
        ret = gast.copy_location(gast.Return(value=node.body), node.body)
        fn = gast.FunctionDef(name="<lambda>", args=node.args, body=[ret], decorator_list=[],
                              returns=None, type_comment=None, type_params=[])
        node.as_def = gast.copy_location(fn, node)
        _rewrite_bodies(node.as_def, counter if counter is not None else [0])
    return node.as_def


def _rewrite_bodies(node, counter) -> None:
    for field in _BODIES:
        stmts = getattr(node, field, None)
        if isinstance(stmts, list):
            setattr(node, field, _rewrite_list(stmts, counter))


def _rewrite_list(stmts, counter) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            if isinstance(stmt, gast.FunctionDef):  # a nested def: its own statements
                _rewrite_bodies(stmt, counter)
            out.append(stmt)
            continue
        hoisted = []
        if not isinstance(stmt, gast.While):  # its test is evaluated every iteration
            _Hoister(hoisted, counter).visit_statement(stmt)
        for h in hoisted:
            _rewrite_bodies(h, counter)   # comprehensions inside the element
        out.extend(hoisted)
        _rewrite_bodies(stmt, counter)
        out.append(stmt)
    return out


class _Hoister:
    """Replaces simple comprehensions in one statement's expressions by names.

    The expressions are walked with a stack, in source order (a sum of thousands
    of terms is a tree thousands deep); a ``lambda`` is its own scope and is not
    entered, nor is a comprehension (its element is rewritten after hoisting)."""

    def __init__(self, hoisted: list, counter: list):
        self.hoisted = hoisted
        self.counter = counter

    def visit_statement(self, stmt) -> None:
        self._rewrite([(stmt, field) for field in stmt._fields if field not in _BODIES])

    def _rewrite(self, slots) -> None:
        todo = list(reversed(slots))
        while todo:
            holder, key = todo.pop()
            node = holder[key] if isinstance(holder, list) else getattr(holder, key, None)
            if isinstance(node, list):
                todo.extend((node, i) for i in reversed(range(len(node))))
            elif isinstance(node, (gast.ListComp, gast.GeneratorExp)):
                new = self._hoist(node)
                if isinstance(holder, list):
                    holder[key] = new
                else:
                    setattr(holder, key, new)
            elif isinstance(node, gast.AST) and not isinstance(node, gast.Lambda):
                todo.extend((node, field) for field in reversed(node._fields))

    def _hoist(self, node):
        if any(gen.is_async for gen in node.generators):
            return node
        names = [_target_names(gen.target) for gen in node.generators]
        if any(n is None for n in names):
            return node
        # the first iterable runs once, before the loops (a comprehension inside it is
        # hoisted first); the rest, the filters and the element run inside, where
        # comprehensions are rewritten in turn (they may read the loop variables)
        self._rewrite([(node.generators[0], "iter")])
        k = self.counter[0]
        self.counter[0] += 1
        inner_comps = [n for n in walk(node.elt)
                       if isinstance(n, (gast.ListComp, gast.GeneratorExp))]
        for inner_comp in inner_comps:  # a list of lists: Python lists all the way down
            inner_comp.unrolled = True
        unrolled = (len(node.generators) > 1 or any(g.ifs for g in node.generators)
                    or bool(inner_comps) or getattr(node, "unrolled", False))
        tmp = f"{PREFIX}{k}"
        renames = {n: f"{tmp}_{n}" for group in names for n in group}
        load = partial(_rename, renames=renames)  # in place: these subtrees move inside
        inner = [gast.Expr(value=gast.Call(
            func=gast.Attribute(value=_name(tmp, gast.Load()), attr="append", ctx=gast.Load()),
            args=[load(node.elt)], keywords=[]))]
        new_nodes = list(inner)
        for i, gen in reversed(list(enumerate(node.generators))):
            if gen.ifs:   # `for v in xs if a if b` is `for v in xs: if a and b:`
                test = gen.ifs[0] if len(gen.ifs) == 1 else gast.BoolOp(op=gast.And(),
                                                                        values=gen.ifs)
                inner = [gast.If(test=load(test), body=inner, orelse=[])]
                new_nodes.append(inner[0])
            iterable = gen.iter if i == 0 else load(gen.iter)
            inner = [gast.For(target=load(gen.target),
                              iter=iterable, body=inner, orelse=[], type_comment=None)]
            if unrolled:
                inner[0].comprehension = tmp  # unrolled when it can be (loops.py)
            new_nodes.append(inner[0])
        start = gast.Assign(targets=[_name(tmp, gast.Store())],
                            value=gast.List(elts=[], ctx=gast.Load()), type_comment=None)
        for new in [start, *new_nodes]:
            _locate(new, node)
        self.hoisted.extend([start, inner[0]])
        return gast.copy_location(_name(tmp, gast.Load()), node)


def _target_names(target):
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, gast.Tuple):
        names = [_target_names(t) for t in target.elts]
        return None if any(n is None for n in names) else [x for n in names for x in n]
    return None


def _name(ident: str, ctx):
    return gast.Name(id=ident, ctx=ctx, annotation=None, type_comment=None)


def _rename(tree, renames: dict):
    """``tree`` with the names in ``renames`` renamed, in place."""
    for n in walk(tree):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    return tree


def _locate(tree, node) -> None:
    """Give every node of ``tree`` that has no location ``node``'s location."""
    for n in walk(tree):
        if "lineno" in n._attributes and getattr(n, "lineno", None) is None:
            gast.copy_location(n, node)
