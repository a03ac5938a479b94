"""Scalar arithmetic that ends in ``float(...)`` is done on Python floats.

Scalar code keeps Python numbers on Python floats (``pyfloat``), but a derivative
rule works on the primal's type: the adjoint of ``x = math.sin(x)`` is
``float(np.asarray(dx, dtype=np.float64) * np.cos(x))``, three NumPy calls on
one number (about 2 µs; the forward's ``math.sin`` takes 0.05 µs). This pass
rebuilds the float64 arithmetic under a ``pyfloat`` op on the Python floats it
starts from::

    %dsin = cast %dx {dtype=float64}       # f64[]
    %cos = cos %x                          # f64[]             %cos_1 = cos %x
    %dx_3 = mul %dsin, %cos                # f64[]     ->      %cos = pyfloat %cos_1     # float
    %pyfloat = pyfloat %dx_3               # float             %dx_3 = mul %dx, %cos     # float

which codegen writes as ``cos = math.cos(x); dx_3 = dx * cos`` (a ``pyfloat``
of a primitive with an ``on_floats`` template, codegen/floats.py). The numbers
are the same: ``add``, ``sub``, ``mul``, ``neg`` and ``square`` are the same IEEE
operations on the same doubles in NumPy and in Python (and never raise on Python
floats), a cast of a Python float to float64 is the float itself, and ``float()`` of a
float64 value is exact. A float64 value that cannot be rebuilt (a reduction's
result) is converted with ``float()`` where the chain reads it. A rebuilt value
is shared by the chains after it in its block (and the blocks inside it); the
old ops are left to DCE, which drops those nothing else reads.
"""
from __future__ import annotations

import numpy as np

from ..ad import rules
from ..ir.builder import Builder
from ..ir.clone import copy_function
from ..ir.core import Block, Function
from .loops import _substitute  # uses of values replaced, in a block and its regions

_ARITHMETIC = frozenset({"add", "sub", "mul", "neg", "square"})
_F64 = np.dtype(np.float64)


def python_floats(fn: Function) -> Function:
    if not any(op.prim == "pyfloat" for op in fn.body.walk()):
        return fn  # nothing to rewrite: no copy
    new, _ = copy_function(fn)
    subst: dict = {}
    _visit(new.body, {}, subst)
    if subst:
        _substitute(new.body, subst)
    return new


def _visit(block: Block, memo: dict, subst: dict) -> None:
    """Rewrite the ``pyfloat`` ops of ``block``; ``memo`` maps a float64 value to its
    Python-float twin made earlier in this block or an enclosing one."""
    out = []
    for op in block.ops:
        for region in op.regions:
            _visit(region, dict(memo), subst)
        if op.prim == "pyfloat" and not op.inputs[0].type.weak and not _on_floats(op):
            chain = _Chain(memo, op.loc)
            new = chain.rebuild(op.inputs[0], top=True)
            if new is not None and chain.gained:
                out.extend(chain.b.block.ops)
                memo.update(chain.made)
                subst[id(op.result)] = new
        out.append(op)
    block.ops = out


class _Chain:
    """Rebuilds one value on Python floats; ``gained`` once a NumPy step is saved."""

    def __init__(self, memo: dict, loc):
        self.b = Builder(Block(), loc)
        self.memo = memo
        self.made: dict = {}
        self.gained = False

    def rebuild(self, v, top=False):
        """A Python-float value equal to ``float(v)``, or None."""
        t = v.type
        if t.weak:  # a Python float, or an int meeting one (converted exactly, as NumPy does)
            return v if t.dtype.kind in "fi" else None
        if t.shape != () or t.dtype != _F64 or v.producer is None:
            return None
        known = self.made.get(id(v), self.memo.get(id(v)))
        if known is not None:
            self.gained = True
            return known
        op = v.producer
        if op.prim in ("cast", "npscalar") and _python_float(op.inputs[0]):
            self.gained = True
            return op.inputs[0]
        new = self._op(op, v)
        if new is None and not top:  # a float64 value read as it is: converted once
            new = self.b.pyfloat(v, hint=v.hint)
        if new is not None:
            self.made[id(v)] = new
        return new

    def _op(self, op, v):
        if op.prim not in _ARITHMETIC and not (_template(op) and len(op.inputs) == 1):
            return None
        inputs = [self.rebuild(x) for x in op.inputs]
        if None in inputs:
            return None
        with self.b.at(op.loc):
            new = self.b.emit(op.prim, *inputs, hint=v.hint, **op.params)
            if op.prim not in _ARITHMETIC:  # sin of a Python float: float(sin) is math.sin
                self.gained = True
                return self.b.pyfloat(new, hint=v.hint)
        if not _python_float(new):
            return None
        self.gained = True
        return new


def _on_floats(op) -> bool:
    """Whether ``op`` is ``float(f(x))`` of a Python float ``x`` that codegen writes as
    ``f``'s ``on_floats`` template already."""
    p = op.inputs[0].producer
    return (p is not None and bool(_template(p)) and len(p.inputs) == 1
            and _python_float(p.inputs[0]))


def _template(op) -> str:
    """The ``on_floats`` template of ``op``'s primitive ("" for none, or a structural op)."""
    prim = rules.PRIMITIVES.get(op.prim)
    return prim.on_floats if prim is not None else ""


def _python_float(v) -> bool:
    return v.type.weak and v.type.dtype.kind == "f"
