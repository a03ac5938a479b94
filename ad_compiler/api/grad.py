"""GradOperation, grad and value_and_grad: MindSpore's autodiff API, compiled.

A gradient function (:class:`GradFunction`) compiles ``fn`` once per input
signature and caches the result weakly on ``fn`` (see codegen/cache.py); every
later call with the same signature is a dict lookup, the reads and checks of
what ``fn`` reads from outside (api/state.py), plus the generated code. When a
check fails (a global or attribute the code specialised on changed), the entry
is compiled again.

Example:
    >>> import numpy as np
    >>> import ad_compiler as ms
    >>> def f(x, y):
    ...     return np.sum(x * np.sin(y))
    >>> dx, dy = ms.grad(f, grad_position=(0, 1))(np.ones(2), np.zeros(2))
    >>> dx, dy
    (array([0., 0.]), array([1., 1.]))
"""
from __future__ import annotations

import operator
import weakref
from typing import Any, Callable, Sequence, Union

import numpy as np

from ..ad.rules import register_lowering
from ..codegen.cache import lookup_or_build, table_for
from ..codegen.compile import add_origin_notes
from ..errors import GradTypeError, GradValueError, UnsupportedOperationError
from ..frontend import owner_of
from ..ir.core import Value
from ..records import Equal, Frozen
from . import packing
from .compiler import build_entry
from .fastpath import MISS, fast_key, guarded, parameter_names
from .keywords import bind_keywords, call_parameters
from .signature import TENSOR, flatten, signature
from .state import current_entry, next_serial


#: ``grad_position``: one input position, several, or None (weights only)
Positions = Union[int, tuple[int, ...], None]
#: ``weights``: one Parameter, a list/tuple/ParameterTuple of them, or None
Weights = Union[Any, Sequence[Any], None]


class Config(Frozen, Equal):
    """Everything about a gradient request except ``fn`` and the weights."""
    positions: object            # "first" | "all" | tuple of ints | None
    by_list: bool = False        # weight gradients requested
    sens: bool = False
    has_aux: bool = False
    with_value: bool = False
    return_ids: bool = False
    style: str = "grad"          # "gradop" or "grad": how results are packed
    weights_bare: bool = False   # one Parameter given: its gradient is returned bare
    randoms: bool = True         # random masks drawn per call (False: refused, see vjp)

    _fields = ("positions", "by_list", "sens", "has_aux", "with_value", "return_ids", "style",
               "weights_bare", "randoms")

    def __init__(
            self, positions, by_list=False, sens=False, has_aux=False, with_value=False,
            return_ids=False, style="grad", weights_bare=False, randoms=True):
        _set = object.__setattr__
        _set(self, "positions", positions)
        _set(self, "by_list", by_list)
        _set(self, "sens", sens)
        _set(self, "has_aux", has_aux)
        _set(self, "with_value", with_value)
        _set(self, "return_ids", return_ids)
        _set(self, "style", style)
        _set(self, "weights_bare", weights_bare)
        _set(self, "randoms", randoms)


def _general_path(gf) -> Callable:
    """``call(*args, **kwargs)`` running ``gf``'s general path: what a gradient function
    runs before its first fast-path guard, and what a guard runs on a miss. It holds
    ``gf`` weakly (a guard held by ``gf`` must not hold it back: no reference cycle);
    ``gf`` is alive during any call of it, as the object being called."""
    ref = weakref.ref(gf)

    def call(*args, **kwargs):
        return ref()._dispatch(args, kwargs)
    return call


