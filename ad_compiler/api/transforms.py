"""Transforms beyond grad (``vjp``, ``jvp``, ``jacfwd``, ``jacrev``) and inspection
of compiled gradients (``adjoint_source`` and its IR).

A gradient is specialised on its inputs' shapes and dtypes, so inspection needs
example inputs. Pass them; or pass type strings (``"f32[3,4]"``, ``"float"``);
or pass nothing and a few common shapes are tried in turn.
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Callable

import numpy as np

from ..errors import (AdCompilerError, GradRuntimeError, GradTypeError, GradValueError,
                      UnresolvedNameError, UnsupportedSyntaxError)
from ..tensor import unwrap
from .compiler import check_output, check_complex
from ..codegen.compile import add_origin_notes
from .packing import _value, no_parameter_writes
from .grad import (Config, GradFunction, Positions, Weights, _check_bool, _check_positions,
                   check_callable)
from ..backends import refuse_in
from .signature import PYCOMPLEX, PYFLOAT, TENSOR, leaf_kind, signature

_TYPE = r"^(f16|f32|f64|i32|i64)\[([\d,\s]*)\]$"  # re caches it compiled on first use
_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32,
           "i64": np.int64}
_GUESSES = ("f32[3]", "f32[]", "f32[3,3]", "f32[2,3]", "f32[4,3]")


def example_from_type(text: str):
    """An example input for a type string: ``'f32[2,3]'`` -> zeros-free f32 array, ``'float'`` -> 0.5."""
    text = text.strip()
    if text == "float":
        return 0.5
    m = re.match(_TYPE, text)
    if not m:
        raise GradValueError(f"cannot read the type {text!r}", hint="write e.g. f32[3,4], f64[], float")
    shape = tuple(int(d) for d in m.group(2).split(",") if d.strip())
    size = int(np.prod(shape, dtype=np.int64))
    return (np.arange(1, size + 1, dtype=np.float64).reshape(shape) / (size + 1)).astype(
        _DTYPES[m.group(1)])


def _is_type_string(a) -> bool:
    """``'f32[2,3]'`` or ``'float'``: an input described by its type; other strings are
    the function's own (constant) string arguments."""
    return isinstance(a, str) and (a.strip() == "float" or re.match(_TYPE, a.strip()) is not None)


def _n_inputs(fn) -> int:
    import inspect
    target = fn.construct if hasattr(fn, "construct") else fn
    params = inspect.signature(target).parameters.values()
    return sum(1 for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                        p.POSITIONAL_OR_KEYWORD))


def _config(grad_position, weights, sens_param, has_aux) -> Config:
    positions = _check_positions(grad_position)
    return Config(positions, weights is not None, sens_param, has_aux, False, False, "grad",
                  weights is not None and not isinstance(weights, (list, tuple, bool)))


def compiled_entry(fn, *args, grad_position=0, weights=None, sens_param=False, has_aux=False):
    """The cache entry (IR and generated code) for ``fn`` at these example inputs."""
    config = _config(grad_position, weights, sens_param, has_aux)
    gf = GradFunction(fn, config, None if weights is True else weights)
    if args:
        return gf.entry_for(tuple(example_from_type(a) if _is_type_string(a) else a
                                  for a in args))
    errors = []
    for guess in _GUESSES:
        try:
            return gf.entry_for(tuple(example_from_type(guess) for _ in range(_n_inputs(fn))))
        except (UnsupportedSyntaxError, UnresolvedNameError):
            raise  # not about shapes: no other guess can help
        except (AdCompilerError, ValueError, TypeError) as exc:
            errors.append(f"{guess}: {str(exc).splitlines()[0]}")
    raise GradValueError("could not guess input shapes for " + getattr(fn, "__name__", repr(fn)),
                         hint="pass example inputs or types, e.g. adjoint_source(f, 'f32[2,3]')"
                              " or --args 'f32[2,3]'\n" + "\n".join(errors))


def adjoint_source(fn: Callable[..., Any], *args: Any, grad_position: Positions = 0,
                   weights: Weights = None, sens_param: bool = False,
                   has_aux: bool = False) -> str:
    """The generated Python source of ``fn``'s gradient (see :func:`compiled_entry`): a
    module that runs as printed (its imports, its constants, then the function).

    Example:
        >>> import numpy as np
        >>> def f(x):
        ...     return np.sum(np.sin(x))
        >>> print(adjoint_source(f, "f64[3]"))
        import numpy as np
        <BLANKLINE>
        <BLANKLINE>
        def f_grad(x):
            # <doctest ad_compiler.api.transforms.adjoint_source[1]>:2: return np.sum(np.sin(x))
            cos_x = np.cos(x)
            return (cos_x,)
        <BLANKLINE>
    """
    return compiled_entry(fn, *args, grad_position=grad_position, weights=weights,
                          sens_param=sens_param, has_aux=has_aux).compiled.source


