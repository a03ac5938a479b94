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


class _CustomRule:
    """A plain function with a rule of its own, set once (``kind``: "VJP" or "JVP";
    ``define``: the method that sets it, for messages)."""

    kind = ""
    define = ""

    def __init__(self, fn: Callable[..., Any]):
        if not callable(fn):
            raise GradTypeError(f"custom_{self.kind.lower()} needs a function, "
                                f"not {type(fn).__name__}")
        self.fn = fn
        self.rule: tuple | None = None
        functools.update_wrapper(self, fn)

    def _set(self, *functions) -> None:
        if self.rule is not None:
            raise GradRuntimeError(f"{self.__name__} already has a {self.kind} rule",
                                   hint=f"make a new ms.custom_{self.kind.lower()}(fn) "
                                        "for another rule")
        if not all(callable(f) for f in functions):
            raise GradTypeError(f"{self.define} needs {len(functions)} function(s)")
        self.rule = functions

    def checked(self):
        """``self``, once its rule is set (compiling a call before is an error)."""
        if self.rule is None:
            raise GradRuntimeError(f"{self.__name__} has no {self.kind} rule yet",
                                   hint=f"call {self.__name__}.{self.define} first")
        return self

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<custom_{self.kind.lower()} {self.__name__}>"


class CustomVJP(_CustomRule):
    """A function with a custom VJP (see the module docstring)."""

    kind, define = "VJP", "defvjp(fwd, bwd)"

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        """Set the rule: ``fwd(*args) -> (out, residuals)``, ``bwd(residuals, g) -> tuple``."""
        self._set(fwd, bwd)

    @property
    def fwd(self):
        return None if self.rule is None else self.rule[0]

    @property
    def bwd(self):
        return None if self.rule is None else self.rule[1]


class CustomJVP(_CustomRule):
    """A function with a custom JVP: ``f = ms.custom_jvp(f); f.defjvp(jvp)`` where
    ``jvp(primals, tangents) -> (out, tangent_out)`` (tuples with one entry per argument).

    Forward mode uses the rule; reverse mode transposes it (the tangent is linear in
    the tangents), so one rule serves both, as in JAX.
    """

    kind, define = "JVP", "defjvp(jvp)"

    def defjvp(self, jvp: Callable[..., Any]) -> None:
        """Set the rule ``jvp(primals, tangents) -> (out, tangent_out)``."""
        self._set(jvp)

    @property
    def jvp(self):
        return None if self.rule is None else self.rule[0]


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
