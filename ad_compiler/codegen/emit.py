"""IR -> Python source: one statement per op, named after the user's variables.

For ``def f(x, y): z = x * np.sin(y); return z.sum()`` (model.py, line 3)::

    def f(x, y):
        # model.py:3: z = x * np.sin(y)
        sin = np.sin(y)
        sin *= x
        # model.py:4: return z.sum()
        sum_ = sin.sum(axis=None, keepdims=False)
        return (sum_,)

Invariants:

* The text is a function of the IR alone: no ids, counters, hashes or set orders
  reach it, so the same Function gives byte-identical source in every run (golden
  tests and cache keys rely on this).
* Every value is named once, from its hint, through one :class:`Namespace` that
  also names the entries of the namespace dict: a name is never a keyword, a
  builtin, ``np``, ``math``, the function's own name or another entry. Arguments
  are named first, so the user's argument names come out unchanged when valid and
  unique.
* Nothing from outside the user's function source becomes code: every
  identifier is an ASCII name from that :class:`Namespace` (Parameter names,
  dict keys, function names are only hints to it), every comment is written
  through :func:`~ad_compiler.ir.names.one_line`, every string param through
  ``repr``.
* Each op becomes one statement, ``name = <primitive template>``; an op with
  regions becomes the statements its :data:`STRUCTURAL_EMIT` entry returns. The
  function always returns a tuple of its outputs, so callers index uniformly.
* A param is written as a Python literal only when the literal evaluates back to
  an equal value of the same type (``2`` stays an int, ``2.0`` a float, ``inf``
  becomes ``math.inf``); anything else (arrays, NumPy scalars, objects) is put in
  the namespace dict once and referred to by name, never re-created per call.
* Nothing is optimised here: unused results are emitted like any other.

The tree is built from the standard :mod:`ast` nodes rather than gast: gast's
version-neutral nodes buy nothing for source generated for the running
interpreter, and they cost time on every first call (for a 50-op function,
``gast.parse`` per op and ``gast.gast_to_ast`` add about 2 ms to the 1.7 ms that
all of code generation and compilation take). :mod:`.unparse` writes the source as
astor does, with comment lines and the parentheses of the returned tuple. Long
lines are not wrapped: one statement stays one line.
"""
from __future__ import annotations

import ast
import math
import os
import re
from typing import Callable

import numpy as np

from ..ad import rules
from ..errors import IRError
from ..ir.names import Namespace
from ..passes.reuse import same_quantity
from . import constants, module, tapes
from .unparse import expression, placeholders, statement, unparse

#: an augmented-assignment in-place form (``{0} += {1}``)
_AUGMENTED = re.compile(r"\{\d\} [-+*/]= \{\d\}")

#: prim name -> ``emitter(op, ctx: EmitContext) -> list[ast.stmt]`` for ops with regions
STRUCTURAL_EMIT: dict[str, Callable] = {}


def to_source(fn, comments: bool = True, reuse_buffers: bool = True) -> tuple[str, dict]:
    """The Python source of ``fn`` and the namespace dict it must run in (the entries
    it reads: codegen/module.py writes them as the module's header).

    With ``reuse_buffers``, the ops passes/reuse.py marks write into dead buffers.
    """
    ctx = EmitContext(fn, comments, reuse_buffers)
    tree = ast.Module(body=[ctx.function_def()], type_ignores=[])
    source = unparse(tree)
    return source, module.used_namespace(source, ctx.namespace)


def function_name(fn) -> str:
    """The name of the generated ``def``: ``fn.name`` as a valid, unreserved identifier."""
    return Namespace().fresh(fn.name)


