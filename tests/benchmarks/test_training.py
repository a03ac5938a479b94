"""benchmarks/training.py: its hand-written NumPy steps are right (what its ratios compare).

``check`` compares the hand-written gradients with central finite differences
(float64) and with ad_compiler's, then three Momentum steps of each; a wrong
hand-written gradient exits.
"""
from __future__ import annotations

import numpy as np
import pytest

from benchmarks import training


@pytest.fixture
def nets(monkeypatch):
    monkeypatch.syspath_prepend(str(training.ROOT / "examples"))
    np.random.seed(0)
    return {name: (net, grads, shape) for name, net, grads, shape in training.workloads(4)}


@pytest.mark.parametrize("name", ["lenet5", "mlp"])
def test_hand_written_steps_match_finite_differences_and_the_compiled_ones(nets, name):
    net, loss_and_grads, shape = nets[name]
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    labels = rng.integers(0, 10, shape[0]).astype(np.int32)
    training.check(name, net, loss_and_grads, x, labels, rng)


def test_a_wrong_hand_written_gradient_is_caught(nets):
    net, loss_and_grads, shape = nets["mlp"]

    def off_by_a_little(params, x, labels):
        loss, grads = loss_and_grads(params, x, labels)
        return loss, [g * 1.01 for g in grads]
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32)
    with pytest.raises(SystemExit, match="finite difference"):
        training.check("mlp", net, off_by_a_little, x, np.arange(4, dtype=np.int32), rng)


def test_cpu_timer_reports_one_median_per_step():
    calls = [(lambda a: np.sum(a), (np.ones(10),)), (lambda a: np.prod(a), (np.ones(10),))]
    times = training.time_steps(calls, rounds=3, steps=2)
    assert len(times) == 2 and all(t >= 0.0 for t in times)
