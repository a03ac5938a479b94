"""Lists built by loops: reading an element, stacking, and unstacking.

A ``list<T>`` value comes from a loop's stacked outputs (``ys.append(y)`` in user
code, or the values a loop's adjoint saves per iteration). Its elements are
shared with the loop that built them, so ``list_get`` is a view: its result is
never written in place.
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import primitive
from ..errors import UnsupportedOperationError
from ..ir.core import AType, ListType

F = "lists"


def _no_list_gradient(*_args, **_params):
    raise UnsupportedOperationError(
        "no gradient flows through an item of a list whose length is known only at run "
        "time (built by a 'while' loop or a loop with 'break', or saved by the adjoint of "
        "a loop)",
        hint="build the list in a 'for' loop over range(n) without 'break' (its items are "
             "then differentiable); gradients of gradients through loops are not supported")


def _stack_infer(t: ListType, *, axis=0, length=0) -> AType:
    shape = list(t.elem.shape)
    shape.insert(axis % (len(shape) + 1), length)
    return AType(tuple(shape), t.elem.dtype, False)


primitive("list_get", emit="{0}[{1}]", view=True, family=F, nondiff=False, dynamic="native",
          infer=lambda lst, i: lst.elem, vjp=_no_list_gradient,
          # forward mode: the item of the list of tangents (linear, no list cotangent)
          jvp=lambda b, t, out, lst, i: None if t[0] is None else b.list_get(t[0], i),
          examples=[])

primitive("stack_list", emit="np.stack({0}, axis={axis})", family=F,
          infer=_stack_infer,
          vjp=lambda b, ct, out, lst, *, axis=0, length=0: (
              b.unstack(ct, axis=axis, elem=lst.type.elem),),
          jvp=lambda b, t, out, lst, *, axis=0, length=0: b.stack_list(t[0], axis=axis,
                                                                      length=length),
          examples=[])

primitive("unstack", emit="list(np.moveaxis({0}, {axis}, 0))", family=F, view=True,
          infer=lambda t, *, axis=0, elem=None: ListType(elem),
          vjp=lambda b, ct, out, x, *, axis=0, elem=None: (
              b.stack_list(ct, axis=axis, length=b.type_of(x).shape[axis]),),
          jvp=lambda b, t, out, x, *, axis=0, elem=None: b.unstack(t[0], axis=axis, elem=elem),
          examples=[])
