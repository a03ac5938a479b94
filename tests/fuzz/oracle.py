"""The checks one program goes through, and their outcome.

1. value: ``value_and_grad(f, all positions)(*args)[0]`` equals ``f(*args)`` (type,
   dtype, numbers);
2. gradient: each entry against central finite differences in float64 with two
   step sizes; where the two estimates disagree the point is near a kink or a
   jump and the gradient is not judged (``skipped: non-smooth``);
3. ``grad`` with several positions, in a shuffled order, agrees with 1;
4. cache: a second input through the same gradient function, checked as in 1-2;
   where plain Python raises there (``math.sqrt`` of a negative number, with NumPy's
   warnings not errors) the compiled call must raise the same exception, type and
   message (also for the float32 input of 7);
5. forward mode (``higher=True``, smooth programs only): ``ms.jvp`` of ``<c, f(x)>`` (a
   random cotangent ``c`` over every float output) along a random direction of every
   input, against central differences of the plain-Python function (``wrong jvp``);
6. second order (same condition): ``ms.jvp`` of ``x -> <grad f(x), v>``, where the
   gradient is ``ms.grad(f, grad_position=all)`` called inside the differentiated
   function (forward over reverse), against central differences of that compiled
   first-order gradient (checked in 2) at perturbed inputs (``wrong second order``);
7. dtype: float32 inputs give float32 values and gradients (values compared loosely).

A complex input (feature ``complex``) is differentiated with JAX's convention
(docs/complex.md): its finite-difference gradient is ``dL/dx - i dL/dy``, each part
perturbed separately; its float32 check uses complex64. Checks 5-6 go through
``ms.check_grad``'s real directions and are left out for programs with a complex input.

Checks 5 and 6 go through the public ``ms.check_grad`` (forward mode, order 1) on
functions written next to ``f`` in the program's module (see ``higher_source``).
Each is judged at two steps, ``1e-6`` then ``1e-4``: an element failing at one step
only is near a kink or a jump of the derivative (``skipped: non-smooth``).
Tolerances: JVP ``atol 1e-5 + rtol 1e-4`` (as the gradient); second order
``atol 1e-4 + rtol 1e-3``, as the differences are of a gradient that itself carries
the rounding of the first-order sweep, absolute tolerances scaled by the largest magnitude of ``f``'s output.

An exception from the compiler is a ``located refusal`` if it is one of the
project's typed errors with a source location, an ``internal error`` otherwise.
"""
from __future__ import annotations

import random
import traceback
import warnings
from dataclasses import dataclass

import numpy as np

import ad_compiler as ms
from ad_compiler.errors import AdCompilerError, GradCheckError, IRError

from .generator import BOUND
from .program import Program, finite, fresh, leaves, literal, load_module, run_plain

OUTCOMES = ("ok", "wrong value", "wrong gradient", "wrong dtype", "wrong jvp",
            "wrong second order", "internal error", "located refusal", "skipped: non-smooth",
            "invalid program")
FAILURES = ("wrong value", "wrong gradient", "wrong dtype", "wrong jvp", "wrong second order",
            "internal error")
STEPS = (1e-6, 1e-4)


@dataclass
class Outcome:
    kind: str
    detail: str = ""
    stage: str = ""
    extra: str = ""        # source the reproduction needs besides the program

    @property
    def failed(self) -> bool:
        return self.kind in FAILURES

    def signature(self) -> str:
        """A short class name for grouping failures (numbers removed)."""
        import re
        first = self.detail.strip().splitlines()[0] if self.detail.strip() else ""
        first = re.sub(r"\((?:[^()]|\([^()]*\))*\)?", "(...)", first)   # values, cut ones too
        first = re.sub(r"'[^']*'", "'_'", first)                          # variable names
        return f"{self.kind} [{self.stage}] " + re.sub(r"(?<![\w.])[-+]?\d[\d.e+-]*", "#", first)[:160]


class Failure(Exception):
    def __init__(self, kind, detail):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


