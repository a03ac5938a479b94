"""Registry-driven checks of the primitives that take complex values (``COMPLEX``).

Each such primitive's examples are run with complex inputs (every float input
complex; and, with several inputs, one complex and the others real), and its
rules are checked against complex central finite differences, in JAX's
convention (docs/complex.md):

* VJP: for ``L = Re(sum(ct * f(z)))`` the cotangent of a complex ``z = x + iy`` is
  ``dL/dx - i dL/dy``, of a real input ``dL/dx`` (each part perturbed separately);
* JVP: ``(f(z + eps t) - f(z - eps t)) / 2 eps`` with a complex tangent ``t``;
* second order: the VJP's IR, differentiated again by reverse mode, the same way;
* types: complex64 stays complex64, the real dtypes of ``real``/``imag``/``abs``
  match (float32 for complex64); the rule's IR compiles to what the interpreter runs.

Eigenvectors and singular vectors of complex matrices are defined up to a phase per
vector (``GAUGE``): only functions that do not depend on the phases have a derivative
(docs/complex.md). For those outputs the cotangent is made phase-invariant at the
point, the tangent is compared without its phase part, and second order is checked
end to end on phase-invariant losses (tests/api/test_complex_linalg.py).

The oracle is finite differences of the NumPy templates, never the rules.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers the primitives)
from ad_compiler.ad import rules
from ad_compiler.ad.reverse import ARG, real_part, vjp_function
from ad_compiler.ir.core import AType, Value
from ad_compiler.ops.complex_numbers import COMPLEX
from tests.finite_differences import central_at, directional

EPS = 1e-6
#: imaginary parts small enough to stay off the branch cuts of each sample domain
_IMAG = {"real": 1.0, "nonzero": 1.0, "wellcond": 0.2, "spd": 0.2}

PRIMS = sorted(n for n in COMPLEX if not rules.PRIMITIVES[n].nondiff
               and rules.PRIMITIVES[n].examples)
#: how the float inputs of an example become complex: all, or only the first / only the rest
VARIANTS = ("all", "first", "rest")


def _floats(example):
    return [i for i, s in enumerate(example.inputs)
            if s is float or not isinstance(s, np.ndarray)]


def _cases():
    out = []
    for name in PRIMS:
        for i, example in enumerate(rules.PRIMITIVES[name].examples):
            if any(isinstance(s, np.ndarray) and s.dtype.kind == "f" for s in example.inputs):
                continue  # concrete float inputs sit on kinks and ties on purpose
            floats = _floats(example)
            for variant in VARIANTS[:3 if len(floats) > 1 else 1]:
                out.append((name, i, variant))
    return out


CASES = _cases()


def _case_id(case):
    name, i, variant = case
    return f"{name}-{i}-{variant}"


#: (primitive, part) -> the axis along which each vector with a free phase runs (-2: the
#: columns of eigh's V and svd's U; -1: the rows of svd's Vh)
GAUGE = {("eigh", 1): -2, ("svd", 0): -2, ("svd", 2): -1}


def _gauge_axis(prim, params, value):
    return GAUGE.get((prim.name, params.get("part"))) if np.iscomplexobj(value) else None


def phase_invariant(ct, vectors, axis):
    """``ct`` minus what pairs with a change of phase of a vector: ``Re(sum(ct * v))``
    then does not move when a vector ``v_k`` turns into ``exp(i t) v_k``."""
    turn = np.imag(np.sum(ct * vectors, axis=axis, keepdims=True))
    return (ct - 1j * turn * np.conj(vectors)).astype(ct.dtype)


def without_phase(tangent, vectors, axis):
    """``tangent`` without its component along ``i v_k`` (a change of phase)."""
    turn = np.imag(np.sum(np.conj(vectors) * tangent, axis=axis, keepdims=True))
    return tangent - 1j * turn * vectors


def cases(selection=CASES):
    return pytest.mark.parametrize("case", selection, ids=[_case_id(c) for c in selection])


def _complex_positions(example, variant):
    floats = _floats(example)
    return {"all": floats, "first": floats[:1], "rest": floats[1:]}[variant]


def _setup(adcheck, case, cdtype=np.complex128):
    name, i, variant = case
    prim = rules.PRIMITIVES[name]
    example = prim.examples[i]
    rng = adcheck.rng_for("complex-" + _case_id(case))
    fdtype = np.float32 if cdtype == np.complex64 else np.float64
    values = adcheck.example_values(example, prim.domain, rng, fdtype)
    scale = _IMAG.get(prim.domain, 0.3)
    for k in _complex_positions(example, variant):
        v = values[k]
        imag = rng.uniform(-scale, scale, np.shape(v))
        values[k] = complex(v, float(imag)) if isinstance(v, float) else (v + 1j * imag).astype(cdtype)
    _skip_unless_accepted(adcheck, prim, values, example.params)
    return prim, example.params, values, rng


def _skip_unless_accepted(adcheck, prim, values, params):
    """A variant the compiler refuses (complex values written into a real array, cast to a
    real dtype) is a typed error there (tests/api/test_complex.py), not a rule to check."""
    from ad_compiler.api.compiler import _complex_ok
    b, args = adcheck.new_function("probe", [AType.of(v) for v in values])
    try:
        b.emit(prim.name, *args, **params)
    except (TypeError, ValueError):  # its type rule refuses them (float() of a complex)
        pytest.skip("refused for complex values")
    if not _complex_ok(b.block.ops[-1]):
        pytest.skip("refused for complex values")


def _like(value, rng):
    """A random cotangent or tangent of ``value``'s type (complex when it is)."""
    arr = np.asarray(value)
    re = rng.uniform(-2, 2, arr.shape)
    if arr.dtype.kind != "c":
        return float(re) if type(value) is float else re.astype(arr.dtype)
    out = re + 1j * rng.uniform(-2, 2, arr.shape)
    return complex(out) if type(value) is complex else out.astype(arr.dtype)


