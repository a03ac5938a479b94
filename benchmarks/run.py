"""Time compiled gradients against hand-written NumPy gradients and other autodiff systems.

Usage::

    python -m benchmarks.run [--quick] [--rounds N] [--peers all|none|NAME,...] [--plot FILE]
    python benchmarks/run.py ...

Steps:

1. Check every hand-written gradient against finite differences.
2. For each workload and size, build ``ad_compiler.grad(fn, grad_position=...)``,
   time its first call (compile time: first call minus a steady call) and check it agrees with the hand-written
   gradient. Any error or mismatch is reported and the run exits with status 1.
3. Build each installed peer (benchmarks/peers.py: autograd, JAX with and without
   jit, PyTorch) on the same forward function; a peer that cannot run a workload
   or disagrees with the hand-written gradient is reported and not timed.
4. Time everything side by side: each round runs one batch of each callable (the
   hand-written gradient twice: the second copy's ratio, the A/A column, is the
   noise of the measurement), in a new order each round; per-call medians over rounds
   are compared as ratios to the hand-written gradient.
5. Measure the cache-hit overhead of the gradient function and check the targets.

Performance targets are reported as PASS/FAIL but do not change the exit
status: timings on a shared machine are noisy. BLAS, PyTorch and XLA are held to
one thread each (set before NumPy is imported), so the ratios compare the same
single core.
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # before NumPy is imported: one core for everyone
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.peers import PEERS, prepare  # noqa: E402
from benchmarks.workloads import (  # noqa: E402
    IDENTITY, SIZES, WORKLOADS, Workload, as_grad_tuple, positions,
    verify_handwritten)

TARGET_GEOMEAN = 1.00      # over every workload and size
TARGET_TINY_GEOMEAN = 1.15
TARGET_CASE_MAX = 1.25     # no single workload at any size above it
TARGET_COMPILE_MS = 20.0
TARGET_CACHE_HIT_US = 0.5

# Names under which a gradient function may expose the compiled function it
# runs on a cache hit (same arguments, same result). The first that exists and
# gives the same gradient is used.
COMPILED_ATTRS = ("compiled", "compiled_fn", "_compiled", "__compiled__")


@dataclass
class Case:
    """One workload at one size, with its compiled gradient and timings."""

    workload: Workload
    size: str
    inputs: tuple
    grad_fn: object
    compile_ms: float
    hand_us: float = math.nan
    compiled_us: float = math.nan
    aa_us: float = math.nan      # the hand-written gradient timed a second time
    peers: dict = field(default_factory=dict)   # name -> (call, args) to time, or why not
    peer_us: dict = field(default_factory=dict)  # name -> µs

    @property
    def label(self):
        return f"{self.workload.name} [{self.size}]"

    @property
    def ratio(self):
        return self.compiled_us / self.hand_us

    @property
    def aa(self):
        return self.aa_us / self.hand_us

    def peer_ratio(self, name):
        us = self.peer_us.get(name)
        return math.nan if us is None else us / self.hand_us


# --- correctness --------------------------------------------------------------

def mismatch(got, want, grad_position):
    """Describe how ``got`` differs from the hand-written ``want``, or None."""
    try:
        got = as_grad_tuple(got, grad_position)
    except TypeError as exc:
        return str(exc)
    want = as_grad_tuple(want, grad_position)
    for pos, g, h in zip(positions(grad_position), got, want):
        where = f"gradient w.r.t. argument {pos}"
        if isinstance(h, float):
            if not isinstance(g, float):
                return f"{where}: expected a Python float, got {type(g).__name__}"
            if not np.isclose(g, h):
                return f"{where}: {g!r}, expected {h!r}"
            continue
        if not isinstance(g, np.ndarray) or g.dtype != h.dtype:
            return f"{where}: expected a {h.dtype} ndarray, got {type(g).__name__} " \
                   f"{getattr(g, 'dtype', '')}"
        if g.shape != h.shape:
            return f"{where}: shape {g.shape}, expected {h.shape}"
        if not np.allclose(g, h):
            return f"{where}: max abs error {np.max(np.abs(g - h)):.3g}"
    return None


def compile_case(grad, workload, size, rng):
    """Build the compiled gradient and time its first call.

    Returns ``(case, None)``, or ``(None, problem)`` if the compiler raised or
    its gradient disagrees with the hand-written one.
    """
    inputs = workload.make_inputs(size, rng)
    label = f"{workload.name} [{size}]"
    want = workload.grad(*inputs)  # also warms NumPy up before the first timed call
    try:
        grad_fn = grad(workload.fn, grad_position=workload.grad_position)
        start = time.perf_counter()
        got = grad_fn(*inputs)
        compile_ms = (time.perf_counter() - start) * 1e3
    except Exception as exc:  # report every failing workload, not just the first
        return None, f"{label}: {type(exc).__name__}: {exc}"
    problem = mismatch(got, want, workload.grad_position)
    if problem:
        return None, f"{label}: {problem}"
    return Case(workload, size, inputs, grad_fn, compile_ms), None


def compile_all(grad, rng):
    """Compile and check every workload at every size; exit 1 on any problem.

    ``f(x) = x`` is compiled first, untimed, so that one-time start-up of the
    compiler is not charged to the first workload's compile time.
    """
    _, problem = compile_case(grad, IDENTITY, "tiny", rng)
    cases, problems = [], [problem] if problem else []
    from benchmarks.control_workloads import CONTROL_WORKLOADS
    for workload in [*WORKLOADS, *CONTROL_WORKLOADS]:
        for size in workload.sizes:
            case, problem = compile_case(grad, workload, size, rng)
            if problem:
                problems.append(problem)
            else:
                cases.append(case)
    if problems:
        fail("compiled gradient is missing or wrong", problems)
    return cases


def fail(title, problems):
    """Report problems loudly on stderr and exit with status 1."""
    bar = "!" * 72
    print(f"\n{bar}\nFAILED: {title}", file=sys.stderr)
    for problem in problems:
        print("  " + problem.replace("\n", "\n    "), file=sys.stderr)
    print(bar, file=sys.stderr)
    sys.exit(1)


# --- timing -------------------------------------------------------------------

def run_batch(fn, args, n):
    """Nanoseconds taken by ``n`` calls of ``fn(*args)``."""
    start = time.perf_counter_ns()
    for _ in range(n):
        fn(*args)
    return time.perf_counter_ns() - start


def calls_per_batch(fn, args, target_ns):
    """Calls of ``fn`` that take about ``target_ns``; also warms ``fn`` up."""
    n = 1
    elapsed = run_batch(fn, args, n)
    while elapsed < target_ns / 8:
        n *= 2
        elapsed = run_batch(fn, args, n)
    return max(1, round(n * target_ns / elapsed))


def time_side_by_side(calls, rounds, target_ns):
    """Median per-call nanoseconds of each ``(fn, args)`` in ``calls``, timed side by
    side: each round runs one batch of each, in a new order each round."""
    sizes = [calls_per_batch(fn, args, target_ns) for fn, args in calls]
    times = [[] for _ in calls]
    shuffle = np.random.default_rng(0)  # a new order each round, the same at every run:
    gc_was_enabled = gc.isenabled()     # no callable always follows the same other one
    gc.disable()
    try:
        for _ in range(rounds):
            for i in shuffle.permutation(len(calls)):
                fn, args = calls[i]
                times[i].append(run_batch(fn, args, sizes[i]) / sizes[i])
    finally:
        if gc_was_enabled:
            gc.enable()
    return [statistics.median(t) for t in times]


def time_cases(cases, rounds, target_ns):
    for case in cases:
        timed = {name: p for name, p in case.peers.items() if not isinstance(p, str)}
        calls = [(case.workload.grad, case.inputs), (case.grad_fn, case.inputs),
                 (case.workload.grad, case.inputs), *timed.values()]
        hand_ns, compiled_ns, aa_ns, *peer_ns = time_side_by_side(calls, rounds, target_ns)
        case.hand_us, case.compiled_us, case.aa_us = hand_ns / 1e3, compiled_ns / 1e3, aa_ns / 1e3
        case.peer_us = {name: ns / 1e3 for name, ns in zip(timed, peer_ns)}
        # the first call also ran the gradient once: charge only the compilation
        case.compile_ms = max(0.0, case.compile_ms - case.compiled_us / 1e3)


def prepare_peers(cases, peers):
    """Build each peer on each case (``case.peers``: what to time, or why not)."""
    for case in cases:
        want = case.workload.grad(*case.inputs)
        for peer in peers:
            call, args, why = prepare(peer, case.workload, case.inputs, want)
            case.peers[peer.name] = why if why else (call, args)


def exposed_compiled(grad_fn, args, expected):
    """The compiled function behind ``grad_fn`` and its attribute name, if exposed."""
    entry_for = getattr(grad_fn, "entry_for", None)
    if callable(entry_for):  # ad_compiler: the generated function of this signature
        generated = entry_for(args).compiled.fn
        if mismatch(generated(*args)[0], expected, 0) is None:
            return generated, "entry_for(args).compiled.fn"
    for attr in COMPILED_ATTRS:
        inner = getattr(grad_fn, attr, None)
        if not callable(inner):
            continue
        try:
            if mismatch(inner(*args), expected, 0) is None:
                return inner, attr
        except Exception:  # not callable like the gradient: try the next name
            continue
    return None, None


def cache_hit_overhead(grad, rounds, target_ns, rng):
    """Per-call µs the gradient function adds on a cache hit, and how it was measured.

    Uses ``f(x) = x`` at tiny size. If the gradient function exposes its compiled
    function, the baseline is a direct call of it; otherwise ``np.ones_like(x)``.
    """
    args = IDENTITY.make_inputs("tiny", rng)
    grad_fn = grad(IDENTITY.fn, grad_position=IDENTITY.grad_position)
    expected = grad_fn(*args)  # compiles; every later call is a cache hit
    problem = mismatch(expected, IDENTITY.grad(*args), IDENTITY.grad_position)
    if problem:
        fail("compiled gradient is wrong", [f"identity [tiny]: {problem}"])
    inner, attr = exposed_compiled(grad_fn, args, expected)
    if inner is not None:
        baseline, how = inner, f"grad call minus direct call of .{attr}"
    else:
        baseline, how = IDENTITY.grad, "grad of f(x)=x minus np.ones_like(x)"
    grad_ns, base_ns = time_side_by_side([(grad_fn, args), (baseline, args)], rounds,
                                         target_ns)
    return (grad_ns - base_ns) / 1e3, how


# --- report -------------------------------------------------------------------

def geomean(values):
    values = list(values)
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else math.nan


def print_table(cases, peers):
    names = [p.name for p in peers]
    head = (f"{'workload':<22}{'size':<7}{'hand µs':>10}{'A/A':>6}{'ad_compiler':>12}"
            + "".join(f"{n:>10}" for n in names) + f"{'compile ms':>12}")
    print(head)
    print("-" * len(head))
    for c in cases:
        cells = "".join(f"{_ratio(c.peer_ratio(n)):>10}" for n in names)
        print(f"{c.workload.name:<22}{c.size:<7}{c.hand_us:>10.1f}{c.aa:>6.2f}{c.ratio:>12.2f}"
              f"{cells}{c.compile_ms:>12.1f}")
    print("-" * len(head))
    print(f"{'geometric mean':<29}{'':>10}{geomean(c.aa for c in cases):>6.2f}"
          f"{geomean(c.ratio for c in cases):>12.2f}"
          + "".join(f"{_ratio(geomean(c.peer_ratio(n) for c in cases if n in c.peer_us)):>10}"
                    for n in names))
    print("(ratios: time / hand-written time; '-': the peer does not run the workload as "
          "written; A/A: the hand-written gradient against itself, the noise)")
    skipped = sorted({f"{n}: {c.workload.name}: {why}" for c in cases
                      for n, why in c.peers.items() if isinstance(why, str)})
    for line in skipped:
        print(f"  - {line}")


def _ratio(r) -> str:
    return "-" if math.isnan(r) else f"{r:.2f}"


def print_summary(cases, hit_us, hit_how):
    """Print ratio statistics and the targets; return True if all targets pass."""
    per_size = {s: geomean(c.ratio for c in cases if c.size == s) for s in SIZES
                if any(c.size == s for c in cases)}
    overall = geomean(c.ratio for c in cases)
    tiny = per_size.get("tiny", math.nan)
    worst = max(cases, key=lambda c: c.ratio)
    slowest = max(cases, key=lambda c: c.compile_ms)
    print("\ngeometric mean of ratios: "
          + ", ".join(f"{s} {r:.2f}" for s, r in per_size.items())
          + f", all {overall:.2f}")
    print(f"max ratio: {worst.ratio:.2f} ({worst.label})")
    print(f"cache-hit overhead: {hit_us:.2f} µs ({hit_how})")
    checks = [
        (overall <= TARGET_GEOMEAN, f"geometric mean of ratios <= {TARGET_GEOMEAN:.2f}",
         f"{overall:.2f}"),
        (tiny <= TARGET_TINY_GEOMEAN, f"tiny-size geometric mean <= {TARGET_TINY_GEOMEAN}",
         f"{tiny:.2f}"),
        (worst.ratio <= TARGET_CASE_MAX, f"no ratio > {TARGET_CASE_MAX}",
         f"max {worst.ratio:.2f}, {worst.label}"),
        (slowest.compile_ms <= TARGET_COMPILE_MS, f"compile <= {TARGET_COMPILE_MS:g} ms",
         f"max {slowest.compile_ms:.1f} ms, {slowest.label}"),
        (hit_us <= TARGET_CACHE_HIT_US, f"cache hit <= {TARGET_CACHE_HIT_US:g} µs",
         f"{hit_us:.2f} µs"),
    ]
    print("\ntargets:")
    for ok, target, value in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {target:<34} ({value})")
    passed = all(ok for ok, _, _ in checks)
    print(f"overall: {'PASS' if passed else 'FAIL'}")
    return passed


def plot(cases, peers, path):
    """Draw the ratios as grouped bars (log scale) into ``path`` (matplotlib)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("--plot needs matplotlib", ["pip install matplotlib (an optional extra: "
                                         "pip install -e '.[bench]')"])
    systems = ["A/A", "ad_compiler"] + [p.name for p in peers]
    values = {"A/A": [c.aa for c in cases], "ad_compiler": [c.ratio for c in cases]}
    values.update({p.name: [c.peer_ratio(p.name) for c in cases] for p in peers})
    fig, ax = plt.subplots(figsize=(max(8.0, 0.6 * len(cases)), 5))
    width = 0.8 / len(systems)
    for k, name in enumerate(systems):
        xs = [i + (k - (len(systems) - 1) / 2) * width for i in range(len(cases))]
        ax.bar(xs, [v if not math.isnan(v) else 0 for v in values[name]], width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(cases)), [c.label for c in cases], rotation=60, ha="right",
                  fontsize=8)
    ax.set_ylabel("time / hand-written NumPy time")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