class EmitContext:
    """Names, namespace entries and block emission for one function.

    Structural emitters receive it as ``ctx`` and use :meth:`name`,
    :meth:`fresh`, :meth:`entry`, :meth:`expr`, :meth:`block` (the statements of
    a nested block, comments included) and :meth:`bind` (``target = source``
    statements, e.g. for the values a region yields).
    """

    def __init__(self, fn, comments: bool = True, reuse_buffers: bool = True):
        self.fn = fn
        self.comments = comments
        self.namespace: dict = rules.template_globals()
        for op in fn.body.walk():  # names a primitive's template uses (a user's function)
            if op.prim in rules.PRIMITIVES:
                self.namespace.update(rules.PRIMITIVES[op.prim].globals)
        self._ns = Namespace(taken=self.namespace)
        self._names: dict[int, str] = {}
        self._entries: dict[int, str] = {}
        self._last_where = None
        # id(op) -> input whose buffer takes the result (passes/reuse.py)
        self._reuse = fn.reuse if reuse_buffers else {}
        self._releases = tapes.releases(fn)  # tapes deleted after their last reader
        self._unread = _unread_effects(fn)
        self._inline = constants.plan(fn)  # constants, read where used
        # values a loop or branch hands on could share one name (codegen/coalesce.py), but
        # its plan shared a name between values that are both live (wrong gradients, fuzz
        # seeds 202982, 203977, 204054): off until that is fixed, every value is named apart
        self._groups: dict = {}
        self._group_names: dict = {}
        self._name_block(fn.body)
        # after the values, so a local named like the function keeps its name;
        # reserved, so no namespace entry can overwrite the function
        self.fn_name = function_name(fn)
        self._ns.reserve(self.fn_name)

    # -- names -----------------------------------------------------------------
    def _named_otherwise(self) -> set:
        """Ids of the values whose name is not their own: written in place, aliases,
        constants read where used (codegen/constants.py)."""
        ops = [op for op in self.fn.body.walk() if id(op) in self._reuse] \
            + [op for op in self.fn.body.ops if _is_alias(op)]
        return {id(v) for op in ops for v in op.results} | set(self._inline)

    def _buffer_of(self) -> dict:
        """``id(result) -> input`` for the results written in place under the name of
        their input's buffer."""
        ops = [op for op in self.fn.body.walk() if id(op) in self._reuse]
        return {id(op.result): op.inputs[self._reuse[id(op)]] for op in ops}

    def _value_name(self, v, name: str | None = None) -> str:
        """A fresh name for ``v`` (or ``name``), or its group's (codegen/coalesce.py)."""
        group = self._groups.get(id(v))
        if group is not None and group in self._group_names:
            return self._group_names[group]
        name = self._ns.fresh(v.hint) if name is None else name
        if group is not None:
            self._group_names[group] = name
        return name

    def _name_block(self, block) -> None:
        for v in block.args:
            self._names[id(v)] = self._value_name(v)
        for op in block.ops:
            if op.results and id(op.results[0]) in self._inline:  # codegen/constants.py
                text = self._inline[id(op.result)]
                if text is constants.ENTRY:  # "(name)" or a long literal in parentheses
                    text = self._param(op, "value")
                    text = text[1:-1] if text[1:-1].isidentifier() else text
                self._names[id(op.result)] = text
                continue
            if block is self.fn.body and _is_alias(op):
                self._names[id(op.result)] = self._names[id(op.inputs[0])]
                continue
            k = self._reuse.get(id(op))
            for v in op.results:  # in place into the same quantity: the buffer's name
                same = k is not None and same_quantity(op.inputs[k], v)
                self._names[id(v)] = self._value_name(
                    v, self._names[id(op.inputs[k])] if same else None)
            for region in op.regions:
                self._name_block(region)

    def name(self, value) -> str:
        try:
            return self._names[id(value)]
        except KeyError:
            raise IRError(f"codegen: {value!r} is used but not defined in {self.fn.name}") from None

    def value_names(self) -> list:
        """``(value, name)`` for every value written to a name, in the order of the IR; the
        values a loop or branch hands on under one name (codegen/coalesce.py: one
        variable's value before, during and after the loop) are one quantity, listed
        once, by the first of them."""
        out = []
        seen: set = set()

        def first_of_group(v) -> bool:
            group = self._groups.get(id(v))
            if group is None:
                return True
            if group in seen:
                return False
            seen.add(group)
            return True

        def visit(block):
            values = list(block.args)
            for op in block.ops:
                values.extend(op.results)
                for region in op.regions:
                    visit(region)
            out.extend((v, self._names[id(v)]) for v in values
                       if id(v) in self._names and first_of_group(v))
        visit(self.fn.body)
        return out

    def fresh(self, hint: str | None) -> str:
        """A new local name (loop counters, lists of saved values ...)."""
        return self._ns.fresh(hint)

    def entry(self, obj, hint: str) -> str:
        """The name under which ``obj`` is in the namespace dict (added once per object)."""
        key = id(obj)  # the dict keeps obj alive, so its id is not reused
        if key not in self._entries:
            name = self._ns.fresh(hint)
            self.namespace[name] = obj
            self._entries[key] = name
        return self._entries[key]

    # -- statements ------------------------------------------------------------
    def function_def(self) -> ast.FunctionDef:
        args = [ast.arg(arg=self.name(a)) for a in self.fn.args]
        body = self.block(self.fn.body)
        outputs = [_load(self.name(v)) for v in self.fn.outputs]
        body.append(ast.Return(value=ast.Tuple(elts=outputs, ctx=ast.Load())))
        signature = ast.arguments(posonlyargs=[], args=args, vararg=None, kwonlyargs=[],
                                  kw_defaults=[], kwarg=None, defaults=[])
        return ast.FunctionDef(name=self.fn_name, args=signature, body=body,
                               decorator_list=[], returns=None, type_comment=None)

    def block(self, block) -> list:
        """The statements of ``block``'s ops (not of its yields: see :meth:`bind`)."""
        out: list = []
        for op in block.ops:
            before = self._last_where
            comment = self._comment(op.loc)
            stmts = self._op(op)
            if not stmts:  # an op that emits nothing (written by its float()) gets no comment
                comment, self._last_where = [], before
            out.extend(comment)
            out.extend(stmts)
            if block is self.fn.body:
                out.extend(self._release(op))
        return out

    def _release(self, op) -> list:
        """``del`` the tapes ``op`` is the last reader of."""
        return [ast.parse(f"del {self.name(v)}").body[0] for v in self._releases.get(id(op), ())]

    def bind(self, targets, sources) -> list:
        """``target = source`` for each pair of values."""
        return [assign([self.name(t)], _load(self.name(s))) for t, s in zip(targets, sources,
                                                                          strict=True)]

    def _comment(self, loc) -> list:
        # one comment per run of ops from the same user line, not one per op
        where = None if loc is None else (loc.file, loc.line)
        if where == self._last_where:
            return []
        self._last_where = where
        if loc is None or not self.comments:
            return []
        return [Comment(text=comment_text(loc))]

    def _op(self, op) -> list:
        special = STRUCTURAL_EMIT.get(op.prim)
        if special is not None:
            return special(op, self)
        if _is_alias(op) and self._names[id(op.result)] == self._names[id(op.inputs[0])]:
            return []
        if op.results and id(op.results[0]) in self._inline:
            return []  # written where it is used
        prim = rules.get(op.prim)
        k = self._reuse.get(id(op))
        names, inputs = [self.name(v) for v in op.inputs], placeholders(len(op.inputs))
        if k is not None:  # the template is filled with placeholders, rendered once per text
            form = prim.inplace[k]
            source = form(inputs, **self._params(op)) if callable(form) else form.format(*inputs)
            if self.name(op.result) == names[k]:
                return [statement(source, names)]
            return self._bound(op, form, source, names[k], names)
        try:
            value = expression(self._call_source(op, prim, inputs), names)
        except SyntaxError:
            source = self._call_source(op, prim, names)
            raise IRError(f"primitive {op.prim!r} produced invalid Python: {source!r}") from None
        if id(op) in self._unread:  # np.random.seed(3): a statement, no name for its None
            return [assign([], value)]
        return [assign([self.name(r) for r in op.results], value)]

    def _bound(self, op, form, source: str, buffer: str, names: list) -> list:
        """An in-place form whose result has its own name: ``h = np.tanh(xw, out=xw)``;
        ``dh *= sub`` then ``d_xw = dh`` (an augmented assignment, as fast as it gets)."""
        result = self.name(op.result)
        if isinstance(form, str) and "out=" in form:        # a ufunc call returns its out
            return [assign([result], expression(source, names))]
        if isinstance(form, str) and _AUGMENTED.fullmatch(form):
            return [statement(source, names), assign([result], _load(buffer))]
        raise IRError(f"codegen: the in-place form {form!r} of {op.prim!r} has no value to "
                      "name (passes/reuse.py plans it only into the same quantity)")

    # -- expressions -----------------------------------------------------------
    def expr(self, source: str, op=None) -> ast.expr:
        """``source`` parsed as one expression."""
        try:
            return ast.parse(source, mode="eval").body
        except SyntaxError:
            what = f"primitive {op.prim!r}" if op is not None else "codegen"
            raise IRError(f"{what} produced invalid Python: {source!r}") from None

    def _call_source(self, op, prim, inputs: list) -> str:
        if callable(prim.emit):
            return prim.emit(inputs, **self._params(op))
        n, used = rules.template_fields(prim.emit)
        missing = [k for k in used if k not in op.params]
        if missing or n != len(inputs):
            raise IRError(f"codegen: a {op.prim!r} op with {len(inputs)} inputs and params "
                          f"{sorted(op.params)} does not fit its template {prim.emit!r}")
        return prim.emit.format(*inputs, **{k: self._param(op, k) for k in used})

    def _params(self, op) -> dict:
        """The params of ``op`` as source."""
        return {k: self._param(op, k) for k in op.params}

    def _param(self, op, key: str) -> str:
        value = op.params[key]
        source = literal(value)
        if source is None:
            hint = op.results[0].hint if op.results and op.results[0].hint else op.prim
            source = self.entry(value, scalar_name(value) or f"{hint}_{key}")
        # parenthesised so that substitution never changes precedence (``{p} ** 2``
        # with p = -2); unparse drops the parentheses wherever they are redundant
        return f"({source})"


