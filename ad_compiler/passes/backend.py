"""The IR of a gradient compiled for arrays of another backend (ad_compiler/backends.py).

The generated code is the NumPy code, but for what would leave the backend: a cast
``np.asarray(x, dtype=...)`` converts a Dask array into a NumPy one (computing
it on the client), so a cast of an array becomes the array's own
``x.astype(dtype, copy=False)`` (the ``astype`` primitive, with ``cast``'s rules).
A cast of a Python number stays ``np.asarray``: a float has no ``.astype``.
"""
from __future__ import annotations

from ..ir.core import Function


def for_backend(fn: Function) -> Function:
    """``fn`` with every cast of an array written as the array's ``astype`` (in place)."""
    for op in fn.body.walk():
        if op.prim == "cast" and not getattr(op.inputs[0].type, "weak", True):
            op.prim = "astype"
    return fn
