"""Helpers for building small IR functions by hand, in tests and when adding a primitive.

>>> b, (x,) = new_function(("x", arr(3)))
>>> print(finish(b, b.sin(x)).outputs[0].type)
f64[3]
"""
from __future__ import annotations

import numpy as np

from .ir.builder import Builder
from .ir.core import AType, Function, Value
from .ir.verifier import verify


def arr(*shape, dtype="float64") -> AType:
    """The type of an array of ``shape`` and ``dtype``."""
    return AType(tuple(shape), np.dtype(dtype))


def new_function(*args):
    """A Builder whose block has one argument per ``(hint, AType)`` pair, and the arguments."""
    b = Builder()
    values = [Value(t, hint) for hint, t in args]
    b.block.args.extend(values)
    return b, values


def finish(b, *outputs, name="f") -> Function:
    """The verified Function of ``b``'s block, returning ``outputs``."""
    b.block.results.extend(outputs)
    return verify(Function(name, b.block))
