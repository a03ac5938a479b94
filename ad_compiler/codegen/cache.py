"""The cache of compiled gradients: one entry per (function, configuration, signature).

Entries are held weakly on the user's function (or, for a bound method, on its
instance), so compiling gradients of many short-lived lambdas or Cells does not
leak. A hit is two dict lookups. Compilation is thread-safe: concurrent first
calls with the same key compile once (double-checked under a lock). A build runs
on the deep stack (:func:`ad_compiler.depth.on_deep_stack`), where inlining a
1,000-deep chain of helper calls has room; the lock is taken there, so a build
that compiles another gradient (a gradient of a gradient) re-enters it.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

from ..depth import on_deep_stack

_LOCK = threading.RLock()
_BY_OWNER: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_UNWEAKABLE: dict[int, tuple[Any, dict]] = {}


def owner_of(fn) -> Any:
    """The object the cache hangs on: the instance of a bound method, else ``fn``."""
    return getattr(fn, "__self__", None) if _is_bound(fn) else fn


def _is_bound(fn) -> bool:
    return hasattr(fn, "__self__") and hasattr(fn, "__func__")


def table_for(fn) -> dict:
    """The dict of entries for ``fn`` (created on first use)."""
    owner = owner_of(fn)
    try:
        table = _BY_OWNER.get(owner)
        if table is None:
            with _LOCK:
                table = _BY_OWNER.setdefault(owner, {})
        return table
    except TypeError:  # not weak-referenceable: keep it alive with its table
        with _LOCK:
            hit = _UNWEAKABLE.setdefault(id(owner), (owner, {}))
        return hit[1]


def lookup_or_build(table: dict, key, build: Callable[[], Any]) -> Any:
    """``table[key]``, building it once under the lock on a miss."""
    entry = table.get(key)
    if entry is None:
        entry = on_deep_stack(_build_locked, table, key, build)
    return entry


def _build_locked(table: dict, key, build: Callable[[], Any]) -> Any:
    with _LOCK:
        entry = table.get(key)
        if entry is None:
            entry = build()
            table[key] = entry
    return entry


def clear() -> None:
    """Forget every compiled gradient (for tests and benchmarks of compile time)."""
    with _LOCK:
        _BY_OWNER.clear()
        _UNWEAKABLE.clear()
