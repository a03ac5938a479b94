"""Calls of user objects: ``functools.partial`` and instances with a ``__call__``.

* ``p(*args, **kw)`` for ``p = functools.partial(f, *bound, **bound_kw)`` is
  ``f(*bound, *args, **{**bound_kw, **kw})``, lifted as that call (``f`` a user
  function, a NumPy function, another callable object ...). What the partial
  holds is captured state: ``p.func``, ``p.args`` and ``p.keywords`` are read
  through :mod:`.captured` (arrays among the bound arguments are inputs read at
  call time; other values are guarded, so changing ``p.keywords`` recompiles).
* ``functools.partial(f, ...)`` called inside the function makes the partial then
  (it may hold run-time values); ``f`` must be a function from outside (a ``def``
  or ``lambda`` of the function itself is no Python callable while compiling).
* ``obj(*args)`` for an instance whose class defines ``__call__`` in Python
  source (not a library's): ``type(obj).__call__`` is inlined with ``self``
  bound to ``obj``, as a method is; ``self.w`` reads are captured state, guarded.

Bound methods, ``@staticmethod`` and ``@classmethod`` need nothing here: Python
gives a function or a bound method (:mod:`.calls`). A Cell is called through
its ``construct``; a callable object with neither Python source nor a lowering
is the usual located error of :func:`.calls.unsupported_call`.
"""
from __future__ import annotations

import functools
import inspect

from .calls import NOT_HANDLED
from .captured import is_library_globals
from .resolve import is_cell, lift_object


def python_call_of(obj):
    """The Python function ``type(obj).__call__`` when ``obj`` is an instance whose
    class defines it in user source (not a function, a class, a Cell or library
    code), else None."""
    if isinstance(obj, (type, functools.partial)) or inspect.isroutine(obj) or is_cell(obj):
        return None
    call = inspect.getattr_static(type(obj), "__call__", None)
    if isinstance(call, (staticmethod, classmethod)) or not inspect.isfunction(call):
        return None
    return None if is_library_globals(call.__globals__) else call


def is_user_object_call(obj) -> bool:
    """Whether :class:`ObjectCallLifter` lifts calls of ``obj``."""
    return isinstance(obj, functools.partial) or python_call_of(obj) is not None


class ObjectCallLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: the handler of calls of user objects."""

    def call_object(self, callee, args, kwargs):
        if callee is functools.partial and args and callable(args[0]):
            return functools.partial(*args, **kwargs)  # made here: holds lift-time values
        if isinstance(callee, functools.partial):
            func, bound, bound_kw = self.partial_parts(callee)
            return self.call(func, [*bound, *args], {**bound_kw, **kwargs})
        call = python_call_of(callee)
        if call is None:
            return NOT_HANDLED
        return self.inline_function(call, [callee, *args], kwargs,
                                    name=f"{type(callee).__qualname__}.__call__", owner=callee)

    def partial_parts(self, p) -> tuple:
        """``(func, args, keywords)`` of the partial ``p``, read as captured state."""
        func, bound, bound_kw = (
            lift_object(getattr(p, attr), self, hint=attr, where=self.captures.attr(p, attr))
            for attr in ("func", "args", "keywords"))
        return func, list(bound), dict(bound_kw)
