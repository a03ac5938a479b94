"""Registry-driven checks of every primitive's rules, one test per (primitive, example).

A primitive declared later is checked here without a new test: its examples
drive VJP and JVP against central finite differences of its NumPy template,
second order (the adjoint differentiated again), IR verification, float32
preservation, and type inference against what NumPy actually returns.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers the primitives)
from ad_compiler.ad import rules
from ad_compiler.ir.core import AType, Value
from ad_compiler.ir.verifier import verify

# the built-in primitives (a user's, registered with ad_compiler.primitive, has its own tests)
BUILT_IN = {n: p for n, p in rules.PRIMITIVES.items() if p.family != "user"}
DIFFERENTIABLE = sorted(n for n, p in BUILT_IN.items() if not p.nondiff)


def _describe(spec) -> str:
    if spec is float:
        return "float"
    if isinstance(spec, np.ndarray):
        return "array[" + ",".join(str(d) for d in spec.shape) + "]"
    return "(" + ",".join(str(d) for d in spec) + ")"


def _case_id(case) -> str:
    prim, i, example = case
    text = f"{prim.name}-{i}-" + "x".join(_describe(s) for s in example.inputs)
    params = ",".join(f"{k}={v!r}" for k, v in example.params.items())
    return text + (f"-{params}" if params else "")


ALL_CASES = [(p, i, e) for _, p in sorted(BUILT_IN.items())
             for i, e in enumerate(p.examples)]
CASES = [c for c in ALL_CASES if not c[0].nondiff]
# second order needs smooth adjoints: concrete examples sit on ties and kinks on purpose
SMOOTH_CASES = [c for c in CASES if not any(isinstance(s, np.ndarray) for s in c[2].inputs)]


def cases(selection):
    return pytest.mark.parametrize("case", selection, ids=[_case_id(c) for c in selection])


def _matches(inferred: AType, actual: AType) -> bool:
    """``inferred`` describes ``actual``: equal, a run-time length ``None`` matching any."""
    return (inferred.dtype, inferred.weak, inferred.ndim) == (actual.dtype, actual.weak, actual.ndim) \
        and all(d is None or d == e for d, e in zip(inferred.shape, actual.shape))


def _types(values) -> list[AType]:
    return [AType.of(v) for v in values]


def _vjp_function(adcheck, prim, values, params):
    """IR of ``(inputs..., ct) -> cotangents``; returns it and the input slots it covers."""
    b, args = adcheck.new_function(f"vjp_{prim.name}", _types(values))
    out = b.emit(prim.name, *args, **params)
    ct = Value(out.type, "ct")
    b.block.args.append(ct)
    cts = prim.vjp(b, ct, out, *args, **params)
    assert len(cts) == len(args), f"{prim.name}: VJP must return one cotangent per input"
    slots = [i for i, c in enumerate(cts) if c is not None]
    return adcheck.finish(b, f"vjp_{prim.name}", [cts[i] for i in slots]), slots, out


def _jvp_function(adcheck, prim, values, params, active=None):
    """IR of ``(inputs..., tangents of the active inputs) -> output tangent`` (or no result).

    ``active`` (default: every float input) says which inputs carry a tangent;
    the others get None, as inputs that do not depend on the differentiated ones.
    """
    if active is None:
        active = [i for i, v in enumerate(values) if adcheck.is_float_input(v)]
    b, args = adcheck.new_function(f"jvp_{prim.name}", _types(values))
    tangents = [Value(a.type, "t") if i in active else None for i, a in enumerate(args)]
    b.block.args.extend(t for t in tangents if t is not None)
    out = b.emit(prim.name, *args, **params)
    t_out = prim.jvp(b, tuple(tangents), out, *args, **params)
    return adcheck.finish(b, f"jvp_{prim.name}", [] if t_out is None else [t_out]), out


def _setup(adcheck, case, dtype=np.float64):
    prim, _, example = case
    rng = adcheck.rng_for(_case_id(case))
    return prim, example.params, adcheck.example_values(example, prim.domain, rng, dtype), rng


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_differentiable_primitive_declares_rules_and_examples(name):
    prim = rules.PRIMITIVES[name]
    assert prim.vjp is not None, f"{name} has no VJP (declare one or mark it nondiff=True)"
    assert prim.jvp is not None, f"{name} has no JVP"
    # list-typed primitives take values only loops build: tests/ad/test_control.py checks them
    assert prim.examples or prim.family == "lists", \
        f"{name} has no examples for the gradient checks"


@cases(ALL_CASES)
def test_infer_matches_numpy(adcheck, case):
    """The type rule predicts what the template really returns (shape, dtype, weakness)."""
    for dtype in (np.float64, np.float32):
        prim, params, values, _ = _setup(adcheck, case, dtype)
        with np.errstate(all="ignore"):
            actual = AType.of(prim.impl(*values, **params))
        assert _matches(prim.infer(*_types(values), **params), actual)


@cases(CASES)
def test_vjp_matches_finite_differences(adcheck, case):
    prim, params, values, rng = _setup(adcheck, case)
    fn, slots, out = _vjp_function(adcheck, prim, values, params)
    ct = adcheck.like(prim.impl(*values, **params), rng)
    got = dict(zip(slots, adcheck.run(fn, *values, ct)))

    def scalar(vals):
        return adcheck.inner(ct, prim.impl(*vals, **params))

    for i, v in enumerate(values):
        if adcheck.is_float_input(v):
            expected = adcheck.numeric_grad(scalar, values, i)
            adcheck.assert_close(got.get(i), expected, f"{prim.name}: cotangent of input {i}")
            if i in got:
                assert np.shape(got[i]) == np.shape(v), f"cotangent {i} has the wrong shape"


def _tangent_subsets(values, is_float):
    """All float inputs together, then each alone (a broadcasting JVP must fill the output)."""
    floats = [i for i, v in enumerate(values) if is_float(v)]
    return [floats] + ([[i] for i in floats] if len(floats) > 1 else [])


@cases(CASES)
def test_jvp_matches_finite_differences(adcheck, case):
    prim, params, values, rng = _setup(adcheck, case)
    for active in _tangent_subsets(values, adcheck.is_float_input):
        fn, out = _jvp_function(adcheck, prim, values, params, active)
        tangents = [adcheck.like(v, rng) if i in active else None for i, v in enumerate(values)]
        results = adcheck.run(fn, *values, *(t for t in tangents if t is not None))
        expected = adcheck.numeric_jvp(lambda *vals: prim.impl(*vals, **params), values, tangents)
        adcheck.assert_close(results[0] if results else None, expected,
                             f"{prim.name}: tangent with inputs {active} moving")
        if results:
            assert fn.outputs[0].type == out.type, "the tangent must have the output's type"
            assert _matches(out.type, AType.of(results[0])), "the tangent has the wrong shape"


@cases(SMOOTH_CASES)
def test_second_order(adcheck, case):
    """The adjoint is ordinary IR: differentiating it again matches finite differences."""
    prim, params, values, rng = _setup(adcheck, case)
    fn, slots, out = _vjp_function(adcheck, prim, values, params)
    if not slots:
        pytest.skip("no cotangent flows")
    ct = adcheck.like(prim.impl(*values, **params), rng)
    adcheck.check_reverse(fn, [*values, ct], rng, f"{prim.name} second order")


@cases(CASES)
def test_adjoint_ir_verifies_and_uses_registered_primitives(adcheck, case):
    prim, params, values, _ = _setup(adcheck, case)
    vjp_fn = _vjp_function(adcheck, prim, values, params)[0]
    jvp_fn = _jvp_function(adcheck, prim, values, params)[0]
    for fn in (vjp_fn, jvp_fn):
        verify(fn)
        for op in fn.body.walk():
            emitted = rules.PRIMITIVES.get(op.prim)
            assert emitted is not None, f"{prim.name}'s rules emit unregistered {op.prim!r}"
            if not emitted.nondiff:
                assert emitted.vjp and emitted.jvp, f"{op.prim} (used by {prim.name}) lacks rules"


def _float32_inputs(values):
    return [i for i, v in enumerate(values) if isinstance(v, np.ndarray) and v.dtype == np.float32]


@cases([c for c in CASES if any(s is not float for s in c[2].inputs)])
def test_float32_in_float32_out(adcheck, case):
    prim, params, values, rng = _setup(adcheck, case, np.float32)
    fn, slots, out = _vjp_function(adcheck, prim, values, params)
    ct = adcheck.like(prim.impl(*values, **params), rng)
    got = dict(zip(slots, adcheck.run(fn, *values, ct)))
    for i in _float32_inputs(values):
        if i in got:
            assert fn.outputs[slots.index(i)].type.dtype == np.float32, f"typed cotangent {i}"
            assert np.asarray(got[i]).dtype == np.float32, f"runtime cotangent {i}"
    jfn, jout = _jvp_function(adcheck, prim, values, params)
    if jfn.outputs and jout.type.dtype == np.float32:
        tangents = [adcheck.like(v, rng) for v in values if adcheck.is_float_input(v)]
        (t,) = adcheck.run(jfn, *values, *tangents)
        assert jfn.outputs[0].type.dtype == np.float32
        assert np.asarray(t).dtype == np.float32


@cases(CASES)
def test_generated_adjoint_code_agrees_with_interpreter(adcheck, case):
    """Templates (string or callable) turn into Python that computes what ``impl`` does."""
    from ad_compiler.codegen.compile import compile_function
    prim, params, values, rng = _setup(adcheck, case)
    fn, _, _ = _vjp_function(adcheck, prim, values, params)
    ct = adcheck.like(prim.impl(*values, **params), rng)
    expected = adcheck.run(fn, *values, ct)
    compiled = compile_function(fn)
    got = compiled.fn(*values, ct)
    for g, e in zip(got, expected, strict=True):
        assert AType.of(g) == AType.of(e), compiled.source
        np.testing.assert_array_equal(g, e, err_msg=compiled.source)
