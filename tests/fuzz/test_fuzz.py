"""Quick mode of the differential fuzzer: a fixed seed set, every STABLE feature on.

The long mode is ``python -m tests.fuzz --seeds 0:20000 --jobs 2`` (docs/fuzzing.md).
"""
from __future__ import annotations

import warnings

import pytest

from tests.fuzz.features import PENDING, STABLE
from tests.fuzz.generator import FEATURES, Gen, Returned, generate, recipe_feature
from tests.fuzz.oracle import check
from tests.fuzz.recipes import NOT_GENERATED, RECIPES, Reject, surface
from tests.fuzz.runner import report

QUICK_SEEDS = range(0, 100)
HIGHER_SEEDS = set(QUICK_SEEDS[::3])   # forward mode and second order (they double a seed's cost)


def test_every_lowering_has_a_recipe():
    """A new lowering, method or builtin needs a recipe (or a reason in NOT_GENERATED)."""
    missing = sorted(surface() - set(RECIPES) - set(NOT_GENERATED))
    assert not missing, f"no fuzz recipe for {missing}: add one to tests/fuzz/recipes.py"
    stale = sorted(k for k in (set(RECIPES) | set(NOT_GENERATED)) - surface()
                   if not k.startswith("pattern."))  # spellings, not callables
    assert not stale, f"recipes for callables the compiler no longer lowers: {stale}"


def test_every_recipe_runs():
    """Each recipe gives an expression that runs in plain Python for some generator state."""
    dead = []
    for key, recipe in sorted(RECIPES.items()):
        for seed in range(40):
            g = Gen(seed, FEATURES)
            try:
                g.run([f"t = {recipe(g)}"])
                break
            except (Reject, Returned):
                continue
        else:
            dead.append(key)
    assert not dead
    assert {recipe_feature(k) for k in RECIPES} <= set(FEATURES)


def test_pending_features_are_known():
    assert set(PENDING) <= set(FEATURES)


@pytest.mark.parametrize("chunk", range(4))
def test_quick_fuzz(chunk):
    failures = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in QUICK_SEEDS[chunk::4]:
            program = generate(seed, STABLE)
            outcome = check(program, higher=seed in HIGHER_SEEDS)
            if outcome.failed:
                failures.append(report(program, outcome))
    assert not failures, "\n\n".join(failures)


#: seeds of the long mode (every feature) that found a defect, fixed since: the coalesced
#: loop names that gave two live values one name (202982, 203977, 204054), the shift proof
#: on a 0-d reduction (204709), an in-place update of a compile-time array inside a branch
#: (206146, 206213), and the oracle's judging of a rounded value grown to 1e6
#: (200947). A seed's program follows the recipe set, so these guard the code of today.
FOUND_SEEDS = (200947, 202982, 203977, 204054, 204709, 206146, 206213)


@pytest.mark.parametrize("seed", FOUND_SEEDS)
def test_seeds_the_long_mode_found(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = generate(seed)
        outcome = check(program, higher=False)
    assert not outcome.failed, report(program, outcome)
