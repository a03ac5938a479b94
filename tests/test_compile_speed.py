"""The machinery behind fast compilation: stage timing and lazy submodules.

No timing is asserted here (speed is measured by benchmarks/compile.py); these tests
check that the stage report covers every stage of a compilation, costs nothing when
off, and that submodules imported lazily are still there.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np

import ad_compiler as ms
from ad_compiler.stages import StageTimes, stage_times


def _fresh_function():
    def f(x, w):
        h = np.tanh(x @ w)
        return np.sum(h * h)
    return f


def test_stage_times_report_every_stage_of_a_compilation():
    x, w = np.ones((2, 3)), np.full((3, 2), 0.5)
    with stage_times() as times:
        ms.grad(_fresh_function(), grad_position=(0, 1))(x, w)
    totals = times.totals()
    for name in ("parse", "lift", "reverse", "fold", "simplify", "dce", "cse",
                 "fresh_outputs", "codegen", "compile()"):
        assert name in totals, name
        wall, cpu = totals[name]
        assert wall >= 0.0 and cpu >= 0.0
    report = times.report()
    assert report.splitlines()[0].split() == ["stage", "wall", "ms", "cpu", "ms"]
    assert "\n  parse " in report  # nested inside lift: indented under it
    assert report.splitlines()[-1].startswith("total")
    wall, cpu = times.total()
    assert wall >= totals["lift"][0] and cpu >= totals["lift"][1]


def test_stage_times_are_off_outside_the_block():
    x, w = np.ones((2, 3)), np.full((3, 2), 0.5)
    with stage_times() as times:
        pass
    ms.grad(_fresh_function(), grad_position=(0, 1))(x, w)
    assert times.rows == [] and StageTimes().report().splitlines()[-1].startswith("total")


def test_a_cache_hit_runs_no_stage():
    f = _fresh_function()
    g = ms.grad(f)
    x, w = np.ones((2, 3)), np.full((3, 2), 0.5)
    g(x, w)
    with stage_times() as times:
        g(x, w)
    assert times.rows == []
