"""The command line: ``python -m tests.fuzz --seeds 0:2000 [--features ...] [--jobs 2]``.

Prints the count of each outcome and one line per failure class, and writes a
self-contained reproduction of every failing program (shrunk with ``--shrink``)
to ``--out`` (default ``fuzz-failures/``).
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import signal
import sys
import time
import warnings

from .features import PENDING, STABLE
from .generator import FEATURES, generate
from .oracle import OUTCOMES, Outcome, check

TIMEOUT = 60


def run_seed(seed: int, features, shrink: bool = False):
    """(seed, outcome, reproduction or '') for one program."""
    program = _with_timeout(lambda: generate(seed, features), default=False)
    if program is False:
        return seed, Outcome("invalid program", "generation did not finish", "generate"), ""
    outcome = _with_timeout(lambda: check(program))
    text = ""
    if outcome.failed:
        if shrink:
            from .shrink import shrink as shrink_program
            program = _with_timeout(lambda: shrink_program(program, outcome), default=program)
            outcome = check(program)
        text = report(program, outcome)
    return seed, outcome, text


def _with_timeout(fn, default=None):
    def alarm(signum, frame):
        raise TimeoutError(f"no result after {TIMEOUT} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(TIMEOUT)
    try:
        return fn()
    except TimeoutError as e:
        return default if default is not None else Outcome("internal error", str(e), "timeout")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def report(program, outcome) -> str:
    """The reproduction printed for a failure."""
    return (f"# seed {program.seed}: {outcome.kind} ({outcome.stage})\n"
            f"# features: {', '.join(program.features)}\n"
            + "".join(f"# {ln}\n" for ln in outcome.detail.splitlines())
            + program.reproduction() + outcome.extra)


def parse_features(text: str):
    """Comma-separated feature names; 'all' and 'stable' (all but PENDING) expand."""
    names: list = []
    for token in (t.strip() for t in (text or "all").split(",") if t.strip()):
        names += {"all": FEATURES, "stable": STABLE}.get(token, (token,))
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise SystemExit(f"unknown features {unknown}; known: {', '.join(FEATURES)}")
    return tuple(dict.fromkeys(names))


def parse_seeds(text: str) -> range:
    start, _, stop = text.partition(":")
    return range(int(start), int(stop)) if stop else range(int(start), int(start) + 1)


def _work(job):
    seed, features, shrink = job
    warnings.simplefilter("ignore")      # generated gradients may warn; results are checked
    return run_seed(seed, features, shrink)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    p.add_argument("--seeds", default="0:200", help="START:STOP (default 0:200)")
    p.add_argument("--features", default="all",
                   help=f"comma-separated features; 'all', 'stable' (all but PENDING: "
                        f"{', '.join(sorted(PENDING))}) expand")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--shrink", action="store_true", help="shrink failing programs")
    p.add_argument("--out", default="fuzz-failures", help="directory for reproductions")
    args = p.parse_args(argv)
    features = parse_features(args.features)
    seeds = parse_seeds(args.seeds)
    jobs = [(s, features, args.shrink) for s in seeds]
    counts, classes = collections.Counter(), collections.defaultdict(list)
    refusals = collections.Counter()
    os.makedirs(args.out, exist_ok=True)
    start = time.time()
    if args.jobs > 1:
        pool = multiprocessing.Pool(args.jobs, maxtasksperchild=200)
        results = pool.imap_unordered(_work, jobs, chunksize=4)
    else:
        results = map(_work, jobs)
    for done, (seed, outcome, text) in enumerate(results, 1):
        if done % 500 == 0:
            print(f"... {done} programs, {time.time() - start:.0f} s: {dict(counts)}",
                  file=sys.stderr, flush=True)
        counts[outcome.kind] += 1
        if outcome.kind == "located refusal":
            refusals[outcome.signature()] += 1
        if outcome.failed:
            classes[outcome.signature()].append(seed)
            with open(os.path.join(args.out, f"seed_{seed}.py"), "w") as fh:
                fh.write(text)
    print(f"{len(seeds)} programs in {time.time() - start:.0f} s, features: {args.features}")
    for kind in OUTCOMES:
        print(f"  {kind:22} {counts[kind]}")
    if refusals:
        print("located refusals:")
        for sig, n in refusals.most_common(15):
            print(f"  {n:5}  {sig}")
    if classes:
        print(f"failure classes (reproductions in {args.out}/):")
        for sig, found in sorted(classes.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(found):5}  {sig}  seeds {sorted(found)[:5]}")
    return 1 if classes else 0


if __name__ == "__main__":
    sys.exit(main())
