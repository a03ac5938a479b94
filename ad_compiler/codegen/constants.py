"""Constants are not bound to local names: their uses read them directly.

A ``const`` op gets no statement. A Python ``int``, ``float`` or ``bool`` with a short
literal is written where it is used; any other value (a NumPy array, 0-d included) is
read from the namespace dict under its entry name (``f64_0_5``, ``dh_value``)::

    dh = f64_0_5 * h                  # not: reshape = f64_0_5; dh = reshape * h
    for i in range(4):                # not: c = 4; for i in range(c):

A 0-d array is not written as a Python or NumPy scalar (``0.5``, ``np.float64(0.5)``):
NumPy takes about 0.2 µs longer per operation with a scalar operand than with a 0-d
array, which the gradients of small arrays would feel.
"""
from __future__ import annotations

#: the longest literal written inline
MAX_LENGTH = 16

#: a constant read from the namespace dict under its entry name
ENTRY = object()


def plan(fn) -> dict:
    """``{id(const value): literal source, or ENTRY}`` for every constant of ``fn``."""
    from .emit import literal
    out = {}
    for op in fn.body.walk():
        if op.prim != "const":
            continue
        value = op.params["value"]
        text = literal(value) if type(value) in (int, float, bool) else None
        if text is None or len(text) > MAX_LENGTH or "math." in text:
            out[id(op.result)] = ENTRY
        else:
            out[id(op.result)] = f"({text})" if text.startswith("-") else text
    return out
