"""From a user function and a configuration to a compiled gradient entry.

``build_entry(fn, config, weights, args)`` lifts ``fn`` for the call's signature,
builds the VJP IR, optimises it and compiles it. The entry remembers how to turn
the generated function's flat outputs back into the structure the API returns
(:mod:`ad_compiler.api.packing`).
"""
from __future__ import annotations

import threading

from ..ad.reverse import ARG, NONE, ONES, vjp_function
from ..passes.algebra import gradient_pipeline
from ..passes.primal import prepare_for_reverse
import numpy as np

from ..backends import backend_of_values
from ..errors import GradRuntimeError, GradTypeError, GradValueError
from ..ir.core import Function
from ..passes.pipeline import PIPELINE, optimize
from ..records import Equal
from .signature import Static, flatten, spec_of
from .state import make_reader


_COMPILE_LOCK = threading.Lock()


class Entry(Equal):
    """One compiled gradient: IR, generated code, and the plan to call and pack it."""
    ir: Function
    params: list                 # Parameters the function reads, passed after the inputs
    slots: list                  # per positional arg: (start, stop) of its leaves
    positions: list              # selected positional args, in the order returned
    weights: list                # the requested weights (Parameters, or Tensors: zeros)
    weight_index: list           # per requested weight: index in ``params`` or None (zeros)
    out_tree: object             # the forward output structure (frontend's out_tree)
    out_types: list              # types of the forward output leaves
    sens_types: list             # types of the outputs that take a sensitivity argument
    n_value_outs: int            # how many forward outputs the compiled function returns
    captured: object = None      # the captured state read (frontend/captured.py)
    reader: object = None        # read(owner): the captured arrays now, or None (api/state.py)
    serial: int = -1             # when its lift began (api/state.py next_serial)
    effects: list  # Parameters the call writes: the last
    #                              len(effects) value outputs are their new values
    randoms: list  # (AType, draw) per input after the captured
    sens_tree: object = None     # the part of ``out_tree`` the sensitivity is for
    backend: object = None       # the inputs' array backend (backends.py), None for NumPy:
    #                              compiled without buffer reuse, seeds passed as arguments
    _compiled: object = None

    _fields = ("ir", "params", "slots", "positions", "weights", "weight_index", "out_tree",
               "out_types", "sens_types", "n_value_outs", "captured", "reader", "serial",
               "effects", "randoms", "sens_tree", "backend")

    def __init__(
            self, ir, params, slots, positions, weights, weight_index, out_tree, out_types,
            sens_types, n_value_outs, captured=None, reader=None, serial=-1, effects=None,
            randoms=None, sens_tree=None, backend=None, _compiled=None):
        self.ir = ir
        self.params = params
        self.slots = slots
        self.positions = positions
        self.weights = weights
        self.weight_index = weight_index
        self.out_tree = out_tree
        self.out_types = out_types
        self.sens_types = sens_types
        self.n_value_outs = n_value_outs
        self.captured = captured
        self.reader = reader
        self.serial = serial
        self.effects = [] if effects is None else effects
        self.randoms = [] if randoms is None else randoms
        self.sens_tree = sens_tree
        self.backend = backend
        self._compiled = _compiled

    __hash__ = None

    def seeds(self) -> list:
        """The output seeds a call passes (ones made by the backend, see
        :func:`build_entry`); none for NumPy inputs, whose seeds are constants."""
        if self.backend is None:
            return []
        return [self.backend.ones(t.shape, t.dtype) for t in self.sens_types]

    def read_state(self, owner):
        """The captured arrays to pass after the Parameters, or None when what the
        code was compiled for has changed (then it must be compiled again)."""
        return () if self.reader is None else self.reader(owner)

    @property
    def compiled(self):
        """The generated function, compiled on first use, once even under threads."""
        if self._compiled is None:
            from ..codegen import compile_function
            with _COMPILE_LOCK:
                if self._compiled is None:
                    self._compiled = compile_function(self.ir,
                                                      reuse_buffers=self.backend is None)
        return self._compiled


