"""Shared machinery of the ops tests: sampling, finite differences, a tiny reverse pass.

The oracles here never use the rules under test: derivatives are checked
against central finite differences of the primitives' NumPy implementations
(or of plain NumPy), computed in float64.

Test modules reach these helpers through the ``adcheck`` fixture (pytest runs
in importlib mode, so test modules cannot import each other).
"""
from __future__ import annotations

import sys
import zlib

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers the primitives)
from ad_compiler.ad import rules
from ad_compiler.ir import interp
from ad_compiler.ir.builder import Builder
from ad_compiler.ir.core import AType, Block, Function, Value
from tests.finite_differences import central_at, directional

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-6


@pytest.fixture
def adcheck():
    return sys.modules[__name__]


def rng_for(key: str) -> np.random.Generator:
    """A generator seeded by a test's id: every run draws the same numbers."""
    return np.random.default_rng(zlib.crc32(key.encode()))


def draw(rng, shape, domain="real"):
    """float64 samples of ``shape`` away from the edges of ``domain``.

    The matrix domains shape the last two axes (other shapes are drawn as
    ``real``, except that ``spd`` vectors are spread apart, as eigenvalues): ``wellcond``
    gives ``U diag(s) V'`` with random orthonormal ``U``, ``V`` and singular values
    at least 0.6 apart in [1, 3]; ``spd`` gives ``Q diag(w) Q'``, symmetric positive
    definite with eigenvalues that far apart.
    """
    if domain in ("wellcond", "spd"):
        return _matrices(rng, tuple(shape), domain)
    if domain == "positive":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "nonzero":
        return rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
    if domain == "above_one":
        return rng.uniform(1.5, 3.0, shape)
    if domain == "unit":
        return rng.uniform(-0.9, 0.9, shape)
    return rng.uniform(-2.0, 2.0, shape)


def _spread(rng, k):
    """``k`` values in [1, 1 + 0.6 (k - 1)] at least 0.6 apart, in random order."""
    return 1.0 + 0.6 * rng.permutation(k) + rng.uniform(0, 0.1, k)


def _orthonormal(rng, m, k):
    q, _ = np.linalg.qr(rng.uniform(-1, 1, (m, k)))
    return q


def _matrices(rng, shape, domain):
    if len(shape) < 2:
        return _spread(rng, shape[0]) if domain == "spd" and shape else rng.uniform(-2, 2, shape)
    m, n = shape[-2:]
    k = min(m, n)
    out = np.empty(shape)
    for i in np.ndindex(*shape[:-2]):
        u = _orthonormal(rng, m, k)
        v = u if domain == "spd" else _orthonormal(rng, n, k)
        out[i] = (u * _spread(rng, k)) @ v.T
    return out


def is_float_input(value) -> bool:
    """Whether an example input is differentiable (a Python float or a float array)."""
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def example_values(example, domain, rng, dtype=np.float64) -> list:
    """Concrete inputs of ``example``: shapes are sampled, ``float`` becomes a Python float."""
    values = []
    for spec in example.inputs:
        if spec is float:
            values.append(float(draw(rng, (), domain)))
        elif isinstance(spec, np.ndarray):
            values.append(spec.astype(dtype) if spec.dtype.kind == "f" else spec)
        else:
            values.append(draw(rng, tuple(spec), domain).astype(dtype))
    return values


def like(value, rng):
    """A random value of the same type as ``value`` (a cotangent or a tangent)."""
    if type(value) is float:  # not np.float64, a float subclass that is an array scalar
        return float(draw(rng, ()))
    if type(value) is complex:  # a complex result of real inputs (complex(a, b))
        return complex(draw(rng, ()), draw(rng, ()))
    arr = np.asarray(value)
    if arr.dtype.kind == "c":  # a complex output (np.fft): a complex cotangent or tangent
        return (draw(rng, arr.shape) + 1j * draw(rng, arr.shape)).astype(arr.dtype)
    return draw(rng, arr.shape).astype(arr.dtype)


