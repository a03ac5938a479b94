"""The cost of a loop's gradient relative to its forward: scalar and small-state loops.

Usage::

    python -m benchmarks.scalar_loops [--rounds 15] [--steps 100000]

Reverse mode should cost a small constant times the forward (the cheap-gradient
bound; the target here is 4x). Each workload is a user-style loop; its forward
is the plain Python function and its gradient ``ms.grad(fn)`` on a cache hit,
timed interleaved (one call of each per round, alternating which runs first)
so that load from other processes hits both alike. The ratio is the median
gradient time over the median forward time; ``best`` is the ratio of the fastest
calls, which load from other processes disturbs least.

| workload | loop body |
|---|---|
| `float_sin` | `x = math.sin(x)` on a Python float, `steps` iterations |
| `zero_d_sin` | `x = np.sin(x)` on a 0-d float64 array, `steps` iterations |
| `rnn` | `h = np.tanh(w @ h + u @ xs[t])`, hidden size 8, `steps // 100` steps |

Each compiled gradient is first checked against central finite differences.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ad_compiler as ms  # noqa: E402

TARGET_RATIO = 4.0
STEPS = 100_000


def float_sin(x):
    for _ in range(STEPS):
        x = math.sin(x)
    return x


def zero_d_sin(x):
    for _ in range(STEPS):
        x = np.sin(x)
    return x


def rnn(w, u, h, xs):
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t])
    return np.sum(h * h)


def workloads(steps: int, rng) -> list:
    """``(name, fn, args, grad_position)`` for each workload."""
    hidden = 8
    w = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    u = rng.standard_normal((hidden, 4)) / 2.0
    xs = rng.standard_normal((max(1, steps // 100), 4))
    return [("float_sin", float_sin, (1.2,), 0),
            ("zero_d_sin", zero_d_sin, (np.array(1.2),), 0),
            ("rnn", rnn, (w, u, np.zeros(hidden), xs), (0, 1))]


def _check(name, fn, args, position) -> str | None:
    """Why the compiled gradient disagrees with central differences, or None."""
    grads = ms.grad(fn, grad_position=position)(*args)
    grads = grads if isinstance(position, tuple) else (grads,)
    positions = position if isinstance(position, tuple) else (position,)
    for k, g in zip(positions, grads):
        x = np.array(args[k], dtype=np.float64)
        fd = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            plus, minus = x.copy(), x.copy()
            plus[idx] += 1e-6
            minus[idx] -= 1e-6
            pa, ma = list(args), list(args)
            pa[k], ma[k] = _like(args[k], plus), _like(args[k], minus)
            fd[idx] = (fn(*pa) - fn(*ma)) / 2e-6
        if not np.allclose(g, fd, rtol=1e-5, atol=1e-8):
            return f"{name}: gradient {g!r} differs from central differences {fd!r}"
    return None


def _like(original, x):
    return float(x) if isinstance(original, float) else x


def time_ratio(fn, args, position, rounds: int) -> tuple[list, list]:
    """Forward and gradient times (seconds), one call each per round."""
    grad = ms.grad(fn, grad_position=position)
    grad(*args)
    forward, backward = [], []
    for r in range(rounds):
        pair = [(fn, forward), (grad, backward)]
        for f, out in (pair if r % 2 == 0 else pair[::-1]):
            start = time.perf_counter()
            f(*args)
            out.append(time.perf_counter() - start)
    return forward, backward


def main(argv=None) -> int:
    global STEPS
    p = argparse.ArgumentParser(prog="python -m benchmarks.scalar_loops",
                                description="gradient / forward cost of loops")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--steps", type=int, default=STEPS)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    STEPS = 200
    for name, fn, inputs, position in workloads(STEPS, rng):
        problem = _check(name, fn, inputs, position)
        if problem:
            print(f"!!! {problem}")
            return 1
    STEPS = args.steps
    print(f"{args.rounds} rounds, {STEPS} steps (rnn: {max(1, STEPS // 100)})\n")
    print(f"{'workload':<12} {'forward ms':>11} {'gradient ms':>12} {'ratio':>7} {'best':>6}")
    for name, fn, inputs, position in workloads(STEPS, rng):
        forward, backward = time_ratio(fn, inputs, position, args.rounds)
        fwd, bwd = statistics.median(forward), statistics.median(backward)
        ratio = bwd / fwd
        verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
        print(f"{name:<12} {fwd * 1e3:>11.2f} {bwd * 1e3:>12.2f} {ratio:>7.2f} "
              f"{min(backward) / min(forward):>6.2f}  {verdict} (target <= {TARGET_RATIO:g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