# -- literals --------------------------------------------------------------------

#: primitives whose result is their input's array: one bearing its input's hint
#: (the same quantity, as shift invariance marks it) gets no statement and its name
ALIASES = {"stop_gradient"}


def _is_alias(op) -> bool:
    return op.prim in ALIASES and op.inputs[0].producer is not None \
        and op.result.hint == op.inputs[0].hint


def literal(value) -> str | None:
    """Python source evaluating to ``value`` with its exact type, or None if there is none.

    The one exception: a dtype is written as its scalar type (``np.float32``), which
    reads better and which NumPy accepts wherever it accepts the dtype.

    >>> literal(2), literal(2.0), literal(float('-inf')), literal((1, None, 'a'))
    ('2', '2.0', '-math.inf', "(1, None, 'a')")
    >>> literal(np.dtype('float32')), literal(np.float32(1)) is None
    ('np.float32', True)
    """
    kind = type(value)  # exact types: a float subclass (np.float64) must keep its type
    if value is None or value is Ellipsis or kind in (bool, int, str):
        return repr(value)
    if kind is float:
        return _float(value)
    if kind is complex:
        return f"complex({_float(value.real)}, {_float(value.imag)})"
    if kind in (tuple, list, slice):
        return _sequence(value)
    if isinstance(value, np.dtype):
        return _numpy_type(value.type) if np.dtype(value.type) == value else None
    if isinstance(value, type):
        return value.__name__ if value in (bool, int, float, complex, str) else _numpy_type(value)
    return None


