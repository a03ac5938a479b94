"""The benchmark harness itself (not timings: those are the benchmarks' job)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import peers, run
from benchmarks.workloads import WORKLOADS

RNG = np.random.default_rng(0)


def _workload(name):
    (w,) = [w for w in WORKLOADS if w.name == name]
    return w


def test_rebound_functions_read_the_given_module():
    """The peer runs the workload's own source with its ``np`` replaced."""
    seen = []

    class Spy:
        def __getattr__(self, name):
            seen.append(name)
            return getattr(np, name)
    w = _workload("softmax_xent")
    args = w.make_inputs("tiny", RNG)
    assert peers.rebound(w.fn, {"np": Spy()})(*args) == pytest.approx(w.fn(*args))
    assert {"max", "log", "sum", "exp", "mean"} <= set(seen)


@pytest.mark.parametrize("name", ["mlp", "softmax_xent", "matmul_chain"])
def test_a_peer_gradient_is_checked_against_the_hand_written_one(name):
    pytest.importorskip("autograd")
    (peer,) = [p for p in peers.PEERS if p.name == "autograd"]
    w = _workload(name)
    args = w.make_inputs("tiny", RNG)
    call, peer_args, why = peers.prepare(peer, w, args, w.grad(*args))
    assert why is None and call is not None
    wrong = tuple(-g for g in w.grad(*args)) if isinstance(w.grad_position, tuple) \
        else -w.grad(*args)
    assert peers.prepare(peer, w, args, wrong)[2] == "gradient differs from the hand-written one"


def test_a_peer_that_cannot_run_a_workload_says_why():
    peer = peers.Peer("broken", "numpy", lambda w, a: (_ for _ in ()).throw(TypeError("no")))
    w = _workload("mlp")
    args = w.make_inputs("tiny", RNG)
    assert peers.prepare(peer, w, args, w.grad(*args)) == (None, None, "TypeError: no")


def test_side_by_side_timing_gives_one_median_per_call():
    times = run.time_side_by_side([(np.sum, (np.ones(3),)), (np.prod, (np.ones(3),))],
                                  rounds=3, target_ns=20_000)
    assert len(times) == 2 and all(t > 0 and math.isfinite(t) for t in times)


def test_peers_none_and_unknown_names():
    assert run.chosen_peers("none") == []
    with pytest.raises(SystemExit):
        run.chosen_peers("autograd,nonesuch")