def select_positions(config, slots, args) -> list:
    """The positional arguments whose gradients are requested."""
    has_slot = [stop > start for start, stop in slots]
    pos = config.positions
    if pos == "first":
        return [i for i, s in enumerate(has_slot) if s][:1]
    if pos == "all":
        return [i for i, s in enumerate(has_slot) if s]
    if pos is None:
        return []
    if not pos:
        raise GradRuntimeError("grad_position is an empty tuple: name at least one input, "
                               "or use grad_position=None with weights")
    for p in pos:
        if p >= len(args):
            raise GradRuntimeError(
                f"grad_position {p} is out of range: the function was called with "
                f"{len(args)} positional argument(s)")
        if not has_slot[p]:
            raise GradRuntimeError(
                f"argument {p} is {type(args[p]).__name__} {args[p]!r}, a constant with no "
                "gradient", hint="pass it as a Tensor, ndarray or float to differentiate it")
    return list(pos)


def _seeds(config, out_tree, n_outs) -> list[str]:
    if not config.has_aux:
        return [ARG if config.sens else ONES] * n_outs
    if not isinstance(out_tree, (tuple, list)) or len(out_tree) < 2:
        raise GradValueError("with has_aux=True the function must return a tuple of at least "
                             "two outputs: (value_to_differentiate, *aux)")
    first = set(_leaf_indices(out_tree[0]))
    seed = ARG if config.sens else ONES
    return [seed if i in first else NONE for i in range(n_outs)]


def _leaf_indices(tree):
    if isinstance(tree, int) and not isinstance(tree, bool):
        yield tree
    elif isinstance(tree, (tuple, list)):
        for t in tree:
            yield from _leaf_indices(t)
    elif isinstance(tree, dict):
        for t in tree.values():
            yield from _leaf_indices(t)


def check_complex(lifted, fn, seeds=None) -> None:
    """Complex values follow JAX's convention (ops/complex_numbers.py) through the
    primitives whose rules hold for them (``COMPLEX``); any other op that meets a
    complex value is a :class:`GradTypeError` at its line. An output ``seeds`` seeds
    with ones (``grad`` without a sensitivity) must be real, as in JAX."""
    for op in lifted.function.body.walk():
        if not any(_is_complex(v) for v in (*op.inputs, *op.results)) or _complex_ok(op):
            continue
        raise GradTypeError(
            f"{_op_name(op)} of a complex value ({_complex_type(op)}) has no complex "
            "derivative rule", op.loc, hint=_SPLIT)
    if any(_is_complex(v) and s == ONES for v, s in zip(lifted.function.outputs, seeds or ())):
        raise GradTypeError(
            f"{_display_name(fn)}() returns a complex value; a gradient needs a real-valued "
            "output (as in JAX)", lifted.loc,
            hint="differentiate a real function of it (np.real(out), np.abs(out) ** 2), or "
                 "pass a complex cotangent ct: out, vjp_fn = vjp(fn, z); vjp_fn(ct), or "
                 "GradOperation(sens_param=True)")


def _complex_ok(op) -> bool:
    from ..ops.complex_numbers import COMPLEX
    if op.regions:  # if / loops: their bodies are checked op by op
        return True
    ok = COMPLEX.get(op.prim, False)
    return ok(op) if callable(ok) else ok


def _op_name(op) -> str:
    return {"getitem": "indexing", "cast": "a cast"}.get(op.prim, op.prim)


def _complex_type(op) -> str:
    return next(str(v.type) for v in (*op.inputs, *op.results) if _is_complex(v))


def _display_name(fn) -> str:
    """How the user wrote ``fn``: ``f``, ``<lambda>``, ``Net.construct`` for a Cell."""
    name = getattr(fn, "__name__", None)
    return name if name is not None else f"{type(fn).__name__}.construct"


_SPLIT = ("compute with the real and imaginary parts as separate float arrays (np.real(z), "
          "np.imag(z)); docs/complex.md lists what takes complex values")


def _is_complex(value) -> bool:
    return getattr(getattr(value.type, "dtype", None), "kind", None) == "c"


def check_output(lifted, has_aux: bool, fn) -> None:
    """The output to differentiate holds only numbers and arrays: a function returning
    None, a string or another object is a :class:`GradTypeError` at its ``return``."""
    from ..frontend import Static, tree_leaves
    tree = lifted.out_tree
    if has_aux and not (type(tree) is tuple and len(tree) >= 2):
        got = (f"a {type(tree).__name__} of {len(tree)}" if isinstance(tree, (tuple, list))
               else "one output")
        raise GradValueError(
            f"with has_aux=True, {_display_name(fn)}() must return a tuple of at least two "
            f"outputs (the one to differentiate, then the auxiliary ones); it returns {got}",
            lifted.loc, hint="return loss, aux (a tuple, not a list)")
    if has_aux:
        tree = tree[0]  # the aux outputs that follow may be anything
    for leaf in tree_leaves(tree):
        if isinstance(leaf, Static) and not _is_real_number(leaf.value):
            what = _describe(leaf.value, lifted)
            if leaf is not tree:
                what = f"a {type(tree).__name__} holding {what}"
            raise GradTypeError(
                f"{_display_name(fn)}() returns {what}; the function "
                "to differentiate must return a Tensor, an ndarray or a float (or a tuple, list "
                "or dict of them)", lifted.loc,
                hint="return the value to differentiate; with has_aux=True other outputs may "
                     "follow it: return loss, extra")


