"""Dimensions known only at run time.

A boolean mask computed in the function selects a number of elements that
depends on the data (``x[x > 0]``, ``np.nonzero(m)``). Such a dimension is
``None`` in an :class:`~ad_compiler.ir.core.AType`'s shape (printed ``?``):
``f64[?]``, ``f32[?,3]``. The generated code is NumPy, so the length is simply
whatever NumPy computes; what the compiler must never do is *decide* something
from it. The rules:

* ``None`` carries no identity: two ``?`` may differ at run time (and one may be
  1, which NumPy broadcasts). A decision that needs two lengths to agree is made
  at run time (``sum_to``, ``broadcast_like``, ``reshape_like``: ops/dynamic.py)
  or refused;
* a primitive accepts inputs with ``?`` only when its declaration says so
  (``Primitive.dynamic``): ``True`` runs its ``infer`` rule on two large
  *probe* lengths in place of every ``?`` and marks the output dimensions that
  differ between the two runs as ``?`` (so ``(?, 3) @ (3, 2)`` is ``(?, 2)``, a
  sum over the ``?`` axis drops it, a reshape to ``-1`` is ``?``); ``"native"``
  means its ``infer`` handles ``None`` itself (the indexing primitives, whose
  slices clamp). Any other primitive meeting a ``?`` is a located
  :class:`~ad_compiler.errors.UnsupportedOperationError`, as is a rule that
  fails on a probe (a ``?`` meeting a fixed length other than 1);
* passes and codegen treat equal types with a ``?`` as *not* known to be the
  same shape (no buffer reuse, no dropping of a broadcasting operand).

:func:`infer` remembers the types it inferred for static shapes: a rule is a pure
function of its input types and params, and the passes rebuild every op several
times, so most inferences are repeats (params of other kinds than numbers,
strings, dtypes, slices and tuples of them are inferred every time).
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedOperationError
from .core import AType, ListType

#: the lengths a ``?`` stands for while a rule infers a type: large primes, so that
#: no static length, product or clamp meets them by chance
PROBES = (1_000_003, 1_000_033)

HINT = ("keep the shape static: np.where(mask, x, 0.0) instead of x[mask], or "
        "np.sum(np.where(mask, x, 0.0)) for a masked sum")


def is_dynamic(t) -> bool:
    return isinstance(t, (AType, ListType)) and t.dynamic


def probe(t, n: int):
    """``t`` with every ``?`` replaced by the length ``n``."""
    if isinstance(t, ListType):
        return ListType(probe(t.elem, n))
    if isinstance(t, AType) and t.dynamic:
        return AType(tuple(n if d is None else d for d in t.shape), t.dtype, t.weak)
    return t


def unprobe(a, b):
    """The type of two inferences on different probes: dimensions that differ are ``?``."""
    if isinstance(a, ListType):
        return ListType(unprobe(a.elem, b.elem))
    if not isinstance(a, AType) or a.shape == b.shape:
        return a
    if len(a.shape) != len(b.shape):
        raise ValueError("the number of dimensions depends on a data-dependent length")
    return AType(tuple(d if d == e else None for d, e in zip(a.shape, b.shape)), a.dtype,
                 a.weak)


def refused(prim: str, types, loc=None, why: str = "") -> UnsupportedOperationError:
    shown = ", ".join(str(t) for t in types)
    return UnsupportedOperationError(
        f"{prim} of {shown}: a length that depends on the data ('?', from a boolean mask "
        f"or np.nonzero) {why or 'needs a static shape here'}", loc, hint=HINT)


def infer(p, types, params, loc=None):
    """The result type of primitive ``p`` on ``types`` (see the module docstring)."""
    if not any(is_dynamic(t) for t in types):
        return _static_infer(p, types, params)
    if not p.dynamic:
        raise refused(p.name, types, loc)
    if p.dynamic == "native":
        return p.infer(*types, **params)
    try:
        a, b = (p.infer(*[probe(t, n) for t in types], **params) for n in PROBES)
        return unprobe(a, b)
    except (ValueError, IndexError, TypeError):
        raise refused(p.name, types, loc, "cannot meet a fixed length other than 1 "
                      "here (NumPy would accept it only when the lengths happen to agree)"
                      ) from None


_INFERRED: dict = {}
_MAX_INFERRED = 100_000
_SCALARS = (int, float, complex, str, bool, type(None), np.dtype, np.generic)


def _static_infer(p, types, params):
    try:
        key = (p.infer, tuple(types), tuple((k, _param_key(v)) for k, v in params.items()))
        hit = _INFERRED.get(key)
    except TypeError:  # a param that is not a static key (an array)
        return p.infer(*types, **params)
    if hit is None:
        hit = p.infer(*types, **params)
        if len(_INFERRED) >= _MAX_INFERRED:
            _INFERRED.clear()
        _INFERRED[key] = hit
    return hit


def _param_key(v):
    """``v`` as a key that tells apart what ``==`` does not (``1``, ``1.0``, ``True``)."""
    if isinstance(v, _SCALARS):
        return type(v), v
    if type(v) is tuple:
        return (tuple, *(_param_key(x) for x in v))
    if type(v) is slice:
        return slice, _param_key(v.start), _param_key(v.stop), _param_key(v.step)
    raise TypeError(f"no static key for {type(v).__name__}")


def same_shape(a, b) -> bool:
    """Whether two types surely have the same shape at run time."""
    return a.shape == b.shape and not (is_dynamic(a) or is_dynamic(b))


def fit_needs_run_time(t: AType, target: AType) -> bool:
    """Whether un-broadcasting ``t`` to ``target`` needs the run-time lengths: a
    ``?`` in ``target`` (it may be 1), or a ``?`` in ``t`` over a fixed length."""
    if target.dynamic:
        return True
    lead = t.ndim - target.ndim
    return any(c is None and d != 1 for c, d in zip(t.shape[max(lead, 0):], target.shape))


def static_or_minus_one(shape) -> tuple | None:
    """``shape`` as a reshape param: one ``?`` becomes -1; None if there are more."""
    n = sum(d is None for d in shape)
    if n > 1:
        return None
    return tuple(-1 if d is None else d for d in shape)


#: primitives whose result has the run-time shape of their input 1
LIKE = ("sum_to", "broadcast_like", "reshape_like")

_MAX_DEPTH = 64


def shape_key(v, depth: int = 0):
    """A key equal for values that surely have the same run-time shape (of a dynamic
    type), found through the ops that keep a shape: a ``LIKE`` primitive has its
    input 1's; a read through the same dynamic index inputs (a mask) of arrays of one
    fixed shape has one key; an elementwise op whose dynamic inputs all have one key,
    and whose result has their number of dimensions and fixed lengths, has that key
    (its other inputs could only broadcast into it: a fixed length other than 1
    meeting a '?' is refused when the op is built). Anything else is its own."""
    op = getattr(v, "producer", None)
    if op is None or depth > _MAX_DEPTH:
        return id(v)
    if op.prim in LIKE and not op.params.get("keep") and not op.params.get("skip"):
        return shape_key(op.inputs[1], depth + 1)
    if op.prim in ("getitem", "gather") and not op.inputs[0].type.dynamic:
        x, *dyn = op.inputs
        return ("read", x.type.shape, repr(op.params["index"]),
                tuple(value_key(d, depth + 1) for d in dyn))
    from ..ad import rules
    if op.prim not in rules.PRIMITIVES or rules.get(op.prim).family != "elementwise":
        return id(v)
    dyn = [i for i in op.inputs if is_dynamic(i.type)]
    keys = {shape_key(i, depth + 1) for i in dyn}
    if len(keys) != 1 or any(i.type.shape != v.type.shape for i in dyn):
        return id(v)
    return keys.pop()


def value_key(v, depth: int = 0):
    """A key equal for values that surely are equal: the same value, or the same
    primitive with the same params on inputs with equal keys (ops are pure), so the
    masks of two ``x > 0`` written twice have one key."""
    op = getattr(v, "producer", None)
    if op is None or depth > _MAX_DEPTH or op.regions or len(op.results) != 1:
        return id(v)
    if op.prim == "const":
        value = op.params["value"]
        if isinstance(value, (np.ndarray, np.generic)):  # exact: the bytes, not a repr
            return ("const", value.dtype.str, value.shape, value.tobytes()) \
                if value.size <= 16 else id(v)
        return ("const", type(value).__name__, repr(value))
    return (op.prim, repr(sorted(op.params.items())),
            tuple(value_key(i, depth + 1) for i in op.inputs))


def shaped_like(v, like) -> bool:
    """Whether ``v`` surely has ``like``'s run-time shape (ir/dims.py)."""
    if v is like:
        return True
    if not hasattr(v, "producer") or not hasattr(like, "producer"):
        return False
    return v.type.shape == like.type.shape and shape_key(v) == shape_key(like)
