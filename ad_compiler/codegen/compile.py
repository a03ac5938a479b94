"""Generated source -> a Python function whose tracebacks show the generated lines.

Invariants:

* The source compiled is exactly ``to_source(fn)``: nothing is added, so
  ``Compiled.source`` is what a traceback, ``inspect.getsource`` and pdb show.
* Each compilation has its own pseudo filename ``<ad_compiler:NAME:N>``; ``N``
  counts compilations in this process only so that two compilations of the same
  name keep separate ``linecache`` entries. The counter never reaches the source.
* The ``linecache`` entry lives as long as the compiled function: compiling many
  short-lived functions does not grow the cache for ever.
"""
from __future__ import annotations

import itertools
import linecache
import weakref
from dataclasses import dataclass
from typing import Callable

from .emit import function_name, to_source

_COUNTER = itertools.count(1)  # next() on a count is atomic under the GIL


@dataclass(frozen=True)
class Compiled:
    """A compiled function with the source it was compiled from."""

    fn: Callable
    source: str
    filename: str


def compile_function(fn, comments: bool = True, reuse_buffers: bool = True) -> Compiled:
    """Generate, compile and load ``fn`` (an IR Function) as a Python function."""
    source, namespace = to_source(fn, comments=comments, reuse_buffers=reuse_buffers)
    name = function_name(fn)
    filename = f"<ad_compiler:{name}:{next(_COUNTER)}>"
    code = compile(source, filename, "exec")
    _register(filename, source)
    exec(code, namespace)  # noqa: S102 - the source is generated from our own IR
    func = namespace[name]
    weakref.finalize(func, linecache.cache.pop, filename, None)
    return Compiled(func, source, filename)


def _register(filename: str, source: str) -> None:
    # mtime None marks an entry with no file behind it: linecache.checkcache keeps it
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
