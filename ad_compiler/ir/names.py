"""Identifiers and one-line text for generated source and IR text.

Everything that reaches generated code or IR text from outside the user's
function source (Parameter names, dict keys, attribute and function names, file
names) goes through one of the two functions here:

* :func:`sanitize` turns a hint into an ASCII identifier: NFKC-normalised first
  (Python normalises identifiers the same way when it parses source, so ``ｘ``
  and ``x`` would otherwise be one variable), accents dropped, a letter of
  another script spelled by its Unicode name (``σ`` is ``sigma``), every other
  run of characters outside ``[A-Za-z0-9_]`` replaced by ``_``, ``v_`` before a
  leading digit, ``v`` for a hint with nothing left. :class:`Namespace` then
  adds ``_`` to a reserved name and a counter to a taken one, so the names it
  hands out are unique as written and therefore unique after NFKC.
* :func:`one_line` escapes every character that is not printable (line breaks
  of any kind: ``\\n \\r \\x0b \\x0c \\x1c-\\x1e \\x85 \\u2028 \\u2029``; other
  control and format characters), so a comment stays one line of one comment.

>>> ns = Namespace()
>>> ns.fresh('x'), ns.fresh('x'), ns.fresh('sum'), ns.fresh(None), ns.fresh('1bad')
('x', 'x_1', 'sum_', 'v', 'v_1bad')
>>> ns.fresh('ｘ'), ns.fresh('w²'), ns.fresh('x\\nimport os'), ns.fresh('for'), ns.fresh('dσ')
('x_2', 'w2', 'x_import_os', 'for_', 'dsigma')
>>> one_line('m\\nraise SystemExit.py\\u2028')
'm\\\\nraise SystemExit.py\\\\u2028'
"""
from __future__ import annotations

import builtins
import keyword
import re
import types
import unicodedata

# soft keywords of every supported Python ('type' from 3.12), so names do not
# depend on the interpreter; '_' is kept: it is special only in a 'case' pattern
_SOFT_KEYWORDS = {"match", "case", "type"}


def _interpreter_builtins() -> set:
    # the builtins module's own types, functions and constants; not names other
    # code adds (site's 'exit', IPython's 'display', the REPL's '_'), which would
    # make generated names depend on how the interpreter was started
    return {name for name, obj in vars(builtins).items() if not name.startswith("_") and (
        isinstance(obj, (type, types.BuiltinFunctionType)) or obj is Ellipsis
        or obj is NotImplemented)}


_RESERVED = set(keyword.kwlist) | _SOFT_KEYWORDS | _interpreter_builtins() | {"np", "math", "rt"}
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]+")


def sanitize(hint: str | None) -> str:
    """An ASCII identifier derived from ``hint`` (``'v'`` when there is none).

    It may still be reserved (a keyword, a builtin, a dunder name): that is
    :class:`Namespace`'s job.
    """
    if not hint:
        return "v"
    if type(hint) is str and hint.isascii() and hint.isidentifier():
        return hint  # what the steps below make of it
    # NFKC is what Python's parser applies; NFKD then splits accents off letters
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", str(hint)))
    plain = "".join(_spelled(c) for c in decomposed if not unicodedata.combining(c))
    name = _NOT_IDENTIFIER.sub("_", plain)
    if name.strip("_") == "" and name != hint:
        return "v"  # nothing of the hint survived (only symbols, or another script)
    if name[0].isdigit():
        name = "v_" + name
    return name


def _spelled(c: str) -> str:
    """An ASCII character as it is; a letter of another script by its Unicode name
    (``σ`` is ``sigma``, ``Δ`` is ``Delta``) when that name ends in a plain word."""
    if c.isascii() or not c.isalpha():
        return c
    word = unicodedata.name(c, "").partition(" WITH ")[0].rpartition(" ")[2]  # ø: O WITH STROKE
    if not (word.isascii() and word.isalpha()):
        return c
    return word.capitalize() if c.isupper() else word.lower()


def is_reserved(name: str) -> bool:
    """A keyword, soft keyword, builtin, ``np``/``math``/``rt``, or a dunder name
    (``__builtins__`` in the namespace dict would replace the builtins)."""
    return name in _RESERVED or len(name) > 4 and name.startswith("__") and name.endswith("__")


def one_line(text: str) -> str:
    """``text`` with every non-printable character escaped as in a string literal.

    Backslashes stay as they are, so a user's source line reads as written.
    """
    text = str(text)
    if text.isprintable():  # nearly always: no character to look at one by one
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    code = ord(c)
    if c in "\n\r\t":
        return repr(c)[1:-1]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


