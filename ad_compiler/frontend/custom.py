"""Calls with their own adjoint: a Cell with ``bprop``, a function made by
``ms.custom_vjp``/``custom_jvp``, a checkpointed function (``ms.checkpoint``) or
Cell (``Cell.recompute()``). Each call becomes one ``bprop_call`` op.

The op's region is the inlined forward code (``construct``, or the custom
function's ``fwd``), its arguments standing for the call's dynamic inputs.
Reverse mode then uses the rule's own backward function instead of
differentiating the region (ad/custom.py). Static arguments are passed as they
are. A ``custom_vjp`` call's region also yields the residuals ``fwd`` returns,
as extra results after the outputs, for ``bwd`` to read.
"""
from __future__ import annotations

from ..ir.core import Block, Op, Value
from ..records import Equal, Frozen


def has_bprop(cell) -> bool:
    return callable(getattr(type(cell), "bprop", None))


class CellRule(Frozen):
    """``cell(...)``: forward is ``construct``; backward ``cell.bprop(*inputs, out, dout)``."""
    cell: object

    _fields = ("cell",)

    def __init__(self, cell):
        object.__setattr__(self, "cell", cell)

    @property
    def name(self) -> str:
        return f"{type(self.cell).__name__}.bprop"

    def forward(self, lifter, args, kwargs):
        result = lifter.inline_function(type(self.cell).construct, [self.cell, *args], kwargs,
                                        name=f"{type(self.cell).__name__}.construct",
                                        owner=self.cell)
        return result, ()

    def __repr__(self) -> str:
        return f"bprop of {type(self.cell).__name__}"


class FunctionRule(Frozen):
    """``f(...)`` for ``f = ms.custom_vjp(fn)``: forward is ``fwd`` (its output and
    residuals); backward ``bwd(residuals, g)``."""
    custom: object

    _fields = ("custom",)

    def __init__(self, custom):
        object.__setattr__(self, "custom", custom)

    @property
    def name(self) -> str:
        return f"{self.custom.__name__}'s bwd"

    def forward(self, lifter, args, kwargs):
        from ..errors import UnsupportedOperationError
        pair = lifter.inline_function(self.custom.fwd, list(args), kwargs)
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise UnsupportedOperationError(
                f"the fwd of {self.custom.__name__} must return a pair (output, residuals)",
                hint="return out, (values bwd needs)")
        return pair

    def __repr__(self) -> str:
        return f"custom_vjp of {self.custom.__name__}"


class JVPRule(Frozen):
    """``f(...)`` for ``f = ms.custom_jvp(fn)``: forward is ``fn`` itself; the tangent is
    ``jvp(primals, tangents)[1]``, and reverse mode transposes that (linear) map."""
    custom: object

    _fields = ("custom",)

    def __init__(self, custom):
        object.__setattr__(self, "custom", custom)

    @property
    def name(self) -> str:
        return f"{self.custom.__name__}'s jvp"

    def forward(self, lifter, args, kwargs):
        from ..errors import UnsupportedOperationError
        if kwargs or not all(isinstance(a, Value) for a in args):
            raise UnsupportedOperationError(
                f"{self.custom.__name__} (a custom_jvp function) takes arrays and numbers "
                "computed in the function, positionally",
                hint="pass constants in through a closure of the function instead")
        return lifter.inline_function(self.custom.fn, list(args), {}), ()

    def __repr__(self) -> str:
        return f"custom_jvp of {self.custom.__name__}"


class RecomputeRule(Frozen):
    """A call of ``ms.checkpoint(fn)`` or of a Cell after ``recompute()``: forward is the
    function (or ``construct``) itself; backward recomputes it and differentiates it."""
    fn: object
    cell: object = None

    _fields = ("fn", "cell")

    def __init__(self, fn, cell=None):
        _set = object.__setattr__
        _set(self, "fn", fn)
        _set(self, "cell", cell)

    @property
    def name(self) -> str:
        return f"checkpoint of {self.fn.__name__}"

    def forward(self, lifter, args, kwargs):
        if self.cell is None:
            return lifter.inline_function(self.fn, list(args), kwargs), ()
        name = f"{type(self.cell).__name__}.construct"
        return lifter.inline_function(self.fn, [self.cell, *args], kwargs, name=name,
                                      owner=self.cell), ()

    def __repr__(self) -> str:
        return self.name


