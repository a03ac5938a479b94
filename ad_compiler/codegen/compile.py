"""Generated source -> a Python function whose tracebacks show the generated lines.

Invariants:

* The source compiled is exactly ``to_source(fn)``: nothing is added, so
  ``Compiled.source`` is what a traceback, ``inspect.getsource`` and pdb show.
* Each compilation has its own pseudo filename ``<ad_compiler:NAME:N>``; ``N``
  counts compilations in this process only so that two compilations of the same
  name keep separate ``linecache`` entries. The counter never reaches the source.
* Control flow nested deeper than Python compiles (through inlined calls) is a
  located :class:`~ad_compiler.errors.NestingTooDeepError`, never a SyntaxError.
* The ``linecache`` entry lives as long as the compiled function: compiling many
  short-lived functions does not grow the cache for ever.
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

_COUNTER = itertools.count(1)  # next() on a count is atomic under the GIL


class Compiled(Frozen, Equal):
    """A compiled function with the source it was compiled from."""

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
    _register(filename, source)
    exec(code, namespace)  # noqa: S102 - the source is generated from our own IR
    func = namespace[name]
    weakref.finalize(func, linecache.cache.pop, filename, None)
    return Compiled(func, source, filename)


def _generate(fn, filename: str, comments: bool, reuse_buffers: bool):
    source, namespace = run_stage("codegen", to_source, fn, comments=comments,
                                  reuse_buffers=reuse_buffers)
    return source, namespace, run_stage("compile()", compile, source, filename, "exec")


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
