"""How the printed gradients of the test corpus read: undefined names, dead copies and
repeated comments in ``adjoint_source`` text.

    python -m benchmarks.printed          # totals, then the sources that have any

* **undefined names**: names the generated function reads that neither the printed
  module defines nor Python's builtins are (exec'd alone, it would raise NameError);
* **dead copies**: statements that copy one version of a variable into another
  (``h_1 = h_2``, ``dh_1, dw_1 = dh_2, dw_2``, ``dx = dx_2``: names that differ only by
  a ``_N`` suffix) where one name would do: the copied value is not read after the
  copy, and the target's old value is not read between the copied value's definition
  and the copy (a copy a loop needs because it reads its old value while making the
  new one, ``dx_1 = dx * c; ...dx...; dx = dx_1``, is not dead, nor a copy of a
  name bound once to a literal, ``broke_1 = broke`` after ``broke = False``);
* **repeated comments**: a ``# file:line`` comment written again in the same block
  (mostly the adjoint of a line, after the adjoints of the lines below it).
"""
from __future__ import annotations

import ast
import builtins
import re
import symtable
import sys
from collections import Counter
from pathlib import Path

_VERSION = re.compile(r"_\d+$")


def undefined_names(source: str) -> list[str]:
    """Names the functions of ``source`` read from its globals that nothing defines."""
    top = symtable.symtable(source, "<printed>", "exec")
    defined = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    missing = []
    for child in top.get_children():
        for s in child.get_symbols():
            name = s.get_name()
            if s.is_global() and s.is_referenced() and name not in defined \
                    and not hasattr(builtins, name):
                missing.append(name)
    return sorted(set(missing))


def _names(node) -> list | None:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.elts):
        return [e.id for e in node.elts]
    return None


def dead_copies(source: str) -> list[str]:
    """The copies of a version of a variable into another version of it that one name
    could do without: the copied value is not read after the copy, and the target's
    old value is not read between the copied value's definition and the copy (so the
    value could have been written under the target's name)."""
    tree = ast.parse(source)
    constants = _constants(tree)
    found = []
    for block in _blocks(tree):
        for c, stmt in enumerate(block):
            pairs = _copy_pairs(stmt, constants)
            if any(_dead(block, c, t, v, tree) for t, v in pairs):
                found.append(ast.unparse(stmt))
    return found


def _blocks(tree):
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                yield stmts


def _copy_pairs(stmt, constants) -> list:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return []
    targets, values = _names(stmt.targets[0]), _names(stmt.value)
    if not targets or not values or len(targets) != len(values):
        return []
    return [(t, v) for t, v in zip(targets, values) if t != v and v not in constants
            and _VERSION.sub("", t) == _VERSION.sub("", v)]


def _constants(tree) -> set:
    """Names bound once, to a literal or a constant of the module (``broke = False``,
    ``dresult = dresult_value``): written inline, they are no copies."""
    bound = Counter(n.id for n in ast.walk(tree)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    module = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
              if isinstance(t, ast.Name)}
    return {n.targets[0].id for n in ast.walk(tree) if isinstance(n, ast.Assign)
            and isinstance(n.targets[0], ast.Name) and bound[n.targets[0].id] == 1
            and (isinstance(n.value, ast.Constant)
                 or isinstance(n.value, ast.Name) and n.value.id in module)}


def _loads(node, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in ast.walk(node))


def _stores(node, name) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for n in ast.walk(node))


def _dead(block, c, t, v, tree) -> bool:
    copy = block[c]
    after = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)
             and n.lineno > copy.lineno and not isinstance(n, (ast.FunctionDef,))]
    if any(_loads(n, v) for n in after if not isinstance(n, (ast.If, ast.For, ast.While))):
        return False  # the copied value is read again: the copy keeps it
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))
             and n.lineno < copy.lineno <= n.end_lineno]
    if any(_loads(loop, v) and not _stores(loop, v) for loop in loops):
        return False  # read again on the loop's next iteration
    # the statement that made the copied value (an augmented assignment updates it)
    defs = [d for d in range(c) if _stores(block[d], v) and not isinstance(block[d], ast.AugAssign)]
    start = defs[-1] + 1 if defs else 0
    return not any(_loads(s, t) for s in block[start:c])


def _block_comments(source: str) -> list[list[str]]:
    """The ``# file:line`` comments of each block, in order."""
    stack: list = [(-1, [])]
    blocks = [stack[0][1]]
    for line in source.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while indent < stack[-1][0]:
            stack.pop()
        if indent > stack[-1][0]:
            stack.append((indent, []))
            blocks.append(stack[-1][1])
        if line.strip().startswith("# "):
            stack[-1][1].append(line.strip())
    return blocks


def repeated_comments(source: str) -> list[str]:
    """``# file:line`` comments written more than once in one block (the adjoint of a
    line comes back to it after the adjoints of the lines below: most are that)."""
    return [c for comments in _block_comments(source)
            for i, c in enumerate(comments) if c in comments[:i]]


def corpus_sources() -> dict:
    """``{case name: adjoint_source}`` for the cases of tests/corpus/functions.py."""
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    import ad_compiler as ms
    from tests.corpus.load import corpus
    out = {}
    for c in corpus().CORPUS:
        if "grad" in c.xfail or "source" in c.xfail:
            continue
        out[c.name] = ms.adjoint_source(c.function, *c.make(), grad_position=c.grad_position)
    return out


def measure(sources: dict) -> dict:
    """Per measure, ``{case: findings}`` for the cases with any."""
    checks = {"undefined names": undefined_names, "dead copies": dead_copies,
              "repeated comments": repeated_comments}
    return {what: {name: found for name, src in sources.items() if (found := check(src))}
            for what, check in checks.items()}


def main() -> None:
    sources = corpus_sources()
    results = measure(sources)
    print(f"{len(sources)} printed gradients of the test corpus")
    for what, cases in results.items():
        total = sum(len(found) for found in cases.values())
        print(f"{what}: {total} in {len(cases)} sources")
    for what, cases in results.items():
        for name, found in sorted(cases.items()):
            print(f"  {what}: {name}: {', '.join(found)}")


if __name__ == "__main__":
    main()
