"""Which user line each line of the generated source comes from.

``source_lines(fn)`` generates the same source as :func:`~.emit.to_source` and,
for every line of it, the :class:`~ad_compiler.errors.SourceLoc` of the op that
wrote it (None for lines no op wrote: ``def``, ``return``, ``del``)::

    def f_grad(x, y):                      None
        # model.py:24: z = x * np.sin(y)   model.py:24
        sin = np.sin(y)                    model.py:24
        ...

Invariants:

* The map is data from code generation, not read back from the comments: each
  op's statements are tagged with its location while they are emitted, and the
  generated text is parsed once to learn where each statement landed. It holds
  with or without comments, and for a file name or line holding ``:`` or ``#``.
* A statement an op's emitter writes around its nested blocks (a loop header,
  the ``else:`` of a branch, a list append, a rebinding) belongs to that op; a
  statement of a nested block belongs to its own op. A comment line belongs to
  the op it introduces.
* The source is byte-identical to ``to_source(fn)`` with the same options: the
  tags are attributes of the ast nodes, which the writer does not read.

This runs only when a view asks for it (``ad-compiler show --html``); compiling a
gradient never pays for it.
"""
from __future__ import annotations

import ast

from ..depth import on_deep_stack
from .emit import Comment, EmitContext, unparse

_TAG = "_ad_loc"


class _Tagging(EmitContext):
    """An :class:`EmitContext` that tags each op's statements with the op's location."""

    def _op(self, op) -> list:
        stmts = super()._op(op)
        for stmt in stmts:  # statements of nested blocks were tagged by their own op
            if not hasattr(stmt, _TAG):
                setattr(stmt, _TAG, op.loc)
        return stmts


def source_lines(fn, comments: bool = True, reuse_buffers: bool = True) -> tuple[str, list]:
    """``(source, locs)``: the generated source of ``fn`` and, per line, the location
    of the op that wrote it (``locs[i]`` for line ``i + 1``; None for no op)."""
    # astor and ast.parse recurse once per nested block, as compile_function does
    return on_deep_stack(_source_lines, fn, comments, reuse_buffers)


def _source_lines(fn, comments: bool, reuse_buffers: bool) -> tuple[str, list]:
    ctx = _Tagging(fn, comments, reuse_buffers)
    tree = ast.Module(body=[ctx.function_def()], type_ignores=[])
    source = unparse(tree)
    locs: list = [None] * (source.rstrip("\n").count("\n") + 1)  # lines end at \n only
    _place(tree.body, ast.parse(source).body, None, locs)
    return source, locs


def _place(made: list, read: list, outer, locs: list) -> None:
    """Fill ``locs`` for the statements ``made`` (emitted, with comments) that were
    parsed back as ``read``: each one's lines, then its nested blocks' lines."""
    real = [s for s in made if not isinstance(s, Comment)]
    if len(real) != len(read):
        raise AssertionError("codegen: parsed source does not match the emitted statements")
    lines = iter(read)
    comments = 0  # comments just above the next statement
    for stmt in made:
        if isinstance(stmt, Comment):
            comments += 1
            continue
        parsed = next(lines)
        loc = getattr(stmt, _TAG, outer)
        for line in range(parsed.lineno - comments, parsed.end_lineno + 1):
            locs[line - 1] = loc
        comments = 0
        for made_block, read_block in zip(_blocks(stmt), _blocks(parsed), strict=True):
            _place(made_block, read_block, loc, locs)


def _blocks(stmt) -> list:
    """The statement lists nested in ``stmt`` (body, orelse, handlers' bodies ...)."""
    out = []
    for _, value in ast.iter_fields(stmt):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v.body for v in value if isinstance(v, (ast.excepthandler,
                                                                ast.match_case)))
    return out
