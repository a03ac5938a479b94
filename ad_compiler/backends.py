"""Array backends: the array types a compiled gradient takes besides NumPy's.

NumPy is the default. Dask and CuPy arrays implement NumPy's API through its
dispatch protocols (``__array_ufunc__``, NEP 13, and ``__array_function__``,
NEP 18), so the generated source runs on them unchanged: ``np.tanh(x)``,
``np.sum(x, axis=0)`` and ``x @ w`` on a Dask array each return a lazy Dask
array. A backend declares what does *not* pass through that way:

* **buffer reuse**: NumPy's ``out=`` writes into a buffer of the caller's type; a
  Dask array has no buffer to write into (and a NumPy buffer would receive a
  computed Dask result), so a backend compiles without reuse;
* **seeds**: the output's cotangent ``1.0`` is a NumPy constant in NumPy code;
  everything derived from it alone (a broadcast of it to an input's shape) would be
  a full-size NumPy array built on the client. For a backend the seed is an
  argument made by the backend (a lazy 0-d array of ones), so what derives from it
  is lazy too;
* **copies and scatters** (runtime.py): ``np.array(x, copy=True)`` and
  ``np.add.at`` are NumPy's own; a backend array is copied with ``x.copy()`` and a
  scatter-add is done with item assignments of unique positions
  (:func:`ad_compiler.runtime.scatter_add`).

A backend is recognised by the top-level module of an array's type (``dask``,
``cupy``), so checking an argument imports nothing. Its name is part of the cache
key (the signature holds it), and it is named in the signature's type text.

Arrays whose shape is unknown (a Dask array with NaN chunk sizes, after boolean
indexing) are refused: the compiler specialises on shapes.
"""
from __future__ import annotations

import math
import os
import re
import warnings

import numpy as np

from .errors import GradRuntimeError, GradTypeError, SourceLoc
from .records import Equal, Frozen


class Backend(Frozen, Equal):
    """An array library whose arrays the generated code takes (see the module docstring)."""
    name: str           # what messages and signatures call it
    module: str         # the top-level module of its array type
    creation: str       # the module that creates its arrays (``dask.array``, ``cupy``)
    #: the warning the backend gives before it computes its arrays into NumPy ones to
    #: call a NumPy function it does not implement (a regular expression of its message)
    fallback_warning: str | None

    _fields = ("name", "module", "creation", "fallback_warning")

    def __init__(self, name, module, creation, fallback_warning=None):
        _set = object.__setattr__
        _set(self, "name", name)
        _set(self, "module", module)
        _set(self, "creation", creation)
        _set(self, "fallback_warning", fallback_warning)

    def namespace(self):
        """The backend's array module (imported on first use)."""
        import importlib
        return importlib.import_module(self.creation)

    def ones(self, shape, dtype):
        """A seed: ones of ``shape`` and ``dtype``, made by the backend (lazily for Dask)."""
        return self.namespace().ones(shape, dtype=dtype)

    def __repr__(self) -> str:
        return f"<array backend {self.name}>"


#: top-level module of an array type -> its backend
BACKENDS: dict[str, Backend] = {
    "dask": Backend("dask", "dask", "dask.array",
                    fallback_warning=r"The `\S+` function is not implemented by Dask array"),
    "cupy": Backend("cupy", "cupy", "cupy"),
}


def backend_of(x) -> Backend | None:
    """The backend of array ``x``, or None when ``x`` is not a backend array (a NumPy
    array, a number, anything else)."""
    t = type(x)
    if t is np.ndarray:
        return None
    return BACKENDS.get(t.__module__.partition(".")[0])


def is_backend_array(x) -> bool:
    """``x`` is an array of a backend other than NumPy."""
    return backend_of(x) is not None


def check_shape(x, backend: Backend) -> tuple:
    """The shape of backend array ``x``; a :class:`GradTypeError` when it is not known."""
    shape = tuple(x.shape)
    if any(not isinstance(d, int) and (d is None or math.isnan(d)) for d in shape):
        raise GradTypeError(
            f"a {backend.name} array of unknown shape {shape} cannot be differentiated: the "
            "compiled gradient is specialised on its inputs' shapes",
            hint="compute the chunk sizes first (x.compute_chunk_sizes() for Dask), or "
                 "select with np.where(mask, x, 0.0) instead of x[mask]")
    return shape


