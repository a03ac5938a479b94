"""The fast call path of a gradient function: a generated guard per call signature.

:func:`guarded` makes, for a signature whose gradients need no Parameter and no
sensitivity (:func:`_fits`), a small generated function that checks each input
(:func:`_take`: arrays and Tensors by type, shape and dtype, constants by value,
tuples and lists item by item), reads and checks the captured state, calls the
generated gradient and arranges its outputs as the general path would (a
Tensor's gradient as a Tensor). Calling the gradient function runs it directly
(``GradFunction.__call__`` is the guard of the signature used last), so a cache
hit is one Python frame; a miss hands the call on to the general path.
"""
from __future__ import annotations

import ast
import inspect
import itertools
import keyword
from functools import partial
from typing import Callable, NamedTuple

import numpy as np

from ..errors import GradTypeError
from ..tensor import Tensor, unwrap, wrap
from .packing import write_parameters
from .keywords import call_parameters, display_name
from .signature import ARRAY, PYFLOAT, TENSOR, signature
from .state import indent, reader_code


class _Miss:
    """What a guard returns when its checks fail (no gradient returns it)."""

    def __repr__(self) -> str:
        return "MISS"


#: a module constant rather than the guard itself: a guard that returned itself
#: would sit in a reference cycle (through its namespace), and what it holds (the
#: differentiated function, the generated code) would wait for the cycle collector
MISS = _Miss()


def fast_key(args):
    """The signature of ``args`` (:func:`~.signature.signature`, the key of the guards),
    or None when the inputs are refused (the general path says why)."""
    try:
        return signature(args)
    except GradTypeError:
        return None


def _fits(config, entry) -> bool:
    """No sensitivity is passed, no ids are returned, nothing random is drawn."""
    return not (config.sens or config.return_ids or entry.randoms)


def value_tensor(v):
    """A forward output as the general path returns it to Tensor inputs (packing._value)."""
    return v if isinstance(v, float) else wrap(np.asarray(v))


def _value(tree, made: list | None) -> str | None:
    """The expression of the forward output of structure ``tree`` (an output index,
    or tuples and lists of them), or None for another structure (the general path).
    ``made``: the forward outputs are returned as Tensors; the statements making
    each (as :func:`value_tensor` makes it) are appended to it, one Tensor per
    occurrence of an index."""
    if type(tree) is int:
        if made is None:
            return f"o{tree}"
        name = f"fwd{len(made)}"
        # an ndarray (what a forward output of at least one dimension is) is wrapped
        # inline; anything else (a float, a NumPy scalar) takes value_tensor
        made.append(f"if type(o{tree}) is ndarray:\n    {name} = new(Tensor)\n"
                    f"    {name}._data = o{tree}\nelse:\n    {name} = value_tensor(o{tree})\n")
        return name
    if type(tree) in (tuple, list):
        items = [_value(t, made) for t in tree]
        if None in items:
            return None
        return _tuple(items) if type(tree) is tuple else f"[{', '.join(items)}]"
    return None


class _Input(NamedTuple):
    """How a guard takes one argument: the ``checks`` that it has the signature's
    shape, the expressions of its dynamic ``leaves`` (the generated function's
    inputs) and their ``kinds``, and ``result(outs)``: the expression of its
    gradient from an iterator over the expressions of the leaves' gradients (each
    already of its leaf's type)."""
    checks: list
    leaves: list
    kinds: list
    result: Callable


