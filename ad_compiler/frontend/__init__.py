"""The frontend: a Python function (or Cell, or object with a lowering) → one IR Function.

Pipeline: ``parse`` (getsource → gast, real lines) → ``fence`` (reject what is not
handled) → ``to_ssa`` (resolve names, run the code symbolically, emit ops).

>>> import numpy as np
>>> from ad_compiler.ir.core import AType
>>> def f(x, scale=2.0):
...     y = np.sin(x) * scale
...     return y, x.shape
>>> lifted = lift(f, (AType((3,), np.dtype('float64')),))
>>> lifted.out_tree
(0, (Static(value=3),))

Contract (used by the API layer):

* ``lifted.function.args`` are the AType leaves of ``arg_specs`` flattened depth
  first in order (:func:`.specs.tree_leaves`), then one argument per Parameter
  the code reads, in the order of first read (``lifted.params``), then one per
  captured array (``lifted.captured.arrays``, see :mod:`.captured`).
* ``lifted.captured`` records every read of captured state: what must be read
  or checked before each call of code compiled from this function.
* ``lifted.out_tree`` is the returned structure; Value leaves are indices into
  ``lifted.function.outputs``, other leaves :class:`Static`.
* ``lifted.n_inputs`` is the number of AType leaves.
* ``lifted.loc`` is where the result comes from: the top-level function's last
  ``return`` lifted, else its ``def`` (or lambda) line.
* ``fn`` is lifted through its lowering if it has one (a gradient function, an
  op object), else as a Cell (``type(fn).construct`` with ``self`` bound), a
  bound method, a plain function, or a ``functools.partial`` or an instance with
  a Python ``__call__`` (:mod:`.objects`; the object is the owner): the same
  order as calls inside lifted code.
* Lowerings receive a builder with ``b.read_parameter(p)``: the Value of
  Parameter ``p`` in the function being lifted (an argument created on first
  read). A lowering that inlines other IR (a gradient function called inside
  lifted code) maps that IR's Parameters through it.
"""
from __future__ import annotations

from .custom import call_with_rule, has_bprop, note_recompute_flag, rule_of

import inspect
from typing import Any

from ..ad import rules
from ..errors import GradTypeError, UnsupportedOperationError, located
from ..ir.core import AType, Function
from ..records import Equal
from ..stages import stage
from .captured import CapturedState, current_epoch
from .iterables import Appender, Iteration, LoopList
from .objects import is_user_object_call
from .parse import parse_function
from .resolve import GlobalScope, Scope, construct_of, is_cell, local_names
from .specs import Static, build_out_tree, spec_to_values, tree_leaves, tree_map
from .to_ssa import Lifter, stale_use

__all__ = ["lift", "Lifted", "Static", "tree_leaves", "owner_of"]


class Lifted(Equal):
    """The result of :func:`lift` (see the module docstring for the contract)."""

    function: Function
    params: list
    out_tree: Any
    n_inputs: int
    captured: CapturedState
    loc: Any = None
    effects: list  # Parameters written, outputs after out_tree's
    randoms: list  # (AType, draw) per input after the captured

    _fields = ("function", "params", "out_tree", "n_inputs", "captured", "loc", "effects",
               "randoms")

    def __init__(
            self, function, params, out_tree, n_inputs, captured, loc=None, effects=None,
            randoms=None):
        self.function = function
        self.params = params
        self.out_tree = out_tree
        self.n_inputs = n_inputs
        self.captured = captured
        self.loc = loc
        self.effects = [] if effects is None else effects
        self.randoms = [] if randoms is None else randoms

    __hash__ = None


@stage("lift")
def lift(fn, arg_specs, effects: bool = False, randoms: bool | None = None) -> Lifted:
    """Lift ``fn`` specialised on ``arg_specs`` (one pytree per positional argument).

    With ``effects``, the new values of the Parameters the code writes (BatchNorm's
    moving statistics) follow the outputs, one per Parameter of ``Lifted.effects``,
    and the random arrays it uses (dropout masks) are inputs after the captured
    arrays, each made by its ``Lifted.randoms`` function; without, such writes
    are left out and random arrays are refused. ``randoms=False`` refuses random
    arrays even with ``effects`` (forward mode: one mask per call cannot be kept
    across the calls a Jacobian makes)."""
    arg_specs = tuple(arg_specs)
    lifter = Lifter(_function_name(fn), current_epoch())
    lifter.effects_allowed = effects
    lifter.randoms_allowed = effects if randoms is None else randoms
    result = tree_map(lambda v: _items_of(lifter.b, v), _lift_callable(lifter, fn, arg_specs))
    _check_result(result, lifter.function.loc)
    outputs: list = []
    out_tree = build_out_tree(result, outputs)
    lifter.function.body.results.extend(outputs)
    written = list(lifter.effects.values()) if effects else []
    lifter.function.body.results.extend(v for _, v in written)
    n_inputs = sum(isinstance(leaf, AType) for leaf in tree_leaves(arg_specs))
    args = lifter.function.body.args
    for v in outputs:
        if id(v) in lifter.stale:
            with located(lifter.return_loc or lifter.function.loc):
                raise stale_use(lifter.stale[id(v)][1])
    args[n_inputs:] = ([lifter.parameter_argument(p) for p in lifter.params]
                       + lifter.captured_arg_values() + [v for v, _ in lifter.randoms])
    return Lifted(lifter.function, list(lifter.params), out_tree, n_inputs,
                  lifter.captures.freeze(), lifter.return_loc or lifter.function.loc,
                  [p for p, _ in written], [(v.type, draw) for v, draw in lifter.randoms])


