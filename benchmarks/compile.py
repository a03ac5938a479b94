"""Compile time: per pipeline stage, per program size, and ``import ad_compiler``.

    python -m benchmarks.compile                  # sizes 10, 100, 1000, 3000 + 30-line + import
    python -m benchmarks.compile --sizes 10,100   # fewer sizes
    python -m benchmarks.compile --stages         # also the per-stage table of each size
    python -m benchmarks.compile --loops 10,100   # also loops of 10 and 100 statements
    python -m benchmarks.compile --workloads      # also the benchmark workloads

Every measurement runs in a fresh Python process (``python -m benchmarks.compile
--one ...``), so each is a *cold first call*: the first gradient compiled after
``import ad_compiler``, with whatever the compiler imports or builds on first use.
Both wall time and CPU time (``time.process_time``) are reported: on a shared
machine CPU time is the steadier of the two. The fresh processes read bytecode from a
cache of their own (``PYTHONPYCACHEPREFIX``, filled by a first import), as an installed
package does, even where ``PYTHONDONTWRITEBYTECODE`` is set.

Programs: ``straight_line(n)`` is a function of ``n`` statements written as a user
would (elementwise ops, matmul, reductions, slicing, transposes) on 4x4 arrays, every
value used later (``--loops``: the same statements as the body of a data-dependent
``while`` loop); ``realistic()`` a 30-line two-layer network with layer norm, a
softmax cross-entropy and a weight penalty. The slope is that of log(time) against
log(statements) between the smallest and the largest size: 1.0 is linear.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

_TEMPLATES = (
    "{a} = np.sin({p}) * {q} + 0.5",
    "{a} = np.tanh({p} @ w)",
    "{a} = {p} - np.mean({q}, axis=0)",
    "{a} = np.concatenate([{p}[1:], {q}[:1]])",
    "{a} = {p} * np.sum({q}) * 0.01",
    "{a} = np.exp(-{p} * {p}) + {q}.T",
    "{a} = ({p} + {q}[:, ::-1]) / 2.0",
    "{a} = np.cos({p}) ** 2 + {q}",
)

REALISTIC = '''\
import numpy as np


def realistic(x, w1, w2, labels):
    """A two-layer network with layer norm, softmax cross-entropy and a penalty."""
    n = x.shape[0]
    h = x @ w1
    mu = np.mean(h, axis=1, keepdims=True)
    var = np.mean((h - mu) ** 2, axis=1, keepdims=True)
    h = (h - mu) / np.sqrt(var + 1e-5)
    h = np.tanh(h)
    skip = h[:, ::-1] * 0.1
    h = h + skip
    z = h @ w2
    z = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(z)
    p = e / np.sum(e, axis=1, keepdims=True)
    logp = z - np.log(np.sum(e, axis=1, keepdims=True))
    nll = -np.sum(labels * logp) / n
    confidence = np.mean(np.max(p, axis=1))
    entropy = -np.sum(p * logp) / n
    l2 = np.sum(w1 * w1) + np.sum(w2 * w2)
    l1 = np.sum(np.abs(w2))
    smooth = np.sum((w1[1:] - w1[:-1]) ** 2)
    wide = np.concatenate([w1, w1 * 0.5], axis=1)
    spread = np.sum(wide.T @ wide) * 1e-3
    gate = 1.0 / (1.0 + np.exp(-np.sum(h, axis=0)))
    gated = np.sum(gate * np.mean(h, axis=0))
    penalty = 1e-4 * l2 + 1e-5 * l1 + 1e-3 * smooth
    loss = nll + 0.01 * entropy + penalty + spread + 0.1 * gated
    loss = loss - 0.0 * confidence
    return loss
'''


def straight_line_source(n: int, seed: int = 0) -> str:
    """The source of ``f(x, w)``: ``n`` assignments, then a return (``n + 1`` lines)."""
    rng = random.Random(seed)
    lines = ["import numpy as np", "", "", "def f(x, w):", "    a0 = x * w"]
    for i in range(1, n):
        p = f"a{i - 1}"
        q = "x" if i < 2 else f"a{rng.randrange(max(0, i - 8), i - 1)}"
        lines.append("    " + _TEMPLATES[i % len(_TEMPLATES)].format(a=f"a{i}", p=p, q=q))
    lines.append(f"    return np.sum(a{n - 1})")
    return "\n".join(lines) + "\n"


def loop_source(n: int, seed: int = 0) -> str:
    """``f(x, w)`` whose ``n`` statements run in a data-dependent ``while`` loop."""
    lines = straight_line_source(n, seed).splitlines()[4:-1]  # a0 = ... a{n-1} = ...
    body = ["        " + ln.strip() for ln in lines]
    return "\n".join(["import numpy as np", "", "", "def f(x, w):", "    k = 0",
                      "    while np.sum(x * x) < 1e6 and k < 3:", "        k = k + 1",
                      *body, f"        x = np.tanh(a{n - 1})", "    return np.sum(x)"]) + "\n"


def _load(source: str, name: str):
    """Write ``source`` to a module file and import it (the compiler reads the file)."""
    directory = tempfile.mkdtemp(prefix="ad_bench_")
    path = os.path.join(directory, f"{name}_module.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"{name}_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def straight_line(n: int, loop: bool = False):
    """``(f, args)``: the ``n``-statement function (in a loop) and its inputs."""
    rng = np.random.default_rng(0)
    source = loop_source(n) if loop else straight_line_source(n)
    return _load(source, "f"), (rng.standard_normal((4, 4)), rng.standard_normal((4, 4)) * 0.5)


def realistic():
    """``(f, args)``: the 30-line function and its inputs."""
    rng = np.random.default_rng(0)
    labels = np.eye(4)[[0, 2, 1, 3, 0]]
    return _load(REALISTIC, "realistic"), (rng.standard_normal((5, 3)),
                                           rng.standard_normal((3, 6)) * 0.5,
                                           rng.standard_normal((6, 4)) * 0.5, labels)


def measure_one(program: str) -> dict:
    """In this (fresh) process: import, then compile ``program`` once, timing each stage."""
    wall, cpu = time.perf_counter(), time.process_time()
    import ad_compiler as ms
    from ad_compiler.stages import stage_times
    imported = (time.perf_counter() - wall, time.process_time() - cpu)
    if program == "realistic":
        fn, args = realistic()
        positions, statements = (0, 1, 2), 30
    elif program.startswith("workload:"):
        fn, args, positions = _workload(program.partition(":")[2])
        statements = 0
    else:
        statements = int(program.rpartition(":")[2])
        fn, args = straight_line(statements, loop=program.startswith("loop:"))
        positions = (0, 1)
    g = ms.grad(fn, grad_position=positions)
    with stage_times() as times:
        wall, cpu = time.perf_counter(), time.process_time()
        g(*args)
        first = (time.perf_counter() - wall, time.process_time() - cpu)
    wall, cpu = time.perf_counter(), time.process_time()
    g(*args)
    steady = (time.perf_counter() - wall, time.process_time() - cpu)
    return {"program": program, "statements": statements, "import": imported,
            "first": first, "steady": steady, "stages": times.totals(),
            "report": times.report()}


def _workload(name: str):
    from benchmarks.control_workloads import CONTROL_WORKLOADS
    from benchmarks.workloads import WORKLOADS
    w = next(w for w in list(WORKLOADS) + list(CONTROL_WORKLOADS) if w.name == name)
    return w.fn, w.make_inputs("tiny", np.random.default_rng(0)), w.grad_position


def run_fresh(program: str) -> dict:
    """:func:`measure_one` in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.compile", "--one", program],
                         capture_output=True, text=True, check=True, cwd=_root(), env=_env())
    return json.loads(out.stdout.splitlines()[-1])


