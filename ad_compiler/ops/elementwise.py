"""Elementwise primitives: arithmetic, transcendental, activations, comparisons.

Each declaration holds the codegen template, the type rule, the VJP and the JVP.
VJPs of broadcasting primitives reduce with ``b.fit(ct, x)`` (resolved at compile
time: no op when shapes and dtypes already agree).
"""
from __future__ import annotations

import math

import numpy as np

from ..ad.rules import ex, primitive
from ._infer import as_float, elementwise, same_type

F = "elementwise"


def _const_infer(*, value):
    from ..ir.core import AType
    return AType.of(value)


primitive("const", emit="{value}", infer=_const_infer, nondiff=True, family=F)


# -- arithmetic ---------------------------------------------------------------

def _tangent_sum(b, *terms):
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    out = terms[0]
    for t in terms[1:]:
        out = b.add(out, t)
    return out


primitive(
    "add", emit="{0} + {1}", infer=elementwise("add"), family=F,
    vjp=lambda b, ct, out, x, y: (b.fit(ct, x), b.fit(ct, y)),
    jvp=lambda b, t, out, x, y: _tangent_sum(b, t[0], t[1]),
    examples=[ex((3,), (3,)), ex((2, 3), (3,)), ex((2, 1), (1, 3)), ex((), (2,)), ex(float, (2,))],
    aliases=(np.add,),
)

primitive(
    "mul", emit="{0} * {1}", infer=elementwise("mul"), family=F,
    vjp=lambda b, ct, out, x, y: (b.fit(b.mul(ct, y), x), b.fit(b.mul(ct, x), y)),
    jvp=lambda b, t, out, x, y: _tangent_sum(
        b, t[0] and b.mul(t[0], y), t[1] and b.mul(x, t[1])),
    examples=[ex((3,), (3,)), ex((2, 3), (3,)), ex((2, 1), (1, 3)), ex((), (2,)), ex(float, (2,))],
    aliases=(np.multiply,),
)

primitive(
    "neg", emit="-{0}", infer=same_type, family=F,
    vjp=lambda b, ct, out, x: (b.neg(ct),),
    jvp=lambda b, t, out, x: b.neg(t[0]),
    examples=[ex((3,))],
    aliases=(np.negative,),
)

primitive(
    "sin", emit="np.sin({0})", infer=elementwise("sin"), family=F,
    vjp=lambda b, ct, out, x: (b.mul(ct, b.cos(x)),),
    jvp=lambda b, t, out, x: b.mul(t[0], b.cos(x)),
    examples=[ex((3,)), ex((2, 3))],
    aliases=(np.sin, math.sin),
)

primitive(
    "cos", emit="np.cos({0})", infer=elementwise("cos"), family=F,
    vjp=lambda b, ct, out, x: (b.neg(b.mul(ct, b.sin(x))),),
    jvp=lambda b, t, out, x: b.neg(b.mul(t[0], b.sin(x))),
    examples=[ex((3,)), ex((2, 3))],
    aliases=(np.cos, math.cos),
)

# -- dtype and constants-like -------------------------------------------------

primitive(
    "cast", emit="{0}.astype({dtype})", family=F,
    infer=lambda t, *, dtype: t.with_dtype(dtype),
    vjp=lambda b, ct, out, x, *, dtype: (b.fit(ct, x),),
    jvp=lambda b, t, out, x, *, dtype: b.cast(t[0], dtype=dtype),
    examples=[ex((3,), dtype=np.dtype("float32"))],
)

primitive("zeros_like", emit="np.zeros_like({0})", infer=same_type, nondiff=True, family=F,
          aliases=(np.zeros_like,))
primitive("ones_like", emit="np.ones_like({0})", infer=same_type, nondiff=True, family=F,
          aliases=(np.ones_like,))