def _take(e: str, k, x, ns: dict, counter, first: str | None = None) -> _Input | None:
    """How a guard takes argument ``x`` (the expression ``e``; ``first``, its first
    mention in the checks, may bind ``e``) of signature ``k``, or None when it cannot
    (a guard then never runs: the general path takes the call). Ints, bools, strings
    and None are checked by value (the code specialises on them); arrays and Tensors
    of at least one dimension by type, shape and dtype; tuples and lists item by item,
    each item bound to a name at its first check."""
    first = first or e
    if k == PYFLOAT:
        return _Input([f"type({first}) is float"], [e], [k], next)
    kind = k[0]
    if kind == "static":
        t, value = k[1], k[2]
        if value is None:
            check = f"{first} is None"
        elif t in (int, bool, str):
            i = next(counter)
            ns[f"value{i}"] = value
            # the same object is that value (the common case: a small int, True, an
            # interned string): the type and value comparisons are not needed
            check = (f"{first} is value{i}" if t is bool else
                     f"({first} is value{i} or type({e}) is {t.__name__} and {e} == value{i})")
        else:
            return None
        return _Input([check], [], [], lambda outs: "None")
    if kind in (ARRAY, TENSOR):
        _, dtype, shape = k
        if not shape or kind == TENSOR and type(x) is not Tensor:
            return None  # a 0-d array's gradient may be a NumPy scalar; a Parameter is packed
        i = next(counter)
        ns[f"dtype{i}"], ns[f"shape{i}"] = dtype, shape
        if kind == ARRAY:
            check = (f"type({first}) is ndarray and {e}.shape == shape{i} "
                     f"and {e}.dtype is dtype{i}")
            return _Input([check], [e], [kind], next)
        check = (f"type({first}) is Tensor and (data{i} := {e}._data).shape == shape{i} "
                 f"and data{i}.dtype is dtype{i}")
        return _Input([check], [f"data{i}"], [kind], next)
    if kind in (tuple, list):
        items = []
        for j, (ik, xi) in enumerate(zip(k[1], x)):
            name = f"item{next(counter)}"
            items.append(_take(name, ik, xi, ns, counter, f"({name} := {e}[{j}])"))
        if None in items:
            return None
        brackets = "()" if kind is tuple else "[]"
        comma = "," if kind is tuple and len(items) == 1 else ""
        return _Input([f"type({first}) is {kind.__name__} and len({e}) == {len(items)}"]
                      + [c for it in items for c in it.checks],
                      [leaf for it in items for leaf in it.leaves],
                      [kd for it in items for kd in it.kinds],
                      lambda outs: (brackets[0] + ", ".join(it.result(outs) for it in items)
                                    + comma + brackets[1]))
    return None  # a dict, another constant, a NumPy scalar: the general path


class Guard(NamedTuple):
    """The two forms of one signature's guard (see :func:`guarded`)."""
    call: Callable      # called as the gradient function: the gradient, or ``miss(...)``
    probe: Callable     # probe(args): the gradient, or MISS


def parameter_names(fn) -> tuple[tuple[str, ...] | None, str]:
    """``(names, qualname)``: the names of the parameters of ``fn`` (a Cell's
    ``construct``) when every one can be given by position or by keyword (``def
    f(x, y=1.0)``), else None (``*args``, keyword-only, ``**kwargs``, positional-only,
    or no signature to read); and the name Python's call errors give ``fn``."""
    params = call_parameters(fn)
    names = None if params is None or any(
        p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params) \
        else tuple(p.name for p in params)
    return names, display_name(fn)


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


def guarded(config, entry, args, key, miss, owner=None, params=None, qualname="call",
            tensors=False) -> Guard | None:
    """The guard of the call ``args`` of signature ``key`` (:func:`fast_key`) on
    ``entry``, or None when it would not be faster than the general path (see
    :func:`_fits`, :func:`_take`). A guard returns the gradient when the inputs
    have that signature and the captured state is still what the code was compiled
    for; otherwise ``call`` hands the call on to ``miss`` and ``probe`` returns
    :data:`MISS`.

    ``call`` is what calling the gradient function runs (``GradFunction.__call__``),
    so a cache hit is one Python frame. A dtype is compared by identity (NumPy's
    built-in dtypes are singletons); an equal dtype that is another object only
    takes the slower path. The reads and checks of the captured state (api/state.py)
    are inlined after the input checks, with ``owner`` as their root; the captured
    arrays follow the inputs. The gradients (and the value or aux outputs, as Tensors
    when ``tensors``) are arranged as :func:`~.packing.assemble` arranges them (a
    Tensor's gradient as a Tensor).

    ``params``: the differentiated function's parameter names (:func:`parameter_names`).
    When given, ``call`` takes them as its own parameters, named as the function
    (``qualname``): a call binds as a call of the function would (``g(x, y=y)``), and
    it needs no ``*args`` tuple or ``**kwargs`` dict. Without them (or when a name
    would shadow one the guard reads), ``call`` takes ``*args, **kwargs``.
    """
    if not _fits(config, entry):
        return None
    ns = {"ndarray": np.ndarray, "Tensor": Tensor, "new": object.__new__, "fn": entry.compiled.fn,
          "value_tensor": value_tensor, "as_tensor": as_tensor,
          "owner": owner, "MISS": MISS, "miss": miss}
    read, outs = (reader_code(entry.captured, ns, "{fail}", strong_roots=True, combined=True)
                  if entry.captured else ("", []))
    names = [f"a{i}" for i in range(len(key))]
    body = _body(config, entry, args, key, names, ns, outs, tensors)
    if body is None:
        return None
    unpack = f"{', '.join(names)}{',' if len(names) == 1 else ''} = args"
    # unpacking checks the number of inputs (no len() call: a try costs nothing)
    take = (f"    try:\n        {unpack}\n    except ValueError:\n        {{fail}}\n"
            if names else "    if args:\n        {fail}\n")
    probe = _guard_source("probe", "args", take, "return MISS", read, *body)
    name = qualname.rsplit(".", 1)[-1]
    name = name if name.isidentifier() else "call"   # (<lambda>)
    call = _named_call(probe, config, entry, args, key, read, outs, params, name, ns, miss,
                       tensors)
    if call is None:
        name = "call"
        call = _guard_source(name, "*args, **kwargs", "    if kwargs:\n        {fail}\n" + take,
                             "return miss(*args, **kwargs)", read, *body)
    call = _define(call, name, ns)
    call.__qualname__ = qualname   # Python's call errors name it: as they name fn
    return Guard(call=call, probe=_define(probe, "probe", ns))


