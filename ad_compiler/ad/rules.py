"""The derivative-rule registry: the mechanism only, no rules.

A primitive is declared once, in the module of its family (``ops/elementwise.py``
...), with everything the compiler knows about it::

    primitive(
        "sin",
        emit="np.sin({0})",                      # codegen template; {0} {1} inputs, {axis} params
        infer=same_type,                         # (*input_types, **params) -> AType
        vjp=lambda b, ct, out, x: (b.mul(ct, b.cos(x)),),
        jvp=lambda b, t, out, x: b.mul(t[0], b.cos(x)),
        examples=[ex((3,)), ex((2, 3))],         # inputs the registry test checks
        aliases=(np.sin, math.sin),              # objects that call it with the same inputs
    )

Rules emit IR through the builder ``b``, so an adjoint is ordinary IR that can
be optimised and differentiated again. A VJP returns one cotangent per input,
``None`` meaning a (symbolic) zero: ``vjp(b, ct, out, *inputs, **params)``.
A JVP, ``jvp(b, tangents, out, *inputs, **params)``, receives a tuple with one
tangent per input (``None`` for zero) and returns the output's tangent (or
``None``).

A batching rule, ``batch(b, axes, *inputs, **params) -> (out, out_axis)``,
drives ``vmap`` (ad/batching.py): ``axes`` holds each input's batch axis (the
axis along which it carries the examples, ``None`` for a value shared by the
batch; at least one is not ``None``) and the rule emits the op on the whole
batch, returning the result and its batch axis. ``b.batch_size`` is the number
of examples. A family may give its primitives a default rule with
:func:`family_batch` (elementwise ops broadcast); ops/_batch.py has the shared
rules (axis parameters shifted, stacks of matrices, index reads ...).

``examples`` feed the registry-driven gradient test (tests/ops): each is
``ex(*inputs, **params)`` where an input is a shape (a float64 array sampled
from the primitive's ``domain``), the type ``float`` (a Python float), or a
concrete ndarray used as given (index arrays, masks).

Calls in user code find their primitive through *lowerings*: a lowering is a
function ``lower(b, *args, **kwargs)`` that receives IR values for dynamic
arguments and plain Python values for static ones (axis=, shapes, ...) and
emits ops through ``b``. ``aliases=`` registers the trivial lowering; functions
with static keyword arguments (``np.sum(x, axis=1)``) register their own with
:func:`lowering`. Methods of arrays/Tensors (``x.sum()``, ``x.T``) register
with :func:`method`.
"""
from __future__ import annotations

import functools
import importlib
import math
import sys
import threading
from typing import Any, Callable

import numpy as np

from ..records import Equal