def classify_error(e: BaseException) -> tuple[str, str]:
    if isinstance(e, AdCompilerError) and not isinstance(e, IRError) and e.loc is not None:
        return "located refusal", f"{type(e).__name__}: {e.message}"
    tb = traceback.extract_tb(e.__traceback__)
    where = "; ".join(f"{fr.filename.split('ad_compiler/')[-1]}:{fr.lineno}" for fr in tb[-3:])
    return "internal error", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''} [at {where}]"


def total(value) -> float:
    """The scalar whose gradient value_and_grad computes: the sum of every output leaf."""
    return float(sum(np.sum(np.asarray(v, dtype=np.float64)) for v in leaves(value)))


def check(program: Program, fn=None, higher: bool = True) -> Outcome:
    """Run every check on ``program``; the first failure, else ok / skipped / refusal.

    ``higher=False`` leaves out the forward-mode and second-order checks (5-6)."""
    fn = fn or program.load()
    try:
        expected = run_plain(fn, program.args)
    except Exception as e:
        return Outcome("invalid program", f"{type(e).__name__}: {e}", "plain")
    if not finite(expected):
        return Outcome("invalid program", "non-finite result", "plain")
    n = len(program.args)
    positions = tuple(range(n))
    stage, extra = "compile", ""
    try:
        vg = ms.value_and_grad(fn, grad_position=positions)
        stage = "value"
        value, grads = vg(*fresh(program.args))
        grads = grads if n > 1 else (grads,)
        compare_value(expected, value, np.float64)
        stage = "gradient"
        smooth = compare_grads(fn, program.args, grads)
        stage = "grad positions"
        check_positions(fn, program, grads)
        stage = "cache"
        smooth &= check_second_input(fn, vg, program.args2)
        if higher and smooth and not any(np.iscomplexobj(a) for a in program.args):
            module, extra = higher_module(program, expected)
            for stage, function, kind, atol, rtol in HIGHER:
                smooth = smooth and check_forward(getattr(module, function), program,
                                                  kind, atol * magnitude(expected), rtol)
        stage = "float32"      # float32 inputs may be refused where float64 are not
        check_float32(fn, vg, program.args, expected, grads)
        stage = "dask"         # last: Dask refuses what it cannot do lazily (unknown chunks)
        check_dask(fn, program, value, grads)
    except Failure as f:
        return Outcome(f.kind, f.detail, stage, extra if stage in HIGHER_STAGES else "")
    except Exception as e:
        kind, detail = classify_error(e)
        return Outcome(kind, detail, stage, extra if stage in HIGHER_STAGES else "")
    return Outcome("ok" if smooth else "skipped: non-smooth")


# -- values ---------------------------------------------------------------------------

def compare_value(expected, got, dtype, rtol=1e-9, atol=1e-12, path="value"):
    """Same structure, types and dtypes, numbers within tolerance."""
    if isinstance(expected, (tuple, list, dict)):
        if type(got) is not type(expected) or len(got) != len(expected):
            raise Failure("wrong dtype", f"{path}: expected {type(expected).__name__} of "
                          f"{len(expected)}, got {type(got).__name__}: {got!r}")
        keys = expected.keys() if isinstance(expected, dict) else range(len(expected))
        for k in keys:
            if isinstance(expected, dict) and k not in got:
                raise Failure("wrong dtype", f"{path}: key {k!r} missing")
            compare_value(expected[k], got[k], dtype, rtol, atol, f"{path}[{k!r}]")
        return
    if type(got) is not type(expected) or getattr(got, "dtype", None) != getattr(expected, "dtype", None):
        raise Failure("wrong dtype", f"{path}: expected {_describe(expected)}, got {_describe(got)}")
    if np.shape(got) != np.shape(expected):
        raise Failure("wrong value", f"{path}: expected shape {np.shape(expected)}, got {np.shape(got)}")
    e, g = _numbers(expected), _numbers(got)
    scale = max(1.0, float(np.max(np.abs(e)))) if e.size else 1.0
    if not np.allclose(g, e, rtol=rtol, atol=atol * scale, equal_nan=False):
        raise Failure("wrong value", f"{path}: expected {expected!r}, got {got!r}")


def _numbers(v) -> np.ndarray:
    """``v`` as float64, or complex128 when complex (a gradient of a complex input)."""
    return np.asarray(v, np.complex128 if np.iscomplexobj(v) else np.float64)


