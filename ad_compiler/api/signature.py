"""Inputs of a gradient call: flattening, slots, and the abstract signature.

Every positional argument is a pytree (tuple, list, dict) of leaves. A leaf is
*dynamic* when it is an array-like the gradient can flow to: a Tensor (or
Parameter), an ndarray, a NumPy float scalar, or a Python float. Everything else
(Python ints and bools, None, strings, objects) is *static*: a compile-time
constant, part of the cache key by value.

The signature key of a call lists, per leaf, its kind, dtype and shape, plus the
static values; it is all the compiler specialises on.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import GradTypeError
from ..ir.core import AType, Value
from ..tensor import Tensor

TENSOR, ARRAY, NPSCALAR, PYFLOAT, VALUE = "T", "A", "S", "F", "V"


@dataclass(frozen=True)
class Static:
    """A compile-time constant leaf in an argument spec."""
    value: object


def leaf_kind(x) -> str | None:
    """The dynamic kind of ``x``, or None when ``x`` is static or a container."""
    t = type(x)
    if t is np.ndarray:
        return ARRAY
    if t is float:
        return PYFLOAT
    if isinstance(x, Tensor):
        return TENSOR
    if isinstance(x, np.generic) and x.dtype.kind in "fc":
        return NPSCALAR
    if isinstance(x, np.ndarray):
        return ARRAY
    if isinstance(x, Value):  # an IR value: the gradient is being inlined into compiled code
        return VALUE
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
    return tuple(_sig(a) for a in args)


def _sig(x):
    kind = leaf_kind(x)
    if kind is not None:
        if kind == PYFLOAT:
            return PYFLOAT
        if kind == VALUE:
            return (VALUE, x.type)
        arr = x.asnumpy() if kind == TENSOR else x
        return (kind, arr.dtype, arr.shape)
    t = type(x)
    if t in (tuple, list):
        return (t, tuple(_sig(i) for i in x))
    if t is dict:
        return (dict, tuple((k, _sig(v)) for k, v in x.items()))
    if t in (set, frozenset):
        return ("static", frozenset, frozenset(x))
    try:
        hash(x)
    except TypeError:
        raise GradTypeError(
            f"a constant argument of type {t.__name__} cannot be used: compiled gradients are "
            "cached by the values of their constant arguments, and this one is unhashable",
            hint="pass a tuple, frozenset or number instead, or make the value an attribute "
                 "of the Cell") from None
    return ("static", t, x)


def spec_of(x):
    """The argument spec the frontend lifts with: ATypes for dynamic leaves."""
    kind = leaf_kind(x)
    if kind == VALUE:
        return x.type
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
    if kind == NPSCALAR:
        return np.asarray(g)[()]
    return g if type(g) is np.ndarray else np.asarray(g)