# --- main ---------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="Compare compiled gradients with hand-written NumPy gradients.")
    parser.add_argument("--quick", action="store_true",
                        help="fast smoke run: few rounds, short batches")
    parser.add_argument("--rounds", type=int, default=None,
                        help="timing rounds per workload (default 30, 5 with --quick)")
    parser.add_argument("--peers", default="all",
                        help="other autodiff systems to time: all (those installed), none, "
                             "or a comma-separated list of " + ", ".join(p.name for p in PEERS))
    parser.add_argument("--plot", metavar="FILE", help="draw the ratios into FILE "
                        "(needs matplotlib)")
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 5 if args.quick else 30
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    args.batch_ns = 1_000_000 if args.quick else 3_000_000
    return args


def chosen_peers(spec):
    """The installed peers ``--peers`` names (one line for each missing one)."""
    known = {p.name: p for p in PEERS}
    if spec == "none":
        return []
    names = list(known) if spec == "all" else [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        fail("unknown --peers", [f"{n}: choose from {', '.join(known)}" for n in unknown])
    chosen = []
    for n in names:
        if known[n].available():
            chosen.append(known[n])
        else:
            print(f"{n}: not installed, skipped (pip install {known[n].module})")
    return chosen


def load_grad():
    """``ad_compiler.grad``, or exit 1 with the reason it is unavailable."""
    try:
        import ad_compiler
        return ad_compiler.grad
    except Exception as exc:
        fail("ad_compiler.grad is not available", [f"{type(exc).__name__}: {exc}"])


def main(argv=None):
    args = parse_args(argv)
    problems = verify_handwritten()
    if problems:
        fail("hand-written gradients disagree with finite differences", problems)
    print("hand-written gradients agree with finite differences")
    grad = load_grad()
    rng = np.random.default_rng(0)
    cases = compile_all(grad, rng)
    peers = chosen_peers(args.peers)
    prepare_peers(cases, peers)
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{args.rounds} rounds, batches of ~{args.batch_ns / 1e6:g} ms\n")
    time_cases(cases, args.rounds, args.batch_ns)
    hit_us, hit_how = cache_hit_overhead(grad, args.rounds, args.batch_ns, rng)
    print_table(cases, peers)
    print_summary(cases, hit_us, hit_how)
    if args.plot:
        plot(cases, peers, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
