"""The IR of a gradient compiled for arrays of another backend (ad_compiler/backends.py).

The generated code is the NumPy code, but for what would leave the backend: a cast
``np.asarray(x, dtype=...)`` converts a Dask array into a NumPy one (computing
it on the client), so a cast of an array becomes the array's own
``x.astype(dtype, copy=False)`` (the ``astype`` primitive, with ``cast``'s rules).
A cast of what the types call a Python number is ``rt.cast(x, dtype)``: a float has no
``.astype``, but the value may be the backend's 0-d array (``np.allclose`` of two Dask
arrays is a lazy one where NumPy gives a Python bool).
"""
from __future__ import annotations

from ..ir.core import Function


def for_backend(fn: Function) -> Function:
    """``fn`` with every cast of an array written as the array's ``astype``, and every
    cast of a Python number as ``rt.cast`` (in place)."""
    for op in fn.body.walk():
        if op.prim == "cast":
            op.prim = "backend_cast" if getattr(op.inputs[0].type, "weak", True) else "astype"
    return fn
