"""Traversal of gast trees: the child nodes of a node, and every node under one.

The same nodes in the same order as ``gast.iter_child_nodes`` and ``gast.walk``,
except the expression contexts (the ``Load``/``Store``/``Del`` of a name, an
attribute or a subscript: what they say is read from the node that has them),
returned as lists: ast's generators cost about twice as much, and the frontend
walks each function several times before lifting it (fence, desugaring, reads
and stores). Neither recurses: a sum of thousands of terms is a tree thousands
deep.
"""
from __future__ import annotations

from gast import AST

_FIELDS: dict = {}  # node class -> its fields, "ctx" left out


def children(node) -> list:
    """The nodes directly under ``node``, in field order (contexts left out)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = _FIELDS[type(node)] = tuple(f for f in node._fields if f != "ctx")
    out = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend([v for v in value if isinstance(v, AST)])
        elif isinstance(value, AST):
            out.append(value)
    return out


def walk(node) -> list:
    """``node`` and every node under it, breadth first (the order of ``gast.walk``)."""
    found = [node]
    for n in found:  # the list grows while it is read
        found.extend(children(n))
    return found
