"""``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian`` called inside compiled code.

As for ``grad`` there (api/grad.py), each call is evaluated while lifting: what
the transform computes is inlined into the function being compiled as ordinary
IR, which can then be differentiated again (a Jacobian inside a loss, a
Hessian-vector product inside a gradient).

* ``ms.vjp(fn, *inputs)`` gives ``fn``'s output (``fn`` called as compiled code
  calls it) and a ``vjp_fn`` whose call inlines the gradient with ``v`` as its
  sensitivity (``GradOperation(get_all=True, sens_param=True)``);
* ``ms.jvp(fn, inputs, v)`` inlines ``fn``'s forward-mode function (the one
  :func:`~.transforms.jvp` compiles) with the inputs and tangents;
* ``ms.jacrev(fn)(*args)`` inlines one vector-Jacobian product per output element,
  ``ms.jacfwd(fn)(*args)`` one Jacobian-vector product per input element, and
  stacks them; ``ms.hessian(fn)(*args)`` is the Jacobian of the gradient (forward
  over reverse, or reverse over reverse where forward mode does not go through).

Shapes must be known when compiling (a Jacobian's size is); a function defined
inside the compiled function is refused, as for ``grad``.
"""
from __future__ import annotations

import numpy as np

from ..ad import rules
from ..errors import GradTypeError, GradValueError, UnsupportedOperationError
from ..frontend import owner_of
from ..ir.core import AType, Value
from ..tensor import unwrap
from .grad import Config, GradFunction, _check_bool, grad, refuse_local
from .hessian import _component, hessian
from .packing import _shape_fits
from .signature import PYFLOAT, flatten
from .transforms import (_as_tuple, _jvp_entry, _positions, _split_aux, _tangent_leaves,
                         _tangent_of, _what, jacfwd, jacrev, jvp, jvp_results, vjp)


# -- vjp -------------------------------------------------------------------------------

class InlinedVJP:
    """The ``vjp_fn`` of a ``vjp`` inside compiled code: calling it there inlines the
    gradient of ``fn`` at ``inputs`` with its argument as the sensitivity."""

    def __init__(self, fn, inputs, has_aux: bool):
        self.gradient = GradFunction(fn, Config("all", False, True, has_aux, True, False,
                                                "gradop"))
        self.inputs = inputs

    def __ad_lower__(self, b, *v):
        if not v or len(v) == 1 and v[0] is None:
            raise GradTypeError(f"vjp_fn(v) needs the cotangent v, got "
                                f"{'None' if v else 'nothing'}",
                                hint="pass an array of the output's shape and dtype, e.g. "
                                     "vjp_fn(np.ones_like(out))")
        return self.gradient.__ad_lower__(b, *self.inputs, v[0] if len(v) == 1 else v)[1]


def _lower_vjp(b, fn, *inputs, has_aux=False):
    _check_bool("has_aux", has_aux)
    refuse_local(fn)
    out, aux = _split_aux(b.call(fn, list(inputs)), has_aux)
    vjp_fn = InlinedVJP(fn, inputs, has_aux)
    return (out, vjp_fn) if not has_aux else (out, vjp_fn, aux)


# -- jvp -------------------------------------------------------------------------------

def inlined_jvp(b, fn, inputs, v, has_aux=False):
    """``(out, jvp_out)`` (and aux) of ``fn`` as IR values: its forward-mode function
    inlined with ``inputs`` and the tangents ``v``."""
    _check_bool("has_aux", has_aux)
    refuse_local(fn)
    args, tangents = _as_tuple(inputs), _as_tuple(v)
    (lifted, ir, _, _), _, _ = _jvp_entry(fn, args)
    from .compiler import check_output
    check_output(lifted, has_aux, fn)
    leaves = [x if isinstance(x, Value) else b.const(x) for x in flatten(args)[0]]
    t_leaves = _tangent_leaves(args, tangents, isinstance(inputs, (tuple, list)),
                               lambda a, kind, t, path: _tangent_value(b, a, kind, t, path))
    params = [b.read_parameter(p) for p in lifted.params]
    captured = b.read_captured(lifted.captured, owner_of(fn)) if lifted.captured else []
    from ..ir.clone import inline
    outs = inline(b, ir, leaves + params + captured + t_leaves)
    return jvp_results(lifted.out_tree, outs, False, has_aux)


