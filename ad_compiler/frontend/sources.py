"""The source a function was loaded from: never a file edited after the import.

:func:`file_lines` returns the lines of the file a function's code object came
from, checked against that code object: the whole text is compiled once (per
file and text) and must contain a code object equal to the function's (same
bytecode, constants, names and line numbers). Candidates, in order: the text
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
import linecache
import threading
import types

from ..errors import SourceLoc, UnsupportedSyntaxError

_LOCK = threading.Lock()
_VERIFIED: dict[str, list] = {}          # file -> the lines verified last
_INDEX: dict[tuple, dict] = {}           # (file, text, ...) -> {first line: [code ...]}
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
    """Whether ``lines``, compiled as a module, define ``code``."""
    text = "".join(lines)
    flags = code.co_flags & _FUTURE
    key = (file, text, pytest_rewritten, flags)
    index = _INDEX.get(key)
    if index is None:
        index = _INDEX[key] = _index(text, file, pytest_rewritten, flags)
        if len(_INDEX) > 256:  # texts of edited files are not needed for long
            del _INDEX[next(iter(_INDEX))]
    return any(_same(c, code) for c in index.get(code.co_firstlineno, ()))


def _same(candidate, code) -> bool:
    """Equal code objects, except for the name (a function renamed after loading)."""
    names = {"co_name": code.co_name}
    if hasattr(code, "co_qualname"):  # Python 3.11+
        names["co_qualname"] = code.co_qualname
    if any(getattr(candidate, k) != v for k, v in names.items()):
        candidate = candidate.replace(**names)
    return candidate == code


def _index(text: str, file: str, pytest_rewritten: bool, flags: int) -> dict:
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