def _differentiable(v) -> bool:
    return isinstance(v, (float, complex)) or isinstance(v, np.ndarray) and v.dtype.kind in "fc"


def _pairing(ct, out) -> float:
    """``Re(sum(ct * out))``: how a cotangent pairs with a value (no conjugation)."""
    return float(np.real(np.sum(np.asarray(ct, np.complex128) * np.asarray(out, np.complex128))))


def assert_close(actual, expected, what, rtol=1e-5, atol=1e-6):
    actual = np.zeros_like(expected) if actual is None else np.asarray(actual)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what)


def _vjp_function(adcheck, prim, values, params):
    """IR of ``(inputs..., ct) -> cotangents``, with the real part taken for real inputs
    as reverse mode does (``real_part``)."""
    b, args = adcheck.new_function(f"vjp_{prim.name}", [AType.of(v) for v in values])
    out = b.emit(prim.name, *args, **params)
    ct = Value(out.type, "ct")
    b.block.args.append(ct)
    cts = prim.vjp(b, ct, out, *args, **params)
    slots = [i for i, c in enumerate(cts) if c is not None]
    results = [real_part(b, cts[i], args[i]) for i in slots]
    return adcheck.finish(b, f"vjp_{prim.name}", results), slots


@cases()
def test_vjp_matches_complex_finite_differences(adcheck, case):
    prim, params, values, rng = _setup(adcheck, case)
    fn, slots = _vjp_function(adcheck, prim, values, params)
    out = prim.impl(*values, **params)
    ct = _like(out, rng)
    if _gauge_axis(prim, params, out) is not None:
        ct = phase_invariant(ct, out, _gauge_axis(prim, params, out))
    got = dict(zip(slots, adcheck.run(fn, *values, ct)))

    def scalar(vals):
        with np.errstate(all="ignore"):
            return _pairing(ct, prim.impl(*vals, **params))

    for i, v in enumerate(values):
        if _differentiable(v):
            expected = central_at(lambda *v: scalar(list(v)), values, i)
            assert_close(got.get(i), expected, f"{prim.name}: cotangent of input {i}")
            if i in got:
                assert np.iscomplexobj(got[i]) == np.iscomplexobj(v), \
                    f"{prim.name}: cotangent {i} must be complex exactly when its input is"