class GradFunction:
    """The gradient function of ``fn``; call it with ``fn``'s inputs."""

    #: calling it runs ``_hot``: the fast-path guard of the signature used last
    #: (fastpath.guarded), which hands a call it does not match to ``_dispatch``; a
    #: property rather than a method, so a cache hit is one Python frame, the guard
    __call__ = property(operator.attrgetter("_hot"))

    def __init__(self, fn, config: Config, weights=None):
        self.fn = fn
        self.config = config
        self.weights = weights
        self._owner = owner_of(fn)   # where the captured state of the entries is read from
        self._entries: dict = {}
        self._fast: dict = {}   # plain-ndarray signature -> its Guard (fastpath.py)
        self._miss = _general_path(self)
        self._hot = self._miss  # the guard's call of the signature used last
        self._params = None   # (names, qualname) the guards take, read at the first guard
        self._parameters = None  # fn's parameters, read at the first call with keywords
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__) + "_grad"

    def __repr__(self) -> str:
        return f"<gradient function of {getattr(self.fn, '__qualname__', self.fn)!r}>"

    def _key(self, args):
        w = self.weights
        wkey = None if w is None else tuple(id(p) for p in (w if isinstance(w, (list, tuple)) else (w,)))
        return (self.config, wkey, getattr(self.fn, "__func__", None), signature(args))

    def entry_for(self, args):
        """The compiled entry for these inputs (compiled on first use, and again when
        the captured state it was compiled for has changed)."""
        return self.entry_and_state(args)[0]

    def entry_and_state(self, args):
        """``(entry, captured arrays)``: the entry valid for the captured state now."""
        check_callable(self.fn)
        key = self._key(args)
        entry = self._entries.get(key)
        if entry is not None:  # the common case: compiled before, for the same state
            state = entry.read_state(self._owner)
            if state is not None:
                return entry, state

        since = next_serial()

        def build():
            serial = next_serial()  # before lifting: the state read is at least this new
            built = build_entry(self.fn, self.config, self.weights, args)
            built.serial = serial
            return built

        def lookup(stale):
            entry = self._entries.get(key)
            if entry is None or entry is stale:
                table = table_for(self.fn)
                entry = lookup_or_build(self._entries if table is None else table, key,
                                        build, stale)
                self._entries[key] = entry
            return entry
        return current_entry(lookup, lambda e: e.read_state(self._owner), self.fn, entry,
                             self._owner, since)

    def _dispatch(self, args, kwargs):
        """A call the hot guard did not match: another signature's guard, or the
        general path."""
        if not kwargs:
            key = fast_key(args)
            guard = None if key is None else self._fast.get(key)
            if guard is not None:  # another signature seen before: it becomes the hot one
                out = guard.probe(args)
                if out is not MISS:  # (an equal dtype of another identity misses it)
                    self._hot = guard.call
                    return out
        return self._call(args, kwargs)

    def _split(self, args, kwargs):
        """``(inputs, sens)`` of a call (sens None without ``sens_param``); inputs given
        by keyword are bound to ``fn``'s parameters (api/keywords.py)."""
        sens = None
        if self.config.sens:
            args, sens = packing.split_sens(args, kwargs)
        if kwargs:
            if self._parameters is None:
                self._parameters = call_parameters(self.fn)
            if "sens" in kwargs and not any(p.name == "sens" for p in self._parameters or ()):
                raise GradTypeError("sens= is given but the gradient function takes no "
                                    "sensitivity", hint="make it with sens_param=True "
                                    "(GradOperation) to pass the output sensitivity")
            args = bind_keywords(self.fn, args, kwargs, self._parameters)
        return args, sens

    def _call(self, args, kwargs):
        args, sens = self._split(args, kwargs)
        entry, state = self.entry_and_state(args)
        leaves, kinds, _ = flatten(args)
        extra = [p.asnumpy() for p in entry.params]
        extra += state
        extra += [draw() for _, draw in entry.randoms]
        if sens is not None:
            extra += packing.flatten_sens(sens, entry)
        try:
            if entry.backend is not None:
                from ..backends import run_compiled
                outs = run_compiled(entry, *leaves, *extra, *([] if sens is not None
                                                              else entry.seeds()))
            else:
                outs = entry.compiled.fn(*leaves, *extra)
        except BaseException as exc:
            add_origin_notes(exc)
            raise
        key = fast_key(args)
        if self._params is None:
            self._params = parameter_names(self.fn)
        guard = guarded(self.config, entry, args, key, self._miss, self._owner, *self._params,
                        tensors=TENSOR in kinds or hasattr(self.fn, "construct"))
        if guard is not None:
            self._fast[key] = guard
            self._hot = guard.call
        return packing.pack(self, entry, outs, args, kinds)

    def __ad_lower__(self, b, *args, **kwargs):
        """Inline this gradient into a function being compiled (gradients of gradients)."""
        from ..ir.clone import inline
        args, sens = self._split(args, kwargs)
        entry = self.entry_for(args)
        leaves, _, _ = flatten(args)
        leaves = [b.const(v) for v in leaves]  # a constant input (1.0, a global array) is an op
        params = [b.read_parameter(p) for p in entry.params]
        captured = b.read_captured(entry.captured, self._owner) if entry.captured else []
        captured += [b.random_input(t, draw, "a random mask") for t, draw in entry.randoms]
        sens_vals = packing.sens_values(b, sens, entry) if sens is not None else []
        outs = inline(b, entry.ir, leaves + params + captured + sens_vals)
        return packing.pack_values(self, entry, outs, args, b)


