"""``float(f(x))`` of a Python float ``x`` is written with ``f``'s ``on_floats`` template.

``math.sin(x)`` on a Python float lifts to ``pyfloat(sin(x))``; the primitive's
template would write it as ``float(np.sin(x))``, a NumPy call and a conversion
(about 0.25 µs) where ``math.sin(x)`` takes 0.05 µs. When the primitive declares
``on_floats`` (ad/rules.py), its input is a Python float and the ``pyfloat`` is
its only use, the two ops become one statement named after the ``pyfloat``::

    x_3 = math.sin(x_2)              # instead of: sin = np.sin(x_2); x_3 = float(sin)

(passes/pyfloats.py brings the adjoints of scalar code to this form).
"""
from __future__ import annotations

from ..ad import rules


def plan(fn) -> tuple[dict, set]:
    """``({id(pyfloat op): (template, input value)}, {id(op) written by its pyfloat})``."""
    uses: dict = {}
    _count_uses(fn.body, uses)
    fused, absorbed = {}, set()
    for op in fn.body.walk():
        if op.prim != "pyfloat":
            continue
        inner = op.inputs[0].producer
        if inner is None or inner.regions or uses.get(id(op.inputs[0])) != 1:
            continue
        template = rules.get(inner.prim).on_floats if inner.prim in rules.PRIMITIVES else ""
        x = inner.inputs[0] if len(inner.inputs) == 1 else None
        if template and x is not None and x.type.weak and x.type.dtype.kind == "f":
            fused[id(op)] = (template, x)
            absorbed.add(id(inner))
    return fused, absorbed


def _count_uses(block, uses: dict) -> None:
    for v in block.results:
        uses[id(v)] = uses.get(id(v), 0) + 1
    for op in block.ops:
        for v in op.inputs:
            uses[id(v)] = uses.get(id(v), 0) + 1
        for region in op.regions:
            _count_uses(region, uses)