class Primitive(Equal):
    name: str
    emit: str
    infer: Callable
    vjp: Callable | None = None
    jvp: Callable | None = None
    nondiff: bool = False          # output carries no derivative (comparisons, floor, ones_like)
    examples: list
    domain: str = "real"           # sample domain for tests: real | positive | unit | nonzero | above_one
    array_inputs: bool = False     # the template calls methods on its inputs: no Python numbers
    view: bool | str | Callable = False  # the result may share memory with input 0 (reshape
    #                                ...); "readonly": a view NumPy makes read-only (broadcast_to,
    #                                diagonal); a callable ``view(op) -> bool`` decides per op
    static: tuple = ()             # names of params, for documentation/validation
    effect: bool = False           # reads and advances state outside the function
    #                                (np.random): never folded, merged, hoisted or dropped
    raises: bool = False           # raises where the user's call raises (math.sqrt(-1.0)):
    #                                run even when its result is unused, never hoisted
    family: str = ""
    batch: Callable | None = None  # batching rule for vmap (see the module docstring)
    globals: dict  # names its template uses beyond np/math/rt
    dynamic: bool | str = False    # accepts lengths known only at run time (ir/dims.py)
    _impl: Callable | None = None
    _defaults: dict | None = None
    _inplace: dict | None = None

    _fields = ("name", "emit", "infer", "vjp", "jvp", "nondiff", "examples", "domain",
               "array_inputs", "view", "static", "effect", "raises", "family", "batch",
               "globals", "dynamic", "_impl", "_defaults", "_inplace")

    def __init__(
            self, name, emit, infer, vjp=None, jvp=None, nondiff=False, examples=None,
            domain="real", array_inputs=False, view=False, static=(), effect=False,
            raises=False, family="", batch=None, globals=None, dynamic=False, _impl=None,
            _defaults=None, _inplace=None):
        self.name = name
        self.emit = emit
        self.infer = infer
        self.vjp = vjp
        self.jvp = jvp
        self.nondiff = nondiff
        self.examples = [] if examples is None else examples
        self.domain = domain
        self.array_inputs = array_inputs
        self.view = view
        self.static = static
        self.effect = effect
        self.raises = raises
        self.family = family
        self.batch = batch
        self.globals = {} if globals is None else globals
        self.dynamic = dynamic
        self._impl = _impl
        self._defaults = _defaults
        self._inplace = _inplace

    __hash__ = None

    @property
    def defaults(self) -> dict:
        """Default values of the params, read from ``infer``'s keyword-only arguments."""
        if self._defaults is None:
            import inspect
            self._defaults = {
                name: p.default for name, p in inspect.signature(self.infer).parameters.items()
                if p.kind is p.KEYWORD_ONLY and p.default is not p.empty}
        return self._defaults

    @property
    def inplace(self) -> dict:
        """Statement templates that write the result into input ``k``'s buffer, by ``k``.

        Derived from the template: ``{0} + {1}`` gives ``{0} += {1}`` (and
        ``np.add({0}, {1}, out={1})``), a NumPy ufunc call ``np.exp({0})`` gives
        ``np.exp({0}, out={0})``. Empty for anything else. Codegen uses a form only
        when passes/reuse.py marks the op (that input's buffer is dead after it).
        """
        if self._inplace is None:
            self._inplace = derive_inplace(self.emit) if isinstance(self.emit, str) else {}
        return self._inplace

    @property
    def batch_rule(self) -> Callable | None:
        """The batching rule: the primitive's own, else its family's default, else None."""
        if self.batch is not None:
            return self.batch
        default = FAMILY_BATCH.get(self.family)
        return default(self.name) if default is not None else None

    def aliases(self, op) -> bool:
        """Whether ``op``'s result may share memory with its input 0 (see ``view``)."""
        return self.view(op) if callable(self.view) else self.view

    @property
    def impl(self) -> Callable:
        """A Python callable ``impl(*inputs, **params)`` built from the emit template."""
        if self._impl is None:
            impl = _compile_template(self.emit)
            self._impl = _array_inputs(impl) if self.array_inputs else impl
        return self._impl

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


class Example(Equal):
    inputs: tuple
    params: dict

    _fields = ("inputs", "params")

    def __init__(self, inputs, params):
        self.inputs = inputs
        self.params = params

    __hash__ = None


def ex(*inputs, **params) -> Example:
    """One example call of a primitive for the registry test."""
    return Example(inputs, params)


PRIMITIVES: dict[str, Primitive] = {}

#: prim -> ``into(b, acc, ct) -> Value | None``: add the cotangent contribution ``ct``
#: (made by that primitive) into the cotangent ``acc`` built so far, without a new
#: array (slice adjoints: ``acc + index_add(zeros, v)`` is ``index_add(acc, v)``)
ACCUMULATE_INTO: dict[str, Callable] = {}
_LOWERINGS: dict[int, tuple[Any, Callable]] = {}
#: (module, register) pairs waiting for the module's first import (register_on_import)
_ON_IMPORT: list = []
_ON_IMPORT_LOCK = threading.RLock()
METHODS: dict[str, Callable] = {}
ATTRIBUTES: dict[str, Callable] = {}
#: family -> ``make(name) -> batching rule`` for the primitives declared without ``batch=``
FAMILY_BATCH: dict[str, Callable] = {}


