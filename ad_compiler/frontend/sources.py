"""The source a function was loaded from: never a file edited after the import.

:func:`file_lines` returns the lines of the file a function's code object came
from, checked against that code object: the top-level statement that contains
the function (else the whole text) is compiled once per text and must contain
a code object equal to the function's (same bytecode, constants, names and line
numbers; only the function's own name may have been changed since). Candidates, in order: the text
this module verified before for the same file (so once one function of a
module was compiled, its neighbours are read from the same text even if the
file changes later), ``linecache``'s entry as it was before this call, and the
file as it is now. When none matches, the file changed after the function was
loaded: a located error, never a compilation of the edited text.

Modules whose asserts pytest rewrote are compared after the same rewrite.
"""
from __future__ import annotations

import __future__
import ast
import inspect
import linecache
import threading
import types

from ..errors import SourceLoc, UnsupportedSyntaxError

_LOCK = threading.Lock()
_VERIFIED: dict[str, list] = {}          # file -> the lines verified last
_INDEX: dict[tuple, dict] = {}           # (file, text, ...) -> {line: [code ...]}
#: the code flags of ``from __future__`` imports (exec'd code may inherit them)
_FUTURE = 0
for _name in __future__.all_feature_names:
    _FUTURE |= getattr(__future__, _name).compiler_flag


def file_lines(fn) -> list[str]:
    """All lines of ``fn``'s file as it was loaded (see the module docstring)."""
    code = fn.__code__
    file = code.co_filename
    with _LOCK:
        # a pseudo-file (<doctest ...>, exec'd code) is only what linecache holds now
        candidates = [None if file.startswith("<") else _VERIFIED.get(file)]
        entry = linecache.cache.get(file)
        candidates.append(entry[2] if entry else None)
        linecache.checkcache(file)  # drops an entry whose file changed on disk
        candidates.append(linecache.getlines(file, getattr(fn, "__globals__", None)))
        seen = []
        for lines in candidates:
            if not lines or any(lines is s for s in seen):
                continue
            seen.append(lines)
            if _defines(lines, file, code, _rewritten_by_pytest(fn)):
                _VERIFIED[file] = lines
                return lines
    if not seen:
        raise UnsupportedSyntaxError(
            f"cannot read the source of {fn.__qualname__!r}: its file cannot be read",
            SourceLoc(file, code.co_firstlineno),
            hint="define the function in a .py file (source typed at an interactive "
                 "prompt or built with exec cannot be compiled)")
    lines = seen[-1]
    first = code.co_firstlineno
    text = lines[first - 1].rstrip("\n") if 0 < first <= len(lines) else ""
    raise UnsupportedSyntaxError(
        f"the source file of {fn.__qualname__!r} changed after it was loaded: the text "
        f"now on disk is not the code Python runs", SourceLoc(file, first, 0, text),
        hint="reload the module (importlib.reload) or restart Python to compile the new text")


def _rewritten_by_pytest(fn) -> bool:
    return "@py_builtins" in (getattr(fn, "__globals__", None) or {})


def _defines(lines, file: str, code, pytest_rewritten: bool) -> bool:
    """Whether ``lines``, compiled as a module, define ``code``: first the top-level
    statement around it alone (a big file is not compiled for each first use),
    then the whole text."""
    flags = code.co_flags & _FUTURE
    for text in (_top_level_block(lines, code.co_firstlineno), "".join(lines)):
        if text is None:
            continue
        key = (file, text, pytest_rewritten, flags)  # the text itself: no digest to trust
        index = _INDEX.get(key)
        if index is None:
            index = _INDEX[key] = _index(text, file, pytest_rewritten, flags)
            if len(_INDEX) > 512:  # texts of edited files are not needed for long
                del _INDEX[next(iter(_INDEX))]
        if any(_same(c, code) for c in index.get(code.co_firstlineno, ())):
            return True
    return False


