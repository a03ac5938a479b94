"""codegen/linemap.py: the user line each generated line comes from, as data.

The map is checked against what the generated text itself says (its ``# file:line``
comments, written by another path of codegen), against the user's source lines,
and across the whole corpus.
"""
from __future__ import annotations

import inspect
import linecache
import re
from pathlib import Path

import numpy as np

from ad_compiler.api.transforms import compiled_entry
from ad_compiler.codegen import to_source
from ad_compiler.codegen.linemap import source_lines
from ad_compiler.ir.names import one_line
from tests.corpus.load import corpus

COMMENT = re.compile(r"^\s*# (?P<where>.*)$")


def damped(x, w):
    total = 0.0
    for _ in range(3):
        x = np.tanh(w @ x)
        if np.sum(x) > 0:
            x = x * 0.5
        total = total + np.sum(x * x)
    return total


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _by_line(fn, *args, **config):
    entry = compiled_entry(fn, *args, **config)
    source, locs = source_lines(entry.ir)
    assert source == entry.compiled.source
    lines = source.rstrip("\n").split("\n")
    assert len(locs) == len(lines)
    return lines, locs, entry


def test_each_line_maps_to_the_op_that_wrote_it():
    lines, locs, _ = _by_line(damped, "f32[3]", "f32[3,3]", grad_position=(0, 1))
    at = [(line.strip(), loc.line if loc else None) for line, loc in zip(lines, locs)]
    loop, branch, half = (_line_of(damped, t) for t in ("for _", "if np.sum", "x * 0.5"))
    assert at[0][1] is None and at[-1][1] is None                  # def, return
    assert all(n is None for line, n in at if line.startswith("del "))
    assert {n for line, n in at if line.startswith("for ") or ".append(" in line} == {loop}
    assert {n for line, n in at if line.startswith("if ") or line == "else:"} == {branch}
    branches = [i for i, (line, _) in enumerate(at) if line.startswith("if ")]
    assert len(branches) == 2                                      # forward and backward
    for i in branches:
        body = at[i + 1:at.index(("else:", branch), i)]
        assert body[0] == (f"# {one_line(_comment(damped, half))}", half)
        # a rebinding of a value the branch computed belongs to the branch, the rest to
        # the branch's own line
        defined = {line.split(" = ")[0] for line, _ in at[:i + len(body)] if " = " in line}
        for line, n in body[1:]:
            rebinds = re.fullmatch(r"(\w+) = (\w+)", line) and line.split(" = ")[1] in defined
            assert n == (branch if rebinds else half), (line, n)


def _comment(fn, line: int) -> str:
    return f"{Path(inspect.getsourcefile(fn)).name}:{line}: " + \
        linecache.getline(inspect.getsourcefile(fn), line).strip()


def _check_comments(lines, locs) -> int:
    """Each comment line maps to the location it names, and so does the line below it."""
    n = 0
    for i, line in enumerate(lines):
        m = COMMENT.match(line)
        if m:
            loc = locs[i]
            assert loc is not None and locs[i + 1] == loc, (line, loc)
            text = loc.text.strip()
            assert m["where"] == one_line(f"{loc.file.rsplit('/', 1)[-1]}:{loc.line}"
                                          + (f": {text}" if text else "")), line
            n += 1
    return n


def test_comment_lines_agree_with_the_map():
    lines, locs, _ = _by_line(damped, "f32[3]", "f32[3,3]", grad_position=(0, 1))
    assert _check_comments(lines, locs) >= 8
    source = inspect.getsource(damped).splitlines()
    first = damped.__code__.co_firstlineno
    for loc in filter(None, locs):  # every location quotes the user's line
        assert loc.text.strip() == source[loc.line - first].strip()


def _lines_and_locs(ir, **options):
    source, locs = source_lines(ir, **options)
    return list(zip(source.rstrip("\n").split("\n"), locs, strict=True))


def test_the_map_without_comments_is_the_same_map():
    ir = compiled_entry(damped, "f32[3]", "f32[3,3]", grad_position=(0, 1)).ir
    commented = _lines_and_locs(ir, comments=True)
    bare = _lines_and_locs(ir, comments=False)
    assert [(line, loc) for line, loc in commented if not COMMENT.match(line)] == bare


def test_the_source_is_what_codegen_writes_with_the_same_options():
    ir = compiled_entry(damped, "f32[3]", "f32[3,3]").ir
    for options in ({}, dict(reuse_buffers=False), dict(comments=False)):
        source, locs = source_lines(ir, **options)
        assert source == to_source(ir, **options)[0]
        assert len(locs) == source.count("\n")


def _corpus_cases():
    return [c for c in corpus().CORPUS if "source" not in c.xfail]


def test_the_map_holds_over_the_corpus():
    """Source identical to the compiled source, comments in agreement, every
    statement line from the function's own user lines."""
    cited = 0
    for c in _corpus_cases():
        lines, locs, entry = _by_line(c.function, *c.make(), grad_position=c.grad_position)
        cited += _check_comments(lines, locs)
        assert locs[0] is None and lines[0].startswith("def "), c.name
        assert locs[-1] is None and lines[-1].strip().startswith("return ("), c.name
    assert cited > len(_corpus_cases())