def family_batch(family: str, make: Callable) -> None:
    """Give the primitives of ``family`` declared without ``batch=`` the batching rule
    ``make(name)``."""
    FAMILY_BATCH[family] = make


def primitive(name: str, emit: str, infer: Callable, vjp=None, jvp=None, *, nondiff=False,
              examples=(), domain="real", aliases=(), family="", impl=None,
              array_inputs=False, view=False, inplace=None, globals=None,
              dynamic=None, effect=False, batch=None, raises=False) -> Primitive:
    """Declare a primitive; see the module docstring.

    ``array_inputs=True`` says the template calls methods on its inputs
    (``{0}.sum(...)``, faster than ``np.sum`` at small sizes); the builder then
    turns Python-number inputs into arrays first.

    ``inplace`` (optional) gives the statements that write the result into input
    ``k``'s buffer, by ``k``: a template string, or a callable
    ``form(input_sources, **param_sources) -> statement``; by default they are
    derived from ``emit`` (see :attr:`Primitive.inplace`).

    ``view=True`` says the result may share memory with its first input
    (reshape, transpose ...): such results are never written in place, and are
    copied before they are returned to a user.

    ``batch`` (optional): the batching rule for ``vmap`` (see the module docstring).

    ``globals`` (optional): names the template uses besides ``np``, ``math`` and
    ``rt``, with their objects (a user's function registered with
    ``ad_compiler.primitive``); generated code that uses the primitive gets them.

    ``effect=True`` says the op reads and advances state outside the function (the
    global NumPy generator): the optimisation passes keep every such op, in place and
    as often as the user's code runs it (see :func:`has_effect`).

    ``emit`` is normally a template string. For variadic primitives (``concat``)
    it may be a callable ``emit(input_sources: list[str], **param_sources) -> str``;
    then ``impl`` must be given too.

    ``raises=True`` says the op raises an exception where the user's Python does
    (``math.sqrt`` of a negative number): the passes never drop it, even when nothing
    reads its result, nor hoist it out of a loop (see :func:`must_run`). Its ``infer``
    takes a param ``checked=True``; an adjoint's recomputation of a forward op sets it
    to False (that call already ran), so an unused copy is dropped.

    ``dynamic`` says whether inputs may have a dimension known only at run time
    (``None``, see ``ir/dims.py``): ``True`` (its ``infer`` is run on probe
    lengths), ``"native"`` (its ``infer`` handles ``None``) or ``False``. By
    default elementwise primitives accept them (their VJPs un-broadcast with
    ``b.fit``, which handles run-time lengths), others do not.
    """
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name!r} is declared twice")
    if callable(emit) and impl is None:
        raise ValueError(f"primitive {name!r}: a callable emit needs an explicit impl")
    prim = Primitive(name, emit, infer, vjp, jvp, nondiff, list(examples), domain, family=family,
                     array_inputs=array_inputs, view=view, globals=dict(globals or {}),
                     effect=effect, batch=batch, raises=raises, _impl=impl,
                     _inplace=inplace,
                     dynamic=(family == "elementwise") if dynamic is None else dynamic)
    PRIMITIVES[name] = prim
    for obj in aliases:
        register_lowering(obj, _direct_lowering(name))
    return prim


def _direct_lowering(name):
    def lower(b, *args):
        return b.emit(name, *(b.const(a) for a in args))
    lower.__name__ = f"lower_{name}"
    return lower


def register_lowering(obj, fn: Callable) -> None:
    _LOWERINGS[id(obj)] = (obj, fn)


def register_on_import(module: str, register: Callable[[], None]) -> None:
    """Run ``register()``, which registers the lowerings of callables of ``module``, once
    ``module`` is imported (now if it is). Code can only reach such a callable after its
    module was imported, so :func:`find_lowering` meets every one of them registered, and
    ``import ad_compiler`` need not import the module (``numpy.random``)."""
    with _ON_IMPORT_LOCK:
        _ON_IMPORT.append((module, register))
    _run_on_import()


