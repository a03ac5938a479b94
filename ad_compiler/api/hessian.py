"""Second derivatives: ``ms.hessian`` and Hessian-vector products ``ms.hvp``.

Both differentiate the compiled gradient again. Forward over reverse is the
default (one forward sweep through the gradient per direction); where forward
mode does not go through the function (a call with its own reverse-mode rule
only), reverse over reverse computes the same numbers. ``hvp`` never forms the Hessian: it is one
directional derivative of the gradient.

>>> import numpy as np
>>> import ad_compiler as ms
>>> def f(x):
...     return np.sum(x ** 3)
>>> ms.hessian(f)(np.array([1.0, 2.0]))
array([[ 6.,  0.],
       [ 0., 12.]])
>>> ms.hvp(f, np.array([1.0, 2.0]), np.array([1.0, 1.0]))
array([ 6., 12.])
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..backends import refuse_in
from ..errors import UnsupportedOperationError
from .grad import Positions, grad


def hessian(fn: Callable[..., Any], grad_position: Positions = 0) -> Callable[..., Any]:
    """The Hessian of a scalar-valued ``fn`` w.r.t. the inputs at ``grad_position``.

    For one position, an input of shape I gives an array of shape I + I; for a
    tuple of positions, a tuple of tuples: block ``[i][j]`` holds the second
    derivatives w.r.t. inputs ``i`` and ``j`` (shape I_i + I_j).
    """
    from .transforms import _positions

    def second_derivatives(*args):
        refuse_in(args, "hessian")
        pos = _positions(grad_position, len(args))
        rows = tuple(_jacobian(_component(grad(fn, i)), pos, args) for i in pos)
        if isinstance(grad_position, int):
            return rows[0][0]
        return rows
    from .transforms import inlined
    second_derivatives.__ad_lower__ = inlined("InlinedHessian", fn, grad_position)
    return second_derivatives


def hvp(fn: Callable[..., Any], primals: Any, tangents: Any) -> Any:
    """The Hessian of a scalar-valued ``fn`` at ``primals`` times ``tangents``.

    ``primals`` and ``tangents`` are tuples with one entry per input (or one
    array for a one-input function); the result has the structure of
    ``primals``: the derivative of the gradient along ``tangents``.
    """
    several = isinstance(primals, (tuple, list))
    primals = tuple(primals) if several else (primals,)
    tangents = tuple(tangents) if isinstance(tangents, (tuple, list)) else (tangents,)
    everything = tuple(range(len(primals)))
    gradient = grad(fn, grad_position=everything)
    try:
        from .transforms import jvp
        out = jvp(_component(gradient), primals, tangents)[1]
    except UnsupportedOperationError as e:
        if "forward mode" not in e.message:
            raise
        out = grad(_along(gradient, tangents), grad_position=everything)(*primals)
    out = out if isinstance(out, tuple) else (out,)
    return out if several else out[0]


def _component(gradient):
    """A function calling ``gradient``: compiled code differentiates through the call."""
    def call(*args):
        return gradient(*args)
    return call


def _along(gradient, tangents):
    """``args -> <gradient(*args), tangents>``: its gradient is the Hessian times tangents.

    (A gradient w.r.t. one input is returned bare, as MindSpore returns it.)"""
    if len(tangents) == 1:
        tangent = tangents[0]

        def directional_1(*args):
            return np.sum(gradient(*args) * tangent)
        return directional_1

    def directional(*args):
        g = gradient(*args)
        total = 0.0
        for gi, ti in zip(g, tangents):
            total = total + np.sum(gi * ti)
        return total
    return directional


def _jacobian(component, pos, args) -> tuple:
    """The Jacobians of ``component`` w.r.t. the inputs at ``pos``: forward mode, or
    reverse mode where forward mode does not go through it yet."""
    from .transforms import jacfwd, jacrev
    try:
        jac = jacfwd(component, pos)(*args)
    except UnsupportedOperationError as e:
        if "forward mode" not in e.message:
            raise
        jac = jacrev(component, pos)(*args)
    return jac if isinstance(jac, tuple) else (jac,)
