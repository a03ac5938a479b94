"""Compile time of deeply nested user code: chains of helper calls and long expressions.

Usage::

    python -m benchmarks.depth            # chains of 250/500/1,000 helpers, 1,250/2,500/5,000 terms
    python -m benchmarks.depth --quick    # the largest of each only
    python benchmarks/depth.py [--quick]

Each workload is written to a temporary module and imported as a user would
(Python itself needs a raised recursion limit to compile a 5,000-term expression
and to run a 1,000-deep chain; the compiler needs neither). For each one the
first call of ``ms.value_and_grad(fn)`` (the compilation) is timed, the value is
checked against plain Python (exactly) and the gradient against central finite
differences; a mismatch or an error makes the exit status 1. A breakdown of the
compilation by stage (lift, reverse mode, optimisation passes, code generation)
follows.

* ``chain N``: ``f1`` calls ``f2`` ... calls ``fN``, each ``return f<i+1>(x) * 1.001
  + 0.01 * x`` (three ops per level), the last ``np.sin(x)``.
* ``sum N``: ``return np.sum(x + x * 2.0 + x * 3.0 + ... + x * N.0)``, one
  expression of ``N`` terms (two ops per term).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ad_compiler as ms  # noqa: E402
from benchmarks.workloads import numeric_grad  # noqa: E402
from ad_compiler.ad.reverse import ONES, vjp_function  # noqa: E402
from ad_compiler.api.signature import spec_of  # noqa: E402
from ad_compiler.codegen import compile_function  # noqa: E402
from ad_compiler.depth import on_deep_stack  # noqa: E402
from ad_compiler.frontend import lift  # noqa: E402
from ad_compiler.passes.pipeline import optimize  # noqa: E402

X = np.array([0.3, -0.2, 0.5])
FULL = {"chain": (250, 500, 1000), "sum": (1250, 2500, 5000)}
QUICK = {"chain": (1000,), "sum": (5000,)}


def chain_source(n: int) -> str:
    lines = ["import numpy as np", ""]
    for i in range(1, n):
        lines += [f"def f{i}(x):", f"    return f{i + 1}(x) * 1.001 + 0.01 * x", ""]
    lines += [f"def f{n}(x):", "    return np.sin(x)", ""]
    return "\n".join(lines)


def sum_source(n: int) -> str:
    terms = " + ".join(["x"] + [f"x * {k}.0" for k in range(2, n + 1)])
    return f"import numpy as np\n\ndef f1(x):\n    return np.sum({terms})\n"


def load(directory: Path, name: str, source: str):
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f1


def problem_with(fn, value, grad):
    if not np.array_equal(value, fn(X)):
        return f"value {value!r}, Python gives {fn(X)!r}"
    numeric = numeric_grad(fn, (X,), 0)
    if not np.allclose(grad, numeric, rtol=1e-6, atol=1e-6):
        return f"gradient {grad!r}, finite differences give {numeric!r}"
    return None


def stages(fn) -> dict:
    """Seconds per stage of one compilation, on the deep stack as the API runs it."""
    times, start = {}, time.perf_counter()
    lifted = lift(fn, (spec_of(X),))
    times["lift"], start = time.perf_counter() - start, time.perf_counter()
    seeds = [ONES] * len(lifted.function.outputs)
    adjoint = vjp_function(lifted.function, [0], seeds, with_outputs=True)
    times["vjp"], start = time.perf_counter() - start, time.perf_counter()
    optimised = optimize(adjoint)
    times["passes"], start = time.perf_counter() - start, time.perf_counter()
    compile_function(optimised)
    times["codegen"] = time.perf_counter() - start
    times["ops"] = len(adjoint.body.ops)
    return times


def run(kind: str, n: int, directory: Path) -> tuple[str, str | None]:
    source = chain_source(n) if kind == "chain" else sum_source(n)
    fn = load(directory, f"depth_{kind}_{n}", source)
    try:
        start = time.perf_counter()
        value, grad = ms.value_and_grad(fn)(X)
        first = time.perf_counter() - start
        start = time.perf_counter()
        ms.value_and_grad(fn)(X)
        steady = time.perf_counter() - start
    except Exception as exc:  # report every failing workload
        return f"{kind} {n}", f"{type(exc).__name__}: {exc}"
    problem = problem_with(fn, value, grad)
    t = on_deep_stack(stages, fn)
    row = (f"{kind + ' ' + str(n):<12} {first - steady:9.2f} {t['ops']:8d} {t['lift']:7.2f} "
           f"{t['vjp']:7.2f} {t['passes']:7.2f} {t['codegen']:8.2f}")
    return row, problem


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the largest workloads")
    sizes = QUICK if parser.parse_args(argv).quick else FULL
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 50_000))  # for plain Python only
    problems = []
    print(f"{'workload':<12} {'compile s':>9} {'adj. ops':>8} {'lift':>7} {'vjp':>7} "
          f"{'passes':>7} {'codegen':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, ns in sizes.items():
            for n in ns:
                row, problem = run(kind, n, Path(tmp))
                print(row, flush=True)
                if problem:
                    problems.append(f"{kind} {n}: {problem}")
    for problem in problems:
        print(f"!!! {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
