"""One error hierarchy for ad_compiler, and the renderer that points at user code.

Every error about a user's program carries a :class:`SourceLoc` and renders as::

    model.py:12:8: unsupported syntax: 'try' statement
        try:
        ^
    hint: move the try/except outside the differentiated function

The exception classes also derive from the builtin MindSpore raises for the same
mistake (``TypeError``, ``ValueError``, ``RuntimeError``), so ``except TypeError``
written for MindSpore keeps working.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .ir.names import one_line
from .records import Equal, Frozen


class SourceLoc(Frozen, Equal):
    """A position in the user's source: real file, 1-based line, 0-based column."""

    file: str
    line: int
    col: int = 0
    text: str = ""

    _fields = ("file", "line", "col", "text")

    def __init__(self, file, line, col=0, text=""):
        _set = object.__setattr__
        _set(self, "file", file)
        _set(self, "line", line)
        _set(self, "col", col)
        _set(self, "text", text)

    def __str__(self) -> str:
        return f"{one_line(self.file)}:{self.line}"

    def render(self) -> str:
        """``file:line:col`` followed by the source line and a caret (the file name
        and the line escaped by :func:`~.ir.names.one_line`: one line each)."""
        head = f"{self}:{self.col + 1}"
        if not self.text:
            return head
        stripped = self.text.lstrip()
        caret_col = max(0, self.col - (len(self.text) - len(stripped)))
        caret_col = len(one_line(stripped[:caret_col]))
        return f"{head}\n    {one_line(stripped.rstrip())}\n    {' ' * caret_col}^"


class AdCompilerError(Exception):
    """Base class of every error ad_compiler raises on purpose."""

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str | None = None):
        self.message = message
        self.loc = loc
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        text = self.message
        if self.loc is not None:
            where = self.loc.render()
            head, _, rest = where.partition("\n")
            text = f"{head}: {self.message}" + (f"\n{rest}" if rest else "")
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


@contextmanager
def located(loc: SourceLoc | None):
    """Errors raised inside without a location get ``loc`` (an op's, in a VJP rule)."""
    try:
        yield
    except AdCompilerError as exc:
        if exc.loc is None and loc is not None:
            exc.loc = loc
            exc.args = (exc._render(),)
        raise


class UnsupportedSyntaxError(AdCompilerError, RuntimeError):
    """The user's function uses Python that the compiler does not handle."""


class UnsupportedOperationError(AdCompilerError, TypeError):
    """A call or operation the compiler cannot lower (unknown function, bad arguments)."""


class GradTypeError(AdCompilerError, TypeError):
    """An argument of the public API has the wrong type."""


class GradValueError(AdCompilerError, ValueError):
    """An argument of the public API has a wrong value."""


class GradRuntimeError(AdCompilerError, RuntimeError):
    """A call of a gradient function does not fit its configuration (sens, positions)."""


class IRError(AdCompilerError, AssertionError):
    """An internal invariant of the IR is broken (raised by the verifier)."""


class UnresolvedNameError(AdCompilerError, NameError):
    """A name the user's function reads is not defined where it is read."""


class RecursiveCallError(AdCompilerError, RecursionError):
    """A function calls itself (directly or through others) while it is being inlined."""


class NestingTooDeepError(AdCompilerError, RecursionError):
    """The user's code nests deeper than the compiler follows (helper calls, expressions)."""


class InvalidOperandError(AdCompilerError, ValueError):
    """Operands that cannot be combined, found at compile time (shapes, lengths, values)."""


class InvalidAxisError(InvalidOperandError, np.exceptions.AxisError):
    """An axis out of bounds for the array it names, where NumPy raises its ``AxisError``."""


class UnresolvedAttributeError(AdCompilerError, AttributeError):
    """An attribute the user's function reads does not exist on the object."""


class GradCheckError(AdCompilerError, AssertionError):
    """``check_grad``: a compiled derivative disagrees with central differences."""