def _top_level_block(lines, line: int) -> str | None:
    """The text of the file with only the top-level statement that contains
    ``line`` (with the decorators above it) and the top-level imports kept, every
    other line blank, or None when that statement cannot be told. (The
    imports matter: CPython compiles ``np.f()`` differently when ``np`` is an
    imported module.)"""
    start = line - 1
    while start > 0 and not _starts_statement(lines[start]):
        start -= 1
    while start > 0 and lines[start - 1].startswith("@"):
        start -= 1
    if not 0 <= start < len(lines) or not _starts_statement(lines[start]):
        return None
    try:
        block = block_at(lines, start)
    except (SyntaxError, IndentationError, ValueError):  # tokenize's errors
        return None
    kept = ["\n"] * len(lines)
    kept[start:start + len(block)] = block
    for i in _import_lines(lines):
        kept[i] = lines[i]
    return "".join(kept)


_BLOCKS: dict = {}  # (id(lines), start) -> (lines, the block): the last few looked up
_BLOCKS_LOCK = threading.Lock()


def block_at(lines: list, start: int) -> list:
    """``inspect.getblock(lines[start:])``: the lines of the statement that starts at
    index ``start`` (remembered: parsing a function reads the block its verification
    read)."""
    key = (id(lines), start)
    hit = _BLOCKS.get(key)
    if hit is None or hit[0] is not lines:
        hit = (lines, _indented_block(lines, start) or inspect.getblock(lines[start:]))
        with _BLOCKS_LOCK:
            if len(_BLOCKS) >= 64:
                del _BLOCKS[next(iter(_BLOCKS))]
            _BLOCKS[key] = hit
    return list(hit[1])


def _indented_block(lines: list, start: int) -> list | None:
    """What ``inspect.getblock`` finds, found without tokenizing (whose first use
    compiles a large regular expression): the lines up to the next code line indented
    no deeper than the statement's header (decorators skipped), without trailing
    blank and comment lines. A line indented that little inside the statement can only
    continue an open bracket, string or backslash, so the lines before it do not
    parse: then (and for tab indentation) None, and the caller tokenizes."""
    header = start
    while header < len(lines) and lines[header].lstrip().startswith("@"):
        header += 1
    if header >= len(lines):
        return None
    indent, body = _indent(lines[header]), None
    end = header + 1
    while end < len(lines):
        text = lines[end].strip()
        if text and not text.startswith("#"):
            if _indent(lines[end]) <= indent:
                break
            body = _indent(lines[end]) if body is None else body
        end += 1
    # trailing blank lines go, and comments unless indented like the body (as getblock)
    while end > header + 1 and not _code_or_body_comment(lines[end - 1], body):
        end -= 1
    block = lines[start:end]
    if any("\t" in line[:_indent(line)] for line in block):
        return None
    text = "".join(block) if not indent else "if 1:\n" + "".join(block)
    try:
        compile(text, "<block>", "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError):
        return None
    return block


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _code_or_body_comment(line: str, body: int | None) -> bool:
    text = line.strip()
    if not text.startswith("#"):
        return bool(text)
    return body is not None and _indent(line) >= body


def _import_lines(lines):
    """Indices of the lines of the top-level ``import``/``from`` statements."""
    depth = 0
    inside = False
    for i, text in enumerate(lines):
        if not inside and not text.startswith(("import ", "from ")):
            continue
        yield i
        depth += text.count("(") - text.count(")")
        inside = depth > 0 or text.rstrip().endswith("\\")


def _starts_statement(text: str) -> bool:
    return bool(text) and not text[0].isspace() and text[0] not in "#)]}'\""


def _same(candidate, code) -> bool:
    """Equal code objects, except for the name (a function renamed after loading)."""
    names = {"co_name": code.co_name}
    if hasattr(code, "co_qualname"):  # Python 3.11+
        names["co_qualname"] = code.co_qualname
    if any(getattr(candidate, k) != v for k, v in names.items()):
        candidate = candidate.replace(**names)
    return candidate == code


def _index(text: str, file: str, pytest_rewritten: bool, flags: int) -> dict:
    """The code objects ``text`` (all of ``file``, or a skeleton of it) compiles to,
    by first line."""
    try:
        tree = ast.parse(text, file)
        if pytest_rewritten:
            from _pytest.assertion.rewrite import rewrite_asserts
            rewrite_asserts(tree, text.encode(), file)
        top = compile(tree, file, "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError, ImportError):
        return {}
    index: dict = {}
    stack = [top]
    while stack:
        c = stack.pop()
        index.setdefault(c.co_firstlineno, []).append(c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return index