def check_callable(fn) -> None:
    """A :class:`GradTypeError` unless ``fn`` can be differentiated at all (is callable)."""
    if callable(fn):
        return
    shown = "None" if fn is None else f"{type(fn).__name__} {fn!r}"[:80]
    raise GradTypeError(f"the function to differentiate must be callable (a function, a method "
                        f"or a Cell), but got {shown}",
                        hint="pass the function itself, e.g. grad(f)(x), not grad(f(x))")


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise GradTypeError(f"'{name}' must be a bool, but got {type(value).__name__} {value!r}")


class GradOperation:
    """A higher-order function that makes the gradient function of a function or Cell.

    Args:
        get_all: gradients of all inputs (else of the first only).
        get_by_list: gradients of the weights (``weights`` given when called, else all
            trainable Parameters of the Cell).
        sens_param: the gradient function takes the output sensitivity as its last
            positional argument or as ``sens=``.

    Example:
        >>> import numpy as np
        >>> from ad_compiler import ops
        >>> def f(x, y):
        ...     return x * y
        >>> ops.GradOperation(get_all=True)(f)(np.array([2.0]), np.array([3.0]))
        (array([3.]), array([2.]))
    """

    def __init__(self, get_all: bool = False, get_by_list: bool = False,
                 sens_param: bool = False) -> None:
        for name, v in (("get_all", get_all), ("get_by_list", get_by_list),
                        ("sens_param", sens_param)):
            _check_bool(name, v)
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param
        self._config = Config("all" if get_all else "first", get_by_list, sens_param,
                              style="gradop")

    def __ad_lower__(self, b, fn, weights=None):
        """Inside compiled code, ``grad_op(net)`` is evaluated at compile time."""
        refuse_local(fn)
        return self(fn, parameters_of(b, weights))

    def __call__(self, fn: Callable[..., Any], weights: Weights = None) -> GradFunction:
        if not self.get_by_list:
            weights = None
        config = self._config
        if weights is not None:
            _check_weights(weights)
            bare = not isinstance(weights, (list, tuple))
            if bare != config.weights_bare:
                config = Config(config.positions, config.by_list, config.sens, style="gradop",
                                weights_bare=bare)
        return GradFunction(fn, config, weights)


def _check_positions(grad_position):
    if grad_position is None:
        return None
    if isinstance(grad_position, bool) or not isinstance(grad_position, (int, tuple)):
        raise GradTypeError(f"grad_position must be an int, a tuple of ints or None, "
                            f"but got {type(grad_position).__name__} {grad_position!r}")
    pos = (grad_position,) if isinstance(grad_position, int) else grad_position
    for p in pos:
        if isinstance(p, bool) or not isinstance(p, int):
            raise GradTypeError(f"grad_position elements must be ints, got {p!r}")
        if p < 0:
            raise GradValueError(f"grad_position must be non-negative, got {p}")
    if len(set(pos)) != len(pos):
        raise GradValueError(f"grad_position has duplicates: {grad_position}")
    return pos


def _check_weights(weights):
    from ..tensor import Tensor
    items = weights if isinstance(weights, (list, tuple)) else (weights,)
    for w in items:
        if not isinstance(w, Tensor):
            raise GradTypeError(f"weights must be Parameters (a Parameter, a list/tuple of them or "
                                f"a ParameterTuple), but got {type(w).__name__}")
    return items


def _make_config(grad_position, weights, has_aux, return_ids, with_value):
    _check_bool("has_aux", has_aux)
    _check_bool("return_ids", return_ids)
    positions = _check_positions(grad_position)
    if positions is None and weights is None:
        raise GradValueError("grad_position and weights cannot both be None: say what to "
                             "differentiate (e.g. grad_position=0 or weights=net.trainable_params())")
    if weights is not None:
        _check_weights(weights)
    return Config(positions, weights is not None, False, has_aux, with_value, return_ids,
                  "grad", weights is not None and not isinstance(weights, (list, tuple)))