def _run_on_import(load: bool = False) -> None:
    """The waiting registrations whose module is imported (with ``load``: all, importing
    their modules)."""
    with _ON_IMPORT_LOCK:
        for item in list(_ON_IMPORT):
            module, register = item
            if load:
                importlib.import_module(module)
            if module in sys.modules:
                _ON_IMPORT.remove(item)
                register()


def all_lowerings() -> list:
    """Every ``(object, lowering)`` pair: the modules ``import ad_compiler`` leaves to first
    use are loaded, and the registrations waiting for an import are run."""
    importlib.import_module("ad_compiler")._load_all()
    _run_on_import(load=True)
    return list(_LOWERINGS.values())


def lowering(*objs):
    """Decorator: ``fn(b, *args, **kwargs)`` lowers calls of each object in ``objs``."""
    def deco(fn):
        for obj in objs:
            register_lowering(obj, fn)
        return fn
    return deco


def method(*names):
    """Decorator: ``fn(b, self_value, *args, **kwargs)`` lowers ``value.name(...)``."""
    def deco(fn):
        for n in names:
            METHODS[n] = fn
        return fn
    return deco


def attribute(*names):
    """Decorator: ``fn(b, self_value)`` lowers the property ``value.name`` (``x.T``)."""
    def deco(fn):
        for n in names:
            ATTRIBUTES[n] = fn
        return fn
    return deco


#: id(obj) -> (obj, fn): ``fn(b, index)`` lowers ``obj[index]`` of a library object (np.r_)
SUBSCRIPTS: dict[int, tuple[Any, Callable]] = {}


def subscript(*objs):
    """Decorator: ``fn(b, index)`` lowers ``obj[index]`` for each object in ``objs``."""
    def deco(fn):
        for obj in objs:
            SUBSCRIPTS[id(obj)] = (obj, fn)
        return fn
    return deco


def find_subscript(obj) -> Callable | None:
    """The lowering of ``obj[...]`` registered for ``obj`` (by identity), or None."""
    hit = SUBSCRIPTS.get(id(obj))
    return hit[1] if hit is not None and hit[0] is obj else None


#: id(obj) -> (obj, message, hint): functions refused on run-time values, and why
REFUSALS: dict[int, tuple[Any, str, str]] = {}


def refuse(obj, message: str, hint: str) -> None:
    """Say why calls of ``obj`` on run-time values cannot compile (a located error);
    on values known when compiling it still runs (if :func:`~ad_compiler.frontend.
    statics.is_pure` lets it)."""
    REFUSALS[id(obj)] = (obj, message, hint)


def find_refusal(obj) -> tuple[str, str] | None:
    """``(message, hint)`` registered with :func:`refuse` for ``obj``, or None."""
    hit = REFUSALS.get(id(obj))
    return hit[1:] if hit is not None and hit[0] is obj else None


def find_lowering(obj) -> Callable | None:
    """The lowering registered for ``obj`` (by identity), or None."""
    hit = _LOWERINGS.get(id(obj))
    if hit is None and _ON_IMPORT:  # its module may have been imported since
        _run_on_import()
        hit = _LOWERINGS.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    if isinstance(obj, type):  # a class's __ad_lower__ is for its instances
        return None
    lower = getattr(obj, "__ad_lower__", None)
    return lower if callable(lower) else None


def has_effect(op) -> bool:
    """Whether ``op`` must run exactly where and as often as written (``effect=True``)."""
    prim = PRIMITIVES.get(op.prim)
    return prim is not None and prim.effect


def must_run(op) -> bool:
    """Whether ``op`` must run where the user's code runs it even if nothing reads its
    result: it has an effect, or it raises where the user's call would."""
    prim = PRIMITIVES.get(op.prim)
    return prim is not None and (prim.effect or prim.raises and op.params.get("checked", True))


def stays_in_loop(op) -> bool:
    """Whether ``op`` must stay inside the loop that runs it: it has an effect, or it may
    raise (even a recomputation: a loop that runs no iteration must not raise)."""
    prim = PRIMITIVES.get(op.prim)
    return prim is not None and (prim.effect or prim.raises)


