"""Argument specs in, output tree out: the pytree conventions of :func:`~.lift`.

Invariants:

* A pytree is a tuple, list or dict (nested); anything else is a leaf. Leaves
  are visited depth first, in order: tuple/list by position, dict in insertion
  order (:func:`tree_leaves`); the API flattens runtime arguments with the
  same function so the two agree by construction.
* In an argument spec an :class:`~ad_compiler.ir.core.AType` leaf becomes a
  Function argument named after the parameter (``x``; ``x_0``, ``x_1`` inside a
  tuple; ``x_key`` inside a dict); any other leaf is static.
* In the output tree every Value leaf becomes an int (its index in
  ``Function.outputs``) and every other leaf a :class:`Static`.

>>> tree_leaves(((1, [2]), {'a': 3}))
[1, 2, 3]
"""
from __future__ import annotations

from typing import Any

from ..ir.core import AType, Value
from ..records import Equal, Frozen


class Static(Frozen, Equal):
    """An output known at compile time (a Python number, None, a string ...)."""

    value: Any

    _fields = ("value",)

    def __init__(self, value):
        object.__setattr__(self, "value", value)


def is_tree_node(obj) -> bool:
    return isinstance(obj, (tuple, list, dict))


def tree_leaves(tree) -> list:
    """The leaves of ``tree``, depth first, in order."""
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in tree_leaves(v)]
    if isinstance(tree, (tuple, list)):
        return [leaf for v in tree for leaf in tree_leaves(v)]
    return [tree]


def tree_map(fn, tree):
    """``tree`` with every leaf replaced by ``fn(leaf)``; container types are kept."""
    if isinstance(tree, dict):
        return {k: tree_map(fn, v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [tree_map(fn, v) for v in tree]
    if isinstance(tree, tuple):
        items = [tree_map(fn, v) for v in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else tuple(items)
    return fn(tree)


def spec_to_values(spec, hint: str, new_arg):
    """The lift-time value of one argument spec: AType leaves become ``new_arg(type, hint)``."""
    if isinstance(spec, AType):
        return new_arg(spec, hint)
    if isinstance(spec, dict):
        return {k: spec_to_values(v, f"{hint}_{k}", new_arg) for k, v in spec.items()}
    if isinstance(spec, (tuple, list)):
        items = [spec_to_values(v, f"{hint}_{i}", new_arg) for i, v in enumerate(spec)]
        return items if isinstance(spec, list) else tuple(items)
    return spec


def build_out_tree(result, outputs: list):
    """The output tree of ``result``; appends each Value leaf to ``outputs``."""
    def leaf(v):
        if isinstance(v, Value):
            outputs.append(v)
            return len(outputs) - 1
        return Static(v)
    return tree_map(leaf, result)
