"""Inputs of a gradient call: flattening, slots, and the abstract signature.

Every positional argument is a pytree (tuple, list, dict) of leaves. A leaf is
*dynamic* when it is an array-like the gradient can flow to: a Tensor (or
Parameter), an ndarray, a NumPy float or complex scalar, or a Python float or
complex. Everything else
(Python ints and bools, None, strings, objects) is *static*: a compile-time
constant, part of the cache key by value.

Arrays of another backend (Dask, CuPy: :mod:`ad_compiler.backends`) are dynamic
leaves too, kept as they are (never converted to NumPy: a Dask array stays lazy).

Some inputs are refused with a :class:`~ad_compiler.errors.GradTypeError` naming
the argument, what it is and what to pass instead (:func:`refusal`): arrays whose dtype is not a number (object, strings, dates),
``np.matrix``, masked arrays and other ndarray subclasses (their operators and
masks are not NumPy's), and iterators (a generator is used up by one call).

The signature key of a call lists, per leaf, its kind, dtype and shape, plus the
static values; it is all the compiler specialises on.
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..backends import backend_of, check_shape, is_backend_array
from ..errors import GradTypeError
from ..ir.core import AType, Value
from ..records import Equal, Frozen
from ..tensor import Tensor

TENSOR, ARRAY, NPSCALAR, PYFLOAT, PYCOMPLEX, VALUE = "T", "A", "S", "F", "C", "V"
#: an array of another backend than NumPy (a Dask or CuPy array: ad_compiler/backends.py)
BACKEND = "B"


class Static(Frozen, Equal):
    """A compile-time constant leaf in an argument spec."""
    value: object

    _fields = ("value",)

    def __init__(self, value):
        object.__setattr__(self, "value", value)


def leaf_kind(x) -> str | None:
    """The dynamic kind of ``x``, or None when ``x`` is static or a container."""
    t = type(x)
    if t is np.ndarray:
        return ARRAY
    if t is float:
        return PYFLOAT
    if t is complex:
        return PYCOMPLEX
    if isinstance(x, Tensor):
        return TENSOR
    if isinstance(x, np.generic) and x.dtype.kind in "fc":
        return NPSCALAR
    if isinstance(x, np.ndarray):
        return ARRAY
    if isinstance(x, Value):  # an IR value: the gradient is being inlined into compiled code
        return VALUE
    if backend_of(x) is not None:
        return BACKEND
    return None


def flatten(args) -> tuple[list, list, list]:
    """``(leaves, kinds, slots)``: dynamic leaves of ``args`` (as arrays/floats),
    their kinds, and per argument the (start, stop) range of its leaves."""
    leaves: list = []
    kinds: list = []
    slots = []
    for a in args:
        start = len(leaves)
        _collect(a, leaves, kinds)
        slots.append((start, len(leaves)))
    return leaves, kinds, slots


def _collect(x, leaves, kinds) -> None:
    kind = leaf_kind(x)
    if kind is not None:
        leaves.append(x.asnumpy() if kind == TENSOR else x)
        kinds.append(kind)
    elif type(x) in (tuple, list):
        for item in x:
            _collect(item, leaves, kinds)
    elif type(x) is dict:
        for k in x:
            _collect(x[k], leaves, kinds)


def signature(args) -> tuple:
    """The hashable abstract signature of ``args`` (see the module docstring)."""
    try:
        return tuple(_sig(a) for a in args)
    except _Refused:
        raise _locate(enumerate(args), " {}").error() from None


#: dtype kinds an array input may have: floating point and complex (differentiated,
#: docs/complex.md), and integers and bools (their gradients are cast, as MindSpore does)
_NUMERIC_KINDS = "fciub"
#: the native-order dtypes of those kinds: one set lookup accepts them
_NUMERIC_DTYPES = frozenset(np.dtype(c) for c in np.typecodes["All"]
                            if np.dtype(c).kind in _NUMERIC_KINDS)
#: constants that are never refused (checked first: an Iterator check costs more)
_PLAIN_STATICS = frozenset((int, bool, str, type(None)))


def _sig(x):
    kind = leaf_kind(x)
    if kind is not None:
        if kind in (PYFLOAT, PYCOMPLEX):
            return kind
        if kind == VALUE:
            return (VALUE, x.type)
        if kind == BACKEND:
            backend = backend_of(x)
            if np.dtype(x.dtype).kind not in _NUMERIC_KINDS:
                raise _Refused(x)
            return (BACKEND, backend.name, np.dtype(x.dtype), check_shape(x, backend))
        arr = x.asnumpy() if kind == TENSOR else x
        dtype = arr.dtype
        if (dtype not in _NUMERIC_DTYPES and dtype.kind not in _NUMERIC_KINDS
                or kind == ARRAY and type(x) is not np.ndarray):
            raise _Refused(x)
        return (kind, dtype, arr.shape)
    t = type(x)
    if t in (tuple, list):
        try:
            return (t, tuple(_sig(i) for i in x))
        except _Refused:
            raise _locate(enumerate(x), "[{}]") from None
    if t is dict:
        try:
            return (dict, tuple((k, _sig(v)) for k, v in x.items()))
        except _Refused:
            raise _locate(((repr(k), v) for k, v in x.items()), "[{}]") from None
    if t in (set, frozenset):
        return ("static", frozenset, frozenset(x))
    if t not in _PLAIN_STATICS and isinstance(x, Iterator):
        raise _Refused(x)
    try:
        hash(x)
    except TypeError:
        raise GradTypeError(
            f"a constant argument of type {t.__name__} cannot be used: compiled gradients are "
            "cached by the values of their constant arguments, and this one is unhashable",
            hint="pass a tuple, frozenset or number instead, or make the value an attribute "
                 "of the Cell") from None
    return ("static", t, x)


def _locate(items, key_format: str) -> "_Refused":
    """The refusal of the first refused entry of ``items`` ((key, value) pairs), with its
    key noted (run only on the error path, so signatures stay cheap)."""
    for key, value in items:
        try:
            _sig(value)
        except _Refused as r:
            r.path.insert(0, key_format.format(key))
            return r
    raise AssertionError("no refused entry")  # pragma: no cover


_ACCEPTED = ("accepted: floating-point and complex Tensors, ndarrays and scalars "
             "(differentiated), "
             "integer or bool arrays, Python constants, and tuples, lists and dicts of these")


class _Refused(Exception):
    """An input the compiler does not take; :meth:`error` says why, for the user."""

    def __init__(self, x):
        super().__init__()
        self.x = x
        self.path: list = []

    def error(self) -> GradTypeError:
        what, hint = refusal(self.x)
        return GradTypeError(f"argument{''.join(self.path)} is {what}; {_ACCEPTED}", hint=hint)


def refusal(x) -> tuple[str, str]:
    """``(what x is, what to pass instead)`` for an input the compiler refuses."""
    arr = x.asnumpy() if isinstance(x, Tensor) else x
    kind = getattr(getattr(arr, "dtype", None), "kind", None)
    noun = "a Tensor" if isinstance(x, Tensor) else "an ndarray"
    if isinstance(arr, np.matrix):
        return ("a numpy.matrix (its * is a matrix product, unlike an ndarray's)",
                "pass np.asarray(m) and write matrix products with @")
    if isinstance(arr, np.ma.MaskedArray):
        return ("a masked array (numpy.ma): the compiled gradient would ignore its mask",
                "pass m.filled(value) or np.ma.getdata(m), and apply the mask inside the "
                "function with np.where(mask, 0.0, x)")
    if kind is not None and kind not in _NUMERIC_KINDS:
        return (f"{noun} of dtype {arr.dtype}, which is not a numeric dtype",
                "convert it first, e.g. np.asarray(x, dtype=np.float64); pass text as a "
                "plain str argument")
    if isinstance(x, np.ndarray):
        return (f"a {type(x).__module__}.{type(x).__qualname__}, a subclass of numpy.ndarray",
                "pass np.asarray(x), a plain ndarray")
    return (f"a {type(x).__name__}, an iterator that one call would use up",
            "pass a tuple or a list, e.g. tuple(values)")


def spec_of(x):
    """The argument spec the frontend lifts with: ATypes for dynamic leaves."""
    kind = leaf_kind(x)
    if kind == VALUE:
        return x.type
    if kind == BACKEND:
        return AType(tuple(x.shape), np.dtype(x.dtype), False)
    if kind is not None:
        return AType.of(x.asnumpy() if kind == TENSOR else x)
    t = type(x)
    if t in (tuple, list):
        return t(spec_of(i) for i in x)
    if t is dict:
        return {k: spec_of(v) for k, v in x.items()}
    return x


def unflatten_like(x, it):
    """Rebuild the structure of ``x`` taking its dynamic leaves from iterator ``it``."""
    if leaf_kind(x) is not None:
        return next(it)
    t = type(x)
    if t in (tuple, list):
        return t(unflatten_like(i, it) for i in x)
    if t is dict:
        return {k: unflatten_like(v, it) for k, v in x.items()}
    return None


def to_input_type(g, kind: str):
    """A gradient converted to the type its input had (Tensor in, Tensor out ...)."""
    if kind == TENSOR:
        from ..tensor import wrap
        return wrap(np.asarray(g))
    if kind == PYFLOAT:
        return float(g)
    if kind == PYCOMPLEX:
        return complex(g)
    if kind == NPSCALAR:
        return np.asarray(g)[()]
    if type(g) is np.ndarray or kind == BACKEND or is_backend_array(g):
        return g  # a NumPy input's gradient computed from backend arrays stays lazy
    return np.asarray(g)
