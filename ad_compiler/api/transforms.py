"""Inspection of compiled gradients: ``adjoint_source`` and its IR.

A gradient is specialised on its inputs' shapes and dtypes, so inspection needs
example inputs. Pass them; or pass type strings (``"f32[3,4]"``, ``"float"``);
or pass nothing and a few common shapes are tried in turn.
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import AdCompilerError, GradValueError
from .grad import Config, GradFunction, _check_positions

_TYPE = re.compile(r"^(f16|f32|f64|i32|i64)\[([\d,\s]*)\]$")
_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32,
           "i64": np.int64}
_GUESSES = ("f32[3]", "f32[]", "f32[3,3]", "f32[2,3]", "f32[4,3]")


def example_from_type(text: str):
    """An example input for a type string: ``'f32[2,3]'`` -> zeros-free f32 array, ``'float'`` -> 0.5."""
    text = text.strip()
    if text == "float":
        return 0.5
    m = _TYPE.match(text)
    if not m:
        raise GradValueError(f"cannot read the type {text!r}", hint="write e.g. f32[3,4], f64[], float")
    shape = tuple(int(d) for d in m.group(2).split(",") if d.strip())
    size = int(np.prod(shape, dtype=np.int64))
    return (np.arange(1, size + 1, dtype=np.float64).reshape(shape) / (size + 1)).astype(
        _DTYPES[m.group(1)])


def _n_inputs(fn) -> int:
    import inspect
    target = fn.construct if hasattr(fn, "construct") else fn
    params = inspect.signature(target).parameters.values()
    return sum(1 for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                        p.POSITIONAL_OR_KEYWORD))


def _config(grad_position, weights, sens_param, has_aux) -> Config:
    positions = _check_positions(grad_position)
    return Config(positions, weights is not None, sens_param, has_aux, False, False, "grad",
                  weights is not None and not isinstance(weights, (list, tuple, bool)))


def compiled_entry(fn, *args, grad_position=0, weights=None, sens_param=False, has_aux=False):
    """The cache entry (IR and generated code) for ``fn`` at these example inputs."""
    config = _config(grad_position, weights, sens_param, has_aux)
    gf = GradFunction(fn, config, None if weights is True else weights)
    if args:
        return gf.entry_for(tuple(example_from_type(a) if isinstance(a, str) else a for a in args))
    errors = []
    for guess in _GUESSES:
        try:
            return gf.entry_for(tuple(example_from_type(guess) for _ in range(_n_inputs(fn))))
        except (AdCompilerError, ValueError, TypeError) as exc:
            errors.append(f"{guess}: {str(exc).splitlines()[0]}")
    raise GradValueError("could not guess input shapes for " + getattr(fn, "__name__", repr(fn)),
                         hint="pass example inputs or types, e.g. adjoint_source(f, 'f32[2,3]')"
                              " or --args 'f32[2,3]'\n" + "\n".join(errors))


def adjoint_source(fn, *args, grad_position=0, weights=None, sens_param=False, has_aux=False):
    """The generated Python source of ``fn``'s gradient (see :func:`compiled_entry`).

    Example:
        >>> import numpy as np
        >>> def f(x):
        ...     return np.sum(np.sin(x))
        >>> print(adjoint_source(f, "f64[3]").splitlines()[0])
        def f_grad(x):
    """
    return compiled_entry(fn, *args, grad_position=grad_position, weights=weights,
                          sens_param=sens_param, has_aux=has_aux).compiled.source


def adjoint_ir(fn, *args, **config) -> str:
    """The optimised adjoint IR of ``fn``'s gradient, as text."""
    return str(compiled_entry(fn, *args, **config).ir)