class Namespace:
    """Hands out unique ASCII identifiers, never reserved (see :func:`is_reserved`)."""

    def __init__(self, taken=()):
        self._used: set[str] = set(taken)
        self._counts: dict[str, int] = {}

    def reserve(self, name: str) -> None:
        self._used.add(name)

    def fresh(self, hint: str | None) -> str:
        base = sanitize(hint)
        if is_reserved(base):
            base += "_"
        name = base
        n = self._counts.get(base, 0)
        while name in self._used:
            n += 1
            name = f"{base}_{n}"
        self._counts[base] = n
        self._used.add(name)
        return name


def stem(hint: str | None) -> str:
    """The quantity a hint names: its identifier without ``_N`` suffixes (``dx_2`` is
    ``dx``), so that two values with one stem are one quantity at two moments.

    >>> stem('dx_2'), stem('sum__1'), stem(None)
    ('dx', 'sum', 'v')
    """
    return re.sub(r"(_\d+|_)+$", "", sanitize(hint)) or "v"


#: products, written as juxtaposition when their operands have short names: x @ w is xw
_JUXTAPOSED = {"mul", "matmul"}
#: the longest name built from an expression
_MAX_BUILT = 20


def expression_hint(prim: str, inputs) -> str:
    """The hint of an intermediate value with no name of its own, built from the names
    of its operands (constants left out): ``x @ w`` is ``xw``, ``np.tanh(xw)`` is
    ``tanh_xw``, ``x.T`` is ``xT``, ``xs[t]`` is ``xs_t``. A name longer than 20 characters keeps the innermost
    part of its first operand's (``1 - square_tanh_logits`` is ``sub_tanh_logits``); ``prim``
    itself when no operand has a name.

    >>> from ad_compiler.ir.core import AType, Value
    >>> import numpy as np
    >>> f64 = AType((2,), np.dtype("float64"))
    >>> x, w = Value(f64, "x"), Value(f64, "w")
    >>> expression_hint("matmul", [x, w]), expression_hint("tanh", [x])
    ('xw', 'tanh_x')
    >>> expression_hint("sub", [Value(f64, "square_tanh_logits")]), expression_hint("add", [])
    ('sub_tanh_logits', 'add')
    """
    parts = [stem(v.hint) for v in inputs if v.hint and not (
        v.producer is not None and v.producer.prim == "const")]
    if not parts:
        return prim
    if prim in _JUXTAPOSED and len(parts) == 2 and all(
            len(p) <= 3 and not (len(p) > 1 and p[0] == "d") for p in parts):
        return parts[0] + parts[1]   # not an adjoint's name: dp * p is no "dpp"
    if prim == "transpose" and len(parts[0]) <= 3:
        return parts[0] + "T"
    if prim == "getitem" and len(parts) > 1:
        return "_".join(parts)[:_MAX_BUILT]
    name = "_".join([prim, *parts])
    if len(name) <= _MAX_BUILT:
        return name
    pieces = parts[0].split("_")  # the innermost operands of the first: sub_tanh_xy
    for k in range(len(pieces)):
        name = "_".join([prim, *pieces[k:]])
        if len(name) <= _MAX_BUILT:
            return name
    return prim


def built_hint(v) -> bool:
    """Whether ``v``'s hint is the one its op gave it (its primitive's name or
    :func:`expression_hint`), not a name of the user's."""
    op = v.producer
    return op is not None and v.hint is not None and len(op.results) == 1 and (
        v.hint == op.prim or v.hint == expression_hint(op.prim, op.inputs))


def adjoint_hint(v) -> str:
    """The hint of the adjoint of ``v``: ``dx`` for ``x``, ``d_xw`` for a name built
    from an expression (``xw``, :func:`expression_hint`), ``dv`` for no hint."""
    hint = v.hint or "v"
    return ("d_" if built_hint(v) and hint != v.producer.prim else "d") + hint


def rename(values, hints, blocks) -> None:
    """Give ``values`` their ``hints``, and the values of ``blocks`` whose names were built
    from them (:func:`expression_hint`) names built from the new ones: a loop body
    lifted with its arguments named after their initial values reads ``wh``, not ``wh0``."""
    built = [op for block in blocks for op in block.walk()
             if len(op.results) == 1 and built_hint(op.result) and op.result.hint != op.prim]
    for v, hint in zip(values, hints):
        v.hint = hint
    for op in built:
        op.result.hint = expression_hint(op.prim, op.inputs)


def same_quantity(buffer, result) -> bool:
    """Whether ``result``, written into ``buffer``'s memory (passes/reuse.py), may take
    its name: one hint names both (the user's variable rebound, ``x = x * 2``; a
    gradient accumulated, ``dx += dx_1``). The IR text and the source both follow it."""
    return buffer.hint is not None and buffer.hint == result.hint
