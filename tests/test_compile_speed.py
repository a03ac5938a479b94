"""The machinery behind fast compilation: stage timing and lazy submodules.

No timing is asserted here (speed is measured by benchmarks/compile.py); these tests
check that the stage report covers every stage of a compilation, costs nothing when
off, and that submodules imported lazily are still there.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import ad_compiler as ms
from ad_compiler.stages import StageTimes, stage_times

_ROOT = str(Path(__file__).resolve().parents[1])


def _fresh_function():
    def f(x, w):
        h = np.tanh(x @ w)
        return np.sum(h * h)
    return f


def test_stage_times_report_every_stage_of_a_compilation():
    x, w = np.ones((2, 3)), np.full((3, 2), 0.5)
    with stage_times() as times:
        ms.grad(_fresh_function(), grad_position=(0, 1))(x, w)
    totals = times.totals()
    for name in ("parse", "lift", "reverse", "fold", "simplify", "dce", "cse",
                 "fresh_outputs", "codegen", "compile()"):
        assert name in totals, name
        wall, cpu = totals[name]
        assert wall >= 0.0 and cpu >= 0.0
    report = times.report()
    assert report.splitlines()[0].split() == ["stage", "wall", "ms", "cpu", "ms"]
    assert "\n  parse " in report  # nested inside lift: indented under it
    assert report.splitlines()[-1].startswith("total")
    wall, cpu = times.total()
    assert wall >= totals["lift"][0] and cpu >= totals["lift"][1]


def test_stage_times_are_off_outside_the_block():
    x, w = np.ones((2, 3)), np.full((3, 2), 0.5)
    with stage_times() as times:
        pass
    ms.grad(_fresh_function(), grad_position=(0, 1))(x, w)
    assert times.rows == [] and StageTimes().report().splitlines()[-1].startswith("total")


def test_a_cache_hit_runs_no_stage():
    f = _fresh_function()
    g = ms.grad(f)
    x, w = np.ones((2, 3)), np.full((3, 2), 0.5)
    g(x, w)
    with stage_times() as times:
        g(x, w)
    assert times.rows == []


_LAZY_CHECK = r'''
import sys
import ad_compiler as ms
lazy = ["ad_compiler.nn.layers", "ad_compiler.nn.optim", "ad_compiler.nn.loss",
        "ad_compiler.api.checking", "ad_compiler.common", "ad_compiler.serialization",
        "numpy.random", "astor", "hashlib", "fractions"]
assert not [m for m in lazy if m in sys.modules], [m for m in lazy if m in sys.modules]
from ad_compiler import nn
from ad_compiler.nn import Adam, Dense
assert nn.Dense is Dense and Dense.__module__ == "ad_compiler.nn.layers"
assert issubclass(Adam, nn.Optimizer) and nn.optim.Adam is Adam
assert ms.nn is nn and ms.Parameter is nn.Parameter
assert ms.hessian.__module__ == "ad_compiler.api.hessian" and callable(ms.check_grad)
assert ms.save_checkpoint.__module__ == "ad_compiler.serialization"
assert ms.common.initializer.__name__ == "ad_compiler.common.initializer"
assert {"nn", "hessian", "custom_vjp"} <= set(dir(ms)) and "Adam" in dir(nn)
for name in ms.__all__:
    getattr(ms, name)
for name in nn.__all__:
    getattr(nn, name)
for module, name in ((ms, "no_such_name"), (nn, "no_such_layer")):
    try:
        getattr(module, name)
    except AttributeError as e:
        assert name in str(e)
    else:
        raise AssertionError(name)
print("ok")
'''


_RANDOM_MODULE = """
import sys
import numpy as np
import ad_compiler as ms
assert "numpy.random" not in sys.modules


def f(x):
    return np.sum(x * np.random.randn(3))


