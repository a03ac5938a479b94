"""Inlining: user functions, methods, Cells and local ``def``/``lambda`` are lifted
where they are called, in a new :class:`Frame`.

Invariants:

* A frame binds the callee's parameters with ``inspect.Signature.bind`` (so
  positional, keyword, default, ``*args`` and ``**kwargs`` arguments behave as in
  Python); defaults are static values evaluated when the function was defined.
* Recursion is unrolled: a function already on the inlining stack is inlined
  again, so a recursion whose depth static arguments decide (``power(x, n - 1)``
  with a Python int ``n``; mutual recursion too) becomes straight-line code. A
  recursive call whose static arguments (and array types) equal those of an
  enclosing call of the same function could only end on run-time data (the
  lifter would repeat itself forever): a
  :class:`~ad_compiler.errors.RecursiveCallError` at the user's call, as is a
  recursion deeper than :data:`~ad_compiler.depth.MAX_RECURSION` calls. A method
  called on another object (a Cell holding a sub-Cell of its own class) is
  another function here: the structure of objects is finite.
* A ``def`` or ``lambda`` inside lifted code becomes a :class:`LocalFunction`
  that closes over the defining frame's scope (late binding, as Python does).
* ``return`` ends only the innermost frame; its value is the call's value
  (``None`` when the body ends without one). A ``return`` under data-dependent
  control is merged through flags (:mod:`.desugar`); a function that returns a
  value on some run-time paths and None on others is an error.
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ..depth import MAX_RECURSION
from ..errors import (AdCompilerError, RecursiveCallError, UnsupportedOperationError,
                      UnsupportedSyntaxError)
from ..ir.core import Value
from .desugar import RESULT, RETURNED
from .parse import parse_function
from .resolve import GlobalScope, Scope, local_names
from .values import flatten


#: how many recursive calls one compilation may unroll in all
MAX_RECURSIVE_CALLS = 2 * MAX_RECURSION

#: calls named in an error's notes; the rest of a long chain is counted in one note
MAX_CALL_NOTES = 20


def _note_call(exc: Exception, note: str) -> None:
    notes = getattr(exc, "__notes__", [])
    if len(notes) < MAX_CALL_NOTES:
        exc.add_note(note)
        return
    more = getattr(exc, "_ad_more_calls", 0) + 1
    exc._ad_more_calls = more
    if more == 1:
        exc.add_note("")
    notes[-1] = f"  ... and {more} more enclosing call{'s' if more > 1 else ''}"


class Frame:
    """The state of one function being lifted."""

    __slots__ = ("scope", "source", "key", "name", "args", "result", "signal", "live",
                 "rest", "rest_taken", "tail")

    def __init__(self, scope, source, key, name: str, args=(), live=frozenset()):
        self.scope = scope
        self.args = list(args)  # the bound argument values, for zero-argument super()
        self.source = source
        self.key = key          # (id of the code object or AST node, id of the owner)
        self.name = name
        self.result = None
        self.signal = None      # a sure jump: None | "return" | "break" | "continue"
        self.live = live        # names code after the current statement may read
        self.rest: list = []    # the statements after the current one in its block
        self.rest_taken = False
        self.tail = False       # statements follow the current block in the loop body


class LocalFunction:
    """A ``def`` or ``lambda`` evaluated inside lifted code."""

    def __init__(self, node, scope, source, signature, name: str):
        self.node, self.scope, self.source = node, scope, source
        self.signature, self.name = signature, name

    def __repr__(self) -> str:
        return f"<local function {self.name}>"

    def __eq__(self, other):
        """Two evaluations of one ``def``/``lambda`` in one scope, with the same default
        objects, behave the same (the closure is the scope itself: late binding), so a
        loop that defines a function in its body carries nothing for it."""
        if not isinstance(other, LocalFunction):
            return NotImplemented
        return (self.node is other.node and self.scope is other.scope
                and all(a.default is b.default for a, b in zip(
                    self.signature.parameters.values(), other.signature.parameters.values())))

    def __hash__(self):
        return hash((id(self.node), id(self.scope)))


_NO_DEFAULT = inspect.Parameter.empty


def signature_from_ast(args, defaults: list, kw_defaults: list) -> inspect.Signature:
    """An ``inspect.Signature`` for ``gast.arguments`` with already evaluated defaults."""
    P = inspect.Parameter
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(defaults)
    params = []
    for i, a in enumerate(positional):
        kind = P.POSITIONAL_ONLY if i < len(args.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        default = defaults[i - first_default] if i >= first_default else _NO_DEFAULT
        params.append(P(a.id, kind, default=default))
    if args.vararg is not None:
        params.append(P(args.vararg.id, P.VAR_POSITIONAL))
    for a, d in zip(args.kwonlyargs, kw_defaults):
        params.append(P(a.id, P.KEYWORD_ONLY, default=d))
    if args.kwarg is not None:
        params.append(P(args.kwarg.id, P.VAR_KEYWORD))
    return inspect.Signature(params)


class InlineLifter:
    """Mixin of :class:`~.to_ssa.Lifter`: frames, inlining and local functions."""

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    # -- local functions -------------------------------------------------------
    def visit_FunctionDef(self, node):
        if node.decorator_list:
            raise UnsupportedSyntaxError(
                "unsupported syntax: decorated function defined inside a compiled function",
                hint="define the decorated function at module level")
        self.frame.scope.bind(node.name, self.make_local(node, node.name))

    def eval_Lambda(self, node):
        return self.make_local(node, "<lambda>")

    def make_local(self, node, name: str) -> LocalFunction:
        node = getattr(node, "as_def", None) or node  # a lambda holding a comprehension
        defaults = [self.expr(d) for d in node.args.defaults]
        kw_defaults = [_NO_DEFAULT if d is None else self.expr(d) for d in node.args.kw_defaults]
        sig = signature_from_ast(node.args, defaults, kw_defaults)
        return LocalFunction(node, self.frame.scope, self.frame.source, sig, name)

    # -- inlining ----------------------------------------------------------------
    def inline_function(self, fn, args, kwargs, name: str | None = None, owner=None):
        """Lift the Python function ``fn`` applied to ``args``/``kwargs`` here
        (``owner``: the object ``fn`` is a method of, if any)."""
        parsed = parse_function(fn)
        scope = Scope(local_names(parsed.node), GlobalScope(fn))
        sig = inspect.signature(fn, follow_wrapped=False)
        key = (id(fn.__code__), id(owner))
        return self.run_frame(parsed.node, parsed.source, scope, sig, args, kwargs, key,
                              name or fn.__qualname__, fn)

    def inline_local(self, local: LocalFunction, args, kwargs):
        scope = Scope(local_names(local.node), local.scope)
        return self.run_frame(local.node, local.source, scope, local.signature, args, kwargs,
                              (id(local.node), None), local.name)

    def run_frame(self, node, source, scope, sig, args, kwargs, key, name: str, fn=None):
        """Run a function's body in a new frame (``fn``: the Python function, whose
        default values are captured state)."""
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:  # located at the user's call by the caller's visitor
            raise UnsupportedOperationError(f"bad arguments for {name}(): {exc}",
                                            hint=f"its parameters are {name}{sig}") from None
        given = set(bound.arguments)
        bound.apply_defaults()
        signature = static_signature(bound.arguments)
        self.check_recursion(key, name, signature)
        if fn is not None:
            self.guard_code(fn)
            for param in set(bound.arguments) - given:
                bound.arguments[param] = self.default_value(fn, param, bound.arguments[param])
        for param, value in bound.arguments.items():
            if sig.parameters[param].kind is inspect.Parameter.VAR_KEYWORD:
                self.own(value)  # a new dict, as in Python: the body may change it
            scope.bind(param, value)
        frame = Frame(scope, source, key, name, bound.arguments.values(),
                      self.syntax.nested_reads(node))
        call_loc = self.b.loc
        self.frames.append(frame)
        for k in (key, (key, signature)):
            self.frame_keys[k] = self.frame_keys.get(k, 0) + 1
        try:
            if isinstance(node, gast.Lambda):
                if len(self.frames) == 1:  # a lambda's body is what it returns
                    self.return_loc = source.loc(node.body)
                return self.expr(node.body)
            self.run_body(node.body)
            return self.frame_result(frame, node)
        except Exception as exc:
            # the chain of calls, as a traceback shows it: on the compiler's errors and on
            # the exceptions raised at compile time that keep their type (located there)
            located = isinstance(exc, AdCompilerError) or getattr(exc, "_ad_loc", None)
            if call_loc is not None and located:
                _note_call(exc, f"  in {name}(), called at {call_loc.render()}")
            raise
        finally:
            self.frames.pop()
            for k in (key, (key, signature)):
                self.frame_keys[k] -= 1
                if not self.frame_keys[k]:
                    del self.frame_keys[k]

    def frame_result(self, frame, node):
        """What the call returns: the returned value, None if the body ended without
        ``return``; an error if that depends on run-time data."""
        if frame.signal == "return":
            return frame.result
        returned = frame.scope.env.get(RETURNED)
        result = frame.scope.env.get(RESULT)
        if isinstance(returned, Value) and any(leaf is not None for leaf in flatten(result)[0]):
            raise UnsupportedSyntaxError(
                f"{frame.name}() returns a value on some run-time paths and reaches its end "
                "(returning None) on others", frame.source.loc(node.body[-1]),
                hint="end the function with a 'return', or return in every branch")
        return None

    def check_recursion(self, key, name: str, signature) -> None:
        """A recursive call is inlined again (unrolled) while static arguments make
        progress; one that repeats an enclosing call's static arguments, or goes
        deeper than MAX_RECURSION calls, is an error."""
        count = self.frame_keys.get(key, 0)
        if not count:
            return
        self.recursive_calls += 1
        same = (key, signature) in self.frame_keys
        if not same and count < MAX_RECURSION and self.recursive_calls <= MAX_RECURSIVE_CALLS:
            return
        names = [f.name for f in self.frames] + [name]
        if len(names) > 12:  # a long chain: its ends say where it starts and loops
            names[3:-8] = ["..."]
        chain = " -> ".join(names)
        where = (" under a data-dependent condition (a branch or loop on array values)"
                 if self.depth else "")
        if same:
            raise RecursiveCallError(
                f"recursive call of {name}(){where} with the same static arguments and "
                f"array types as an enclosing call ({chain}): nothing known while compiling "
                "ends this recursion, so its depth would depend on run-time data",
                hint="decide the depth with a Python int argument (def f(x, n): ... "
                     "f(x, n - 1)), or write a 'while' loop on the data-dependent condition")
        what = (f"deeper than {MAX_RECURSION} calls" if count >= MAX_RECURSION else
                f"unrolled to more than {MAX_RECURSIVE_CALLS} calls in all (each branch "
                "on run-time data lifts the calls of both paths)")
        raise RecursiveCallError(
            f"recursion of {name}(){where} {what} ({chain}): too deep to unroll",
            hint="write the recursion as a 'for' loop over range(n), or a 'while' loop on "
                 "a data-dependent condition")


def static_signature(arguments: dict):
    """What the lift of a call depends on, as far as its arguments tell: their static
    values (containers by content) and the types of their run-time values."""
    return tuple((name, _static_key(value)) for name, value in arguments.items())


def _static_key(obj, depth: int = 0):
    if isinstance(obj, Value):
        try:
            return ("value", hash(obj.type), obj.type)
        except TypeError:
            return ("object", id(obj))
    if isinstance(obj, (bool, int, float, complex, str, bytes, type(None))):
        return (type(obj), obj)
    if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
        return (type(obj), obj.item())
    if depth < 8 and isinstance(obj, (list, tuple)):
        return (type(obj), tuple(_static_key(item, depth + 1) for item in obj))
    if depth < 8 and type(obj) is dict:
        return (dict, tuple((_static_key(k, depth + 1), _static_key(v, depth + 1))
                            for k, v in obj.items()))
    return ("object", id(obj))