def exact_type(value) -> bool:
    """Whether ``value``'s type came from running NumPy itself (an infer rule marked
    ``infer.exact = True``): a Python number there is what NumPy really returns."""
    op = getattr(value, "producer", None)
    prim = PRIMITIVES.get(op.prim) if op is not None else None
    return prim is not None and getattr(prim.infer, "exact", False)


def get(name: str) -> Primitive:
    try:
        return PRIMITIVES[name]
    except KeyError:
        raise KeyError(f"no primitive named {name!r}; known: {sorted(PRIMITIVES)}") from None


# -- templates ---------------------------------------------------------------

def template_fields(template: str) -> tuple[int, list[str]]:
    """Number of positional inputs and the param names used by ``template``."""
    n, names = _template_fields(template)
    return n, list(names)


@functools.lru_cache(maxsize=None)  # templates are the primitives' own: a few hundred
def _template_fields(template: str) -> tuple[int, tuple]:
    import string
    n, names = 0, []
    for _, field_name, _, _ in string.Formatter().parse(template):
        if field_name is None:
            continue
        if field_name.isdigit():
            n = max(n, int(field_name) + 1)
        elif field_name not in names:
            names.append(field_name)
    return n, tuple(names)


def _array_inputs(impl: Callable) -> Callable:
    """``impl`` taking Python numbers too (its template calls methods on its inputs)."""
    def call(*inputs, **params):
        return impl(*(np.asarray(v) if isinstance(v, (int, float, complex))
                      and not isinstance(v, np.generic) else v for v in inputs), **params)
    return call


def template_globals() -> dict:
    """The modules templates may name: ``np``, ``math``, and ``rt`` (ad_compiler.runtime);
    a primitive's own ``globals`` come on top."""
    from .. import runtime
    return {"np": np, "math": math, "rt": runtime}


def _compile_template(template: str) -> Callable:
    n, names = template_fields(template)
    args = [f"_a{i}" for i in range(n)]
    body = template.format(*args, **{k: k for k in names})
    # params a template does not spell (``length=`` of stack_list) are for infer only
    params = ", ".join(args + (["*"] + names if names else []) + ["**_unused"])
    src = f"lambda {params}: {body}"
    return eval(src, template_globals())  # noqa: S307 - templates are our own source


# -- in-place forms -------------------------------------------------------------

_OPERATOR_UFUNCS = {"+": "add", "-": "subtract", "*": "multiply", "/": "true_divide"}


def derive_inplace(template: str) -> dict:
    """In-place statement forms of an elementwise template (see Primitive.inplace).

    >>> derive_inplace("{0} - {1}")
    {0: '{0} -= {1}', 1: 'np.subtract({0}, {1}, out={1})'}
    >>> derive_inplace("np.maximum({0}, 0)")
    {0: 'np.maximum({0}, 0, out={0})'}
    >>> derive_inplace("np.sum({0})")
    {}
    """
    import re
    m = re.fullmatch(r"\{0\} ([-+*/]) \{1\}", template)
    if m:
        op, ufunc = m.group(1), _OPERATOR_UFUNCS[m.group(1)]
        second = (f"{{1}} {op}= {{0}}" if op in "+*"  # commutative: exact either way
                  else f"np.{ufunc}({{0}}, {{1}}, out={{1}})")
        return {0: f"{{0}} {op}= {{1}}", 1: second}
    if template == "-{0}":
        return {0: "np.negative({0}, out={0})"}
    m = re.fullmatch(r"np\.(\w+)\(([^()]*)\)", template)
    if not m or not isinstance(getattr(np, m.group(1), None), np.ufunc):
        return {}
    args = [a.strip() for a in m.group(2).split(",")]
    return {int(a[1:-1]): f"np.{m.group(1)}({m.group(2)}, out={a})"
            for a in args if re.fullmatch(r"\{\d+\}", a)}
