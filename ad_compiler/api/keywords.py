"""Inputs passed by keyword to a gradient function.

MindSpore binds a keyword input to the parameter of ``fn`` it names, so
``grad_all(f)(x, y=y)`` differentiates ``y`` as input 1, exactly like
``grad_all(f)(x, y)``. :func:`bind_keywords` does that binding: it returns the
positional inputs the call stands for, and positions (``grad_position``,
``get_all``) keep their meaning. A parameter left out before a keyword one
takes its default value, as a positional call would have to pass it.

Mistakes give Python's own ``TypeError`` text (an unknown keyword, a value given
twice, a required input missing). A keyword-only parameter, or a keyword caught
by ``**kwargs``, has no input position: it stays refused, with a hint.

Example:
    >>> import numpy as np
    >>> def f(x, y, scale=2.0):
    ...     return np.sum(x * y) * scale
    >>> bind_keywords(f, (np.ones(1),), {"y": np.zeros(1)})
    (array([1.]), array([0.]))
"""
from __future__ import annotations

import inspect

from ..errors import GradTypeError

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def call_parameters(fn) -> list | None:
    """The parameters of ``fn`` a call binds (``self`` of a Cell or method excluded),
    or None when ``fn`` has no signature Python can read."""
    target = fn.construct if hasattr(fn, "construct") and not inspect.isfunction(fn) else fn
    try:
        return list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return None


def bind_keywords(fn, args: tuple, kwargs: dict, params: list | None = None) -> tuple:
    """The positional inputs that ``fn(*args, **kwargs)`` binds (see the module
    docstring); ``params``: :func:`call_parameters` of ``fn``, when already known."""
    if not kwargs:
        return args
    name = display_name(fn)
    params = call_parameters(fn) if params is None else params
    if params is None:
        raise GradTypeError(f"{name}() has no signature to bind the keyword arguments "
                            f"{sorted(kwargs)} to", hint="pass the inputs positionally")
    positional = [p for p in params if p.kind in _POSITIONAL]
    index = {p.name: i for i, p in enumerate(positional)
             if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
    bound = list(args) + [_MISSING] * max(0, len(positional) - len(args))
    for key, value in kwargs.items():
        i = index.get(key)
        if i is None:
            raise _unbindable(name, key, params)
        if i < len(args):
            raise GradTypeError(f"{name}() got multiple values for argument '{key}'")
        bound[i] = value
    last = max(i for i, v in enumerate(bound) if v is not _MISSING)
    bound = bound[:last + 1]
    missing = [p.name for p, v in zip(positional, bound)
               if v is _MISSING and p.default is p.empty]
    missing += [p.name for p in positional[last + 1:] if p.default is p.empty]
    if missing:
        raise GradTypeError(f"{name}() missing {len(missing)} required positional "
                            f"argument{'s' if len(missing) > 1 else ''}: {_listed(missing)}")
    return tuple(p.default if v is _MISSING else v for p, v in zip(positional, bound))


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _unbindable(name: str, key: str, params: list) -> GradTypeError:
    """The error for keyword ``key``, which names no parameter with an input position."""
    kinds = {p.name: p.kind for p in params}
    if kinds.get(key) is inspect.Parameter.KEYWORD_ONLY:
        return GradTypeError(f"'{key}' is a keyword-only parameter of {name}(): a gradient "
                             "function differentiates inputs by position, and it has none",
                             hint=f"make '{key}' an ordinary parameter (before any * or "
                                  "*args), or bind it first with functools.partial")
    if kinds.get(key) is inspect.Parameter.POSITIONAL_ONLY:
        return GradTypeError(f"{name}() got some positional-only arguments passed as keyword "
                             f"arguments: '{key}'")
    if any(k is inspect.Parameter.VAR_KEYWORD for k in kinds.values()):
        return GradTypeError(f"'{key}' would go to the **kwargs of {name}(): a gradient "
                             "function differentiates inputs by position, and it has none",
                             hint=f"add '{key}' as a parameter of {name}(), or pass it "
                                  "through a closure")
    return GradTypeError(f"{name}() got an unexpected keyword argument '{key}'")


def _listed(names: list) -> str:
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def display_name(fn) -> str:
    """How Python's call errors name ``fn``: its qualified name (``Net.construct``)."""
    if hasattr(fn, "construct") and not inspect.isfunction(fn):
        return f"{type(fn).__name__}.construct"
    return getattr(fn, "__qualname__", None) or type(fn).__name__