np.random.seed(0)
grad = ms.grad(f)(np.ones(3))
np.random.seed(0)
assert np.array_equal(grad, np.random.randn(3)), grad
print("ok")
"""


def test_numpy_random_is_lowered_though_loaded_after_the_compiler(tmp_path):
    """``np.random`` functions are registered when numpy.random is first imported
    (``import ad_compiler`` does not import it): a draw in a compiled function is the
    draw plain Python makes."""
    path = tmp_path / "draws.py"
    path.write_text(_RANDOM_MODULE)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": _ROOT})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_lazy_modules_load_on_first_use():
    """``import ad_compiler`` leaves the layers, optimizers and rarely used transforms
    unloaded; attribute access and ``from ... import`` load them."""
    out = subprocess.run([sys.executable, "-c", _LAZY_CHECK], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": _ROOT})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_the_collector_is_paused_during_a_compilation_only():
    import gc

    from ad_compiler.gc_pause import gc_paused
    seen = []
    with gc_paused():
        seen.append(gc.isenabled())
        with gc_paused():
            seen.append(gc.isenabled())
        seen.append(gc.isenabled())
    assert seen == [False, False, False] and gc.isenabled()
    ms.grad(_fresh_function())(np.ones((2, 3)), np.ones((3, 2)))
    assert gc.isenabled()


def test_a_collector_the_program_disabled_stays_disabled():
    import gc
    gc.disable()
    try:
        ms.grad(_fresh_function())(np.ones((2, 3)), np.ones((3, 2)))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_ops_functions_show_their_signature():
    """``help(ops.sum)``: the lowering's parameters after the builder, computed when
    asked (not for every functional form at import)."""
    import inspect
    assert str(inspect.signature(ms.ops.sum)) == "(input, dim=None, keepdim=False)"
    assert ms.ops.sum.__name__ == "sum" and "sum" in ms.ops.sum.__doc__


_BLOCKS = '''\
import numpy as np


@decorator
def f(x):
    y = (x +
1)
# a comment at column 0 inside the body
    s = """
text at column 0
"""
    return y  # trailing

    # a comment indented like the body
# a comment that is not
def g(x): return x * 2
class C:
    def m(self, x):
        return x \\
+ 1
    def n(self):
        pass
'''


def test_a_statements_lines_are_those_getblock_finds():
    """sources.block_at finds a statement's lines by indentation, checked by parsing
    them; a cut inside a bracket, a string or a continuation does not parse, and then
    the lines are tokenized (inspect.getblock)."""
    import inspect

    from ad_compiler.frontend.sources import _indented_block, block_at
    lines = _BLOCKS.splitlines(True)
    starts = [i for i, line in enumerate(lines)
              if line.lstrip().startswith(("def ", "class ", "@"))
              and not lines[i - 1].lstrip().startswith("@")]
    assert len(starts) == 5
    for i in starts:
        assert block_at(lines, i) == inspect.getblock(lines[i:]), lines[i]
    # found without tokenizing where nothing is cut: g, and n
    assert _indented_block(lines, starts[1]) == ["def g(x): return x * 2\n"]
    assert _indented_block(lines, starts[4]) == lines[starts[4]:starts[4] + 2]
    assert _indented_block(lines, starts[0]) is None  # cut inside the bracket


def test_passes_keep_the_ops_they_do_not_change():
    """A rewrite whose rule changes nothing gives a function holding the same ops
    (passes are pure: none changes the function it is given)."""
    from ad_compiler.frontend import lift
    from ad_compiler.api.signature import spec_of
    from ad_compiler.passes.pipeline import PIPELINE, optimize
    from ad_compiler.passes.rewrite import rewrite
    x, w = np.ones((2, 3)), np.full((3, 2), 0.5)
    fn = lift(_fresh_function(), (spec_of(x), spec_of(w))).function
    same = rewrite(fn, lambda b, op, inputs: None)
    assert [id(op) for op in same.body.ops] == [id(op) for op in fn.body.ops]
    assert same.args == fn.args and same.body is not fn.body
    before = str(fn)
    optimize(fn, PIPELINE)
    assert str(fn) == before
