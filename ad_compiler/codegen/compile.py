"""Generated source -> a Python function whose tracebacks show the generated lines.

Invariants:

* ``Compiled.source`` is the module that runs as printed (codegen/module.py): the
  imports and constants the function reads, then ``to_source(fn)``. The function is
  compiled from its own text at the line it has in that module (the constants are
  the namespace's objects, not re-created from their text), and the module is what
  ``linecache`` holds, so a traceback, ``inspect.getsource`` and pdb show the
  generated lines with their line numbers in ``Compiled.source``.
* Each compilation has its own pseudo filename ``<ad_compiler:NAME:N>``; ``N``
  counts compilations in this process only so that two compilations of the same
  name keep separate ``linecache`` entries. The counter never reaches the source.
* Control flow nested deeper than Python compiles (through inlined calls) is a
  located :class:`~ad_compiler.errors.NestingTooDeepError`, never a SyntaxError.
* The ``linecache`` entry lives as long as the compiled function: compiling many
  short-lived functions does not grow the cache for ever.
* An exception raised inside a compiled function, passed to :func:`add_origin_notes`
  by the code that called it, gets a note per generated frame naming the generated
  line and the user's line it came from (the ``# file:line: text`` comment it stands
  under): ``f_grad line 6: sin = np.sin(y)  (from model.py:24: z = x * np.sin(y))``.
"""
from __future__ import annotations

import itertools
import linecache
import weakref
from typing import Callable

from ..depth import on_deep_stack, too_deep
from ..gc_pause import gc_paused
from ..records import Equal, Frozen
from ..stages import run_stage
from .emit import function_name, to_source
from .module import header_length, module_source

_COUNTER = itertools.count(1)  # next() on a count is atomic under the GIL
#: pseudo filename -> per line of its module, the user's line it came from (or None)
_ORIGINS: dict[str, list] = {}


class Compiled(Frozen, Equal):
    """A compiled function, the module that defines it (runs as printed) and its
    pseudo filename."""

    fn: Callable
    source: str
    filename: str

    _fields = ("fn", "source", "filename")

    def __init__(self, fn, source, filename):
        _set = object.__setattr__
        _set(self, "fn", fn)
        _set(self, "source", source)
        _set(self, "filename", filename)


def compile_function(fn, comments: bool = True, reuse_buffers: bool = True) -> Compiled:
    """Generate, compile and load ``fn`` (an IR Function) as a Python function."""
    name = function_name(fn)
    filename = f"<ad_compiler:{name}:{next(_COUNTER)}>"
    try:  # the writer and compile() recurse once per nested block: on the deep stack
        with gc_paused():
            source, namespace, code = on_deep_stack(_generate, fn, filename, comments,
                                                    reuse_buffers)
    except (RecursionError, SyntaxError) as exc:
        if isinstance(exc, SyntaxError) and "too many" not in str(exc.msg):
            raise
        raise _too_deep(fn) from None
    text = module_source(source, namespace)
    _register(filename, text)
    _ORIGINS[filename] = _origins(text)
    exec(code, namespace)  # noqa: S102 - the source is generated from our own IR
    func = namespace[name]
    weakref.finalize(func, _forget, filename)
    return Compiled(func, text, filename)


def _generate(fn, filename: str, comments: bool, reuse_buffers: bool):
    source, namespace = run_stage("codegen", to_source, fn, comments=comments,
                                  reuse_buffers=reuse_buffers)
    # blank lines for the module's header: the def's lines are its lines in the module
    text = "\n" * header_length(namespace) + source
    return source, namespace, run_stage("compile()", compile, text, filename, "exec")


def _too_deep(fn):
    """Python's limits on nested blocks (100 levels of indentation, 20 nested loops),
    reached by data-dependent if/for/while ops nested through inlined calls: the
    error points at the innermost one."""
    depth, loc, todo = 0, fn.loc, [(op, 1) for op in fn.body.ops]
    while todo:
        op, level = todo.pop()
        if op.regions and level > depth:
            depth, loc = level, op.loc or loc
        todo.extend((inner, level + 1) for r in op.regions for inner in r.ops)
    return too_deep(f"this if/for/while, inside {depth - 1} others through inlined calls,", loc,
                    hint="Python compiles at most 100 nested blocks and 20 nested loops: "
                         "nest fewer data-dependent if/for/while (np.where(cond, a, b) "
                         "needs no branch)")


def _register(filename: str, source: str) -> None:
    # mtime None marks an entry with no file behind it: linecache.checkcache keeps it
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


def _forget(filename: str) -> None:
    linecache.cache.pop(filename, None)
    _ORIGINS.pop(filename, None)


def _origins(text: str) -> list:
    """Per line of ``text`` (index 0: line 1), the ``file:line: source`` comment it
    stands under: the last one above it (codegen writes one where the user's line
    changes, in the order the statements run)."""
    out, where = [], None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("def "):
            where = None
        elif stripped.startswith("# "):
            where = stripped[2:]
        out.append(where)
    return out


def add_origin_notes(exc: BaseException) -> None:
    """Note on ``exc``, for each frame of a compiled function in its traceback, the
    generated line and the user's line it came from (once per frame)."""
    tb = exc.__traceback__
    notes = getattr(exc, "__notes__", [])
    while tb is not None:
        code, line = tb.tb_frame.f_code, tb.tb_lineno
        origins = _ORIGINS.get(code.co_filename)
        if origins is not None and 0 < line <= len(origins):
            text = linecache.getline(code.co_filename, line).strip()
            where = origins[line - 1]
            note = f"{code.co_name} line {line}: {text}" + (f"  (from {where})" if where else "")
            if note not in notes:
                exc.add_note(note)
        tb = tb.tb_next