def wide(value) -> np.ndarray:
    """``value`` in float64, or complex128 when it is complex (np.fft's outputs)."""
    arr = np.asarray(value)
    return arr.astype(np.complex128 if arr.dtype.kind == "c" else np.float64)


def inner(a, b) -> float:
    """How a cotangent pairs with a value: ``Re(sum(a * b))`` (docs/complex.md)."""
    return float(np.real(np.sum(wide(a) * wide(b))))


# -- finite differences ---------------------------------------------------------------

def numeric_grad(scalar_fn, values, i) -> np.ndarray:
    """Central differences of ``scalar_fn(values)`` w.r.t. ``values[i]``, shaped like it."""
    return np.asarray(central_at(lambda *v: scalar_fn(list(v)), values, i, EPS))


def numeric_jvp(fn, values, tangents):
    """``(fn(x + eps t) - fn(x - eps t)) / 2 eps`` in float64; None tangents stay put."""
    return directional(fn, values, tangents, EPS)


def assert_close(actual, expected, what):
    actual = np.zeros_like(expected) if actual is None else wide(actual)
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=what)


# -- building IR from a rule --------------------------------------------------------------

def new_function(name, types, hints=None):
    """A Builder over a fresh block whose arguments have ``types``."""
    args = [Value(t, (hints or {}).get(i, f"x{i}")) for i, t in enumerate(types)]
    return Builder(Block(args=list(args))), args


def finish(b, name, results) -> Function:
    b.block.results = list(results)
    return Function(name, b.block)


def run(fn, *values):
    return interp.interpret(fn, *values)


# -- a minimal reverse pass over straight-line IR (for second-order checks) ----------------

def reverse(fn: Function) -> Function:
    """The VJP of a straight-line ``fn``, built only from the registered rules.

    The result takes ``fn``'s arguments followed by one cotangent per output and
    returns one cotangent per argument (zeros where none flows).
    """
    b, args = new_function(f"d_{fn.name}", [a.type for a in fn.args])
    env = {id(a): n for a, n in zip(fn.args, args)}
    active, tape = {id(a) for a in args}, []
    for op in fn.body.ops:
        ins = [env[id(v)] for v in op.inputs]
        out = env[id(op.result)] = b.emit(op.prim, *ins, **op.params)
        if not rules.get(op.prim).nondiff and any(id(v) in active for v in ins):
            active.add(id(out))
            tape.append((op, ins, out))
    outs = [env[id(v)] for v in fn.outputs]
    cts = [Value(o.type, "ct") for o in outs]
    b.block.args.extend(cts)
    adj: dict = {}
    for o, c in zip(outs, cts):
        _accumulate(b, adj, o, c)
    for op, ins, out in reversed(tape):
        if id(out) in adj:
            grads = rules.get(op.prim).vjp(b, adj[id(out)], out, *ins, **op.params)
            for v, g in zip(ins, grads, strict=True):
                if g is not None and id(v) in active:
                    _accumulate(b, adj, v, g)
    return finish(b, f"d_{fn.name}", [adj[id(a)] if id(a) in adj else b.zeros(a) for a in args])


def _accumulate(b, adj, v, g):
    adj[id(v)] = g if id(v) not in adj else b.add(adj[id(v)], g)


def check_reverse(fn, values, rng, what=""):
    """Check ``reverse(fn)`` against finite differences of ``fn`` at ``values``."""
    outs = run(fn, *values)
    weights = [like(o, rng) for o in outs]
    grads = run(reverse(fn), *values, *weights)

    def scalar(vals):
        return sum(inner(w, o) for w, o in zip(weights, run(fn, *vals)))

    for i, v in enumerate(values):
        if is_float_input(v):
            assert_close(grads[i], numeric_grad(scalar, values, i), f"{what} d/d arg {i}")


def atype(value) -> AType:
    return AType.of(value)