def _env() -> dict:
    """The environment of the fresh interpreters: bytecode cached in a directory of
    the benchmark's own (written by the first of them)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "ad_compiler_bench_pycache")
    return env


def warm_bytecode() -> None:
    """Fill the bytecode cache: compile a gradient once (lazy imports included)."""
    run_fresh("10")


def import_time(module: str = "ad_compiler", repeat: int = 5) -> tuple:
    """Median (wall, cpu) seconds of ``import module`` in fresh interpreters."""
    code = (f"import time; w, c = time.perf_counter(), time.process_time(); import {module}; "
            "print(time.perf_counter() - w, time.process_time() - c)")
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, cwd=_root(), env=_env())
        runs.append(tuple(float(t) for t in out.stdout.split()))
    return tuple(sorted(r[i] for r in runs)[len(runs) // 2] for i in range(2))


def _root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def slope(points) -> float:
    """Log-log slope of time against statements between the first and last point."""
    (n0, t0), (n1, t1) = points[0], points[-1]
    return math.log(t1 / t0) / math.log(n1 / n0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="compile-time benchmark")
    parser.add_argument("--sizes", default="10,100,1000,3000")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per program")
    parser.add_argument("--stages", action="store_true", help="print each stage table")
    parser.add_argument("--workloads", action="store_true",
                        help="also the cold first call of each benchmark workload")
    parser.add_argument("--loops", default="",
                        help="also these sizes with the statements in a while loop (10,100)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one)))
        return 0
    warm_bytecode()
    wall, cpu = import_time("numpy")
    print(f"import numpy:       {wall * 1e3:.1f} ms wall, {cpu * 1e3:.1f} ms cpu")
    wall, cpu = import_time()
    print(f"import ad_compiler: {wall * 1e3:.1f} ms wall, {cpu * 1e3:.1f} ms cpu "
          "(numpy included; medians of 5 fresh processes)\n")
    programs = ["realistic"] + args.sizes.split(",")
    programs += [f"loop:{n}" for n in args.loops.split(",") if n]
    if args.workloads:
        from benchmarks.control_workloads import CONTROL_WORKLOADS
        from benchmarks.workloads import WORKLOADS
        programs += [f"workload:{w.name}" for w in list(WORKLOADS) + list(CONTROL_WORKLOADS)
                     if w.name != "identity"]
    print(f"{'program':<32}{'first call ms':>14}{'cpu ms':>10}{'ms/stmt':>9}{'cpu/stmt':>10}")
    points, loop_points = [], []
    for program in programs:
        runs = sorted((run_fresh(program) for _ in range(args.repeat)),
                      key=lambda r: r["first"][1])
        best = runs[len(runs) // 2]  # the median by CPU time
        n = best["statements"]
        wall, cpu = best["first"]
        per = f"{wall * 1e3 / n:>9.2f}{cpu * 1e3 / n:>10.2f}" if n and program != "realistic" \
            else " " * 19
        print(f"{program:<32}{wall * 1e3:>14.1f}{cpu * 1e3:>10.1f}{per}")
        if args.stages:
            print("\n".join("    " + line for line in best["report"].splitlines()))
        if program.isdigit():
            points.append((n, cpu))
        elif program.startswith("loop:"):
            loop_points.append((n, cpu))
    for what, pts in (("", points), (" (loops)", loop_points)):
        if len(pts) > 1:
            print(f"\nlog-log slope of CPU time{what}, {pts[0][0]} to {pts[-1][0]} statements: "
                  f"{slope(pts):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
