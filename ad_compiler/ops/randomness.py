"""``np.random.*`` called inside a compiled function: drawn when the function runs.

The generated code calls the same ``np.random`` function with the same arguments,
in the same order as the user's code, once per call of the compiled function: the
numbers are those plain Python would draw from NumPy's global generator (seed it
before either call and they agree). They are constants for differentiation.

Invariants:

* the op is declared ``effect=True``: it reads and advances the global generator,
  so no pass folds, merges, hoists or drops it, and it is never recomputed;
* arguments are static (sizes, bounds, probabilities known when compiling); the
  result's type is found by calling the same function on a private generator;
* a draw inside a loop or a branch that depends on the data is refused with a
  located error (a loop over ``range`` is unrolled instead, so its draws stay in
  order), because an adjoint may replay such a region.

**Under vmap** the batched code draws what a Python loop of calls draws, one
example after the other (ad/batching.py). NumPy's legacy generator fills an
array in C order, so for the functions in :data:`SIZED` one draw of size
``(B, *shape)`` gives the numbers of ``B`` draws of ``shape`` in sequence (checked
for every distribution by tests/api/test_vmap_rest.py): the batching rule of a
function's only draw is that call (:func:`batch_draw`). It has no such rule (and
ad/batching.py loops over the examples) where the numbers would differ: a
permutation, ``choice(..., replace=False)``, ``randint`` of a type narrower than
32 bits (NumPy buffers its bytes per call), a seed, or several draws (a loop
interleaves them).
"""
from __future__ import annotations

import ast

import numpy as np

from ..ad.rules import lowering, primitive, register_on_import
from ..errors import UnsupportedOperationError
from ..ir.core import AType, Value

F = "random"

#: the functions of ``np.random`` that draw from the global generator with static arguments
DRAWS = ("rand", "randn", "random", "random_sample", "randint", "normal", "standard_normal",
         "uniform", "choice", "permutation", "exponential", "poisson", "binomial", "beta",
         "gamma", "laplace", "logistic", "lognormal")
#: functions that set the generator's state and return None
SETTERS = ("seed",)


def _split(params):
    """``(fn, positional args, keyword args)`` from the op's params."""
    fn = params["fn"]
    positional = [params[k] for k in sorted((k for k in params if k.startswith("_arg")),
                                            key=lambda k: int(k[4:]))]
    keywords = {k: v for k, v in params.items() if k != "fn" and not k.startswith("_arg")}
    return fn, positional, keywords


def _infer(**params) -> AType:
    fn, args, kwargs = _split(params)
    out = getattr(np.random.RandomState(0), fn)(*args, **kwargs)
    # seed() gives None: the op is kept for its effect; a placeholder type
    return AType((), np.dtype(bool), True) if out is None else AType.of(out)


_infer.exact = True  # the type of what np.random really returns (uniform() is a float)


def _emit(srcs, **param_sources):
    fn = ast.literal_eval(str(param_sources["fn"]))
    positional = sorted((k for k in param_sources if k.startswith("_arg")),
                        key=lambda k: int(k[4:]))
    parts = [str(param_sources[k]) for k in positional]
    parts += [f"{k}={v}" for k, v in param_sources.items()
              if k != "fn" and not k.startswith("_arg")]
    return f"np.random.{fn}({', '.join(parts)})"


def _impl(**params):
    fn, args, kwargs = _split(params)
    return getattr(np.random, fn)(*args, **kwargs)


#: the parameter names of the functions that take ``size``, in order (``rand`` and
#: ``randn`` take the dimensions as positional arguments)
SIZED = {
    "random": ("size",), "random_sample": ("size",), "standard_normal": ("size",),
    "randint": ("low", "high", "size", "dtype"), "normal": ("loc", "scale", "size"),
    "uniform": ("low", "high", "size"), "choice": ("a", "size", "replace", "p"),
    "exponential": ("scale", "size"), "poisson": ("lam", "size"),
    "binomial": ("n", "p", "size"), "beta": ("a", "b", "size"),
    "gamma": ("shape", "scale", "size"), "laplace": ("loc", "scale", "size"),
    "logistic": ("loc", "scale", "size"), "lognormal": ("mean", "sigma", "size"),
}


def batched_draw_params(params: dict, size: int) -> dict | None:
    """The params of one draw giving the numbers of ``size`` draws of ``params`` in
    sequence (the examples first), or None where NumPy's numbers would differ."""
    fn, args, kwargs = _split(params)
    shape = (size,) + _infer(**params).shape
    if fn in ("rand", "randn"):
        return {"fn": fn, **{f"_arg{i}": d for i, d in enumerate(shape)}}
    names = SIZED.get(fn)
    if names is None:
        return None
    named = dict(zip(names, args), **kwargs)
    if fn == "choice" and not named.get("replace", True) or \
            fn == "randint" and np.dtype(named.get("dtype", int)).itemsize < 4:
        return None
    lead = names.index("size")
    new = {"fn": fn, **{f"_arg{i}": a for i, a in enumerate(args[:lead])}}
    new.update({k: v for k, v in named.items() if names.index(k) > lead})
    new["size"] = shape
    return new


def batch_draw(b, axes, **params):
    """The function's only draw, for the whole batch: one call of size ``(B, *shape)``
    (None where that call's numbers differ from a loop's: see the module docstring)."""
    new = batched_draw_params(params, b.batch_size)
    return None if new is None else (b.emit("random", **new), 0)


primitive("random", emit=_emit, impl=_impl, infer=_infer, nondiff=True, effect=True,
          family=F, batch=batch_draw)


def _static(name, value):
    if isinstance(value, Value) or isinstance(value, (list, tuple)) and any(
            isinstance(v, Value) for v in value):
        raise UnsupportedOperationError(
            f"np.random.{name}: its arguments must be known when compiling (sizes, "
            "bounds, probabilities), not computed from the function's arguments",
            hint="draw standard numbers (np.random.randn(*x.shape)) and scale or shift "
                 "them: noise = mu + sigma * np.random.randn(3)")
    return value


def _lowering(name):
    def lower(b, *args, **kwargs):
        args = [_static(name, a) for a in args]
        kwargs = {k: _static(name, v) for k, v in kwargs.items()}
        top = getattr(b, "at_top_level", None)
        if top is not None and not top():
            from ..frontend.values import StaticIndexNeeded
            raise StaticIndexNeeded(
                f"np.random.{name} inside a loop or a branch that depends on the data: "
                "its draws must run exactly as often, and in the order, the function runs them",
                hint="draw the numbers before the loop or branch (one call with size=...) "
                     "and index them inside")
        params = {"fn": name, **{f"_arg{i}": a for i, a in enumerate(args)}, **kwargs}
        out = b.emit("random", **params)
        return None if name in SETTERS else out
    lower.__name__ = f"lower_random_{name}"
    return lower


def _register() -> None:
    for name in DRAWS + SETTERS:
        if hasattr(np.random, name):
            lowering(getattr(np.random, name))(_lowering(name))


register_on_import("numpy.random", _register)  # importing it takes longer than the rest