def scalar_name(value) -> str | None:
    """A name that reads as the value of a 0-d real array, or None.

    >>> scalar_name(np.array(1.0)), scalar_name(np.array(-0.25, np.float32))
    ('f64_1', 'f32_minus_0_25')
    """
    if not isinstance(value, np.ndarray) or value.ndim != 0 or value.dtype.kind not in "iuf":
        return None
    x = value.item()
    text = repr(x) if value.dtype.kind != "f" else repr(float(x)).removesuffix(".0")
    text = text.replace("-", "minus_").replace(".", "_").replace("+", "")
    if len(text) > 16 or not text.replace("_", "").isalnum():
        return None  # nan, inf and long fractions keep the generic name
    return f"{value.dtype.kind}{8 * value.dtype.itemsize}_{text}"


def _float(x: float) -> str:
    if math.isnan(x):
        return "math.nan"
    if math.isinf(x):
        return "math.inf" if x > 0 else "-math.inf"
    return repr(x)


def _sequence(value) -> str | None:
    items = [value.start, value.stop, value.step] if type(value) is slice else value
    parts = [literal(v) for v in items]
    if None in parts:
        return None
    if type(value) is slice:
        return f"slice({', '.join(parts)})"
    if type(value) is list:
        return f"[{', '.join(parts)}]"
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _numpy_type(t: type) -> str | None:
    return f"np.{t.__name__}" if getattr(np, t.__name__, None) is t else None


# -- nodes and writing -----------------------------------------------------------

class Comment(ast.stmt):
    """A ``# text`` line; :func:`unparse` writes it, the compiler never sees a node for it.

    Its text is written through :func:`~ad_compiler.ir.names.one_line`: a file
    name or source line holding a line break stays inside the comment.
    """

    _fields = ("text",)


def comment_text(loc) -> str:
    """``model.py:12: z = x * y`` for the user's line at ``loc`` (escaped when written)."""
    text = loc.text.strip()
    head = f"{os.path.basename(loc.file)}:{loc.line}"
    return f"{head}: {text}" if text else head


def _unread_effects(fn) -> set:
    """ids of the ops kept only for their effect (``np.random.seed``) or for the exception
    they raise where the user's call would (``math.log(x)``): no op reads their result,
    so they are written as statements."""
    uses: dict = {}
    _count_uses(fn.body, uses)
    return {id(op) for op in fn.body.walk() if rules.must_run(op)
            and not any(uses.get(id(r)) for r in op.results)}


def _count_uses(block, uses: dict) -> None:
    for v in block.results:
        uses[id(v)] = uses.get(id(v), 0) + 1
    for op in block.ops:
        for v in op.inputs:
            uses[id(v)] = uses.get(id(v), 0) + 1
        for region in op.regions:
            _count_uses(region, uses)


def assign(targets: list, value: ast.expr) -> ast.stmt:
    """``a = value``, or ``a, b = value`` for several targets (``value`` alone for none)."""
    if not targets:
        return ast.Expr(value=value)
    stores = [ast.Name(id=t, ctx=ast.Store()) for t in targets]
    target = stores[0] if len(stores) == 1 else ast.Tuple(elts=stores, ctx=ast.Store())
    return ast.Assign(targets=[target], value=value, type_comment=None)


def _load(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())
