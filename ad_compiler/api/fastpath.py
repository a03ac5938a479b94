"""The fast call path of a gradient function: plain ndarrays and Python floats in,
the generated function's own outputs out.

Two levels, both checked before anything else on every call:

* :func:`fast_call` decides once per signature whether the generated function's
  outputs already are the result (no packing, no Tensors, no Parameters);
* :func:`guarded` makes, for the signature used last, a guard specialised to it:
  a small generated function that checks each input's type, shape and dtype in
  one expression and calls the generated gradient. Calling the gradient function
  runs it directly (``GradFunction.__call__`` is the guard of the signature used
  last), so a cache hit is one Python frame; a miss hands the call on to the
  general path.
"""
from __future__ import annotations

import ast
import inspect
import keyword
from functools import partial
from typing import Callable, NamedTuple

import numpy as np

from .state import indent, reader_code


class _Miss:
    """What a guard returns when its checks fail (no gradient returns it)."""

    def __repr__(self) -> str:
        return "MISS"


#: a module constant rather than the guard itself: a guard that returned itself
#: would sit in a reference cycle (through its namespace), and what it holds (the
#: differentiated function, the generated code) would wait for the cycle collector
MISS = _Miss()


#: the key of a Python int or bool argument: its type and value (code specialises on it)
_STATIC_TYPES = (int, bool)


def ndarray_signature(args):
    """The signature of ``args`` when every one is a plain ndarray, a Python float, or
    a Python int or bool (by value: compiled code specialises on it), else None."""
    key = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key.append((a.dtype, a.shape))
        elif t is float:
            key.append(float)
        elif t in _STATIC_TYPES:
            key.append((t, a))
        else:
            return None
    return tuple(key)


def fast_call(config, entry, args):
    """``(generated function, bare)`` to call directly in the common case, or None.

    When every input is a plain ndarray of at least one dimension, a Python float
    whose gradient the generated code already returns as a Python float, or a Python
    int or bool that is not differentiated (its value is in the code), no Parameter
    is read and only input gradients are returned, the generated function's outputs
    already are the result: one gradient bare (``bare``: take output 0), several as
    the tuple itself. Any other case goes through :func:`packing.pack`.
    """
    if (config.sens or config.has_aux or config.with_value or config.return_ids
            or config.by_list or entry.params or entry.randoms or ndarray_signature(args) is None
            or any(type(a) is np.ndarray and a.ndim == 0 for a in args)
            or any(type(a) in _STATIC_TYPES for a in _selected(entry, args))
            or not all(v.type.weak for v, a in zip(_input_grads(entry), _selected(entry, args))
                       if type(a) is float)):
        return None
    fn = entry.compiled.fn
    n = len(entry.positions)
    if config.style == "gradop" and config.positions == "all":
        return fn, False
    if n == 0:
        return None
    return fn, n == 1


def _input_grads(entry):
    """The IR outputs holding the input gradients (after any value outputs)."""
    return entry.ir.outputs[entry.n_value_outs:]


def _selected(entry, args):
    return [args[p] for p in entry.positions]


class Guard(NamedTuple):
    """The two forms of one signature's guard (see :func:`guarded`)."""
    call: Callable      # called as the gradient function: the gradient, or ``miss(...)``
    probe: Callable     # probe(args): the gradient, or MISS


def parameter_names(fn) -> tuple[tuple[str, ...] | None, str]:
    """``(names, name)``: the names of the parameters of ``fn`` (a Cell's
    ``construct``) when every one can be given by position or by keyword (``def
    f(x, y=1.0)``), else None (``*args``, keyword-only, ``**kwargs``, positional-only,
    or no signature to read); and ``fn``'s name (``"call"`` without one)."""
    from ..frontend.resolve import is_cell
    target = getattr(fn, "construct", None) if is_cell(fn) else fn
    name = getattr(target, "__name__", None)
    name = name if isinstance(name, str) and name.isidentifier() else "call"
    try:
        sig = inspect.signature(target, follow_wrapped=False)
    except (TypeError, ValueError):
        return None, name
    if any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in sig.parameters.values()):
        return None, name
    return tuple(sig.parameters), name


def _call_again(miss, names, values, rest):
    """Call ``miss`` as the guard was called: the values given by position (the
    leading ones, then ``rest``), those after a gap by keyword (binding them by
    name or by position is the same for these parameters)."""
    args, kwargs = [], {}
    for name, value in zip(names, values):
        if value is MISS:
            continue
        if kwargs or len(args) < names.index(name):
            kwargs[name] = value
        else:
            args.append(value)
    return miss(*args, *rest, **kwargs)


