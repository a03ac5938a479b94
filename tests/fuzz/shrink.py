"""Make a failing program smaller while it fails the same way.

Edits, tried greedily until none applies: delete a statement (anywhere,
helpers included), replace an ``if``/``for``/``while`` by one of its bodies,
replace a returned ``a + b`` by ``a`` or ``b``. An edit is kept when the program
still runs in plain Python and the oracle gives the same kind of failure at
the same stage (for internal errors, the same exception type).
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import time

from .oracle import check
from .program import finite, run_plain


def _same(a, b) -> bool:
    head = lambda o: o.detail.split(":")[0] if o.kind == "internal error" else ""  # noqa: E731
    return a.kind == b.kind and a.stage == b.stage and head(a) == head(b)


def _bodies(tree):
    """Every statement list in ``tree`` (as (owner, field) pairs)."""
    for node in ast.walk(tree):
        for name in ("body", "orelse"):
            stmts = getattr(node, name, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                yield node, name


def _edits(tree):
    """Candidate smaller trees, biggest cuts first."""
    for owner, name in list(_bodies(tree)):
        stmts = getattr(owner, name)
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) or _counter_step(stmt):
                continue
            if isinstance(stmt, ast.Return) and isinstance(owner, ast.FunctionDef):
                yield from _return_edits(tree, owner, name, i, stmt)
                continue
            yield _replaced(tree, owner, name, i, [])
            if isinstance(stmt, (ast.If, ast.For, ast.While)):
                for part in (stmt.body, stmt.orelse):
                    if part:
                        yield _replaced(tree, owner, name, i, part)


def _counter_step(stmt) -> bool:
    """``k3 += 1``: the step of a generated while loop (deleting it never ends the loop)."""
    return isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
        and stmt.target.id.startswith("k")


def _return_edits(tree, owner, name, i, stmt):
    value = stmt.value
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        for side in (value.left, value.right):
            yield _replaced(tree, owner, name, i, [ast.Return(side)])


def _replaced(tree, owner, name, i, new):
    """A copy of ``tree`` where statement ``i`` of ``owner.name`` is replaced by ``new``."""
    path = _find(tree, owner)
    clone = copy.deepcopy(tree)
    target = _follow(clone, path)
    stmts = getattr(target, name)
    stmts[i:i + 1] = copy.deepcopy(new)
    if not stmts:
        stmts.append(ast.Pass())
    return clone


def _find(tree, owner):
    for path, node in _walk_paths(tree, ()):
        if node is owner:
            return path
    raise LookupError


def _walk_paths(node, path):
    yield path, node
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            for k, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield from _walk_paths(item, path + ((field, k),))
        elif isinstance(value, ast.AST):
            yield from _walk_paths(value, path + ((field, None),))


def _follow(node, path):
    for field, k in path:
        node = getattr(node, field) if k is None else getattr(node, field)[k]
    return node


def shrink(program, outcome, seconds: float = 30.0):
    """A smaller program failing as ``program`` does (``outcome``), within ``seconds``."""
    deadline = time.monotonic() + seconds
    tree = ast.parse(program.source)
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for candidate in _edits(tree):
            if time.monotonic() > deadline:
                break
            source = ast.unparse(ast.fix_missing_locations(candidate)) + "\n"
            smaller = dataclasses.replace(program, source=source)
            try:
                fn = smaller.load()
                if not finite(run_plain(fn, program.args)):
                    continue
            except Exception:
                continue
            if _same(check(smaller, fn), outcome):
                tree, program, progress = candidate, smaller, True
                break
    return program
