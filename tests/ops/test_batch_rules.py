"""Registry-driven checks of every primitive's batching rule (``vmap``).

For each primitive and each of its ``examples``, the op is applied to a batch of
examples through :func:`batch_function` (its batching rule) and compared with
a Python loop of the primitive's NumPy template over the examples: every array
input batched along axis 0, along its last axis, mixed (one input batched,
the others shared), and along axis 1 where an example has two axes or more.
Python-number inputs and boolean masks stay shared; other concrete arrays (index
arrays too: each example reads its own positions) are rolled per example.
A primitive declared later is checked here without a new test.
"""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler.ops  # noqa: F401  (registers the primitives)
from ad_compiler.ad import rules
from ad_compiler.ad.rules import ex
from ad_compiler.ad.batching import batch_function
from ad_compiler.errors import UnsupportedOperationError
from ad_compiler.ir.core import AType
from ad_compiler.ir.verifier import verify

BUILT_IN = {n: p for n, p in rules.PRIMITIVES.items() if p.family != "user"}
SIZE = 3

#: examples for the primitives whose declarations have none with arrays
EXTRA = {"zeros_like": [ex((2, 3))], "ones_like": [ex((3,))], "stop_gradient": [ex((2, 3))]}
#: batched inputs a rule refuses (a located error), by primitive: the refusal's words
REFUSED = {"searchsorted": "sorted array that differs between examples",
           "nonzero": "its own number of elements"}
#: rules no example can reach: const and random have no inputs (random draws are checked
#: against a loop of calls in tests/api/test_vmap_rest.py), npscalar takes a Python number
# math_trunc: Python's math.trunc of an example's 0-d array raises (no __trunc__); its
# rule is checked in tests/api/test_python_semantics.py::test_math_functions_batch_under_vmap
UNREACHABLE = ["const", "math_trunc", "npscalar", "random"]


def _case_id(case):
    prim, i, mode = case
    return f"{prim.name}-{i}-{mode}"


def _batchable(example, family) -> list[int]:
    """The positions of the inputs a test may batch: those given as shapes (arrays the
    test samples) and concrete arrays (rolled per example: index arrays that differ
    between examples), except boolean masks (a mask that differs between examples
    selects a different number of elements in each: vmap refuses it)."""
    return [k for k, s in enumerate(example.inputs) if isinstance(s, tuple)
            or isinstance(s, np.ndarray) and s.dtype.kind != "b"]


def _ndim(spec) -> int:
    return len(spec) if isinstance(spec, tuple) else np.ndim(spec)


def _modes(example, family) -> list[str]:
    slots = _batchable(example, family)
    if not slots:
        return []
    modes = ["front", "back"]
    if any(_ndim(example.inputs[k]) >= 2 for k in slots):
        modes.append("one")  # axis 1: neither first nor last
    if len(slots) > 1:
        modes += ["first", "last"]
    return modes


def _examples(prim) -> list:
    return prim.examples + EXTRA.get(prim.name, [])


CASES = [(p, i, m) for _, p in sorted(BUILT_IN.items()) if p.batch_rule is not None
         for i, e in enumerate(_examples(p)) for m in _modes(e, p.family)]


def _in_axes(example, mode, family) -> list:
    slots = _batchable(example, family)
    chosen = {"front": slots, "back": slots, "one": slots, "first": slots[:1],
              "last": slots[-1:]}[mode]
    return [_axis(example.inputs[k], mode) if k in chosen else None
            for k in range(len(example.inputs))]


def _axis(spec, mode) -> int:
    return {"back": _ndim(spec), "one": min(1, _ndim(spec))}.get(mode, 0)


def _values(adcheck, prim, example, rng, k) -> list:
    """Example ``k`` of the batch: shapes sampled, concrete arrays rolled ``k`` places."""
    return [np.roll(v, k) if isinstance(s, np.ndarray) else v
            for s, v in zip(example.inputs, adcheck.example_values(example, prim.domain, rng))]


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_batch_rule_matches_a_loop(adcheck, case):
    prim, i, mode = case
    example = _examples(prim)[i]
    rng = adcheck.rng_for(_case_id(case))
    in_axes = _in_axes(example, mode, prim.family)
    per_example = [_values(adcheck, prim, example, rng, k) for k in range(SIZE)]
    inputs = [np.stack([vals[k] for vals in per_example], axis=ax) if ax is not None
              else per_example[0][k] for k, ax in enumerate(in_axes)]
    b, args = adcheck.new_function(f"one_{prim.name}", [AType.of(v) for v in per_example[0]])
    out = b.emit(prim.name, *args, **example.params)
    fn = adcheck.finish(b, f"one_{prim.name}", [out])
    if prim.name in REFUSED and in_axes[0] is not None:
        with pytest.raises(UnsupportedOperationError, match=REFUSED[prim.name]):
            batch_function(fn, in_axes, [0], SIZE)
        return
    batched = batch_function(fn, in_axes, [0], SIZE)
    verify(batched)
    (got,) = adcheck.run(batched, *inputs)
    expected = []
    for vals in per_example:
        shared = [vals[k] if ax is not None else inputs[k] for k, ax in enumerate(in_axes)]
        with np.errstate(all="ignore"):
            expected.append(prim.impl(*shared, **example.params))
    expected = np.stack([np.asarray(e) for e in expected])
    assert np.shape(got) == expected.shape, f"{prim.name}: batched shape"
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12,
                               err_msg=f"{prim.name} batched {in_axes}")
    assert np.asarray(got).dtype == expected.dtype, f"{prim.name}: batched dtype"


def test_every_primitive_has_a_batching_rule():
    """vmap batches every registered primitive (a rule may refuse a case with a located
    error, as nonzero of a mask that differs between examples)."""
    missing = sorted(n for n, p in BUILT_IN.items() if p.batch_rule is None)
    assert missing == [], f"without a batching rule: {missing}"


def test_every_batching_rule_is_checked():
    """A rule no example exercises is untested: every primitive with a rule has array
    examples (list-typed ones are checked through loops in tests/api/test_vmap.py)."""
    unchecked = sorted(n for n, p in BUILT_IN.items() if p.batch_rule is not None
                       and p.family != "lists"
                       and not any(_modes(e, p.family) for e in _examples(p)))
    assert unchecked == UNREACHABLE, unchecked
