"""Logistic regression on more data than the workers may hold, with Dask on a LocalCluster.

The data (``--rows`` x 8 float64, 1.3 GB at the default 20 million rows) is never in
memory at once: it is a lazy ``dask.array`` generated chunk by chunk on the workers,
whose memory is capped (``--memory-limit`` each, 2 workers by default). Each step
compiles nothing new: ``ms.value_and_grad(loss)`` was compiled once for the signature,
and every call builds a lazy graph of the same generated gradient, which the cluster
computes chunk by chunk, with a progress bar from Dask's diagnostics.

    python examples/dask_logistic.py                       # 20M rows, 5 steps
    python examples/dask_logistic.py --rows 200000 --steps 20 --chunk 50000

Needs the dask extra: ``pip install ".[dask]"``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ad_compiler as ms


def loss(w, b, X, y):
    z = X @ w + b
    # log(1 + exp(-z)) written stably; y is 0 or 1
    return np.mean(np.logaddexp(0.0, z) - y * z)


def make_data(rows: int, chunk: int, seed: int):
    """Features and labels of a known linear model with label noise, generated lazily."""
    import dask.array as da
    rs = da.random.RandomState(seed)
    X = rs.normal(size=(rows, 8), chunks=(chunk, 8))
    true_w = np.array([1.5, -2.0, 0.5, 0.0, 1.0, -0.5, 0.25, 0.0])
    noise = rs.logistic(size=rows, chunks=chunk)
    y = (X @ true_w + 0.3 + noise > 0).astype(np.float64)
    return X, y, true_w


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=20_000_000)
    p.add_argument("--chunk", type=int, default=1_000_000)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--lr", type=float, default=2.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--memory-limit", default="400MiB", help="per worker")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    args = p.parse_args(argv)

    from distributed import Client, LocalCluster, progress
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           memory_limit=args.memory_limit, dashboard_address=None)
    client = Client(cluster)
    X, y, true_w = make_data(args.rows, args.chunk, args.seed)
    size_gb = X.nbytes / 1e9
    budget_gb = args.workers * _bytes(args.memory_limit) / 1e9
    print(f"data: {X.shape[0]:,} x {X.shape[1]} float64 = {size_gb:.2f} GB, "
          f"workers' memory: {args.workers} x {args.memory_limit} = {budget_gb:.2f} GB")

    value_and_grad = ms.value_and_grad(loss, grad_position=(0, 1))
    w, b = np.zeros(8), 0.0
    try:
        for step in range(1, args.steps + 1):
            start = time.perf_counter()
            value, (gw, gb) = value_and_grad(w, b, X, y)   # lazy: nothing computed yet
            futures = client.compute([value, gw, gb])
            if not args.quiet:
                progress(futures)
                print()
            value, gw, gb = client.gather(futures)
            w, b = w - args.lr * gw, b - args.lr * float(gb)
            print(f"step {step}: loss {float(value):.5f}  "
                  f"({time.perf_counter() - start:.1f} s)")
    finally:
        client.close()
        cluster.close()
    print("w:", np.round(w, 3).tolist(), " b:", round(b, 3))
    print("true w:", true_w.tolist(), " b: 0.3")
    return {"w": w, "b": b, "loss": float(value)}


def _bytes(text: str) -> int:
    units = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "KB": 10**3, "MB": 10**6, "GB": 10**9}
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[:-len(unit)]) * factor)
    return int(text)


if __name__ == "__main__":
    main()
