"""Every source the compiler generates for a fixed set of programs, as one text.

A change that should only make compilation faster must leave this text unchanged:

    python -m benchmarks.adjoint_sources > before.txt
    ... change the compiler ...
    python -m benchmarks.adjoint_sources > after.txt && diff before.txt after.txt

The programs: the gradient of every case of the test corpus (tests/corpus/functions.py,
float64, and float32 for its float32 subset), the benchmark workloads, the straight-line
functions of benchmarks/compile.py, and the fuzzer's programs for ``--seeds`` (default
0:200; each runs the fuzzer's checks, so its gradient, forward-mode and second-order
sources are generated too). Each source is recorded in the order it is compiled, under
the name of the program that caused it. What differs from run to run is replaced:
temporary file names by ``<tmp>``, and the fuzzer's module names (``fz_<pid>_<n>``) by
``fz_N``.
"""
from __future__ import annotations

import argparse
import contextlib
import re
import sys
import warnings

import numpy as np

_RECORD: list = []
_CURRENT = ["?"]


def _record_sources():
    """Wrap codegen so that every generated source is appended to ``_RECORD``."""
    from ad_compiler.codegen import compile as compile_module
    original = compile_module.to_source

    def recording(fn, *args, **kwargs):
        source, namespace = original(fn, *args, **kwargs)
        _RECORD.append((_CURRENT[0], source))
        return source, namespace
    compile_module.to_source = recording


@contextlib.contextmanager
def _program(name: str):
    _CURRENT[0] = name
    try:
        yield
    except Exception as e:  # a refusal is part of the record too
        _RECORD.append((name, f"!! {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))


def corpus() -> None:
    import ad_compiler as ms
    sys.path.insert(0, ".")
    from tests.corpus.load import corpus as load, to_float64
    for c in load().CORPUS:
        if "source" in c.xfail or "grad" in c.xfail:
            continue
        with _program(f"corpus {c.name}"):
            ms.grad(c.function, grad_position=c.grad_position)(*to_float64(c.make()))
        if c.f32:
            with _program(f"corpus {c.name} f32"):
                ms.grad(c.function, grad_position=c.grad_position)(*_to_float32(c.make()))


def _to_float32(tree):
    if isinstance(tree, (tuple, list)):
        return type(tree)(_to_float32(t) for t in tree)
    if isinstance(tree, np.ndarray) and tree.dtype.kind == "f":
        return tree.astype(np.float32)
    return tree


def workloads() -> None:
    import ad_compiler as ms
    from benchmarks.control_workloads import CONTROL_WORKLOADS
    from benchmarks.workloads import WORKLOADS
    rng = np.random.default_rng(0)
    for w in list(WORKLOADS) + list(CONTROL_WORKLOADS):
        with _program(f"workload {w.name}"):
            ms.grad(w.fn, grad_position=w.grad_position)(*w.make_inputs("tiny", rng))


def straight_line() -> None:
    import ad_compiler as ms
    from benchmarks.compile import realistic, straight_line as make
    for n in (10, 100):
        fn, args = make(n)
        with _program(f"straight-line {n}"):
            ms.grad(fn, grad_position=(0, 1))(*args)
    fn, args = realistic()
    with _program("realistic"):
        ms.grad(fn, grad_position=(0, 1, 2))(*args)


def fuzz(seeds: range) -> None:
    from tests.fuzz.generator import FEATURES, generate
    from tests.fuzz.oracle import check
    for seed in seeds:
        with _program(f"fuzz seed {seed}"):
            check(generate(seed, FEATURES))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:200", help="fuzz seeds START:STOP")
    args = parser.parse_args(argv)
    start, _, stop = args.seeds.partition(":")
    warnings.simplefilter("ignore")
    _record_sources()
    corpus()
    workloads()
    straight_line()
    fuzz(range(int(start), int(stop)))
    varying = ((re.compile(r"/tmp/[^\s:'\"]*"), "<tmp>"), (re.compile(r"fz_\d+_\d+"), "fz_N"))
    for name, source in _RECORD:
        for pattern, replacement in varying:
            source = pattern.sub(replacement, source)
        print(f"==== {name}\n{source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
