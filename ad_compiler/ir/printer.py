"""Text form of the IR: one op per line, type and user's line beside it.

Example (``def f(x): return x * np.sin(x)`` at line 3 of model.py)::

    func f(%x: f64[3]) {
      %sin = sin %x                      # f64[3]  @model.py:3
      %mul = mul %x, %sin                # f64[3]  @model.py:3
      return %mul
    }

Names are assigned deterministically in definition order from value hints, by
the same :class:`~.names.Namespace` as generated code (ASCII identifiers). Each
op line and the function's header go through :func:`~.names.one_line`, so text
from outside (a file name or an object's repr holding a newline) never breaks
a line.
"""
from __future__ import annotations

import numpy as np

from .names import Namespace, one_line, same_quantity


class _Names:
    def __init__(self, reuse=None):
        self.ns = Namespace()
        self.names: dict[int, str] = {}
        self.reuse = reuse or {}   # passes/reuse.py: id(op) -> input k

    def __call__(self, value) -> str:
        key = id(value)
        if key not in self.names:
            op, k = value.producer, None
            if op is not None and len(op.results) == 1:
                k = self.reuse.get(id(op))
            if k is not None and same_quantity(op.inputs[k], value):
                self.names[key] = self(op.inputs[k])[1:]  # as codegen: dx += dx_1
            elif op is not None and op.prim == "const":  # codegen reads it where used
                self.names[key] = self.ns.fresh(f"{value.hint or 'c'}_value")
            else:
                self.names[key] = self.ns.fresh(value.hint)
        return "%" + self.names[key]


def format_param(value) -> str:
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return f"array({value.tolist()}, {value.dtype.name})"
        return f"array<{value.dtype.name}{list(value.shape)}>"
    return repr(value)


def _op_line(op, names, reuse=None) -> str:
    reuse = reuse or {}
    results = ", ".join(names(v) for v in op.results)
    inputs = ", ".join(names(v) for v in op.inputs)
    params = ", ".join(f"{k}={format_param(v)}" for k, v in op.params.items())
    if id(op) in reuse:  # passes/reuse.py: the input whose buffer takes the result
        params += (", " if params else "") + f"out={names(op.inputs[reuse[id(op)]])}"
    body = op.prim + (" " + inputs if inputs else "")
    if params:
        body += (" " if not inputs else " ") + "{" + params + "}"
    text = f"{results} = {body}" if results else body
    types = ", ".join(str(v.type) for v in op.results)
    comment = f"  # {types}" if types else "  #"
    if op.loc is not None:
        comment += f"  @{op.loc}"
    return one_line(f"{text:<40}{comment}")


def _block_lines(block, names, indent, reuse=None) -> list[str]:
    pad = "  " * indent
    lines = []
    for op in block.ops:
        lines.append(pad + _op_line(op, names, reuse))
        for i, region in enumerate(op.regions):
            args = ", ".join(f"{names(a)}: {a.type}" for a in region.args)
            lines.append(f"{pad}  region {i}({args}) {{")
            lines.extend(_block_lines(region, names, indent + 2, reuse))
            lines.append(f"{pad}    " + format_block_yield(region, names))
            lines.append(f"{pad}  }}")
    return lines


def format_function(fn) -> str:
    names = _Names(fn.reuse)
    args = ", ".join(f"{names(a)}: {a.type}" for a in fn.args)
    lines = [one_line(f"func {fn.name}({args}) {{")]
    lines.extend(_block_lines(fn.body, names, 1, fn.reuse))
    lines.append("  return " + ", ".join(names(v) for v in fn.outputs))
    lines.append("}")
    return "\n".join(lines)


def format_block_yield(block, names) -> str:
    return "yield " + ", ".join(names(v) for v in block.results)


def format_op(op) -> str:
    return _op_line(op, _Names()).rstrip()
