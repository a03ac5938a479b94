"""Per-example gradients: ``vmap(grad(loss))`` against a Python loop of ``grad`` calls.

Usage::

    python -m benchmarks.vmap [--rounds N] [--cases mlp,conv,xent]

Three losses of one example, the per-example gradients of all their weights:

* ``mlp``: a two-layer MLP's squared error (``x`` of 16 features, 32 hidden units,
  4 outputs);
* ``conv``: a small conv net's squared error (a 1-channel 8x8 image, 4 filters 3x3
  'same', relu, 2x2 max pooling, a dense layer to 4 outputs);
* ``xent``: softmax cross-entropy of a linear classifier (16 features, 10 classes)
  at each example's own label, ``-logp[label]``;

for batches of 8, 64 and 512 examples. Both callables are cache hits, timed
interleaved round by round (see benchmarks/guards.py), BLAS held to one thread
(as benchmarks/run.py does; on a loaded machine several threads make a large
product much slower); each is charged its fastest batch of calls. The loop is
what one writes without vmap: ``[grad(loss)(*weights, x, y) for x, y in zip(xs,
ys)]``; vmap runs one batched NumPy call per op of the gradient.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # before NumPy is imported: one core for both sides

import numpy as np  # noqa: E402

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ad_compiler import ops  # noqa: E402
from benchmarks.guards import time_side_by_side  # noqa: E402

SIZES = (8, 64, 512)


def mlp(w1, w2, x, y):
    h = np.tanh(x @ w1)
    return np.sum((h @ w2 - y) ** 2)


def conv(w1, w2, x, y):
    h = ops.conv2d(x[None], w1, pad_mode="same")
    h = ops.max_pool2d(np.maximum(h, 0.0), 2)
    return np.sum((h.reshape(-1) @ w2 - y) ** 2)


def xent(w, b, x, label):
    logits = x @ w + b
    logp = logits - np.log(np.sum(np.exp(logits)))
    return -logp[label]


def _mlp_case(rng, n):
    return ((rng.normal(size=(16, 32)) * 0.3, rng.normal(size=(32, 4)) * 0.3),
            (rng.normal(size=(n, 16)), rng.normal(size=(n, 4))))


def _conv_case(rng, n):
    return ((rng.normal(size=(4, 1, 3, 3)) * 0.3, rng.normal(size=(64, 4)) * 0.1),
            (rng.normal(size=(n, 1, 8, 8)), rng.normal(size=(n, 4))))


def _xent_case(rng, n):
    return ((rng.normal(size=(16, 10)) * 0.3, np.zeros(10)),
            (rng.normal(size=(n, 16)), rng.integers(0, 10, size=n)))


#: name -> (loss, ``make(rng, n) -> (weights, (xs, ys))``)
CASES = {"mlp": (mlp, _mlp_case), "conv": (conv, _conv_case), "xent": (xent, _xent_case)}


def measure(rounds=20, target_ns=2_000_000, cases=tuple(CASES)):
    """``[(case, batch, vmap µs, loop µs)]``, after checking both give the same numbers."""
    import ad_compiler as ms
    rng = np.random.default_rng(0)
    rows = []
    for case in cases:
        loss, make = CASES[case]
        grad = ms.grad(loss, grad_position=(0, 1))
        per_example = ms.vmap(grad, in_axes=(None, None, 0, 0))
        for n in SIZES:
            (w1, w2), (xs, ys) = make(rng, n)

            def looped(w1, w2, xs, ys):
                return [grad(w1, w2, x, y) for x, y in zip(xs, ys)]
            g1, g2 = per_example(w1, w2, xs, ys)
            want = looped(w1, w2, xs, ys)
            if not (np.allclose(g1, [a for a, _ in want])
                    and np.allclose(g2, [b for _, b in want])):
                raise SystemExit(f"{case}: vmap(grad) differs from the loop of grad calls")
            us = time_side_by_side([(per_example, (w1, w2, xs, ys)),
                                    (looped, (w1, w2, xs, ys))], rounds, target_ns)
            rows.append((case, n, us[0] / 1e3, us[1] / 1e3))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vmap")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--cases", default=",".join(CASES),
                        help=f"comma-separated, of {', '.join(CASES)}")
    args = parser.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    print(f"{'case':>5} {'batch':>6} {'vmap(grad) µs':>15} {'loop of grad µs':>17} "
          f"{'loop / vmap':>12}")
    for case, n, vm, lp in measure(args.rounds, cases=cases):
        print(f"{case:>5} {n:>6} {vm:>15.1f} {lp:>17.1f} {lp / vm:>11.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
