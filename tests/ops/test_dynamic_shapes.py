"""Every primitive that accepts run-time lengths (``Primitive.dynamic``, ir/dims.py)
gives, on types with a ``?`` in place of a length, the same values and adjoints as
on the static types: its registry examples are rebuilt with the first float
input's leading axis (and the same axis of the inputs that share it) made ``?``,
and the VJP and JVP are run on the same numbers, through the interpreter and
through generated code. A case the type rule refuses is skipped only when the
refusal is the located ``UnsupportedOperationError`` of ir/dims.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from ad_compiler.ad import rules
from ad_compiler.codegen.compile import compile_function
from ad_compiler.errors import UnsupportedOperationError
from ad_compiler.ir.core import AType, Value

CASES = [(p, i, e) for _, p in sorted(rules.PRIMITIVES.items()) if p.dynamic and not p.nondiff
         for i, e in enumerate(p.examples)]


def _case_id(case):
    return f"{case[0].name}-{case[1]}"


def _dynamic_types(values):
    """The types of ``values`` with one shared length made ``?``; None if there is none."""
    types = [AType.of(v) for v in values]
    first = next((t for t in types if t.ndim and t.dtype.kind == "f"), None)
    if first is None or first.shape[0] == 1:
        return None
    k, d = first.ndim, first.shape[0]
    out = []
    for t in types:
        if t.dtype.kind == "f" and t.ndim >= k and t.shape[t.ndim - k] == d:
            shape = list(t.shape)
            shape[t.ndim - k] = None
            t = AType(tuple(shape), t.dtype, t.weak)
        out.append(t)
    return out


def _vjp(adcheck, prim, types, params):
    b, args = adcheck.new_function(f"vjp_{prim.name}", types)
    out = b.emit(prim.name, *args, **params)
    ct = Value(out.type, "ct")
    b.block.args.append(ct)
    cts = prim.vjp(b, ct, out, *args, **params)
    return adcheck.finish(b, f"vjp_{prim.name}", [c if c is not None else b.zeros(a)
                                                  for c, a in zip(cts, args)])


def _jvp(adcheck, prim, types, params, active):
    b, args = adcheck.new_function(f"jvp_{prim.name}", types)
    tangents = [Value(a.type, "t") if i in active else None for i, a in enumerate(args)]
    b.block.args.extend(t for t in tangents if t is not None)
    out = b.emit(prim.name, *args, **params)
    t_out = prim.jvp(b, tuple(tangents), out, *args, **params)
    return adcheck.finish(b, f"jvp_{prim.name}", [b.zeros(out) if t_out is None else t_out])


def _same(got, expected, what):
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g, dtype=float), np.asarray(e, dtype=float),
                                   rtol=1e-12, atol=1e-12, err_msg=what)
        assert np.shape(g) == np.shape(e), what


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_run_time_lengths_give_the_static_adjoints(adcheck, case):
    prim, _, example = case
    rng = adcheck.rng_for(_case_id(case))
    values = adcheck.example_values(example, prim.domain, rng)
    dyn = _dynamic_types(values)
    if dyn is None:
        pytest.skip("no length to make dynamic")
    static = [AType.of(v) for v in values]
    params = example.params
    try:
        dyn_vjp = _vjp(adcheck, prim, dyn, params)
    except UnsupportedOperationError as e:
        assert "depends on the data" in str(e)
        pytest.skip("refused with a located error")
    ct = adcheck.like(prim.impl(*values, **params), rng)
    expected = adcheck.run(_vjp(adcheck, prim, static, params), *values, ct)
    _same(adcheck.run(dyn_vjp, *values, ct), expected, f"{prim.name}: interpreted VJP")
    _same(compile_function(dyn_vjp).fn(*values, ct), expected, f"{prim.name}: generated VJP")
    active = [i for i, v in enumerate(values) if adcheck.is_float_input(v)]
    tangents = [adcheck.like(values[i], rng) for i in active]
    expected = adcheck.run(_jvp(adcheck, prim, static, params, active), *values, *tangents)
    got = adcheck.run(_jvp(adcheck, prim, dyn, params, active), *values, *tangents)
    _same(got, expected, f"{prim.name}: JVP")