def _describe(v) -> str:
    dtype = getattr(v, "dtype", None)
    return f"{type(v).__name__}" + (f" {dtype}" if dtype is not None else "") + f" {v!r}"


# -- gradients --------------------------------------------------------------------------

def finite_differences(fn, args, h):
    """Central differences of ``total(fn(*args))`` for every input element; of a complex
    element ``dL/dx - i dL/dy`` (JAX's convention, docs/complex.md). Its own loop, not
    tests/finite_differences.py: each moved input keeps its type (``type(a)(p)``, a NumPy
    scalar stays one) and runs through ``run_plain``, as the generated program's input did."""
    out = []
    for i, a in enumerate(args):
        base = _numbers(a)
        g = np.zeros(base.shape, base.dtype)
        directions = (1.0, -1j) if base.dtype.kind == "c" else (1.0,)
        for idx in np.ndindex(base.shape or ()):
            for d in directions:   # -1j: the part along -i dy gives - i dL/dy
                vals = []
                for sign in (1.0, -1.0):
                    moved = list(args)
                    p = base.copy()
                    p[idx] += sign * h * (1j if d == -1j else 1.0)
                    moved[i] = p if isinstance(a, np.ndarray) else type(a)(p)
                    vals.append(total(run_plain(fn, moved)))
                g[idx] += d * (vals[0] - vals[1]) / (2 * h)
        out.append(g)
    return out


def compare_grads(fn, args, grads, what="gradient") -> bool:
    """Raise Failure for a wrong gradient; False if a point is not smooth enough to judge."""
    for i, (a, g) in enumerate(zip(args, grads)):
        want_type = type(a)
        if type(g) is not want_type or np.shape(g) != np.shape(a) or \
                getattr(g, "dtype", None) != getattr(a, "dtype", None):
            raise Failure("wrong dtype", f"{what} of argument {i}: expected {_describe(a)}-like, "
                          f"got {_describe(g)}")
    try:
        fd1, fd2 = (finite_differences(fn, args, h) for h in STEPS)
    except Exception:
        return False      # a step crossed into a region where the program fails
    smooth = True
    for i, g in enumerate(grads):
        g = _numbers(g)
        scale = max(1.0, float(np.max(np.abs(fd1[i]))) if fd1[i].size else 1.0)
        agree = np.abs(fd1[i] - fd2[i]) <= 1e-5 * scale + 1e-4 * np.abs(fd1[i])
        bad = (np.abs(g - fd1[i]) > 1e-5 * scale + 1e-4 * np.abs(fd1[i])) | ~np.isfinite(g)
        if np.any(bad & agree):
            k = np.argwhere(bad & agree)[0]
            idx = tuple(int(j) for j in k)
            raise Failure("wrong gradient",
                          f"{what} of argument {i} at {idx}: got {g[idx]!r}, finite differences "
                          f"{fd1[i][idx]!r} (h={STEPS[0]}) and {fd2[i][idx]!r} (h={STEPS[1]})\n"
                          f"got {np.array2string(g, precision=6)}\n"
                          f"fd  {np.array2string(fd1[i], precision=6)}")
        if np.any(bad):
            smooth = False
    return smooth


def check_positions(fn, program, grads):
    """``grad`` with several positions, in a shuffled order, equals value_and_grad's."""
    n = len(program.args)
    rng = random.Random(program.seed)
    k = rng.randint(1, n)
    positions = tuple(rng.sample(range(n), k))
    got = ms.grad(fn, grad_position=positions)(*fresh(program.args))
    got = got if k > 1 else (got,)
    if len(got) != k:
        raise Failure("wrong gradient", f"grad_position={positions}: {len(got)} gradients")
    for p, g in zip(positions, got):
        compare_value(grads[p], g, None, rtol=1e-7, atol=1e-9,
                      path=f"grad(grad_position={positions}) entry for {p}")