def _is_real_number(v) -> bool:
    from ..tensor import unwrap
    v = unwrap(v)
    if isinstance(v, (bool, int, float)):
        return True
    return isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "fiub"


def _describe(v, lifted) -> str:
    if v is None:
        return "None" if lifted.loc is not lifted.function.loc else \
            "None (it has no return statement)"
    if isinstance(v, str):
        return f"the string {v[:40]!r}" + ("..." if len(v) > 40 else "")
    return f"{type(v).__name__} {v!r}"[:80]


def build_entry(fn, config, weights, args) -> Entry:
    from ..frontend import lift
    lifted = lift(fn, tuple(spec_of(a) for a in args), effects=True, randoms=config.randoms)
    check_output(lifted, config.has_aux, fn)
    _, _, slots = flatten(args)
    positions = select_positions(config, slots, args)
    weight_list = resolve_weights(config, weights, fn, lifted.params)
    weight_index = [_index_of(w, lifted.params) for w in weight_list]
    wrt = [i for p in positions for i in range(*slots[p])]
    wrt += [lifted.n_inputs + j for j in weight_index if j is not None]
    f = lifted.function
    n_written = len(lifted.effects)
    seeds = _seeds(config, lifted.out_tree, len(f.outputs) - n_written) + [NONE] * n_written
    check_complex(lifted, fn, seeds)
    backend = backend_of_values(flatten(args)[0])
    if backend is not None:  # a seed of ones made by the backend: what derives from it
        seeds = [ARG if s == ONES else s for s in seeds]  # is the backend's (lazy) array
    with_outputs = config.with_value or config.has_aux or n_written > 0
    f = prepare_for_reverse(f)
    ir = optimize(vjp_function(f, wrt, seeds, with_outputs=with_outputs, name=f"{f.name}_grad"),
                  PIPELINE if with_outputs else gradient_pipeline())
    if backend is not None:
        from ..passes.backend import for_backend
        ir = for_backend(ir)
    return Entry(ir, list(lifted.params), slots, positions, weight_list, weight_index,
                 lifted.out_tree,
                 [v.type for v in f.outputs], [v.type for v, s in zip(f.outputs, seeds) if s == ARG],
                 len(f.outputs) if with_outputs else 0, lifted.captured,
                 make_reader(lifted.captured), effects=lifted.effects,
                 randoms=lifted.randoms,
                 sens_tree=lifted.out_tree[0] if config.has_aux else lifted.out_tree,
                 backend=backend)


def _index_of(w, params):
    from ..nn.parameter import Parameter
    if not isinstance(w, Parameter):
        return None  # a plain Tensor given as a weight gets zeros (MindSpore)
    for j, p in enumerate(params):
        if p is w:
            return j
    return None


def resolve_weights(config, weights, fn, lifted_params) -> list:
    """The list of Parameters whose gradients are returned (empty when none)."""
    if not config.by_list:
        return []
    if weights is None:
        trainable = getattr(fn, "trainable_params", None)
        if callable(trainable):
            return list(trainable())
        found = [p for p in lifted_params if getattr(p, "requires_grad", True)]
        if not found:
            raise _no_weights(fn)
        return found
    if isinstance(weights, (list, tuple)):
        return list(weights)
    return [weights]



def _no_weights(fn) -> GradValueError:
    """get_by_list=True without weights, on a function that reads no Parameter: nothing to
    differentiate (as grad(fn, None, None) is an error), not a silent empty tuple."""
    name = getattr(fn, "__qualname__", type(fn).__name__)
    return GradValueError(
        f"weight gradients were asked for (get_by_list=True) without weights, and {name} is "
        "not a Cell and reads no trainable Parameter: there are no weights to differentiate",
        hint="pass the weights, GradOperation(get_by_list=True)(fn, weights), differentiate a "
             "Cell, or ask for input gradients only (get_by_list=False)")


__all__ = ["Entry", "build_entry", "Static"]
