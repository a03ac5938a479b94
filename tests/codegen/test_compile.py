"""Compiling generated source: pseudo filenames, linecache, tracebacks, compile time."""
from __future__ import annotations

import gc
import inspect
import linecache
import re
import time
import traceback

import numpy as np
import pytest

from ad_compiler.codegen import Compiled, compile_function, to_source
from ad_compiler.errors import SourceLoc


def reshape_fn(ir):
    b, (x,) = ir.new(("x", ir.arr(6)))
    with b.at(SourceLoc("/tmp/model.py", 7, 4, "    m = x.reshape(2, 3)")):
        m = b.reshape(x, shape=(2, 3), hint="m")
    return ir.finish(b, m, name="f_grad")


def test_compiled_fields(ir):
    fn = reshape_fn(ir)
    compiled = compile_function(fn)
    assert isinstance(compiled, Compiled)
    assert compiled.source == to_source(fn)[0]
    assert re.fullmatch(r"<ad_compiler:f_grad:\d+>", compiled.filename)
    assert compiled.fn.__name__ == "f_grad"
    assert compiled.fn.__code__.co_filename == compiled.filename


def test_source_is_in_linecache(ir):
    compiled = compile_function(reshape_fn(ir))
    assert "".join(linecache.getlines(compiled.filename)) == compiled.source
    assert inspect.getsource(compiled.fn) == compiled.source


def test_traceback_shows_generated_line(ir):
    compiled = compile_function(reshape_fn(ir))
    with pytest.raises(ValueError):
        try:
            compiled.fn(np.ones(5))                      # wrong size only at run time
        except ValueError:
            text = traceback.format_exc()
            raise
    assert f'File "{compiled.filename}", line 3, in f_grad' in text
    assert "    m = x.reshape((2, 3))" in text


def test_recompiling_gives_same_source_new_filename(ir):
    fn = reshape_fn(ir)
    first, second = compile_function(fn), compile_function(fn)
    assert first.source == second.source
    assert first.filename != second.filename
    assert linecache.getlines(first.filename) == linecache.getlines(second.filename)


def test_linecache_entry_dies_with_the_function(ir):
    compiled = compile_function(reshape_fn(ir))
    filename = compiled.filename
    del compiled
    gc.collect()  # the function and its namespace dict form a cycle
    assert filename not in linecache.cache


def chain(ir, n):
    """``n`` elementwise ops over one array, three per user line."""
    b, (x,) = ir.new(("x", ir.arr(3)))
    v = x
    for i in range(n):
        with b.at(SourceLoc("/tmp/model.py", 10 + i // 3, 4, f"    x = step(x, {i})")):
            v = b.add(v, x, hint="x") if i % 4 == 3 else b.emit(("sin", "cos", "neg")[i % 3], v,
                                                                  hint="x")
    return ir.finish(b, v)


def test_compile_time_is_small(ir):
    fn = chain(ir, 50)
    times = []
    for _ in range(15):
        start = time.perf_counter()
        compile_function(fn)
        times.append(time.perf_counter() - start)
    # a few ms on a laptop; the bound only catches an order-of-magnitude regression
    assert sorted(times)[len(times) // 2] < 0.05
    ir.check(fn, np.ones(3))