def _tangent_value(b, a, kind: str, t, path: str) -> Value:
    """The tangent of input leaf ``a`` as an IR value, checked as :func:`jvp` checks it
    (shape, real numbers) and cast to the input's floating dtype."""
    if not isinstance(a, Value) and not isinstance(t, Value):
        return b.const(_tangent_of(a, kind, t, path))
    want = a.type if isinstance(a, Value) else None
    shape = want.shape if want is not None else np.shape(unwrap(a))
    if not isinstance(t, Value):
        arr = unwrap(t)
        if not (type(arr) in (int, float, bool) or isinstance(arr, (np.ndarray, np.generic))
                and arr.dtype.kind in "fiub"):
            raise GradTypeError(f"tangent v{path} is {_what(t)}; a tangent is a real number "
                                f"or array of the shape of {_input(path)}")
        if np.shape(arr) != shape:
            raise _wrong_shape(path, np.shape(arr), shape)
        if want.weak and want.dtype.kind == "f":
            return b.const(float(arr))
        return b.const(np.asarray(arr, want.dtype if want.dtype.kind == "f" else None))
    if t.type.dtype.kind not in "fiub":
        raise GradTypeError(f"tangent v{path} has dtype {t.type.dtype}; a tangent is a real "
                            f"number or array of the shape of {_input(path)}")
    if not _shape_fits(t.type.shape, shape):
        raise _wrong_shape(path, t.type.shape, shape)
    dtype = want.dtype if want is not None else np.asarray(unwrap(a)).dtype
    if dtype.kind == "f" and t.type.dtype != dtype:
        t = b.emit("cast", t, dtype=dtype)
    weak = want.weak if want is not None else kind == PYFLOAT
    return b.pyfloat(t) if weak and dtype.kind == "f" and not t.type.weak else t


def _input(path: str) -> str:
    return f"inputs{path}" if path else "the input"


def _wrong_shape(path, got, want) -> GradValueError:
    return GradValueError(f"tangent v{path} has shape {tuple(got)} but {_input(path)} has shape "
                          f"{tuple(want)}: each tangent must have the shape of its input")


def _lower_jvp(b, fn, inputs, v, has_aux=False):
    return inlined_jvp(b, fn, inputs, v, has_aux)


# -- Jacobians and the Hessian ------------------------------------------------------------

class InlinedJacobian:
    """``jacrev(fn, grad_position, has_aux)`` (``mode`` "rev") or ``jacfwd`` (``mode``
    "fwd") inside compiled code: calling it inlines the Jacobian's products."""

    def __init__(self, fn, grad_position, has_aux: bool, mode: str):
        _check_bool("has_aux", has_aux)
        refuse_local(fn)
        self.fn, self.grad_position, self.has_aux, self.mode = fn, grad_position, has_aux, mode

    def __ad_lower__(self, b, *args):
        pos = _positions(self.grad_position, len(args))
        for p in pos:
            if not _is_array_leaf(args[p]):
                raise GradTypeError(f"jac{self.mode} inside compiled code differentiates "
                                    f"arrays and floats; input {p} is {_what(args[p])}",
                                    hint="pass each array as its own input")
        build = _jacobian_rev if self.mode == "rev" else _jacobian_fwd
        jac, aux = build(b, self.fn, pos, args, self.has_aux)
        result = jac[0] if len(pos) == 1 else tuple(jac)
        return (result, aux) if self.has_aux else result


def _is_array_leaf(x) -> bool:
    return isinstance(x, (Value, float, np.ndarray, np.generic))


def _static_shape(shape, what: str) -> tuple:
    if any(d is None for d in shape):
        raise UnsupportedOperationError(
            f"the Jacobian of {what} whose length is known only at run time is not supported "
            "inside compiled code", hint="compute it outside the compiled function")
    return tuple(shape)


def _shape_dtype(x):
    t = x.type if isinstance(x, Value) else AType.of(x)
    return _static_shape(t.shape, "an input"), t.dtype