def _define(source: str, name: str, namespace: dict) -> Callable:
    """The function ``name`` that ``source`` defines, run in ``namespace``."""
    exec(compile(source, "<ad_compiler fast path>", "exec"), namespace)  # noqa: S102
    return namespace.pop(name)  # not left in its own globals: no cycle


def _body(config, entry, args, key, names, ns, outs, tensors) -> tuple[list[str], str] | None:
    """``(checks, ret)``: the conditions on the inputs ``names`` and the statements
    returning the gradients (the Parameters read and the captured arrays ``outs``
    passed after the inputs), or None when the guard cannot take these inputs or
    arrange these results. ``tensors``: the forward output is returned as Tensors
    (packing.pack)."""
    counter = itertools.count()
    inputs = [_take(n, k, x, ns, counter) for n, k, x in zip(names, key, args)]
    weights = _weights(entry, ns)
    if None in inputs or weights is None:
        return None
    selected = [inputs[p] for p in entry.positions]
    kinds = [kd for it in selected for kd in it.kinds]
    nv = entry.n_value_outs
    if len(kinds) + len(weights) != len(entry.ir.outputs) - nv:
        return None
    # each gradient of the input's type (signature.to_input_type); a Tensor made as
    # tensor.wrap makes it, without the call; the outputs are unpacked into o0, o1 ...
    made = [(i, nv + i) for i, kd in enumerate(kinds) if kd == TENSOR]
    made += [(len(kinds) + k, nv + len(kinds) + k) for k, w in enumerate(weights) if w.ndim]
    wraps = "".join(f"grad{i} = new(Tensor)\ngrad{i}._data = o{j}\n" for i, j in made)
    # (a Python float's gradient may come as a 0-d array even when weak: a folded zero)
    o = iter([f"grad{i}" if kd == TENSOR else f"float(o{nv + i})" if kd == PYFLOAT
              else f"o{nv + i}" for i, kd in enumerate(kinds)])
    results = [it.result(o) for it in selected]
    weight_grads = [f"grad{len(kinds) + k}" if w.ndim else f"as_tensor(o{nv + len(kinds) + k})"
                    for k, w in enumerate(weights)]
    expr = _arranged(config, results, weight_grads)
    if expr is None:
        return None
    if config.with_value or config.has_aux:   # as packing.assemble arranges them
        values = [] if tensors else None
        value = _value(entry.out_tree if config.with_value else tuple(entry.out_tree[1:]),
                       values)
        if value is None:
            return None
        expr = f"({value}, {expr})" if config.with_value else f"({expr}, {value})"
        wraps = "".join(values or ()) + wraps
    checks = [c for it in inputs for c in it.checks]
    if entry.weights:  # a weight's requires_grad changes the result: it bumps the epoch
        ns["cells"], ns["epoch"] = _cells(), _cells().EPOCH
        checks.append("cells.EPOCH == epoch")
    leaves = [leaf for it in inputs for leaf in it.leaves]
    leaves += [f"param{j}._data" for j in range(len(entry.params))]
    call = f"fn({', '.join(leaves + outs)})"
    n_outs = len(entry.ir.outputs)
    unpack = _tuple([f"o{i}" for i in range(n_outs)])[1:-1]
    if expr == "o0" and not wraps and not entry.effects:
        return checks, f"return {call}[0]"
    if expr == _tuple([f"o{i}" for i in range(n_outs)]) and not wraps and not entry.effects:
        return checks, f"return {call}"   # the generated function's outputs already are the result
    if entry.effects:  # the Parameters the code writes are set first (packing.pack)
        ns["write"] = partial(write_parameters, entry)
        return checks, f"o = {call}\nwrite(o)\n{unpack} = o\n{wraps}return {expr}"
    return checks, f"{unpack} = {call}\n{wraps}return {expr}"