def adjoint_ir(fn: Callable[..., Any], *args: Any, **config: Any) -> str:
    """The optimised adjoint IR of ``fn``'s gradient, as text."""
    return str(compiled_entry(fn, *args, **config).ir)


# -- vjp, jvp, jacfwd, jacrev --------------------------------------------------------

def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _wrap_like(value, like_tensor: bool):
    from ..tensor import wrap
    if like_tensor and isinstance(value, (np.ndarray, np.generic)):
        return wrap(np.asarray(value))
    return value


def _split_aux(out, has_aux: bool):
    if not has_aux:
        return out, None
    if not isinstance(out, tuple) or len(out) < 2:
        raise GradValueError("with has_aux=True the function must return a tuple of at least "
                             "two outputs: (value, *aux)")
    aux = out[1:]
    return out[0], (aux[0] if len(aux) == 1 else tuple(aux))


def vjp(fn: Callable[..., Any], *inputs: Any, has_aux: bool = False) -> tuple:
    """``(out, vjp_fn)``: ``fn``'s output and the function ``v -> gradients of all inputs``.

    ``vjp_fn(v)`` always returns a tuple, one gradient per input; ``v`` has the
    structure of the output. With ``has_aux``: ``(out, vjp_fn, aux)``.

    Example:
        >>> import numpy as np
        >>> out, vjp_fn = vjp(lambda x, y: x * y, np.array([2.0]), np.array([3.0]))
        >>> vjp_fn(np.array([1.0]))
        (array([3.]), array([2.]))
    """
    _check_bool("has_aux", has_aux)
    check_callable(fn)
    signature(inputs)  # refuses inputs it cannot differentiate now, not at vjp_fn(v)
    # randoms=False: vjp_fn cannot redraw the mask the call of fn used
    grad_fn = GradFunction(fn, Config("all", False, True, has_aux, True, False, "gradop",
                                      randoms=False))
    grad_fn.entry_for(inputs)   # compiled (and refused, if it must be) before fn runs
    value = fn(*inputs)
    out, aux = _split_aux(value, has_aux)

    def vjp_fn(*v):
        if not v or len(v) == 1 and v[0] is None:
            given = "None" if v else "nothing"
            raise GradTypeError(f"vjp_fn(v) needs the cotangent v, got {given}",
                                hint="pass an array of the output's shape and dtype, e.g. "
                                     "vjp_fn(np.ones_like(out))")
        with no_parameter_writes():   # the call of vjp evaluated fn: it wrote them
            return grad_fn(*inputs, v[0] if len(v) == 1 else v)[1]
    vjp_fn.__ad_lower__ = inlined("InlinedVJP", fn, inputs, has_aux)
    return (out, vjp_fn) if not has_aux else (out, vjp_fn, aux)


def inlined(kind: str, *config):
    """The ``__ad_lower__`` of a function a transform returns: called inside compiled
    code, it is inlined there (``kind``: the class of api/inside.py that does it)."""
    def lower(b, *args):
        from . import inside
        return getattr(inside, kind)(*config).__ad_lower__(b, *args)
    return lower


def _jvp_entry(fn, args):
    """The compiled forward-mode function of ``fn`` for these inputs (cached on ``fn``)
    and the captured arrays it reads now."""
    from ..ad.forward import jvp_function
    from ..codegen.cache import lookup_or_build, table_for
    from ..frontend import lift, owner_of
    from ..passes.pipeline import optimize
    from .signature import flatten, signature, spec_of
    from .state import current_entry, make_reader

    def build():
        lifted = lift(fn, tuple(spec_of(a) for a in args), effects=True, randoms=False)
        check_complex(lifted, fn)
        n = lifted.n_inputs
        ir = optimize(jvp_function(lifted.function, list(range(n))))
        return lifted, ir, compiled_of(ir), make_reader(lifted.captured)
    key = ("jvp", getattr(fn, "__func__", None), signature(args))  # methods share a table
    table = table_for(fn)
    table = {} if table is None else table  # an owner with no weak reference: not cached
    owner = owner_of(fn)
    entry, state = current_entry(lambda stale: lookup_or_build(table, key, build, stale),
                                 lambda e: () if e[3] is None else e[3](owner), fn)
    return entry, state, flatten(args)


def compiled_of(ir):
    from ..codegen import compile_function
    return compile_function(ir)


