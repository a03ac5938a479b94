"""``ad_compiler.primitive``: register a derivative rule for a user's own function.

A registered function is a primitive like ``np.sin``: compiled code calls the
function itself, by its name, and differentiates the call with the rules given.
The rules are written against the same builder interface as the built-in ones
(``ad_compiler/ad/rules.py``): ``b.<primitive>(...)`` emits a registered
primitive (``b.mul``, ``b.cos``, ``b.sigmoid`` ...), ``b.const(1.0)`` a constant,
``b.fit(ct, x)`` reduces a broadcast cotangent to the type of ``x``.

>>> import numpy as np
>>> import ad_compiler as ms
>>> def softplus(x):
...     return np.logaddexp(0.0, x)
>>> _ = ms.primitive(softplus,
...                  vjp=lambda b, ct, out, x: (b.mul(ct, b.sigmoid(x)),),
...                  jvp=lambda b, t, out, x: b.mul(t[0], b.sigmoid(x)))
>>> float(ms.grad(lambda x: np.sum(softplus(x)))(np.zeros(3))[0])
0.5

Invariants: a function is registered once (a second registration of the same
function, or of another function under a taken name, is a ``ValueError``);
the generated code names it by a valid identifier that no local of the
generated function can shadow; the default type rule runs the function once on
samples of its inputs' types (so its shape and dtype rules are NumPy's).
"""
from __future__ import annotations

import keyword
from typing import Callable

import numpy as np

from ..ad import rules
from ..ir.core import AType

#: name -> registered function (each primitive's ``globals`` puts it in generated code)
USER_FUNCTIONS: dict[str, Callable] = {}


def primitive(fn: Callable | None = None, *, vjp: Callable | None = None,
              jvp: Callable | None = None, infer: Callable | None = None,
              name: str | None = None, nondiff: bool = False, batch: Callable | None = None):
    """Register ``fn`` as a primitive of the compiler; returns ``fn`` unchanged.

    Args:
        fn: a function of arrays (positional) and static keyword arguments
            (Python numbers, strings, tuples: they become part of the compiled
            code's cache key). May be omitted to use ``primitive`` as a decorator.
        vjp: ``vjp(b, ct, out, *inputs, **params) -> tuple``, one cotangent per
            input (``None`` for a zero), built with the builder ``b``.
        jvp: ``jvp(b, tangents, out, *inputs, **params) -> tangent`` (``tangents``
            holds one tangent or ``None`` per input). Without it, forward mode
            (``jvp``, ``jacfwd``) stops with a located error at the call.
        infer: ``infer(*input_types, **params) -> AType``; by default the function
            is run once, at compile time, on arrays of ones of its inputs' shapes
            and dtypes (Python numbers for Python-number inputs), and its result's
            type is taken.
        name: the name generated code calls it by (default ``fn.__name__``).
        nondiff: the result carries no derivative (like ``np.floor``).
        batch: ``batch(b, axes, *inputs, **params) -> (out, out_axis)``, the batching
            rule ``ms.vmap`` uses (``axes``: each input's batch axis or ``None``).
            Without it, ``vmap`` stops with a located error at the call.
    """
    if fn is None:
        return lambda f: primitive(f, vjp=vjp, jvp=jvp, infer=infer, name=name, nondiff=nondiff,
                                   batch=batch)
    if not callable(fn):
        raise TypeError(f"primitive() needs a function, not {type(fn).__name__}")
    name = _checked_name(fn, name if name is not None else getattr(fn, "__name__", ""))
    if vjp is None and not nondiff:
        raise TypeError(f"primitive({name}): give vjp= (the reverse-mode rule), "
                        "or nondiff=True for a function without a derivative")
    USER_FUNCTIONS[name] = fn
    rules.primitive(name, emit=_emit(name), impl=fn, infer=infer or _sampled_type(fn),
                    vjp=vjp, jvp=jvp, nondiff=nondiff, family="user", globals={name: fn},
                    batch=batch)
    rules.register_lowering(fn, _lowering(name))
    return fn


def _checked_name(fn, name: str) -> str:
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        raise ValueError(f"primitive(): {name!r} is not usable as a name in generated code; "
                         "pass name='a_valid_identifier'")
    if name in rules.template_globals() or name in rules.PRIMITIVES or name in USER_FUNCTIONS:
        raise ValueError(f"primitive(): the name {name!r} is taken; pass another name=")
    if rules.find_lowering(fn) is not None:
        raise ValueError(f"primitive(): {name} already has a rule")
    return name


def _emit(name: str):
    def emit(inputs: list[str], **params: str) -> str:
        args = list(inputs) + [f"{k}={v}" for k, v in params.items()]
        return f"{name}({', '.join(args)})"
    return emit


def _lowering(name: str):
    def lower(b, *args, **params):
        for key, value in params.items():
            _check_static(name, key, value)
        return b.emit(name, *(b.const(a) for a in args), **params)
    lower.__name__ = f"lower_{name}"
    return lower


def _check_static(name, key, value) -> None:
    if isinstance(value, (tuple, list)):
        for v in value:
            _check_static(name, key, v)
    elif not isinstance(value, (bool, int, float, str, type(None))):
        raise TypeError(f"{name}({key}=...): keyword arguments of a registered primitive are "
                        f"static (numbers, strings, tuples), not {type(value).__name__}; "
                        "pass arrays positionally")


def _sample(t: AType):
    return t.python_type(1) if t.weak else np.ones(t.shape, dtype=t.dtype)


def _sampled_type(fn):
    def infer(*types: AType, **params) -> AType:
        with np.errstate(all="ignore"):
            return AType.of(fn(*(_sample(t) for t in types), **params))
    return infer


def forget(fn: Callable) -> None:
    """Undo :func:`primitive` for ``fn`` (tests, notebooks that redefine a rule).

    Code compiled before keeps calling ``fn`` with the old rules; functions compiled
    afterwards see ``fn`` as ordinary Python again.
    """
    lower = rules.find_lowering(fn)
    name = next((n for n, f in USER_FUNCTIONS.items() if f is fn), None)
    if name is None or lower is None:
        raise ValueError(f"{getattr(fn, '__name__', fn)!r} is not a registered primitive")
    del USER_FUNCTIONS[name]
    del rules.PRIMITIVES[name]
    del rules._LOWERINGS[id(fn)]