class _Decorating:
    """The default of ``fn`` in :func:`grad`: no function yet, used as ``@grad(...)``."""

    def __repr__(self) -> str:
        return "<none: used as a decorator>"


_DECORATING = _Decorating()


def grad(fn: Callable[..., Any] = _DECORATING, grad_position: Positions = 0,
         weights: Weights = None, has_aux: bool = False,
         return_ids: bool = False) -> Callable[..., Any]:
    """The gradient function of ``fn`` w.r.t. the inputs at ``grad_position`` and ``weights``.

    Also a decorator: ``@grad`` or ``@grad(grad_position=(0, 1))``.

    Returns:
        A function taking ``fn``'s inputs and returning: one gradient bare for one
        position (int or 1-tuple), a tuple for several; a weight part (bare for one
        Parameter, else a tuple); ``(inputs_part, weights_part)`` when both are asked;
        ``(grads, aux)`` with ``has_aux=True``.

    Example:
        >>> import numpy as np
        >>> import ad_compiler as ms
        >>> @ms.grad
        ... def f(x):
        ...     return np.sum(x ** 2)
        >>> f(np.array([1.0, 2.0]))
        array([2., 4.])
    """
    config = _make_config(grad_position, weights, has_aux, return_ids, False)
    if fn is _DECORATING:
        return lambda f: GradFunction(f, config, weights)
    return GradFunction(fn, config, weights)


def value_and_grad(fn: Callable[..., Any] = _DECORATING, grad_position: Positions = 0,
                   weights: Weights = None, has_aux: bool = False,
                   return_ids: bool = False) -> Callable[..., Any]:
    """Like :func:`grad`, but the function returns ``(value, grads)``; value is ``fn``'s output.

    Example:
        >>> import numpy as np
        >>> import ad_compiler as ms
        >>> ms.value_and_grad(lambda x: np.sum(x * x))(np.array([3.0]))
        (np.float64(9.0), array([6.]))
    """
    config = _make_config(grad_position, weights, has_aux, return_ids, True)
    if fn is _DECORATING:
        return lambda f: GradFunction(f, config, weights)
    return GradFunction(fn, config, weights)


def refuse_local(fn) -> None:
    """An :class:`UnsupportedOperationError` for a function defined inside the compiled
    function (a ``def`` or ``lambda`` there has no compiled gradient of its own)."""
    from ..frontend.inline import LocalFunction
    if isinstance(fn, LocalFunction):
        raise UnsupportedOperationError(
            f"the gradient of {fn.name}, a function defined inside the compiled function, "
            "is not supported",
            hint="define it outside (at module level) and pass what it reads from here as "
                 "arguments")


def parameters_of(b, weights):
    """``weights`` given inside compiled code: the Parameters whose values they are."""
    if isinstance(weights, (list, tuple)):
        return type(weights)(parameters_of(b, w) for w in weights)
    if not isinstance(weights, Value):
        return weights
    param = b.parameter_of(weights)
    if param is None:
        raise GradTypeError("weights must be Parameters (a Parameter, a list/tuple of them or a "
                            "ParameterTuple), but got an array computed in the function",
                            hint="pass the Cell's Parameters themselves, e.g. "
                                 "weights=self.weights made in __init__")
    return param


def _static_lowering(api_fn, weights_at=None):
    """Calls of ``grad``/``value_and_grad`` and ``GradOperation(...)`` inside compiled
    code run at compile time (``weights_at``: the position of the weights argument)."""
    def lower(b, *args, **kwargs):
        refuse_local(args[0] if args else kwargs.get("fn"))
        if weights_at is not None and len(args) > weights_at:
            args = (*args[:weights_at], parameters_of(b, args[weights_at]), *args[weights_at + 1:])
        if weights_at is not None and "weights" in kwargs:
            kwargs["weights"] = parameters_of(b, kwargs["weights"])
        return api_fn(*args, **kwargs)
    return lower


register_lowering(grad, _static_lowering(grad, weights_at=2))
register_lowering(value_and_grad, _static_lowering(value_and_grad, weights_at=2))
register_lowering(GradOperation, _static_lowering(GradOperation))