@cases()
def test_jvp_matches_complex_finite_differences(adcheck, case):
    prim, params, values, rng = _setup(adcheck, case)
    b, args = adcheck.new_function(f"jvp_{prim.name}", [AType.of(v) for v in values])
    tangents = [Value(a.type, "t") if _differentiable(v) else None for a, v in zip(args, values)]
    b.block.args.extend(t for t in tangents if t is not None)
    out = b.emit(prim.name, *args, **params)
    t_out = prim.jvp(b, tuple(tangents), out, *args, **params)
    fn = adcheck.finish(b, "jvp", [] if t_out is None else [t_out])
    ts = [_like(v, rng) if t is not None else None for v, t in zip(values, tangents)]
    results = adcheck.run(fn, *values, *(t for t in ts if t is not None))
    expected = directional(lambda *v: np.asarray(prim.impl(*v, **params), np.complex128),
                           values, ts, EPS)
    actual = results[0] if results else None
    axis = _gauge_axis(prim, params, out.type.dtype.type(0))
    if axis is not None:
        vectors = prim.impl(*values, **params)
        expected = without_phase(expected, vectors, axis)
        actual = without_phase(actual, vectors, axis)
    assert_close(actual, expected, f"{prim.name}: tangent")
    if results:
        assert AType.of(results[0]).dtype == out.type.dtype, "the tangent has the output's dtype"


@cases()
def test_second_order_complex(adcheck, case):
    """The VJP's IR differentiated again (reverse mode) matches complex finite differences."""
    prim, params, values, rng = _setup(adcheck, case)
    if _gauge_axis(prim, params, prim.impl(*values, **params)) is not None:
        pytest.skip("the vectors' phases are free: second order of phase-invariant losses "
                    "is checked in tests/api/test_complex_linalg.py")
    fn, slots = _vjp_function(adcheck, prim, values, params)
    if not slots:
        pytest.skip("no cotangent flows")
    ct = _like(prim.impl(*values, **params), rng)
    inputs = [*values, ct]
    outs = adcheck.run(fn, *inputs)
    weights = [_like(o, rng) for o in outs]
    wrt = [i for i, v in enumerate(inputs) if _differentiable(v)]
    grad_fn = vjp_function(fn, wrt, [ARG] * len(outs))
    got = adcheck.run(grad_fn, *inputs, *weights)

    def scalar(vals):
        with np.errstate(all="ignore"):
            return sum(_pairing(w, o) for w, o in zip(weights, adcheck.run(fn, *vals)))

    for g, i in zip(got, wrt):
        assert_close(g, central_at(lambda *v: scalar(list(v)), inputs, i),
                     f"{prim.name} second order, input {i}", rtol=1e-4, atol=1e-5)


@cases()
def test_complex64_stays_complex64(adcheck, case):
    """complex64 inputs give complex64 cotangents; the type rule predicts NumPy's types."""
    prim, params, values, rng = _setup(adcheck, case, np.complex64)
    with np.errstate(all="ignore"):
        actual = AType.of(prim.impl(*values, **params))
    inferred = prim.infer(*(AType.of(v) for v in values), **params)
    assert (inferred.dtype, inferred.weak, inferred.ndim) == (actual.dtype, actual.weak, actual.ndim)
    assert all(d is None or d == e for d, e in zip(inferred.shape, actual.shape))
    fn, slots = _vjp_function(adcheck, prim, values, params)
    got = adcheck.run(fn, *values, _like(prim.impl(*values, **params), rng))
    for i, g in zip(slots, got):
        v = values[i]
        if isinstance(v, np.ndarray) and v.dtype in (np.complex64, np.float32):
            assert np.asarray(g).dtype == v.dtype, f"{prim.name}: cotangent {i} dtype"


@cases()
def test_generated_code_agrees_with_interpreter(adcheck, case):
    from ad_compiler.codegen.compile import compile_function
    prim, params, values, rng = _setup(adcheck, case)
    fn, _ = _vjp_function(adcheck, prim, values, params)
    ct = _like(prim.impl(*values, **params), rng)
    expected = adcheck.run(fn, *values, ct)
    compiled = compile_function(fn)
    for g, e in zip(compiled.fn(*values, ct), expected, strict=True):
        assert AType.of(g) == AType.of(e), compiled.source
        np.testing.assert_array_equal(g, e, err_msg=compiled.source)


def test_every_complex_primitive_is_checked():
    """Each differentiable primitive marked for complex values has a complex case here."""
    checked = {c[0] for c in CASES}
    unchecked = sorted(n for n in COMPLEX if n in rules.PRIMITIVES and n not in checked
                       and not rules.PRIMITIVES[n].nondiff)
    # list-typed primitives take values only loops build (checked in tests/api/test_complex.py)
    assert all(rules.PRIMITIVES[n].family in ("lists", "dynamic") or n in ("npscalar", "pyfloat")
               for n in unchecked), unchecked


def test_every_complex_name_is_a_primitive():
    assert sorted(n for n in COMPLEX if n not in rules.PRIMITIVES) == []
