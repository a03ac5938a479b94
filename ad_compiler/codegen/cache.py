"""The cache of compiled gradients: one entry per (function, configuration, signature).

Entries are held weakly on the user's function (or, for a bound method, on its
instance), so compiling gradients of many short-lived lambdas or Cells does not
leak; an entry never holds its owner (captured state is read from the owner
passed at call time, see api/state.py). An owner that cannot be weakly
referenced (an object with ``__slots__``) gets no shared table: the gradient
function keeps its entries itself, so they (and their generated code and
``linecache`` entries) die with it. A hit is two dict lookups. Compilation is
thread-safe: concurrent first calls with the same key compile once
(double-checked under a lock). A build runs on the deep stack
(:func:`ad_compiler.depth.on_deep_stack`), where inlining a 1,000-deep chain of
helper calls has room; the lock is taken there, so a build that compiles another
gradient (a gradient of a gradient) re-enters it.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

from ..depth import on_deep_stack
from ..gc_pause import gc_paused

_LOCK = threading.RLock()
_BY_OWNER: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()


def owner_of(fn) -> Any:
    """The object the cache hangs on: the instance of a bound method, else ``fn``."""
    return getattr(fn, "__self__", None) if _is_bound(fn) else fn


def _is_bound(fn) -> bool:
    return hasattr(fn, "__self__") and hasattr(fn, "__func__")


def table_for(fn) -> dict | None:
    """The shared dict of entries for ``fn`` (created on first use), or None when its
    owner cannot be weakly referenced (the caller then keeps its entries itself)."""
    owner = owner_of(fn)
    try:
        table = _BY_OWNER.get(owner)
        if table is None:
            with _LOCK:
                table = _BY_OWNER.setdefault(owner, {})
        return table
    except TypeError:  # not weak-referenceable
        return None


def lookup_or_build(table: dict, key, build: Callable[[], Any], stale: Any = None) -> Any:
    """``table[key]``, building it once under the lock on a miss (or when it is the
    ``stale`` entry, which the caller found out of date)."""
    entry = table.get(key)
    if entry is None or entry is stale:
        entry = on_deep_stack(_build_locked, table, key, build, stale)
    return entry


def _build_locked(table: dict, key, build: Callable[[], Any], stale: Any) -> Any:
    with _LOCK:
        entry = table.get(key)
        if entry is None or entry is stale:
            with gc_paused():
                entry = build()
            table[key] = entry
    return entry


def clear() -> None:
    """Forget every compiled gradient (for tests and benchmarks of compile time)."""
    with _LOCK:
        _BY_OWNER.clear()
