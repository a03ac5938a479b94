"""List comprehensions and generator expressions, desugared to loops with appends.

``ys = [f(v) for v in xs]`` becomes, just before its statement::

    _comp0 = []
    for _comp0_v in xs:
        _comp0.append(f(_comp0_v))
    ys = _comp0

which the lifter already handles (a loop over an array with an appended list, or
an unrolled loop over a static list). The loop variables are renamed, so they do
not leak into the function as in Python 3. Only the simple form is rewritten: one
``for`` clause, no ``if`` filter, not inside a ``while`` condition or a nested
function; anything else is left for the fence to reject with its usual message.
Every new node carries the comprehension's location.
"""
from __future__ import annotations

import gast

_BODIES = ("body", "orelse", "finalbody")


def desugar_comprehensions(node) -> None:
    """Rewrite, in place, the simple comprehensions of ``node``'s statements."""
    counter = [0]
    _rewrite_bodies(node, counter)


def _rewrite_bodies(node, counter) -> None:
    for field in _BODIES:
        stmts = getattr(node, field, None)
        if isinstance(stmts, list):
            setattr(node, field, _rewrite_list(stmts, counter))


def _rewrite_list(stmts, counter) -> list:
    out = []
    for stmt in stmts:
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
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


class _Hoister(gast.NodeTransformer):
    """Replaces simple comprehensions in one statement's expressions by names."""

    def __init__(self, hoisted: list, counter: list):
        self.hoisted = hoisted
        self.counter = counter

    def visit_statement(self, stmt) -> None:
        for field, value in gast.iter_fields(stmt):
            if field in _BODIES:
                continue
            if isinstance(value, gast.AST):
                setattr(stmt, field, self.visit(value))
            elif isinstance(value, list):
                setattr(stmt, field, [self.visit(v) if isinstance(v, gast.AST) else v
                                      for v in value])

    def visit_Lambda(self, node):
        return node  # its own scope

    def visit_ListComp(self, node):
        return self._hoist(node)

    def visit_GeneratorExp(self, node):
        return self._hoist(node)

    def _hoist(self, node):
        if len(node.generators) != 1 or node.generators[0].ifs or node.generators[0].is_async:
            return node
        gen = node.generators[0]
        # the iterable runs once, before the loop; the element stays in the loop body,
        # where a comprehension inside it is rewritten in turn (it may read the variable)
        gen.iter = self.visit(gen.iter)
        names = _target_names(gen.target)
        if names is None:
            return node
        k = self.counter[0]
        self.counter[0] += 1
        tmp = f"_comp{k}"
        renames = {n: f"{tmp}_{n}" for n in names}
        target = _Renamer(renames, gast.Store).visit(gen.target)
        elt = _Renamer(renames, gast.Load).visit(node.elt)
        append = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=_name(tmp, gast.Load()), attr="append", ctx=gast.Load()),
            args=[elt], keywords=[]))
        loop = gast.For(target=target, iter=gen.iter, body=[append], orelse=[],
                        type_comment=None)
        start = gast.Assign(targets=[_name(tmp, gast.Store())],
                            value=gast.List(elts=[], ctx=gast.Load()), type_comment=None)
        for new in (start, loop, append):
            gast.copy_location(new, node)
        self.hoisted.extend([start, loop])
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


class _Renamer(gast.NodeTransformer):
    def __init__(self, renames: dict, ctx_type):
        self.renames = renames
        self.ctx_type = ctx_type

    def visit_Name(self, node):
        if node.id in self.renames:
            new = _name(self.renames[node.id], node.ctx)
            return gast.copy_location(new, node)
        return node
