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
"""
from __future__ import annotations

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
        return p.infer(*types, **params)
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


def shaped_like(v, like) -> bool:
    """Whether ``v`` surely has ``like``'s run-time shape: ``like`` itself, or made
    by a ``LIKE`` primitive from ``like``."""
    if v is like:
        return True
    op = getattr(v, "producer", None)
    return op is not None and op.prim in LIKE and op.inputs[1] is like