def backend_of_values(values) -> Backend | None:
    """The one backend of the arrays among ``values`` (None when all are NumPy's); two
    different backends in one call are a :class:`GradTypeError`."""
    found = None
    for v in values:
        b = backend_of(v)
        if b is not None and found is not None and b is not found:
            raise GradTypeError(
                f"the inputs mix {found.name} and {b.name} arrays; one call takes arrays of "
                "one backend", hint="convert them to one array type before the call")
        found = b or found
    return found


def refuse_in(args, transform: str) -> None:
    """A :class:`GradTypeError` when ``args`` (nested in tuples, lists, dicts) hold a
    backend array: ``transform`` builds its result from NumPy arrays (Jacobian rows,
    tangents), which would compute a lazy array on the client."""
    found = _first_backend_array(args)
    if found is not None:
        raise GradTypeError(
            f"{transform} does not take {backend_of(found).name} arrays: it assembles its "
            "result as NumPy arrays, which would compute them",
            hint="use grad, value_and_grad, GradOperation or vjp, which keep them lazy, or "
                 "pass NumPy arrays (x.compute() for Dask)")


def numpy_only(what: str, *arrays) -> None:
    """A ``TypeError`` when one of ``arrays`` is a backend array: ``what`` (a run-time
    helper of the generated code) is written with NumPy's own operations (item
    assignment in place, ``np.copyto``, a sort), which would compute a lazy array on
    the client. :func:`run_compiled` reports it at the user's line."""
    for x in arrays:
        backend = backend_of(x)
        if backend is not None:
            raise TypeError(f"{what}: written with NumPy's own operations, which would "
                            f"compute the {backend.name} array on the client")


def _first_backend_array(x):
    if backend_of(x) is not None:
        return x
    if type(x) in (tuple, list):
        items = x
    elif type(x) is dict:
        items = x.values()
    else:
        return None
    for item in items:
        found = _first_backend_array(item)
        if found is not None:
            return found
    return None


def run_compiled(entry, *args):
    """Call ``entry``'s generated function on backend arrays. What the backend cannot do
    (Dask has no n-d fancy indexing, no ``np.take_along_axis``) is a
    :class:`GradRuntimeError` at the user's line the failing generated line came from,
    never a traceback from inside the generated code. So is a NumPy function the
    backend does not implement (Dask's ``np.sort``, ``np.linalg.det``): the backend
    would compute its arrays on the client to call NumPy's; it warns first, and that
    warning is an error here."""
    compiled, backend = entry.compiled, entry.backend
    try:
        with warnings.catch_warnings():
            if backend.fallback_warning is not None:   # it would compute: refused
                warnings.filterwarnings("error", message=backend.fallback_warning)
            return compiled.fn(*args)
    except Exception as exc:  # noqa: BLE001 - re-raised as a located error, chained
        loc = _user_line(exc, compiled, entry.ir.loc)
        raise GradRuntimeError(
            f"the {entry.backend.name} backend cannot run this line (in the generated "
            f"gradient): {type(exc).__name__}: {exc}", loc,
            hint=f"write it with operations {entry.backend.name} supports (as the same "
                 "line would need when run in plain Python on these arrays), or pass NumPy "
                 "arrays") from exc


_COMMENT = re.compile(r"^\s*# (?P<file>.+?):(?P<line>\d+): (?P<text>.*)$")


def _user_line(exc, compiled, fn_loc) -> SourceLoc | None:
    """The user line of the innermost frame of ``exc`` in ``compiled``'s source: the
    ``# file:line: text`` comment codegen writes above each user line's statements."""
    tb, lineno = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == compiled.filename:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    if lineno is None:
        return None
    lines = compiled.source.splitlines()
    for text in reversed(lines[:lineno]):
        m = _COMMENT.match(text)
        if m:
            file = m["file"]
            if fn_loc is not None and os.path.basename(fn_loc.file) == file:
                file = fn_loc.file
            return SourceLoc(file, int(m["line"]), 0, m["text"])
    return None