def _assemble(b, rows, leading, trailing, axis=0):
    """``np.stack(rows, axis).reshape(leading + trailing)`` as IR (zeros when empty)."""
    if not rows:
        return b.const(np.zeros(leading + trailing))
    stacked = rules.find_lowering(np.stack)(b, rows, axis=axis)
    return rules.find_lowering(np.reshape)(b, stacked, leading + trailing)


def _jacobian_rev(b, fn, pos, args, has_aux):
    gradient = GradFunction(fn, Config(pos, False, True, has_aux, True, False, "grad"))
    entry = gradient.entry_for(args)
    if len(entry.sens_types) != 1 or not isinstance(entry.sens_tree, int):
        tree = entry.sens_tree
        raise GradTypeError("jacrev needs a function with one array output; this one returns "
                            f"a {type(tree).__name__ if isinstance(tree, (tuple, list, dict)) else 'constant'}",
                            hint="take the Jacobian of each output separately, or use "
                                 "has_aux=True to carry the others along")
    out_t = entry.sens_types[0]
    shape = _static_shape(out_t.shape, "an output")
    size = int(np.prod(shape, dtype=np.int64))
    rows = {p: [] for p in pos}
    aux = None
    for k in range(size):
        basis = np.zeros(size, out_t.dtype)
        basis[k] = 1
        value, grads = gradient.__ad_lower__(b, *args, basis.reshape(shape))
        aux = _split_aux(value, True)[1] if has_aux else None
        for p, g in zip(pos, _as_tuple(grads)):
            rows[p].append(g)
    return [_assemble(b, rows[p], shape, _shape_dtype(args[p])[0]) for p in pos], aux


def _jacobian_fwd(b, fn, pos, args, has_aux):
    metas = [_shape_dtype(a) if _is_array_leaf(a) else None for a in args]
    jac, aux = [], None
    for p in pos:
        in_shape = metas[p][0]
        cols, out_shape = [], ()
        for k in range(int(np.prod(in_shape, dtype=np.int64))):
            tangents = tuple(None if m is None else _one_hot(m, k if i == p else None)
                             for i, m in enumerate(metas))  # (a constant's is unused)
            res = inlined_jvp(b, fn, args, tangents, has_aux)
            if not isinstance(res[1], Value):
                raise GradTypeError("jacfwd needs a function with one array output",
                                    hint="take the Jacobian of each output separately")
            out_shape = _static_shape(res[1].type.shape, "an output")
            aux = res[2] if has_aux else None
            cols.append(rules.find_lowering(np.reshape)(b, res[1], (-1,)))
        jac.append(_assemble(b, cols, out_shape, in_shape, axis=-1))
    return jac, aux


def _one_hot(meta, k):
    shape, dtype = meta
    t = np.zeros(shape, dtype if dtype.kind == "f" else np.float64)
    if k is not None:
        t.flat[k] = 1
    return t


class InlinedHessian:
    """``hessian(fn, grad_position)`` inside compiled code: the Jacobian of the inlined
    gradient, forward over reverse (reverse over reverse where forward mode does not
    go through)."""

    def __init__(self, fn, grad_position):
        refuse_local(fn)
        self.fn, self.grad_position = fn, grad_position

    def __ad_lower__(self, b, *args):
        pos = _positions(self.grad_position, len(args))
        rows = tuple(_jacobian_either(b, _component(grad(self.fn, i)), pos, args) for i in pos)
        return rows[0][0] if isinstance(self.grad_position, int) else rows


def _jacobian_either(b, component, pos, args):
    try:
        return _jacobian_fwd(b, component, pos, args, False)[0]
    except UnsupportedOperationError as e:
        if "forward mode" not in e.message:
            raise
        return _jacobian_rev(b, component, pos, args, False)[0]


rules.register_lowering(vjp, _lower_vjp)
rules.register_lowering(jvp, _lower_jvp)
rules.register_lowering(jacrev, lambda b, fn, grad_position=0, has_aux=False:
                        InlinedJacobian(fn, grad_position, has_aux, "rev"))
rules.register_lowering(jacfwd, lambda b, fn, grad_position=0, has_aux=False:
                        InlinedJacobian(fn, grad_position, has_aux, "fwd"))
rules.register_lowering(hessian, lambda b, fn, grad_position=0:
                        InlinedHessian(fn, grad_position))
