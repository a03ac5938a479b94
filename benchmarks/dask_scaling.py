"""Dask gradients on a LocalCluster: scaling with workers and rows, and the overhead
against a hand-written Dask gradient of the same loss.

    python -m benchmarks.dask_scaling                  # rows 1M and 4M, 1 and 2 workers
    python -m benchmarks.dask_scaling --rows 500000 --repeat 3

For each cluster size (worker processes of one thread) and row count, the data (rows
x 8 float64, chunks of 250,000 rows) is generated on the workers and kept there
(``persist``); then, alternately in one run, ad_compiler's ``grad`` and the
hand-written gradient are built on the client and computed on the cluster. Reported:
the median seconds of each (build + compute), their ratio, and the client-side build
time of ad_compiler's graph alone. Needs the dask extra (``pip install ".[dask]"``).
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import ad_compiler as ms


def loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def hand_gradient(w, X, y):
    """The gradient of ``loss`` as a person writes it with Dask."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p - y) / X.shape[0]


def _time(client, build, repeat):
    builds, totals = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        g = build()
        built = time.perf_counter()
        client.compute(g).result()
        totals.append(time.perf_counter() - start)
        builds.append(built - start)
    return statistics.median(totals), statistics.median(builds)


def run(rows_list, workers_list, repeat, chunk):
    import dask.array as da
    from distributed import Client, LocalCluster
    results = []
    for workers in workers_list:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        try:
            for rows in rows_list:
                rs = da.random.RandomState(0)
                X = rs.normal(size=(rows, 8), chunks=(chunk, 8))
                y = (rs.uniform(size=rows, chunks=chunk) > 0.5).astype(np.float64)
                X, y = client.persist([X, y])
                w = np.linspace(-0.5, 0.5, 8)
                grad = ms.grad(loss)
                np.testing.assert_allclose(client.compute(grad(w, X, y)).result(),
                                           client.compute(hand_gradient(w, X, y)).result(),
                                           rtol=1e-9)
                ad, hand = [], []
                for _ in range(repeat):  # alternately, so both see the same machine
                    ad.append(_time(client, lambda: grad(w, X, y), 1))
                    hand.append(_time(client, lambda: hand_gradient(w, X, y), 1))
                ad_s = statistics.median(t for t, _ in ad)
                hand_s = statistics.median(t for t, _ in hand)
                build_ms = 1e3 * statistics.median(b for _, b in ad)
                results.append((workers, rows, ad_s, hand_s, build_ms))
                print(f"{workers} worker(s) {rows:>10,} rows: ad_compiler {ad_s:7.3f} s  "
                      f"hand-written {hand_s:7.3f} s  ratio {ad_s / hand_s:5.2f}  "
                      f"(graph built in {build_ms:.1f} ms)", flush=True)
        finally:
            client.close()
            cluster.close()
    return results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 4_000_000])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--chunk", type=int, default=250_000)
    args = p.parse_args(argv)
    results = run(args.rows, args.workers, args.repeat, args.chunk)
    by = {(w, r): t for w, r, t, _, _ in results}
    for rows in args.rows:
        if (1, rows) in by and (2, rows) in by:
            print(f"{rows:,} rows: 1 -> 2 workers speed-up {by[1, rows] / by[2, rows]:.2f}x")
    return results


if __name__ == "__main__":
    main()
