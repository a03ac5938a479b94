"""Type-inference helpers shared by the primitive declarations.

``elementwise('add')`` infers broadcasting shape and NumPy's result dtype (weak
Python scalars included) by running the primitive on one-element samples, so
dtype promotion is exactly NumPy's without a table of our own.
"""
from __future__ import annotations

import numpy as np

from ..ad import rules
from ..ir.core import AType
from ..ir.dims import _param_key


def sample(t: AType):
    """A one-element value of type ``t`` (a Python number when weak)."""
    if t.weak:
        return t.python_type(1)
    return np.ones((), dtype=t.dtype)


def result_type(name: str, *types: AType, **params) -> tuple[np.dtype, bool]:
    """NumPy's result dtype (and weakness) of primitive ``name`` on ``types``: its
    implementation run on samples, once per dtypes, weaknesses and params (the
    samples depend on nothing else; shapes do not matter)."""
    try:
        key = (name, tuple((t.dtype, t.weak) for t in types),
               tuple((k, _param_key(v)) for k, v in params.items()))
        hit = _RESULT_TYPES.get(key)
    except TypeError:  # a param that is no static key
        return _run_on_samples(name, types, params)
    if hit is None:
        if len(_RESULT_TYPES) >= 10_000:
            _RESULT_TYPES.clear()
        hit = _RESULT_TYPES[key] = _run_on_samples(name, types, params)
    return hit


_RESULT_TYPES: dict = {}


def _run_on_samples(name: str, types, params) -> tuple[np.dtype, bool]:
    with np.errstate(all="ignore"):
        out = rules.get(name).impl(*(sample(t) for t in types), **params)
    t = AType.of(out)
    return t.dtype, t.weak


def elementwise(name: str):
    """Infer rule for a broadcasting elementwise primitive."""
    def infer(*types: AType, **params) -> AType:
        shape = np.broadcast_shapes(*(t.shape for t in types))
        dtype, weak = result_type(name, *types, **params)
        return AType(tuple(shape), dtype, weak and shape == ())
    return infer


def same_type(t: AType, *rest, **params) -> AType:
    """The output has the type of the first input."""
    return t


def as_float(t: AType) -> AType:
    """The first input's shape, a floating dtype (ints become float64)."""
    if t.dtype.kind in "fc":
        return t
    return AType(t.shape, np.dtype(np.float64), t.weak)


def normalize_axis(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple, negatives allowed) as a sorted tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    return tuple(sorted(set(out)))


def promote(*types: AType) -> AType:
    """A shape-``()`` type with NumPy's result dtype of ``types`` (weak numbers stay weak)."""
    dtype = np.result_type(*(sample(t) for t in types))
    return AType((), dtype, all(t.weak for t in types))


def view_shape(func, t: AType, **params) -> tuple[int, ...]:
    """The shape ``func`` (a view-making NumPy function) gives an array of type ``t``.

    Runs ``func`` on a zero-strided dummy of ``t``'s shape, so no memory is
    allocated however large the shape, and NumPy itself validates the params.
    """
    dummy = np.broadcast_to(np.empty((), dtype=bool), t.shape)
    return tuple(func(dummy, **params).shape)


def static_axis(axis):
    """``axis`` as a hashable, printable param: None, an int, or a tuple of ints."""
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        return int(axis)
    return tuple(int(a) for a in axis)


def stand_in(t: AType):
    """A value of type ``t``: a Python number when weak, else a zero-strided array."""
    if t.weak:
        return t.python_type(1)
    return np.broadcast_to(np.ones((), dtype=t.dtype), t.shape)


def run_infer(name: str):
    """Infer rule that runs primitive ``name`` on stand-ins of its input types."""
    def infer(*types: AType, **params) -> AType:
        with np.errstate(all="ignore"):
            out = rules.get(name).impl(*(stand_in(t) for t in types), **params)
        return AType.of(out)
    infer.__name__ = f"infer_{name}"
    infer.exact = True  # NumPy's own result type, Python numbers included
    return infer
