"""Sensitivities in, results out: MindSpore's return structures.

The generated function returns a flat tuple: the forward outputs (when the
value or aux is needed), then the input gradients leaf by leaf in the order of
the selected positions, then the gradients of the weights the function reads.
This module checks ``sens`` against the output and packs that flat tuple into
the structure MindSpore gives (docs/api.md), converting each gradient to its input's type.
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from ..errors import GradRuntimeError, GradTypeError, GradValueError
from ..ir.core import Value
from ..tensor import Tensor, unwrap, wrap
from ..backends import backend_of
from .signature import TENSOR, flatten, leaf_kind, to_input_type, unflatten_like


# -- sens ----------------------------------------------------------------------

def split_sens(args, kwargs):
    """``(inputs, sens)``: ``sens=`` wins over the last positional argument (taken out
    of ``kwargs``; the other keywords are inputs)."""
    if "sens" in kwargs:
        sens = kwargs.pop("sens")
    elif args:
        args, sens = args[:-1], args[-1]
    else:
        raise GradRuntimeError("sens_param=True: pass the output sensitivity as the last "
                               "positional argument or as sens=")
    if sens is None:
        raise GradTypeError("sens is None: with sens_param=True the gradient function needs the "
                            "output sensitivity", hint="pass an array (or Tensor) of the "
                            "output's shape and dtype, e.g. sens=np.ones_like(out), as the last "
                            "positional argument or as sens=")
    return args, sens


def _sens_leaves(sens, out):
    if isinstance(sens, (tuple, list)):
        return [leaf for s in sens for leaf in _sens_leaves(s, out)]
    return [sens]


def flatten_sens(sens, entry) -> list:
    """The sensitivity leaves as arrays, checked against the forward output types."""
    leaves = _sens_leaves(sens, entry.out_tree)
    types = entry.sens_types
    if len(leaves) != len(types):
        leaves = _without_constant_outputs(leaves, entry.sens_tree, len(types))
    return [_check_sens(s, t, i, entry) for i, (s, t) in enumerate(zip(leaves, types))]


def _without_constant_outputs(leaves, tree, n: int) -> list:
    """``leaves`` given for every leaf of the output, its constants too (a Python int
    among the outputs: JAX and MindSpore structure the cotangent like the output), with
    the entries of the constants left out. Whatever such an entry holds (zeros, None, a
    number) multiplies a zero derivative."""
    dynamic = [isinstance(t, int) and not isinstance(t, bool) for t in _output_leaves(tree)]
    n_constant = len(dynamic) - sum(dynamic)
    if len(leaves) != len(dynamic) or not n_constant:
        also = f" (and {n_constant} constant output{'s' if n_constant > 1 else ''}, whose " \
               "entries may be given too)" if n_constant else ""
        raise GradRuntimeError(f"sens has {len(leaves)} entries but the function has {n} "
                               f"outputs{also}: pass one sensitivity per output")
    for k, (s, d) in enumerate(zip(leaves, dynamic)):
        if not d and s is not None and not isinstance(s, Value) and not _is_real_number(unwrap(s)):
            raise GradTypeError(f"sens entry {k} is {_describe(unwrap(s))}, for a constant "
                                "output: pass zeros, None or any real number there")
    return [s for s, d in zip(leaves, dynamic) if d]


def _output_leaves(tree) -> list:
    """The leaves of an output structure (frontend's out_tree), in the order the
    sensitivity lists them."""
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _output_leaves(t)]
    if isinstance(tree, dict):
        return [leaf for t in tree.values() for leaf in _output_leaves(t)]
    return [tree]


def sens_values(b, sens, entry) -> list:
    """The sensitivity leaves of an inlined call as IR values, checked as
    :func:`flatten_sens` checks them (a constant becomes a ``const`` op)."""
    leaves = [s if isinstance(s, Value) else b.const(s) for s in flatten_sens(sens, entry)]
    return [b.emit("cast", s, dtype=t.dtype) if s.type.dtype != t.dtype or s.type.weak > t.weak
            else s for s, t in zip(leaves, entry.sens_types)]


def _check_sens(s, t, i, entry=None):
    if isinstance(s, Value):  # inlined into compiled code: its type is known
        _check_sens_array(s.type, t, i)
        return s
    arr = unwrap(s)
    backend = backend_of(arr)
    if backend is not None:  # kept as it is: a lazy sensitivity gives lazy gradients
        if getattr(entry, "backend", None) is not backend:
            raise GradTypeError(
                f"sens[{i}] is a {backend.name} array but the inputs are NumPy arrays: the "
                "gradient was compiled for NumPy (with buffer reuse)",
                hint="pass the inputs as arrays of the same backend, or a NumPy sensitivity")
        _check_sens_array(arr, t, i)
        return arr
    if not _is_real_number(arr) and not (t.dtype.kind == "c" and _is_complex_number(arr)):
        raise GradTypeError(f"sens[{i}] is {_describe(arr)}, not a real-valued number or array: "
                            f"the sensitivity of output {i} must be an array of its shape "
                            f"{t.shape} and dtype {t.dtype}")
    if type(arr) in (int, float, bool, complex):  # Python numbers: np.float64 is an array
        if t.shape != ():
            raise GradRuntimeError(f"sens[{i}] is a scalar but output {i} has shape {t.shape}: "
                                   "pass an array of the output's shape")
        return arr if t.weak else np.asarray(arr, t.dtype)
    arr = np.asarray(arr)
    _check_sens_array(arr, t, i)
    return arr


def _check_sens_array(arr, t, i) -> None:
    """``arr`` (an array or the AType of a value) has the shape and dtype of output ``i``."""
    if not _shape_fits(arr.shape, t.shape):
        raise GradValueError(f"sens[{i}] has shape {arr.shape} but output {i} has shape "
                             f"{t.shape}: the sensitivity must have the output's shape")
    if not t.weak and not getattr(arr, "weak", False) and arr.dtype != t.dtype:
        raise GradTypeError(f"sens[{i}] has dtype {arr.dtype} but output {i} has dtype "
                            f"{t.dtype}: the sensitivity must have the output's dtype")


def _shape_fits(shape, output_shape) -> bool:
    """``shape`` is the output's; a length known only at run time (None) fits any
    (the generated code then works with the sensitivity's own length)."""
    return len(shape) == len(output_shape) and all(
        d is None or e is None or d == e for d, e in zip(shape, output_shape))


def _is_real_number(x) -> bool:
    if type(x) in (int, float, bool):
        return True
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "fiub"


def _is_complex_number(x) -> bool:
    """A complex sensitivity, for a complex output (docs/complex.md)."""
    return type(x) is complex or isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "c"


def _describe(x) -> str:
    if isinstance(x, (np.ndarray, np.generic)):
        return f"an array of dtype {x.dtype}"
    return "None" if x is None else f"a {type(x).__name__}"


# -- results ---------------------------------------------------------------------

def _value(tree, outs, as_tensor, tangent=False):
    """The output structure ``tree`` filled from ``outs``; with ``tangent``, a constant
    leaf (a number the function returns whatever its inputs) gets a zero tangent."""
    if isinstance(tree, int) and not isinstance(tree, bool):
        v = outs[tree]
        return wrap(np.asarray(v)) if as_tensor and not isinstance(v, float) else v
    if isinstance(tree, (tuple, list)):
        return type(tree)(_value(t, outs, as_tensor, tangent) for t in tree)
    if isinstance(tree, dict):
        return {k: _value(v, outs, as_tensor, tangent) for k, v in tree.items()}
    value = getattr(tree, "value", tree)
    if tangent and isinstance(value, (int, float, np.number, np.ndarray)) \
            and not isinstance(value, bool):
        return value * 0
    return value


def pack(gf, entry, outs, args, kinds):
    """Results of a runtime call, in MindSpore's structure and the inputs' types; the
    Parameters the call writes are set first."""
    write_parameters(entry, outs)
    it = iter(outs[entry.n_value_outs:])
    inputs = []
    for p in entry.positions:
        start, stop = entry.slots[p]
        conv = iter([to_input_type(next(it), kinds[i]) for i in range(start, stop)])
        inputs.append(unflatten_like(args[p], conv))
    weights = [_weight_grad(w, j, it) for w, j in zip(entry.weights, entry.weight_index)]
    value = None
    if _wants_value(gf.config):
        value = _value(entry.out_tree, outs, TENSOR in kinds or hasattr(gf.fn, "construct"))
    return assemble(gf.config, entry, inputs, weights, value)


def write_parameters(entry, outs) -> None:
    """Set each Parameter the compiled code wrote (``entry.effects``) to its new value."""
    if entry.effects:
        n = entry.n_value_outs
        set_written(entry.effects, outs[n - len(entry.effects):n])


#: False while a transform evaluates its function again for more derivatives (the rows
#: of a Jacobian, vjp_fn): each call of a transform writes Parameters once.
_WRITES = contextvars.ContextVar("parameter_writes", default=True)


def set_written(params, values) -> None:
    """Set each Parameter to the value compiled code computed for it (unless inside
    :func:`no_parameter_writes`)."""
    if not _WRITES.get():
        return
    for param, value in zip(params, values):
        param.set_data(np.asarray(value).astype(unwrap(param).dtype, copy=False))


@contextlib.contextmanager
def no_parameter_writes():
    """Compiled calls inside the block leave Parameters alone (see ``_WRITES``)."""
    token = _WRITES.set(False)
    try:
        yield
    finally:
        _WRITES.reset(token)


def _wants_value(config) -> bool:
    """The forward output is returned (it may be all compile-time constants: no IR output)."""
    return config.with_value or config.has_aux


def _frozen(w) -> bool:
    """A Parameter with ``requires_grad=False``: MindSpore gives it a zero gradient even
    when it is listed in ``weights``."""
    return getattr(w, "requires_grad", True) is False


def _weight_grad(w, j, it):
    g = None if j is None else next(it)
    if g is None or _frozen(w):
        return wrap(np.zeros_like(unwrap(w)))
    return wrap(np.asarray(g))


def pack_values(gf, entry, outs, args, b):
    """Results of an inlined call (IR values), in the same structure as :func:`pack`."""
    it = iter(outs[entry.n_value_outs:])
    leaves = flatten(args)[0]
    inputs = []
    for p in entry.positions:
        start, stop = entry.slots[p]
        conv = iter([_value_like_input(b, next(it), leaves[i]) for i in range(start, stop)])
        inputs.append(unflatten_like(args[p], conv))
    if entry.weights:
        b.depends_on_epoch()  # requires_grad of a weight may change: it bumps the epoch
    weights = [_inlined_weight_grad(b, w, None if j is None else next(it))
               for w, j in zip(entry.weights, entry.weight_index)]
    value = _value(entry.out_tree, outs, False) if _wants_value(gf.config) else None
    _write_inlined(b, entry, outs)
    return assemble(gf.config, entry, inputs, weights, value)


def _write_inlined(b, entry, outs) -> None:
    """The Parameters an inlined gradient's function writes are written by the function
    it is inlined into (once per evaluation, as a call of the function would)."""
    n, k = entry.n_value_outs, len(entry.effects)
    for param, value in zip(entry.effects, outs[n - k:n]):
        b.write_parameter(b.read_parameter(param), value)


def _inlined_weight_grad(b, w, g):
    return b.emit("zeros_like", b.read_parameter(w)) if g is None or _frozen(w) else g


def _value_like_input(b, g: Value, x):
    """The gradient ``g`` of an inlined input ``x``: a Python float for a Python float (as
    :func:`~.signature.to_input_type` makes it at run time), else as computed."""
    weak = type(x) is float or isinstance(x, Value) and x.type.weak and x.type.dtype.kind == "f"
    return b.pyfloat(g) if weak and not g.type.weak else g


def assemble(config, entry, inputs, weights, value):
    """Arrange input and weight gradients as GradOperation / grad return them."""
    if config.return_ids:
        inputs = [(p, g) for p, g in zip(entry.positions, inputs)]
        weights = [(getattr(w, "name", i), g) for i, (w, g) in enumerate(zip(entry.weights, weights))]
    grads = _gradop(config, inputs, weights) if config.style == "gradop" else \
        _grad(config, inputs, weights)
    if config.with_value:
        return value, grads
    if config.has_aux:
        return grads, tuple(value[1:])
    return grads


def _gradop(config, inputs, weights):
    if config.positions == "all" and config.by_list:
        return tuple(inputs), tuple(weights)
    if config.by_list:
        return weights[0] if config.weights_bare else tuple(weights)
    if config.positions == "all":
        return tuple(inputs)
    return inputs[0] if inputs else ()


def _grad(config, inputs, weights):
    in_part = None
    if config.positions is not None:
        in_part = inputs[0] if len(config.positions) == 1 else tuple(inputs)
    if not config.by_list:
        return in_part
    w_part = weights[0] if config.weights_bare else tuple(weights)
    return w_part if config.positions is None else (in_part, w_part)
