"""Forward mode through control flow: every corpus function's JVP against central
differences (``ms.check_grad`` with ``modes=("fwd",)``).

The corpus (tests/corpus/functions.py) holds data-dependent ``if``/``elif``, ``for``
over ranges, arrays and lists, ``while``, ``break``/``continue``/early ``return``,
lists built by loops, comprehensions and slice assignment.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ad_compiler as ms
from tests.corpus.load import checkable_cases, to_float64




CASES = checkable_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_forward_mode_matches_central_differences(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ms.check_grad(case.function, to_float64(case.make()), modes=("fwd",))


def test_the_corpus_exercises_every_structured_op():
    from ad_compiler.api.transforms import compiled_entry   # noqa: F401
    from ad_compiler.frontend import lift
    from ad_compiler.api.signature import spec_of
    seen = set()
    for c in CASES:
        try:
            lifted = lift(c.function, tuple(spec_of(a) for a in to_float64(c.make())))
        except Exception:  # noqa: BLE001 - only counting
            continue
        seen |= {op.prim for op in lifted.function.body.walk()}
    assert {"if", "for", "while"} <= seen


def test_a_constant_output_has_a_zero_tangent():
    def f(x):
        return x * 2.0, 3
    _, (tx, tc) = ms.jvp(f, (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))
    np.testing.assert_allclose(tx, [2.0, 2.0])
    assert tc == 0
