"""Time compiled gradients against hand-written NumPy gradients.

Usage::

    python -m benchmarks.run [--quick] [--rounds N]
    python benchmarks/run.py [--quick] [--rounds N]

Steps:

1. Check every hand-written gradient against finite differences.
2. For each workload and size, build ``ad_compiler.grad(fn, grad_position=...)``,
   time its first call (compile time: first call minus a steady call) and check it agrees with the hand-written
   gradient. Any error or mismatch is reported and the run exits with status 1.
3. Time compiled and hand-written gradients interleaved: each round runs one
   batch of each, in alternating order; per-call medians over rounds are
   compared as the ratio compiled / hand-written.
4. Measure the cache-hit overhead of the gradient function and check the targets.

Performance targets are reported as PASS/FAIL but do not change the exit
status: timings on a shared machine are noisy.
"""
from __future__ import annotations

import argparse
import gc
import math
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.workloads import (  # noqa: E402
    IDENTITY, SIZES, WORKLOADS, Workload, as_grad_tuple, positions,
    verify_handwritten)

TARGET_GEOMEAN = 1.25
TARGET_TINY_MAX = 1.5
TARGET_COMPILE_MS = 50.0
TARGET_CACHE_HIT_US = 5.0
TARGET_MEDIUM_MAX = 1.3   # control flow, indexing and scalar workloads, at medium size

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

    @property
    def label(self):
        return f"{self.workload.name} [{self.size}]"

    @property
    def ratio(self):
        return self.compiled_us / self.hand_us


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


def time_interleaved(fn_a, fn_b, args, rounds, target_ns):
    """Median per-call nanoseconds of ``fn_a`` and ``fn_b``, timed side by side.

    Each round runs one batch of each function; the order alternates between
    rounds so neither always runs first. The batch size is set by ``fn_b``.
    """
    n = calls_per_batch(fn_b, args, target_ns)
    run_batch(fn_a, args, n)  # warm-up
    times_a, times_b = [], []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            order = [(fn_a, times_a), (fn_b, times_b)]
            for fn, times in order if r % 2 == 0 else reversed(order):
                times.append(run_batch(fn, args, n) / n)
    finally:
        if gc_was_enabled:
            gc.enable()
    return statistics.median(times_a), statistics.median(times_b)


def time_cases(cases, rounds, target_ns):
    for case in cases:
        compiled_ns, hand_ns = time_interleaved(
            case.grad_fn, case.workload.grad, case.inputs, rounds, target_ns)
        case.compiled_us, case.hand_us = compiled_ns / 1e3, hand_ns / 1e3
        # the first call also ran the gradient once: charge only the compilation
        case.compile_ms = max(0.0, case.compile_ms - case.compiled_us / 1e3)


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
    grad_ns, base_ns = time_interleaved(grad_fn, baseline, args, rounds, target_ns)
    return (grad_ns - base_ns) / 1e3, how


# --- report -------------------------------------------------------------------

def geomean(values):
    values = list(values)
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else math.nan


def print_table(cases):
    head = f"{'workload':<22}{'size':<7}{'hand µs':>11}{'compiled µs':>13}" \
           f"{'ratio':>8}{'compile ms':>12}"
    print(head)
    print("-" * len(head))
    for c in cases:
        print(f"{c.workload.name:<22}{c.size:<7}{c.hand_us:>11.1f}{c.compiled_us:>13.1f}"
              f"{c.ratio:>8.2f}{c.compile_ms:>12.1f}")


def print_summary(cases, hit_us, hit_how):
    """Print ratio statistics and the targets; return True if all targets pass."""
    per_size = {s: geomean(c.ratio for c in cases if c.size == s) for s in SIZES
                if any(c.size == s for c in cases)}
    overall = geomean(c.ratio for c in cases if c.size in ("tiny", "large"))
    medium = [c for c in cases if c.size == "medium"]
    worst_medium = max(medium, key=lambda c: c.ratio) if medium else None
    worst_tiny = max((c for c in cases if c.size == "tiny"), key=lambda c: c.ratio)
    slowest = max(cases, key=lambda c: c.compile_ms)
    print("\ngeometric mean of ratios: "
          + ", ".join(f"{s} {r:.2f}" for s, r in per_size.items())
          + f", tiny and large together {overall:.2f}")
    print(f"max ratio at tiny size: {worst_tiny.ratio:.2f} ({worst_tiny.workload.name})")
    print(f"cache-hit overhead: {hit_us:.2f} µs ({hit_how})")
    checks = [
        (overall <= TARGET_GEOMEAN, f"geometric mean of ratios <= {TARGET_GEOMEAN}",
         f"{overall:.2f}"),
        (worst_tiny.ratio <= TARGET_TINY_MAX, f"no tiny-size ratio > {TARGET_TINY_MAX}",
         f"max {worst_tiny.ratio:.2f}, {worst_tiny.workload.name}"),
        (slowest.compile_ms <= TARGET_COMPILE_MS, f"compile <= {TARGET_COMPILE_MS:g} ms",
         f"max {slowest.compile_ms:.1f} ms, {slowest.label}"),
        (hit_us <= TARGET_CACHE_HIT_US, f"cache hit <= {TARGET_CACHE_HIT_US:g} µs",
         f"{hit_us:.2f} µs"),
    ]
    if worst_medium is not None:
        checks.append((worst_medium.ratio <= TARGET_MEDIUM_MAX,
                       f"no medium-size ratio > {TARGET_MEDIUM_MAX}",
                       f"max {worst_medium.ratio:.2f}, {worst_medium.workload.name}"))
    print("\ntargets:")
    for ok, target, value in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {target:<34} ({value})")
    passed = all(ok for ok, _, _ in checks)
    print(f"overall: {'PASS' if passed else 'FAIL'}")
    return passed


# --- main ---------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="Compare compiled gradients with hand-written NumPy gradients.")
    parser.add_argument("--quick", action="store_true",
                        help="fast smoke run: few rounds, short batches")
    parser.add_argument("--rounds", type=int, default=None,
                        help="timing rounds per workload (default 30, 5 with --quick)")
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 5 if args.quick else 30
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    args.batch_ns = 1_000_000 if args.quick else 3_000_000
    return args


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
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{args.rounds} rounds, batches of ~{args.batch_ns / 1e6:g} ms\n")
    time_cases(cases, args.rounds, args.batch_ns)
    hit_us, hit_how = cache_hit_overhead(grad, args.rounds, args.batch_ns, rng)
    print_table(cases)
    print_summary(cases, hit_us, hit_how)
    return 0


if __name__ == "__main__":
    sys.exit(main())
