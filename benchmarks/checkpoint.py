"""Peak memory of the gradient of a long loop, with and without ``ms.checkpoint``.

Usage::

    python -m benchmarks.checkpoint [--steps 1024] [--size 1000]

``plain(x, w)`` runs ``x = np.tanh(x * w + 0.1)`` for ``steps`` iterations on a
``size``-element ``x``: its gradient keeps the loop's tape, one array per
iteration, from the forward sweep to the backward sweep. ``segmented(x, w)``
runs the same iterations as ``sqrt(steps)`` calls of a checkpointed segment:
the forward sweep keeps only each segment's input, and the backward sweep
recomputes one segment at a time, its tape freed before the next one. Both
gradients are checked to agree; the peak traced memory of one gradient call
(``tracemalloc``, after a warm-up call) is printed side by side.
"""
from __future__ import annotations

import argparse
import math
import sys
import tracemalloc
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ad_compiler as ms  # noqa: E402

STEPS = 1024
SEGMENTS = 32


def plain(x, w):
    for _ in range(STEPS):
        x = np.tanh(x * w + 0.1)
    return np.sum(x * x)


@ms.checkpoint
def segment(x, w):
    for _ in range(STEPS // SEGMENTS):
        x = np.tanh(x * w + 0.1)
    return x


def segmented(x, w):
    for _ in range(SEGMENTS):
        x = segment(x, w)
    return np.sum(x * x)


def peak_bytes(fn, *args) -> int:
    """Peak traced memory of one call of ``fn`` (after a warm-up call)."""
    fn(*args)
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main(argv=None) -> int:
    global STEPS, SEGMENTS
    p = argparse.ArgumentParser(prog="python -m benchmarks.checkpoint", description=__doc__)
    p.add_argument("--steps", type=int, default=STEPS)
    p.add_argument("--size", type=int, default=1000)
    args = p.parse_args(argv)
    STEPS, SEGMENTS = args.steps, max(1, math.isqrt(args.steps))
    STEPS -= STEPS % SEGMENTS
    rng = np.random.default_rng(0)
    x, w = rng.uniform(-1, 1, args.size), rng.uniform(0.5, 1.0, args.size)
    g_plain = ms.grad(plain, grad_position=(0, 1))
    g_ckpt = ms.grad(segmented, grad_position=(0, 1))
    for a, b in zip(g_plain(x, w), g_ckpt(x, w)):
        if not np.allclose(a, b, rtol=1e-12, atol=1e-14):
            print("!!! checkpointed gradient differs from the plain one")
            return 1
    array = x.nbytes
    print(f"{STEPS} iterations on {args.size} float64 ({array / 1e3:.0f} kB per array); "
          f"checkpoint: {SEGMENTS} segments of {STEPS // SEGMENTS}")
    print(f"{'gradient':28} {'peak MB':>9} {'arrays':>8}")
    for name, fn in (("plain loop", g_plain), ("ms.checkpoint segments", g_ckpt)):
        peak = peak_bytes(fn, x, w)
        print(f"{name:28} {peak / 1e6:9.2f} {peak / array:8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
