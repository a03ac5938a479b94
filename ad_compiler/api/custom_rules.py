"""``ms.custom_vjp``: a plain function with its own reverse-mode rule.

The function-level counterpart of ``Cell.bprop``, in JAX's shape::

    f = ms.custom_vjp(f)
    f.defvjp(fwd, bwd)      # fwd(*args) -> (out, residuals); bwd(residuals, g) -> cotangents

Called outside compiled code, ``f`` is the plain function. Inside a function
being differentiated, a call of ``f`` runs ``fwd`` (inlined, so what it reads
from outside is read at each call as usual) and the adjoint runs ``bwd``
(inlined too, so it is ordinary compiled code that can be differentiated
again). ``bwd`` returns a tuple with one cotangent per positional argument of
``f`` (``None`` for an argument without one; a tuple for a tuple argument).

Invariant: a function's rule is set once; a second ``defvjp`` is an error (code
compiled with the first rule would otherwise be stale).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..errors import GradRuntimeError, GradTypeError


class CustomVJP:
    """A function with a custom VJP (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any]):
        if not callable(fn):
            raise GradTypeError(f"custom_vjp needs a function, not {type(fn).__name__}")
        self.fn = fn
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        functools.update_wrapper(self, fn)

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Set the rule: ``fwd(*args) -> (out, residuals)``, ``bwd(residuals, g) -> tuple``."""
        if self.fwd is not None:
            raise GradRuntimeError(f"{self.__name__} already has a VJP rule",
                                   hint="make a new ms.custom_vjp(fn) for another rule")
        if not (callable(fwd) and callable(bwd)):
            raise GradTypeError("defvjp(fwd, bwd) needs two functions")
        self.fwd, self.bwd = fwd, bwd

    def checked(self) -> "CustomVJP":
        """``self``, once its rule is set (compiling a call before is an error)."""
        if self.fwd is None:
            raise GradRuntimeError(f"{self.__name__} has no VJP rule yet",
                                   hint=f"call {self.__name__}.defvjp(fwd, bwd) first")
        return self

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<custom_vjp {self.__name__}>"


class CustomJVP:
    """A function with a custom JVP: ``f = ms.custom_jvp(f); f.defjvp(jvp)`` where
    ``jvp(primals, tangents) -> (out, tangent_out)`` (tuples with one entry per argument).

    Forward mode uses the rule; reverse mode transposes it (the tangent is linear in
    the tangents), so one rule serves both, as in JAX.
    """

    def __init__(self, fn: Callable[..., Any]):
        if not callable(fn):
            raise GradTypeError(f"custom_jvp needs a function, not {type(fn).__name__}")
        self.fn = fn
        self.jvp: Callable | None = None
        functools.update_wrapper(self, fn)

    def defjvp(self, jvp: Callable[..., Any]) -> None:
        """Set the rule ``jvp(primals, tangents) -> (out, tangent_out)``."""
        if self.jvp is not None:
            raise GradRuntimeError(f"{self.__name__} already has a JVP rule",
                                   hint="make a new ms.custom_jvp(fn) for another rule")
        if not callable(jvp):
            raise GradTypeError("defjvp(jvp) needs a function")
        self.jvp = jvp

    def checked(self) -> "CustomJVP":
        if self.jvp is None:
            raise GradRuntimeError(f"{self.__name__} has no JVP rule yet",
                                   hint=f"call {self.__name__}.defjvp(jvp) first")
        return self

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<custom_jvp {self.__name__}>"


def custom_jvp(fn: Callable[..., Any]) -> CustomJVP:
    """``fn`` with a forward-mode rule to be given by ``.defjvp(jvp)``; see :class:`CustomJVP`."""
    return CustomJVP(fn)


def custom_vjp(fn: Callable[..., Any]) -> CustomVJP:
    """``fn`` with a reverse-mode rule to be given by ``.defvjp(fwd, bwd)``.

    Example:
        >>> import numpy as np
        >>> import ad_compiler as ms
        >>> def clip_gradient(x):
        ...     return x
        >>> clip_gradient = ms.custom_vjp(clip_gradient)
        >>> def fwd(x):
        ...     return x, None
        >>> def bwd(res, g):
        ...     return (np.clip(g, -1.0, 1.0),)
        >>> clip_gradient.defvjp(fwd, bwd)
        >>> def loss(x):
        ...     return np.sum(clip_gradient(x) * 5.0)
        >>> ms.grad(loss)(np.array([1.0, 2.0]))
        array([1., 1.])
    """
    return CustomVJP(fn)
