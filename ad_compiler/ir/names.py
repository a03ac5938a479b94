"""Readable, unique, deterministic names for values.

>>> ns = Namespace()
>>> ns.fresh('x'), ns.fresh('x'), ns.fresh('sum'), ns.fresh(None), ns.fresh('1bad')
('x', 'x_1', 'sum_', 'v', 'v_1bad')
"""
from __future__ import annotations

import builtins
import keyword
import re

_RESERVED = set(keyword.kwlist) | set(dir(builtins)) | {"np", "math", "rt"}


def sanitize(hint: str | None) -> str:
    """A valid identifier derived from ``hint`` (``'v'`` when there is none)."""
    if not hint:
        return "v"
    name = re.sub(r"\W", "_", hint)
    if not name or name[0].isdigit():
        name = "v_" + name
    return name


class Namespace:
    """Hands out unique names; never a keyword, builtin, ``np``, ``math`` or ``rt``."""

    def __init__(self, taken=()):
        self._used: set[str] = set(taken)
        self._counts: dict[str, int] = {}

    def reserve(self, name: str) -> None:
        self._used.add(name)

    def fresh(self, hint: str | None) -> str:
        base = sanitize(hint)
        if base in _RESERVED:
            base += "_"
        name = base
        n = self._counts.get(base, 0)
        while name in self._used:
            n += 1
            name = f"{base}_{n}"
        self._counts[base] = n
        self._used.add(name)
        return name