def jvp(fn: Callable[..., Any], inputs: Any, v: Any, has_aux: bool = False) -> tuple:
    """``(out, jvp_out)``: ``fn``'s output and its directional derivative along ``v``.

    ``inputs`` and ``v`` are one value or tuples of the same structure. With
    ``has_aux``: ``(out, jvp_out, aux)``.

    Example:
        >>> import numpy as np
        >>> jvp(lambda x: x * x, np.array([3.0]), np.array([1.0]))
        (array([9.]), array([6.]))
    """
    _check_bool("has_aux", has_aux)
    check_callable(fn)
    from .packing import set_written
    args, tangents = _as_tuple(inputs), _as_tuple(v)
    refuse_in(args, "jvp")
    (lifted, _, compiled, _), state, (leaves, kinds, _) = _jvp_entry(fn, args)
    check_output(lifted, has_aux, fn)
    t_leaves = _tangent_leaves(args, tangents, isinstance(inputs, (tuple, list)))
    params = [p.asnumpy() for p in lifted.params]
    try:
        outs = compiled.fn(*leaves, *params, *state, *t_leaves)
    except BaseException as exc:
        add_origin_notes(exc)
        raise
    half = len(outs) // 2
    set_written(lifted.effects, outs[half - len(lifted.effects):half])
    return jvp_results(lifted.out_tree, outs, TENSOR in kinds, has_aux)


def jvp_results(out_tree, outs, as_tensor: bool, has_aux: bool):
    """``(out, tangent)`` (``(out, tangent, aux)`` with ``has_aux``) from the outputs of
    forward-mode code: the values, then as many tangents (constant leaves get zeros)."""
    half = len(outs) // 2
    out = _value(out_tree, outs[:half], as_tensor)
    tan = _value(out_tree, outs[half:], as_tensor, tangent=True)
    if not has_aux:
        return out, tan
    (o, aux), (t, _) = _split_aux(out, True), _split_aux(tan, True)
    return o, t, aux


def _tangent_leaves(args, tangents, several: bool, leaf=None) -> list:
    """The tangent of every differentiated input leaf, checked against the inputs: same
    structure and shapes (a wrong shape is a ValueError naming the tangent), real numbers;
    each cast to its input's floating dtype (float32 stays float32). ``leaf(a, kind, t,
    path)`` makes each tangent (default :func:`_tangent_of`)."""
    if len(tangents) != len(args):
        raise GradRuntimeError(f"v has {len(tangents)} entries but there are {len(args)} inputs",
                               hint="give one tangent per input, in a tuple of the same "
                                    "structure as inputs")
    out: list = []
    for i, (a, t) in enumerate(zip(args, tangents)):
        _match_tangent(a, t, f"[{i}]" if several else "", out, leaf or _tangent_of)
    return out


def _match_tangent(a, t, path: str, out: list, leaf) -> None:
    kind = leaf_kind(a)
    if kind is not None:
        out.append(leaf(a, kind, t, path))
    elif type(a) in (tuple, list):
        if not isinstance(t, (tuple, list)) or len(t) != len(a):
            raise GradRuntimeError(f"tangent v{path} must be a {type(a).__name__} of {len(a)} "
                                   f"entries like inputs{path}, but it is {_what(t)}")
        for k, (ak, tk) in enumerate(zip(a, t)):
            _match_tangent(ak, tk, f"{path}[{k}]", out, leaf)
    elif type(a) is dict:
        if not isinstance(t, dict) or list(t) != list(a):
            raise GradRuntimeError(f"tangent v{path} must be a dict with the keys {list(a)} of "
                                   f"inputs{path}, but it is {_what(t)}")
        for k in a:
            _match_tangent(a[k], t[k], f"{path}[{k!r}]", out, leaf)
    # a constant input (int, bool, string ...) has no tangent: whatever is given is unused


def _tangent_of(a, kind: str, t, path: str):
    arr = unwrap(t)
    # a complex input takes a complex tangent (docs/complex.md); a real one a real tangent
    kinds = "fciub" if kind == PYCOMPLEX or np.asarray(unwrap(a)).dtype.kind == "c" else "fiub"
    if not (type(arr) in (int, float, bool) or kinds == "fciub" and type(arr) is complex
            or isinstance(arr, (np.ndarray, np.generic)) and arr.dtype.kind in kinds):
        raise GradTypeError(f"tangent v{path} is {_what(t)}; a tangent is a number or "
                            f"array of the shape and kind (real or complex) of {_input(path)}")
    want = np.shape(unwrap(a))
    if np.shape(arr) != want:
        raise GradValueError(f"tangent v{path} has shape {np.shape(arr)} but {_input(path)} has "
                             f"shape {want}: each tangent must have the shape of its input")
    if kind == PYFLOAT:
        return float(arr)
    if kind == PYCOMPLEX:
        return complex(arr)
    dtype = np.asarray(unwrap(a)).dtype
    return np.asarray(arr, dtype if dtype.kind in "fc" else None)


def _input(path: str) -> str:
    return f"inputs{path}" if path else "the input"


