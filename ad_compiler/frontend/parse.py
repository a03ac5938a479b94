"""Source of a Python function → gast tree, with real file names and line numbers.

Invariants:

* :func:`parse_function` returns the ``gast.FunctionDef`` (or ``gast.Lambda``) of
  the function and a :class:`Source` that maps every node back to the user's
  file: ``source.loc(node)`` is a :class:`~ad_compiler.errors.SourceLoc` with the
  real line (the offset of ``inspect.getsourcelines`` undone) and the real column
  (the indentation removed by ``textwrap.dedent`` added back).
* The tree is fenced (:mod:`.fence`) before it is returned, so the lifter only
  ever sees syntax it handles or reports itself.
* The source is the text Python loaded the function from (:mod:`.sources`): a
  file edited after the import is not read.
* A source too deep for Python's parser (or for gast's recursive conversion of
  its tree) is a located :class:`~ad_compiler.errors.NestingTooDeepError` at the
  ``def`` line. Parsing runs on the deep stack (:mod:`ad_compiler.depth`), where
  a 5,000-term expression is well within reach.
* Parses are cached per function object (weakly: compiling many lambdas must
  not leak) and its code object (a reloader may replace ``fn.__code__``); only
  successful parses are cached, so a fence error repeats.
"""
from __future__ import annotations

from .comprehensions import desugar_comprehensions, lambda_as_def
from .loop_else import desugar_loop_else

import inspect
import linecache
import textwrap
import weakref

import gast

from ..depth import exhausted, too_deep
from ..errors import SourceLoc, UnsupportedSyntaxError
from ..records import Equal, Frozen
from ..stages import stage
from .fence import fence
from .sources import block_at, file_lines


class Source(Frozen, Equal):
    """Where a parsed snippet sits in its file.

    ``first_line`` is the real line number of the snippet's line 1. Columns of
    the snippet's line 1 are shifted by ``first_col``, those of later lines by
    ``indent`` (they differ for a lambda cut out of the middle of a line).
    """

    file: str
    first_line: int
    lines: tuple  # the real text of the snippet's lines, without their line ends
    indent: int = 0
    first_col: int = 0

    _fields = ("file", "first_line", "lines", "indent", "first_col")

    def __init__(self, file, first_line, lines, indent=0, first_col=0):
        _set = object.__setattr__
        _set(self, "file", file)
        _set(self, "first_line", first_line)
        # stripped once: a line thousands of terms long is shared by every loc on it
        _set(self, "lines", tuple(text.rstrip("\r\n") for text in lines))
        _set(self, "indent", indent)
        _set(self, "first_col", first_col)

    def loc(self, node) -> SourceLoc:
        lineno = getattr(node, "lineno", 1) or 1
        col = getattr(node, "col_offset", 0) or 0
        col += self.first_col if lineno == 1 else self.indent
        text = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        return SourceLoc(self.file, self.first_line + lineno - 1, col, text)


class Parsed(Frozen, Equal):
    node: object      # gast.FunctionDef or gast.Lambda
    source: Source

    _fields = ("node", "source")

    def __init__(self, node, source):
        _set = object.__setattr__
        _set(self, "node", node)
        _set(self, "source", source)


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


@stage("parse")
def parse_function(fn) -> Parsed:
    """The fenced gast tree of the plain Python function ``fn`` and its :class:`Source`."""
    try:
        code, parsed = _CACHE[fn]
        if code is fn.__code__:  # a reloader may replace a function's code
            return parsed
    except (KeyError, TypeError):
        pass
    try:
        parsed = _parse_lambda(fn) if fn.__code__.co_name == "<lambda>" else _parse_def(fn)
        if isinstance(parsed.node, gast.Lambda) and lambda_as_def(parsed.node) is not None:
            parsed = Parsed(parsed.node.as_def, parsed.source)  # it holds a comprehension
        if isinstance(parsed.node, gast.FunctionDef):
            desugar_loop_else(parsed.node)
            if any("for" in line for line in parsed.source.lines):  # none without 'for'
                desugar_comprehensions(parsed.node)
        fence(parsed.node, parsed.source)
    except RecursionError as exc:  # Python's parser, or gast's conversion of its tree
        if exhausted(exc):  # the stack was used up before: the caller says where
            raise
        code = fn.__code__
        line = code.co_firstlineno
        text = linecache.getline(code.co_filename, line).rstrip("\r\n")
        raise too_deep(f"the source of {fn.__qualname__!r}",
                       SourceLoc(code.co_filename, line, 0, text)) from None
    try:
        _CACHE[fn] = (fn.__code__, parsed)
    except TypeError:  # not weak-referenceable: just do not cache
        pass
    return parsed


def _source_lines(fn) -> tuple[list[str], int, str]:
    """The lines of ``fn``'s definition as Python loaded them (:mod:`.sources`)."""
    code = fn.__code__
    start = max(code.co_firstlineno, 1)
    lines = block_at(file_lines(fn), start - 1)
    return lines, start, code.co_filename


