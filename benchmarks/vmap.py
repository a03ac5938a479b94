"""Per-example gradients: ``vmap(grad(loss))`` against a Python loop of ``grad`` calls.

Usage::

    python -m benchmarks.vmap [--rounds N]

The loss is a two-layer MLP's squared error on one example (``x`` of 16 features,
32 hidden units, 4 outputs); the per-example gradients are those of both weight
matrices, for batches of 8, 64 and 512 examples. Both callables are cache hits,
timed interleaved round by round (see benchmarks/guards.py); each is charged its
fastest batch of calls. The loop is what one writes without vmap:
``[grad(loss)(w1, w2, x, y) for x, y in zip(xs, ys)]``; vmap runs one batched
NumPy call per op of the gradient.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.guards import time_side_by_side  # noqa: E402

SIZES = (8, 64, 512)


def loss(w1, w2, x, y):
    h = np.tanh(x @ w1)
    return np.sum((h @ w2 - y) ** 2)


def measure(rounds=20, target_ns=2_000_000):
    """``[(batch, vmap µs, loop µs)]``, after checking both give the same numbers."""
    import ad_compiler as ms
    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(size=(16, 32)) * 0.3, rng.normal(size=(32, 4)) * 0.3
    grad = ms.grad(loss, grad_position=(0, 1))
    per_example = ms.vmap(grad, in_axes=(None, None, 0, 0))
    rows = []
    for n in SIZES:
        xs, ys = rng.normal(size=(n, 16)), rng.normal(size=(n, 4))

        def looped(w1, w2, xs, ys):
            return [grad(w1, w2, x, y) for x, y in zip(xs, ys)]
        g1, g2 = per_example(w1, w2, xs, ys)
        want = looped(w1, w2, xs, ys)
        if not (np.allclose(g1, [a for a, _ in want]) and np.allclose(g2, [b for _, b in want])):
            raise SystemExit("vmap(grad) differs from the loop of grad calls")
        us = time_side_by_side([(per_example, (w1, w2, xs, ys)), (looped, (w1, w2, xs, ys))],
                               rounds, target_ns)
        rows.append((n, us[0] / 1e3, us[1] / 1e3))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vmap")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    print(f"{'batch':>6} {'vmap(grad) µs':>15} {'loop of grad µs':>17} {'loop / vmap':>12}")
    for n, vm, lp in measure(args.rounds):
        print(f"{n:>6} {vm:>15.1f} {lp:>17.1f} {lp / vm:>11.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