def _what(x) -> str:
    x = unwrap(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return f"an array of dtype {x.dtype} and shape {x.shape}"
    return "None" if x is None else f"a {type(x).__name__}"


def _positions(grad_position, n_args):
    pos = _check_positions(grad_position)
    if pos is None or not pos or max(pos) >= n_args:
        raise GradRuntimeError(f"grad_position {grad_position!r} does not fit {n_args} inputs")
    return pos


def _jacobian(columns, out_shape, in_shape):
    """Stack per-element derivatives into an array of shape ``out_shape + in_shape``."""
    return np.stack(columns).reshape(out_shape + in_shape) if columns else \
        np.zeros(out_shape + in_shape)


def jacrev(fn: Callable[..., Any], grad_position: Positions = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fn`` w.r.t. the inputs at ``grad_position``, by reverse mode.

    The Jacobian of an output of shape O w.r.t. an input of shape I has shape O + I;
    several positions give a tuple. With ``has_aux``: ``(jacobian, aux)``.

    Example:
        >>> import numpy as np
        >>> jacrev(lambda x: x * x)(np.array([1.0, 2.0]))
        array([[2., 0.],
               [0., 4.]])
    """
    _check_bool("has_aux", has_aux)

    def jacobian(*args):
        check_callable(fn)
        refuse_in(args, "jacrev")
        pos = _positions(grad_position, len(args))
        grad_fn = GradFunction(fn, Config(pos, False, True, has_aux, False, False, "grad",
                                          randoms=False))   # one mask for all the rows
        grad_fn.entry_for(args)   # compiled (and refused, if it must be) before fn runs
        value, aux = _split_aux(fn(*args), has_aux)
        if isinstance(value, (tuple, list, dict)):
            raise GradTypeError("jacrev needs a function with one array output; this one "
                                f"returns a {type(value).__name__}",
                                hint="take the Jacobian of each output separately, or use "
                                     "has_aux=True to carry the others along")
        out = np.asarray(getattr(value, "asnumpy", lambda: value)())
        rows = {p: [] for p in pos}
        for k in range(out.size):
            basis = np.zeros(out.size, out.dtype)
            basis[k] = 1
            with no_parameter_writes():   # fn(*args) above wrote them
                g = grad_fn(*args, basis.reshape(out.shape))
            g = _as_tuple(g[0] if has_aux else g)  # (grads, aux) with has_aux
            for p, gp in zip(pos, g):
                rows[p].append(np.asarray(getattr(gp, "asnumpy", lambda: gp)()))
        jac = tuple(_jacobian(rows[p], out.shape, np.shape(_leaf(args[p]))) for p in pos)
        return _finish(jac, pos, args, aux, has_aux)
    jacobian.__ad_lower__ = inlined("InlinedJacobian", fn, grad_position, has_aux, "rev")
    return jacobian


def jacfwd(fn: Callable[..., Any], grad_position: Positions = 0,
           has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fn`` w.r.t. the inputs at ``grad_position``, by forward mode.

    Same result structure as :func:`jacrev`.

    Example:
        >>> import numpy as np
        >>> jacfwd(lambda x: np.sin(x))(np.array([0.0, 0.0]))
        array([[1., 0.],
               [0., 1.]])
    """
    _check_bool("has_aux", has_aux)

    def jacobian(*args):
        check_callable(fn)
        refuse_in(args, "jacfwd")
        pos = _positions(grad_position, len(args))
        arrays = [np.asarray(_leaf(a)) for a in args]
        jac, aux, out_shape, first = [], None, None, True
        for p in pos:
            cols = []
            for k in range(arrays[p].size):
                tangents = [np.zeros_like(a) for a in arrays]
                tangents[p].flat[k] = 1
                with contextlib.nullcontext() if first else no_parameter_writes():
                    res = jvp(fn, args, tuple(tangents), has_aux)   # the first one writes
                first = False
                if isinstance(res[1], (tuple, list, dict)):
                    raise GradTypeError("jacfwd needs a function with one array output",
                                        hint="take the Jacobian of each output separately")
                out_t = np.asarray(_leaf(res[1]))
                out_shape, aux = out_t.shape, (res[2] if has_aux else None)
                cols.append(out_t.reshape(-1))
            flat = np.stack(cols, axis=-1) if cols else np.zeros((0, 0))
            jac.append(flat.reshape((out_shape or ()) + arrays[p].shape))
        return _finish(tuple(jac), pos, args, aux, has_aux)
    jacobian.__ad_lower__ = inlined("InlinedJacobian", fn, grad_position, has_aux, "fwd")
    return jacobian


def _leaf(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else x


def _finish(jac, pos, args, aux, has_aux):
    from ..tensor import Tensor
    as_tensor = any(isinstance(a, Tensor) for a in args)
    jac = tuple(_wrap_like(j, as_tensor) for j in jac)
    result = jac[0] if len(pos) == 1 else jac
    return (result, aux) if has_aux else result