def _parse_def(fn) -> Parsed:
    lines, start, file = _source_lines(fn)
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _removed_indent(text, dedented)
    node = gast.parse(dedented).body[0]
    source = Source(file, start, tuple(lines), indent, indent)
    if not isinstance(node, gast.FunctionDef):
        fence(node, source)  # names what it is: 'async def' ...
        raise UnsupportedSyntaxError(f"{fn.__qualname__!r} is not a plain function",
                                     source.loc(node), hint="compile a 'def' function")
    return Parsed(node, source)


def _removed_indent(text: str, dedented: str) -> int:
    """How many columns ``textwrap.dedent`` removed (from the first non-blank line)."""
    for before, after in zip(text.splitlines(), dedented.splitlines()):
        if before.strip():
            return len(before) - len(after)
    return 0


def _parse_lambda(fn) -> Parsed:
    """Cut the lambda out of its line: ``f = lambda x: x * 2`` or ``g(lambda x: ...)``.

    Every ``lambda`` starting on the code's first line is tried; the one whose
    parameter names match the code object is taken. Several matches (``f, g =
    lambda v: v * 2, lambda v: v + 1``) are told apart by the code object's
    positions (Python 3.11+): the lambda whose body spans the code's instructions.
    """
    code = fn.__code__
    file, line = code.co_filename, code.co_firstlineno
    lines = file_lines(fn)[line - 1:line + 49] or [""]
    wanted = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [p for p in _lambdas_on_line(lines, file, line, code)
             if _lambda_params(p.node) == wanted]
    if len(found) > 1:
        found = _spanning(found, code, lines)
    if len(found) != 1:
        what = "no lambda" if not found else f"{len(found)} lambdas"
        raise UnsupportedSyntaxError(
            f"cannot find the source of this lambda: {what} with parameters {wanted} "
            f"on this line", SourceLoc(file, line, 0, lines[0].rstrip("\n")),
            hint="give the function a name with 'def' (or put the lambda on its own line)")
    return found[0]


def _lambdas_on_line(lines, file, line, code):
    first = lines[0]
    col = first.find("lambda")
    while col >= 0:
        parsed = _parse_lambda_at(lines, col, file, line, code)
        if parsed is not None:
            yield parsed
        col = first.find("lambda", col + 1)


def _parse_lambda_at(lines, col, file, line, code):
    """The lambda starting at ``col`` of the first line (its body may run over a
    few more lines), or None. Trailing text (``)``, ``, y``) is cut off until the
    rest parses, and the body must span every source position of ``code`` (a
    body cut short on its first line, ``lambda x: np.sum`` of ``lambda x:
    np.sum(\n x)``, also parses)."""
    span = _code_span(code)
    for n_lines in range(1, min(len(lines), 10) + 1):
        text = (lines[0][col:] + "".join(lines[1:n_lines])).rstrip()
        for end in range(len(text), 0, -1):
            try:
                expr = gast.parse("(" + text[:end] + ")", mode="eval").body
            except SyntaxError:
                continue
            if isinstance(expr, gast.Lambda):  # else a tuple, a call ...: cut more
                parsed = Parsed(expr, Source(file, line, tuple(lines), 0, col - 1))
                if span is None or _inside(span, parsed, lines, line):
                    return parsed
                break  # cut short: take more lines
    return None


def _code_span(code):
    """``((line, byte col), (end line, end byte col))`` around the source positions of
    ``code``'s instructions, or None when they are not known."""
    spans = [(l0, c0, l1, c1) for l0, l1, c0, c1 in getattr(code, "co_positions", list)()
             if None not in (l0, l1, c0, c1) and (l1, c1) > (l0, c0)]
    if not spans:
        return None
    return min((l0, c0) for l0, c0, _, _ in spans), max((l1, c1) for _, _, l1, c1 in spans)


def _inside(span, parsed, lines, line) -> bool:
    start, end = _body_span(parsed, lines, line)
    return start <= span[0] and span[1] <= end


def _spanning(found: list, code, lines) -> list:
    """The innermost of the lambdas ``found`` whose body contains every source
    position of ``code``'s instructions (all of ``found`` when positions are not
    known). Positions are (line, UTF-8 byte column), as ``co_positions`` gives them."""
    span = _code_span(code)
    if span is None:
        return found
    inside = []
    for parsed in found:
        start, end = _body_span(parsed, lines, code.co_firstlineno)
        if _inside(span, parsed, lines, code.co_firstlineno):
            inside.append((end[0] - start[0], end[1] - start[1], parsed))
    inside.sort(key=lambda t: t[:2])
    return [t[2] for t in inside[:1]]


def _body_span(parsed: Parsed, lines, line: int) -> tuple:
    """``((line, byte col), (end line, end byte col))`` of a parsed lambda's body in
    the file (the snippet's first line is ``(`` and the line from ``first_col + 1``)."""
    body = parsed.node.body
    lead = len(lines[0][:parsed.source.first_col + 1].encode()) - 1  # bytes before '('

    def real(lineno, col):
        return line + lineno - 1, col + lead if lineno == 1 else col
    return real(body.lineno, body.col_offset), real(body.end_lineno, body.end_col_offset)


def _lambda_params(node) -> list[str]:
    a = node.args
    return [n.id for n in a.posonlyargs + a.args + a.kwonlyargs]
