"""Functions with no derivative: tests, logical combinations, orderings and counts.

Their results are bools or integers (``np.isnan``, ``np.argsort``,
``np.searchsorted`` ...): usable as masks, indices and branch conditions, and
constants for differentiation (``nondiff=True``: no gradient flows through them,
as none would through a step function).

Invariants:

* every result type is NumPy's own: :func:`run_infer` runs the primitive on a
  stand-in of each input's type (a Python number for a weak one), so shapes,
  dtypes and Python-vs-NumPy results (``np.allclose`` gives a Python bool,
  ``np.count_nonzero`` without an axis a Python int) follow NumPy exactly;
* params are static (``axis``, ``side``, ``rtol`` ...), canonical where a
  lowering can make them so;
* functions whose result length depends on the data (``np.nonzero``,
  ``np.unique`` of a run-time array) are refused with a located error.
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ex, lowering, method, primitive, refuse
from ..errors import UnsupportedOperationError
from ..ir.core import AType
from ._batch import all_of_close, along, batch_searchsorted, broadcasting, reducing
from ._infer import elementwise, normalize_axis, run_infer
from .indexing import lower_take

F = "predicates"


def _declare(name, emit, infer=None, examples=(), aliases=(), batch=None):
    return primitive(name, emit=emit, infer=infer or run_infer(name), nondiff=True, family=F,
                     examples=examples, aliases=aliases, batch=batch or broadcasting(name))


# -- elementwise tests and logical combinations ------------------------------------------

_FLOATS = [ex(np.array([0.5, np.nan, np.inf, -np.inf])), ex((2, 3)), ex(float)]
for _name in ("isnan", "isfinite", "isinf"):
    _declare(_name, f"np.{_name}({{0}})", elementwise(_name), _FLOATS,
             aliases=(getattr(np, _name),))

# logical_and/or/xor/not, bitwise_and/or/xor and invert (masks combined) are declared
# with the elementwise primitives (ops/elementwise.py)

_CLOSE = [ex(np.array([1.0, 2.0, np.nan]), np.array([1.0 + 1e-9, 2.1, np.nan]),
             rtol=1e-05, atol=1e-08, equal_nan=False),
          ex((2, 3), (3,), rtol=0.1, atol=0.0, equal_nan=True),
          ex(float, (2,), rtol=1e-05, atol=1e-08, equal_nan=False)]
_declare("isclose", "np.isclose({0}, {1}, rtol={rtol}, atol={atol}, equal_nan={equal_nan})",
         examples=_CLOSE)
_declare("allclose", "np.allclose({0}, {1}, rtol={rtol}, atol={atol}, equal_nan={equal_nan})",
         examples=_CLOSE, batch=all_of_close("allclose"))
_declare("array_equal", "np.array_equal({0}, {1}, equal_nan={equal_nan})",
         examples=[ex(np.array([1.0, 2.0]), np.array([1.0, 2.0]), equal_nan=False),
                   ex((2, 3), (3,), equal_nan=False), ex((2,), (2,), equal_nan=True)],
         batch=all_of_close("array_equal", rtol=0.0, atol=0.0))


def _close_lowering(name):
    def lower(b, a, b_, rtol=1e-05, atol=1e-08, equal_nan=False):
        return b.emit(name, b.const(a), b.const(b_), rtol=float(rtol), atol=float(atol),
                      equal_nan=bool(equal_nan))
    lower.__name__ = f"lower_{name}"
    return lower


lowering(np.isclose)(_close_lowering("isclose"))
lowering(np.allclose)(_close_lowering("allclose"))


@lowering(np.array_equal)
def lower_array_equal(b, a1, a2, equal_nan=False):
    return b.emit("array_equal", b.const(a1), b.const(a2), equal_nan=bool(equal_nan))


# -- orderings and counts ------------------------------------------------------------------

_declare("argpartition", "np.argpartition({0}, {kth}, axis={axis})",
         examples=[ex((5,), kth=2, axis=-1), ex((3, 4), kth=(0, 3), axis=1),
                   ex((2, 3), kth=1, axis=0)], batch=along("argpartition"))
_declare("searchsorted", "np.searchsorted({0}, {1}, side={side})",
         examples=[ex(np.array([0.0, 1.0, 2.0]), (4,), side="left"),
                   ex(np.array([0.0, 1.0, 1.0]), np.array([1.0, 5.0]), side="right"),
                   ex(np.array([0.0, 1.0]), float, side="left")], batch=batch_searchsorted)
_declare("count_nonzero", "np.count_nonzero({0}, axis={axis}, keepdims={keepdims})",
         examples=[ex(np.array([0.0, 1.0, 2.0]), axis=None, keepdims=False),
                   ex((2, 3), axis=1, keepdims=False), ex((2, 3), axis=(0, 1), keepdims=True)],
         batch=reducing("count_nonzero"))


def _axis_or_none(axis, ndim):
    if axis is None:
        return None
    (ax,) = normalize_axis(axis, ndim)
    return ax


def _static_kth(kth):
    if isinstance(kth, (int, np.integer)):
        return int(kth)
    try:
        return tuple(int(k) for k in kth)
    except TypeError:
        raise UnsupportedOperationError(
            f"kth must be known when compiling, got {kth!r}",
            hint="pass an int or a tuple of ints computed from shapes or constants") from None


@lowering(np.argpartition)
@method("argpartition")
def lower_argpartition(b, a, kth, axis=-1, kind="introselect", order=None):
    if order is not None:
        raise UnsupportedOperationError("np.argpartition(..., order=) is not supported")
    x = b.const(a)
    return b.emit("argpartition", x, kth=_static_kth(kth),
                  axis=_axis_or_none(axis, max(b.type_of(x).ndim, 1)))


@lowering(np.searchsorted)
@method("searchsorted")
def lower_searchsorted(b, a, v, side="left", sorter=None):
    """``np.searchsorted(a, v)``: where ``v`` would go in the sorted ``a``."""
    a = b.const(a)
    if sorter is not None:
        a = lower_take(b, a, sorter)
    return b.emit("searchsorted", a, b.const(v), side=str(side))


@lowering(np.count_nonzero)
def lower_count_nonzero(b, a, axis=None, *, keepdims=False):
    x = b.const(a)
    if axis is not None:
        axis = normalize_axis(axis, b.type_of(x).ndim)
    return b.emit("count_nonzero", x, axis=axis, keepdims=bool(keepdims))


# -- result lengths that depend on the data: refused on run-time values ------------------

_DATA_LENGTH = ("of an array computed in the function: the length of its result depends on "
                "the values, which are known only when the function runs")
refuse(np.unique, f"np.unique {_DATA_LENGTH}",
       "np.unique works on constants only: compute it outside the function and pass it in")
for _fn in (np.argwhere,):  # np.nonzero, np.flatnonzero: ops/dynamic.py (lengths known at run time)
    refuse(_fn, f"np.{_fn.__name__} {_DATA_LENGTH}",
           "use a mask with a shape known when compiling instead: np.where(cond, x, 0.0), "
           "or np.sum(x * cond)")
del _fn