def owner_of(fn):
    """The object that the reads of ``self`` in ``fn``'s lifted code start from (the
    Cell, or the ``self`` of a bound method), passed to the captured-state reader
    at each call; None for other callables."""
    if rules.find_lowering(fn) is not None:
        return None
    if is_cell(fn):
        return None if has_bprop(fn) else fn
    if rule_of(fn) is not None:
        return None
    if is_user_object_call(fn):
        return fn
    return fn.__self__ if inspect.ismethod(fn) else None


def _items_of(b, leaf):
    """A returned list a loop or a comprehension built, of known length: a Python list
    of its items, as Python returns it."""
    if isinstance(leaf, LoopList) and leaf.length is not None:
        return [leaf.get(b, k) for k in range(leaf.length)]
    return leaf


def _check_result(result, loc) -> None:
    """Lift-time objects that have no run-time value cannot be returned."""
    for leaf in tree_leaves(result):
        if isinstance(leaf, (LoopList, Appender)):
            raise UnsupportedOperationError(
                f"returning {leaf.name}, a list built by a loop whose length is known only "
                "at run time, is not supported", loc,
                hint=f"return np.stack({leaf.name}) (or a tuple of its items)")
        if isinstance(leaf, Iteration):
            raise UnsupportedOperationError(
                "returning a range/enumerate/zip over run-time values is not supported", loc,
                hint="return the arrays it iterates over")


def _lift_callable(lifter: Lifter, fn, specs: tuple):
    lower = rules.find_lowering(fn)
    if lower is not None:
        values = [spec_to_values(s, f"x{i}", lifter.new_arg) for i, s in enumerate(specs)]
        return lower(lifter.b, *values)
    if is_cell(fn) and not has_bprop(fn):  # the owner: its reads start from it
        lifter.captures.owner(fn)
        note_recompute_flag(lifter.captures, fn)
    rule = rule_of(fn)
    if rule is not None:
        values = [spec_to_values(s, f"x{i}", lifter.new_arg) for i, s in enumerate(specs)]
        return call_with_rule(lifter, rule, values, {})
    if is_cell(fn):
        return _lift_function(lifter, construct_of(fn), specs, fn)
    if inspect.ismethod(fn):
        return _lift_function(lifter, fn.__func__, specs, fn.__self__)
    if inspect.isfunction(fn):
        return _lift_function(lifter, fn, specs)
    if is_user_object_call(fn):
        return _lift_object_call(lifter, fn, specs)
    raise GradTypeError(f"cannot compile an object of type {type(fn).__name__}: it is not a "
                        "function, a method, a Cell, or an object with a lowering")


_SELF = object()


def _lift_function(lifter: Lifter, fn, specs: tuple, self_obj=_SELF):
    """Bind ``specs`` to ``fn``'s parameters (AType leaves become arguments named
    after them) and lift its body as the root frame."""
    parsed = parse_function(fn)
    lifter.function.loc = parsed.source.loc(parsed.node)
    sig = inspect.signature(fn, follow_wrapped=False)
    head = [] if self_obj is _SELF else [self_obj]
    try:
        bound = sig.bind(*head, *specs)
    except TypeError as exc:
        raise GradTypeError(f"{fn.__qualname__}() cannot take {len(specs)} arguments: {exc}",
                            lifter.function.loc,
                            hint=f"call the gradient function with the inputs of "
                                 f"{fn.__qualname__}{_shown_signature(sig, head)} (with "
                                 "sens_param=True, then the sensitivity)") from None
    args = list(head)
    for name, spec in list(bound.arguments.items())[len(head):]:
        value = spec_to_values(spec, name, lifter.new_arg)
        star = sig.parameters[name].kind is inspect.Parameter.VAR_POSITIONAL
        args.extend(value) if star else args.append(value)
    scope = Scope(local_names(parsed.node), GlobalScope(fn))
    owner = None if self_obj is _SELF else self_obj
    if owner is not None:
        lifter.captures.owner(owner)
    return lifter.run_frame(parsed.node, parsed.source, scope, sig, args, {},
                            (id(fn.__code__), id(owner)), fn.__qualname__, fn)


def _lift_object_call(lifter: Lifter, fn, specs: tuple):
    """A partial or an instance with a Python ``__call__`` (:mod:`.objects`), called
    with ``specs``: the object is the owner its reads start from."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # a partial of a function with no signature
        names = []
    names += [f"x{i}" for i in range(len(names), len(specs))]
    values = [spec_to_values(s, name, lifter.new_arg) for s, name in zip(specs, names)]
    lifter.captures.owner(fn)
    return lifter.call(fn, values, {})


def _shown_signature(sig, head) -> inspect.Signature:
    """``sig`` without the parameters bound already (``self``)."""
    return sig.replace(parameters=list(sig.parameters.values())[len(head):])


def _function_name(fn) -> str:
    if is_cell(fn):
        return type(fn).__name__
    name = getattr(getattr(fn, "__func__", fn), "__name__", None) or type(fn).__name__
    return "lambda_" if name == "<lambda>" else name