def recomputed(cell) -> bool:
    return bool(getattr(cell, "_recompute", False))


def note_recompute_flag(captures, cell) -> None:
    """Record that the compiled code read ``cell``'s ``recompute()`` flag: a later
    ``recompute()`` (or ``recompute(False)``) makes it compile again."""
    captures.note(captures.attr(cell, "_recompute"), getattr(cell, "_recompute", False))


def rule_of(callee):
    """The adjoint rule of ``callee``'s calls, or None for an ordinary callable."""
    from ..api.checkpoint import Checkpointed
    from ..api.custom_rules import CustomJVP, CustomVJP
    from .resolve import construct_of, is_cell
    if isinstance(callee, Checkpointed):
        return RecomputeRule(callee.fn)
    if isinstance(callee, CustomVJP):
        return FunctionRule(callee.checked())
    if isinstance(callee, CustomJVP):
        return JVPRule(callee.checked())
    if is_cell(callee) and has_bprop(callee):
        return CellRule(callee)
    if is_cell(callee) and recomputed(callee):
        return RecomputeRule(construct_of(callee), callee)
    return None


def values_of(tree, out: list) -> None:
    """Append the IR values in ``tree`` (tuples, lists, dicts), depth first."""
    if isinstance(tree, Value):
        out.append(tree)
    elif isinstance(tree, (tuple, list)):
        for t in tree:
            values_of(t, out)
    elif isinstance(tree, dict):
        for t in tree.values():
            values_of(t, out)


def replace_values(tree, mapping: dict):
    """``tree`` with each value ``v`` replaced by ``mapping[id(v)]`` (when there)."""
    if isinstance(tree, Value):
        return mapping.get(id(tree), tree)
    if isinstance(tree, (tuple, list)):
        return type(tree)(replace_values(t, mapping) for t in tree)
    if isinstance(tree, dict):
        return {k: replace_values(t, mapping) for k, t in tree.items()}
    return tree


def call_with_rule(lifter, rule, args, kwargs):
    """Lift a call with its own adjoint ``rule`` as a ``bprop_call`` op; returns its
    result tree."""
    inputs: list = []
    values_of((args, kwargs), inputs)
    region = Block(args=[Value(v.type, v.hint) for v in inputs])
    inner = {id(v): a for v, a in zip(inputs, region.args)}
    with lifter.b.inside(region):
        result, residuals = rule.forward(lifter, replace_values(list(args), inner),
                                         replace_values(dict(kwargs), inner))
        residuals = _as_values(lifter.b, residuals)
    outputs: list = []
    values_of(result, outputs)
    saved: list = []
    values_of(residuals, saved)
    region.results = outputs + saved
    results = [Value(o.type, o.hint) for o in region.results]
    by_inner = {id(o): r for o, r in zip(region.results, results)}
    # the structures, with positions instead of values (params are not renamed when
    # the IR is cloned): an argument's values are inputs, the residuals results
    params = {"rule": rule, "n_out": len(outputs),
              "args": _positions(list(args), {id(v): k for k, v in enumerate(inputs)}),
              "residuals": _positions(residuals, {id(v): len(outputs) + k
                                                  for k, v in enumerate(saved)})}
    lifter.b.add_op(Op("bprop_call", list(inputs), params, results, [region], lifter.b.loc))
    return replace_values(result, by_inner)


class At(Frozen, Equal):
    """A position in an op's inputs (or results) where a structure holds a value."""
    index: int

    _fields = ("index",)

    def __init__(self, index):
        object.__setattr__(self, "index", index)


def _positions(tree, index: dict):
    if isinstance(tree, Value):
        return At(index[id(tree)])
    if isinstance(tree, (tuple, list)):
        return tuple(_positions(t, index) for t in tree)
    return tree if tree is None else None  # a static argument: no gradient


def _as_values(b, tree):
    """Residuals as IR values (a Python number ``fwd`` saves becomes a constant)."""
    if isinstance(tree, (tuple, list)):
        return tuple(_as_values(b, t) for t in tree)
    if isinstance(tree, Value) or tree is None:
        return tree
    return b.const(tree)