def check_float32(fn, vg, args, expected64, grads64):
    args32 = tuple(a.astype(np.complex64 if a.dtype.kind == "c" else np.float32)
                   if isinstance(a, np.ndarray) else a for a in args)
    try:
        expected = run_plain(fn, args32)
    except Exception:
        raised = python_exception(fn, args32)
        if raised is not None:
            check_same_exception(vg, args32, raised, "float32 input")
        return
    if not finite(expected):
        return
    value, grads = vg(*fresh(args32))
    grads = grads if len(args) > 1 else (grads,)
    compare_value(expected, value, np.float32, rtol=2e-3, atol=2e-3, path="float32 value")
    same_path = np.allclose(total(expected), total(expected64), rtol=1e-3, atol=1e-3)
    for i, (a, g, g64) in enumerate(zip(args32, grads, grads64)):
        if type(g) is not type(a) or getattr(g, "dtype", None) != getattr(a, "dtype", None):
            raise Failure("wrong dtype", f"float32 gradient of argument {i}: expected "
                          f"{_describe(a)}-like, got {_describe(g)}")
        if same_path:
            e = _numbers(g64)
            scale = max(1.0, float(np.max(np.abs(e))) if e.size else 1.0)
            if not np.allclose(_numbers(g), e, rtol=5e-2, atol=5e-2 * scale):
                raise Failure("wrong gradient", f"float32 gradient of argument {i}: {g!r}, "
                              f"float64 gives {g64!r}")


def python_exception(fn, args):
    """The exception plain Python raises for ``args`` where NumPy's floating-point
    warnings are not errors (``ValueError: math domain error``), or None."""
    try:
        with np.errstate(all="ignore"):
            fn(*fresh(args))
    except Exception as e:  # noqa: BLE001 - the outcome compared
        return e
    return None


def check_same_exception(vg, args, raised, path):
    """The compiled call raises what plain Python raised: same type, same message."""
    try:
        got = vg(*fresh(args))
    except Exception as e:  # noqa: BLE001 - compared below
        if type(e) is type(raised) and str(e) == str(raised):
            return
        raise Failure("wrong value", f"{path}: Python raises {type(raised).__name__}: "
                      f"{raised}; compiled raises {type(e).__name__}: {e}") from None
    raise Failure("wrong value", f"{path}: Python raises {type(raised).__name__}: {raised}; "
                  f"compiled returns {got!r}")


def check_second_input(fn, vg, args2) -> bool:
    try:
        expected = run_plain(fn, args2)
    except Exception:
        raised = python_exception(fn, args2)
        if raised is not None:
            check_same_exception(vg, args2, raised, "at the second input (cached)")
        return True
    if not finite(expected):
        return True
    value, grads = vg(*fresh(args2))
    grads = grads if len(args2) > 1 else (grads,)
    compare_value(expected, value, np.float64, path="value at the second input (cached)")
    if not finite(expected, BOUND):
        # beyond the magnitudes the generator keeps the first input's values in, a step
        # function (np.round of a value grown to 1e6) has steps far finer than the
        # differences' step and looks smooth to both: the gradient is not judged there
        return True
    return compare_grads(fn, args2, grads, what="gradient at the second input (cached)")


