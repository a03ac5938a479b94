"""Python's cyclic garbage collector is paused while the compiler runs.

Compilation builds an IR graph of many small objects that refer to each other (an
op and its result values), and every pass builds a new one. Each collection of the
older generations walks all of them while they are alive: with the collector on,
half of a large compilation's time went into collections that found nothing to free.
``gc_paused()`` disables the collector for the duration of a build or a code
generation and enables it again afterwards (the garbage a compilation leaves is
collected by the next ordinary collection). Pauses nest and may overlap across
threads: the collector comes back on when the last one ends, and only if it was on
when the first began (a program that disabled it keeps it disabled).
"""
from __future__ import annotations

import contextlib
import gc
import threading

_LOCK = threading.Lock()
_pauses = 0
_was_enabled = False


@contextlib.contextmanager
def gc_paused():
    """Run the ``with`` block with the cyclic garbage collector disabled."""
    global _pauses, _was_enabled
    with _LOCK:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _LOCK:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
