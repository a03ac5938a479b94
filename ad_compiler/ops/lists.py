"""Lists built by loops: reading an item, stacking, unstacking, and list cotangents.

A ``list<T>`` value comes from a loop's stacked outputs (``ys.append(y)`` in user
code, or the values a loop's adjoint saves per iteration). Its items are
shared with the loop that built them, so ``list_get`` is a view: its result is
never written in place.

The cotangent of a list is a list of the same length holding the cotangents of
its items. Reading one item, ``list_get(ys, k)``, gives ``ys`` the cotangent
``list_add_at(list_zeros(ys), k, ct)``; contributions add up item by item
(``list_add``, or one more ``list_add_at`` into the list built so far). A loop
that reads item ``i`` of a list in its iteration ``i`` (the backward sweep
reading a tape) gets a whole list cotangent at once instead: its adjoint stacks
the cotangent of each iteration's item (``ad/control.py``).
"""
from __future__ import annotations

import numpy as np

from ..ad.rules import ACCUMULATE_INTO, primitive
from ..ir.core import AType, ListType
from ._batch import (batch_list_add, batch_list_add_at, batch_list_get, batch_list_zeros,
                     batch_stack_list, batch_unstack)

F = "lists"


def _stack_infer(t: ListType, *, axis=0, length=0) -> AType:
    shape = list(t.elem.shape)
    shape.insert(axis % (len(shape) + 1), length)
    return AType(tuple(shape), t.elem.dtype, False)


def _list_get_vjp(b, ct, out, lst, i):
    return b.list_add_at(b.list_zeros(lst, hint="d" + (lst.hint or "list")), i, ct), None


primitive("list_get", emit="{0}[{1}]", view=True, family=F, dynamic="native",
          infer=lambda lst, i: lst.elem, vjp=_list_get_vjp,
          # forward mode: the item of the list of tangents (linear, no list cotangent)
          jvp=lambda b, t, out, lst, i: None if t[0] is None else b.list_get(t[0], i),
          examples=[], batch=batch_list_get)

primitive("stack_list", emit="np.stack({0}, axis={axis})", family=F,
          infer=_stack_infer,
          vjp=lambda b, ct, out, lst, *, axis=0, length=0: (
              b.unstack(ct, axis=axis, elem=lst.type.elem),),
          jvp=lambda b, t, out, lst, *, axis=0, length=0: b.stack_list(t[0], axis=axis,
                                                                      length=length),
          examples=[], batch=batch_stack_list)

primitive("unstack", emit="list(np.moveaxis({0}, {axis}, 0))", family=F, view=True,
          infer=lambda t, *, axis=0, elem=None: ListType(elem),
          vjp=lambda b, ct, out, x, *, axis=0, elem=None: (
              b.stack_list(ct, axis=axis, length=b.type_of(x).shape[axis]),),
          jvp=lambda b, t, out, x, *, axis=0, elem=None: b.unstack(t[0], axis=axis, elem=elem),
          examples=[], batch=batch_unstack)


# -- list cotangents ------------------------------------------------------------------

primitive("list_zeros", emit="rt.list_zeros({0})", family=F, nondiff=True, dynamic="native",
          infer=lambda t: t, examples=[], batch=batch_list_zeros)


def _list_add_at_jvp(b, t, out, acc, i, v):
    t_acc, _, t_v = t
    if t_v is None:
        return t_acc
    return b.list_add_at(t_acc if t_acc is not None else b.list_zeros(acc), i, t_v)


primitive("list_add_at", emit="rt.list_add_at({0}, {1}, {2})", family=F, dynamic="native",
          infer=lambda acc, i, v: acc,
          vjp=lambda b, ct, out, acc, i, v: (ct, None, b.list_get(ct, i)),
          jvp=_list_add_at_jvp, examples=[], batch=batch_list_add_at)


def _list_add_jvp(b, t, out, x, y):
    if t[0] is None or t[1] is None:
        return t[0] if t[1] is None else t[1]
    return b.list_add(t[0], t[1])


primitive("list_add", emit="rt.list_add({0}, {1})", family=F, dynamic="native",
          infer=lambda x, y: x, vjp=lambda b, ct, out, x, y: (ct, ct),
          jvp=_list_add_jvp, examples=[], batch=batch_list_add)


def _add_at_into(b, acc, ct):
    """``acc + list_add_at(list_zeros(ys), k, v)`` is ``list_add_at(acc, k, v)``."""
    op = ct.producer
    zeros = op.inputs[0]
    if zeros.producer is None or zeros.producer.prim != "list_zeros" or acc.type != ct.type:
        return None
    return b.list_add_at(acc, op.inputs[1], op.inputs[2], hint=ct.hint)


ACCUMULATE_INTO["list_add_at"] = _add_at_into