def check_dask(fn, program, value, grads) -> None:
    """On every third seed, when Dask is installed: the same call with every float array
    input of at least one dimension as a Dask array (two chunks along the first axis)
    gives, once computed, the value and gradients the NumPy inputs gave (checked above
    against plain Python and finite differences)."""
    if program.seed % 3:
        return
    try:
        import dask
        import dask.array as da
    except ImportError:
        return
    args = fresh(program.args)
    dargs = tuple(da.from_array(a, chunks=max(1, (a.shape[0] + 1) // 2))
                  if isinstance(a, np.ndarray) and a.ndim and a.dtype.kind == "f" else a
                  for a in args)
    if all(a is b for a, b in zip(args, dargs)):
        return
    n = len(args)
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got_value, got = ms.value_and_grad(fn, grad_position=tuple(range(n)))(*dargs)
        got = got if n > 1 else (got,)
        got_value, got = dask.compute(got_value, got)
    compare_value(value, _as_numpy_like(got_value, value), None, rtol=1e-9, atol=1e-12,
                  path="value with Dask inputs")
    for i, (g, e) in enumerate(zip(got, grads)):
        compare_value(e, _as_numpy_like(g, e), None, rtol=1e-9, atol=1e-12,
                      path=f"gradient of argument {i} with Dask inputs")


def _as_numpy_like(got, like):
    """A computed Dask result in the container and scalar types of ``like`` (Dask computes
    a 0-d array where NumPy gives a NumPy scalar)."""
    if isinstance(like, (tuple, list)):
        return type(like)(_as_numpy_like(g, e) for g, e in zip(got, like))
    if isinstance(like, np.generic) and isinstance(got, np.ndarray) and got.ndim == 0:
        return got[()]
    if type(like) is float and isinstance(got, (np.ndarray, np.generic)) and np.ndim(got) == 0:
        return float(got)
    return got


# -- forward mode and second order ------------------------------------------------------

HIGHER = (("jvp", "f_jvp", "wrong jvp", 1e-5, 1e-4),
          ("second order", "f_hvp", "wrong second order", 1e-4, 1e-3))
HIGHER_STAGES = {stage for stage, *_ in HIGHER}


def higher_module(program: Program, expected):
    """The program's module with ``f_jvp`` and ``f_hvp``, and the reproduction's extra lines."""
    rng = np.random.default_rng(program.seed)
    extra = higher_source(program.args, expected, rng)
    scale = magnitude(expected)
    calls = "".join(f"ms.check_grad({function}, args, modes=('fwd',), atol={atol * scale:.3g}, "
                    f"rtol={rtol}, seed={program.seed})\n" for _, function, _, atol, rtol in HIGHER)
    return load_module(program.source + extra), extra + "\n\nargs = " + \
        literal(program.args) + "\n" + calls


def magnitude(expected) -> float:
    """The largest magnitude of a float output, at least 1 (the scale of absolute tolerances)."""
    return max([1.0] + [float(np.max(np.abs(np.asarray(v, np.float64))))
                        for v in leaves(expected) if np.size(v)])


def check_forward(fn, program: Program, kind: str, atol: float, rtol: float) -> bool:
    """``ms.check_grad`` in forward mode at the two steps; False where only one agrees."""
    def at(step):
        ms.check_grad(fn, fresh(program.args), modes=("fwd",), eps=step, atol=atol,
                      rtol=rtol, seed=program.seed)
    try:
        at(STEPS[0])
    except GradCheckError as first:
        try:
            at(STEPS[1])
        except GradCheckError:
            raise Failure(kind, first.message) from None
        return False
    return True


def higher_source(args, expected, rng) -> str:
    """``f_jvp`` (``<c, f(x)>``) and ``f_hvp`` (``<grad f(x), v>``) for ``f``'s module."""
    names = [f"a{i}" for i in range(len(args))]
    params = ", ".join(names)
    # f gets arrays of its own (``a * 1.0``), as when called directly: it may write into them
    owned = ", ".join(f"{n} * 1.0" for n in names)
    terms = [f"np.sum({path} * {literal(_weights(leaf, rng))})"
             for path, leaf in _float_leaves(expected, "out")] or ["0.0"]
    grads = [("g" if len(args) == 1 else f"g[{i}]", a) for i, a in enumerate(args)]
    dots = [f"np.sum({g} * {literal(_weights(a, rng))})" for g, a in grads]
    positions = tuple(range(len(args)))
    return (f"\n\ndef f_jvp({params}):\n    out = f({owned})\n"
            f"    return {' + '.join(terms)}\n"
            f"\n\ndef f_hvp({params}):\n"
            f"    g = ms.grad(f, grad_position={positions})({owned})\n"
            f"    return {' + '.join(dots)}\n")


def _float_leaves(value, path):
    """``(source path, leaf)`` of every float leaf of a result."""
    if isinstance(value, (tuple, list)):
        return [p for i, v in enumerate(value) for p in _float_leaves(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _float_leaves(v, f"{path}[{k!r}]")]
    if isinstance(value, (float, np.floating)) or (isinstance(value, np.ndarray)
                                                   and value.dtype.kind == "f"):
        return [(path, value)]
    return []


def _weights(like, rng):
    """Random weights of ``like``'s shape, away from 0 (a Python float for a float)."""
    w = rng.uniform(0.5, 1.5, np.shape(like)) * rng.choice([-1.0, 1.0], np.shape(like))
    return np.round(w, 3) if np.ndim(like) else float(np.round(w, 3))
