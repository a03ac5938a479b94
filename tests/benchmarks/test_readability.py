"""The readability measure (benchmarks/readability.py) and the figures it holds the
generated gradients of the corpus to."""
from __future__ import annotations

import numpy as np
import pytest

from ad_compiler.codegen import emit
from ad_compiler.ir.core import AType, Function, Value
from ad_compiler.ir.builder import Builder
from ad_compiler.passes.reuse import reuse_buffers
from benchmarks import readability as r

F64 = AType((3,), np.dtype("float64"))


def _chain():
    """x -> t = x * x -> e = exp(t): e may be written into t's buffer."""
    x = Value(F64, "x")
    b = Builder()
    b.block.args.append(x)
    e = b.exp(b.mul(x, x, hint="t"), hint="e")
    b.block.results.append(e)
    return reuse_buffers(Function("f", b.block))


def test_a_shared_name_for_two_quantities_is_a_meaning_change(monkeypatch):
    fn = _chain()
    source, _ = emit.to_source(fn)
    assert "e = np.exp(t, out=t)" in source
    assert r.measure(fn, source).meaning_changes == 0
    # the way names were given before: the result takes its buffer's name
    monkeypatch.setattr(emit, "same_quantity", lambda buffer, result: True)
    source, _ = emit.to_source(fn)
    assert "    np.exp(t, out=t)\n" in source
    assert r.measure(fn, source).meaning_changes == 1


def test_derived_names():
    words, variables = {"x", "w", "h", "tanh", "logits"}, {"x", "w", "h", "logits"}
    words |= r.expression_words()
    for name in ("dx", "h_2", "xw", "d_xw", "tanh_xw", "mul_h", "dlogits_1", "x_tape", "xT"):
        assert r.is_derived(name, words, variables), name
    for name in ("matmul", "square", "sum_", "c", "reshape", "n_iter", "f64_1", "mul_1"):
        assert not r.is_derived(name, words, variables), name


def test_dead_copies_and_undefined_names():
    fn = _chain()
    source = ("def f(x):\n    a = x\n    b = a\n    c = b\n    unused = c\n"
              "    return (c * f64_2 + np.ones(3),)\n")
    f = r.measure(fn, source)
    # a = x: x read only there (a rename); b = a and c = b the same; unused is never read
    assert f.dead_copies == 4 and f.undefined == 1 and f.modules == 1


def corpus_figures():
    r._RECORD.clear()
    r._record_sources()
    try:
        r.corpus()
    finally:
        from ad_compiler.codegen import compile as compile_module
        compile_module.to_source = emit.to_source
    total = r.Figures()
    for _, fn, source in r._RECORD:
        total.add(r.measure(fn, source))
    return total


@pytest.mark.filterwarnings("ignore")
def test_the_corpus_gradients_name_one_quantity_per_name_after_the_user():
    f = corpus_figures()
    assert f.sources > 150
    assert f.meaning_changes == 0, f.examples["meaning change"]
    assert f.derived / f.names >= 0.85   # the rest: loop counters and control flags
