"""Short constants are written where they are used, not bound to a name.

A ``const`` op whose value has a short exact spelling gets no statement: its uses
read the spelling itself::

    dh = 0.5 * h                      # not: reshape = f64_0_5; dh = reshape * h
    y = x * np.float32(0.25)          # a float32 0-d constant keeps its type

The spelling must give every use exactly what the constant gives it:

* a Python ``int``, ``float`` or ``bool`` is its literal (``2``, ``0.5``, ``True``);
* a 0-d NumPy array of a real dtype is the NumPy scalar of that value
  (``np.float32(0.25)``, ``np.int64(3)``), as NumPy's ``repr`` spells it, and only
  where its uses cannot tell a scalar from a 0-d array: operands of a primitive's
  template (never its receiver ``c.T``, a subscript ``c[i]``, or an ``rt`` helper).
  A float64 one is written as a plain literal (``0.5``) when each use also has a
  float64 operand that is not a Python scalar, which decides the result's type alone;
* a use by a loop, a branch or an output keeps the name (those bind it).
"""
from __future__ import annotations

import re

import numpy as np

from ..ad import rules

#: the longest spelling written inline
MAX_LENGTH = 16


def plan(fn) -> dict[int, str]:
    """``{id(const value): source}`` for the constants written where they are used."""
    uses: dict[int, list] = {}
    _collect_uses(fn.body, uses)
    inline = {}
    for op in fn.body.walk():
        if op.prim != "const":
            continue
        v = op.result
        text = _spelling(op.params["value"], uses.get(id(v), [None]))
        if text is not None:
            inline[id(v)] = text
    return inline


def _collect_uses(block, uses: dict) -> None:
    for v in block.results:
        uses.setdefault(id(v), []).append(None)   # yielded: bound by name
    for op in block.ops:
        for k, v in enumerate(op.inputs):
            uses.setdefault(id(v), []).append(None if op.regions else (op, k))
        for region in op.regions:
            _collect_uses(region, uses)


def _spelling(value, uses: list) -> str | None:
    from .emit import literal
    if type(value) in (int, float, bool):
        text = literal(value)
        if text is None or len(text) > MAX_LENGTH or "math." in text:
            return None
        return f"({text})" if text.startswith("-") else text
    if not isinstance(value, np.ndarray) or value.ndim != 0 or value.dtype.kind not in "iuf":
        return None
    if not uses or not all(u is not None and _operand(*u) for u in uses):
        return None
    text = repr(value[()])        # np.float32(0.25)
    if len(text) > MAX_LENGTH + 12 or not re.fullmatch(r"np\.\w+\(-?[0-9.e+-]+\)", text):
        return None
    if value.dtype == np.float64 and all(_typed_by_another(*u) for u in uses):
        text = text[len("np.float64("):-1]
        return f"({text})" if text.startswith("-") else text
    return text


def _operand(op, k: int) -> bool:
    """Whether input ``k`` of ``op`` is only an operand of its template (a scalar and a
    0-d array of the same value give the same result there)."""
    prim = rules.PRIMITIVES.get(op.prim)
    template = prim.emit if prim is not None else None
    if not isinstance(template, str) or template.startswith("rt.") or "{%d}" % k not in template:
        return False
    return re.search(r"\{%d\}\s*[.\[]" % k, template) is None


def _typed_by_another(op, k: int) -> bool:
    """Whether another input of ``op`` is a float64 NumPy value (not a Python scalar),
    so that a Python float in place of input ``k`` changes neither type nor value."""
    return any(j != k and not getattr(v.type, "weak", True) and
               getattr(v.type, "dtype", None) == np.float64 for j, v in enumerate(op.inputs))