def _cells():
    from ..nn import cell
    return cell


def _weights(entry, ns) -> list | None:
    """The weights whose gradients are returned, each read by the code and not frozen
    (else None: the general path gives zeros), with the Parameters the code reads put
    in ``ns`` as ``param0, param1 ...``."""
    for j, param in enumerate(entry.params):
        ns[f"param{j}"] = param
    if any(j is None or getattr(w, "requires_grad", True) is False
           for w, j in zip(entry.weights, entry.weight_index)):
        return None
    return [np.asarray(unwrap(w)) for w in entry.weights]


def as_tensor(g):
    """A weight's gradient as the general path returns it (packing._weight_grad)."""
    return wrap(np.asarray(g))


def _arranged(config, inputs: list, weights: list) -> str | None:
    """The expression arranging the gradients as packing's ``_gradop``/``_grad`` do."""
    w_part = (weights[0] if config.weights_bare else _tuple(weights)) if config.by_list else None
    if config.style == "gradop":
        if config.positions == "all":
            return f"({_tuple(inputs)}, {w_part})" if config.by_list else _tuple(inputs)
        if config.by_list:
            return w_part
        return inputs[0] if inputs else "()"
    in_part = None
    if config.positions is not None:
        if not inputs:
            return None
        in_part = inputs[0] if len(config.positions) == 1 else _tuple(inputs)
    if not config.by_list:
        return in_part
    return w_part if config.positions is None else f"({in_part}, {w_part})"


def _tuple(items) -> str:
    items = list(items)
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def _named_call(probe, config, entry, args, key, read, outs, params, name, ns,
                miss, tensors) -> str | None:
    """The source of the guard's call form taking the function's own parameters (see
    :func:`guarded`), or None when it cannot: no names, fewer names than inputs, or a
    name the guard's code reads already (it would shadow it)."""
    if (params is None or len(params) < len(key) or keyword.iskeyword(name)
            or not all(n.isascii() for n in (name, *params))):
        return None  # (Python reads a non-ASCII name as its NFKC form: 'ｆn' is 'fn')
    read_names = {n.id for n in ast.walk(ast.parse(probe)) if isinstance(n, ast.Name)}
    if read_names & {*params, name, "rest", "again", "probe"} or name in params:
        return None
    ns["again"] = partial(_call_again, miss, params)
    checks, ret = _body(config, entry, args, key, list(params[:len(key)]), ns, outs, tensors)
    # parameters after the inputs of this signature must not be given; nor more inputs
    checks += [f"{p} is MISS" for p in params[len(key):]] + ["not rest"]
    head = ", ".join([f"{p}=MISS" for p in params] + ["*rest"])
    return _guard_source(name, head, "", f"return again({_tuple(params)}, rest)", read,
                         checks, ret)


def _guard_source(form, head, take, fail, read, checks, ret) -> str:
    """A guard named ``form`` taking ``head``: ``take`` (with ``{fail}``) binds the
    inputs, then the ``checks`` and the ``read`` of captured state pass (and ``ret``
    runs) or ``fail``."""
    if read:
        read = ("        try:\n" + indent(read.replace("{fail}", fail), 12)
                + f"        except Exception:\n            {fail}\n")
    return (f"def {form}({head}):\n"
            f"{take.replace('{fail}', fail)}"
            f"    if {' and '.join(checks) or 'True'}:\n"
            f"{read}"
            f"{indent(ret, 8)}"
            f"    {fail}\n")