def guarded(key, fast, miss, captured=None, owner=None, params=None, name="call") -> Guard:
    """The guard of signature ``key`` (see :func:`ndarray_signature`): the gradient when
    the inputs have that signature and the captured state is still what the code was
    compiled for; otherwise ``call`` hands the call on to ``miss`` and ``probe``
    returns :data:`MISS`.

    ``call`` is what calling the gradient function runs (``GradFunction.__call__``),
    so a cache hit is one Python frame. ``fast`` is ``(generated function, bare)``
    from :func:`fast_call`. A dtype is compared by identity (NumPy's built-in dtypes
    are singletons); an equal dtype that is another object only takes the slower
    path. The reads and checks of the ``captured`` state (api/state.py) are inlined
    after the input checks, with ``owner`` as their root; the captured arrays follow
    the inputs.

    ``params``: the differentiated function's parameter names (:func:`parameter_names`).
    When given, ``call`` takes them as its own parameters, named ``name`` (the
    function's): a call binds as a call of the function would (``g(x, y=y)``), and
    it needs no ``*args`` tuple or ``**kwargs`` dict. Without them (or when a name
    would shadow one the guard reads), ``call`` takes ``*args, **kwargs``.
    """
    fn, bare = fast
    namespace = {"ndarray": np.ndarray, "fn": fn, "owner": owner, "MISS": MISS, "miss": miss}
    for i, k in enumerate(key):
        if k is float:
            continue
        if k[0] is int or k[0] is bool:  # (identity: np.dtype('int64') == int)
            namespace[f"value{i}"] = k[1]
        else:
            namespace[f"dtype{i}"], namespace[f"shape{i}"] = k
    read, outs = (reader_code(captured, namespace, "{fail}", strong_roots=True) if captured
                  else ("", []))
    names = [f"a{i}" for i in range(len(key))]
    unpack = f"{', '.join(names)}{',' if len(names) == 1 else ''} = args"
    # unpacking checks the number of inputs (no len() call: a try costs nothing)
    take = (f"    try:\n        {unpack}\n    except ValueError:\n        {{fail}}\n"
            if names else "    if args:\n        {fail}\n")
    probe = _guard_source("probe", "args", take, "return MISS", read, *_body(key, names, outs, bare))
    call = _named_call(probe, key, read, outs, bare, params, name, namespace, miss)
    if call is None:
        name = "call"
        call = _guard_source(name, "*args, **kwargs", "    if kwargs:\n        {fail}\n" + take,
                             "return miss(*args, **kwargs)", read, *_body(key, names, outs, bare))
    return Guard(call=_define(call, name, namespace), probe=_define(probe, "probe", namespace))


def _define(source: str, name: str, namespace: dict) -> Callable:
    """The function ``name`` that ``source`` defines, run in ``namespace``."""
    exec(compile(source, "<ad_compiler fast path>", "exec"), namespace)  # noqa: S102
    return namespace.pop(name)  # not left in its own globals: no cycle


def _body(key, names, outs, bare) -> tuple[list[str], str]:
    """``(checks, call)``: the conditions on the inputs ``names`` of signature ``key``
    and the call of the generated function (captured arrays ``outs`` after them)."""
    checks, dynamic = [], []
    for i, (name, k) in enumerate(zip(names, key)):
        if k is float:
            checks.append(f"type({name}) is float")
        elif k[0] is int or k[0] is bool:
            # not an input of the generated code: its value is in it
            checks.append(f"type({name}) is {k[0].__name__} and {name} == value{i}")
            continue
        else:
            checks.append(f"type({name}) is ndarray and {name}.shape == shape{i} "
                          f"and {name}.dtype is dtype{i}")
        dynamic.append(name)
    return checks, f"fn({', '.join(dynamic + outs)})" + ("[0]" if bare else "")


def _named_call(probe, key, read, outs, bare, params, name, namespace, miss) -> str | None:
    """The source of the guard's call form taking the function's own parameters (see
    :func:`guarded`), or None when it cannot: no names, fewer names than inputs, or a
    name the guard's code reads already (it would shadow it)."""
    if params is None or len(params) < len(key) or keyword.iskeyword(name):
        return None
    read_names = {n.id for n in ast.walk(ast.parse(probe)) if isinstance(n, ast.Name)}
    if read_names & {*params, name, "rest", "again", "probe"} or name in params:
        return None
    namespace["again"] = partial(_call_again, miss, params)
    checks, call = _body(key, list(params[:len(key)]), outs, bare)
    # parameters after the inputs of this signature must not be given; nor more inputs
    checks += [f"{p} is MISS" for p in params[len(key):]] + ["not rest"]
    head = ", ".join([f"{p}=MISS" for p in params] + ["*rest"])
    values = f"({', '.join(params)}{',' if len(params) == 1 else ''})"
    return _guard_source(name, head, "", f"return again({values}, rest)", read, checks, call)


def _guard_source(form, head, take, fail, read, checks, call) -> str:
    """A guard named ``form`` taking ``head``: ``take`` (with ``{fail}``) binds the
    inputs, then the ``checks`` and the ``read`` of captured state pass or ``fail``."""
    if read:
        read = ("        try:\n" + indent(read.replace("{fail}", fail), 12)
                + f"        except Exception:\n            {fail}\n")
    return (f"def {form}({head}):\n"
            f"{take.replace('{fail}', fail)}"
            f"    if {' and '.join(checks) or 'True'}:\n"
            f"{read}"
            f"        return {call}\n"
            f"    {fail}\n")
