"""The text of generated code: golden source, determinism, names and literals."""
from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from ad_compiler.ad import rules
from ad_compiler.codegen import to_source
from ad_compiler.codegen.emit import literal
from ad_compiler.errors import SourceLoc

# builds the golden function; also run in a subprocess by the determinism test
BUILD = '''
import numpy as np
import ad_compiler.ops
from ad_compiler.errors import SourceLoc
from ad_compiler.ir.builder import Builder
from ad_compiler.ir.core import AType, Function, Value

def build():
    f64 = AType((4,), np.dtype("float64"))
    x, y = Value(f64, "x"), Value(f64, "y")
    b = Builder()
    b.block.args.extend([x, y])
    at = lambda line, text: b.at(SourceLoc("/home/user/project/model.py", line, 4, text))
    with at(3, "    z = x * np.sin(y)"):
        z = b.mul(x, b.sin(y), hint="z")
    with at(4, "    w = np.cos(z).reshape(2, -1)"):
        w = b.reshape(b.cos(z, hint="w"), shape=(2, -1), hint="w")
    with at(5, "    return w.sum(axis=-1) * 2.0 + bias"):
        scaled = b.mul(b.sum(w, axis=-1, keepdims=False), b.const(2.0))
        bias = b.const(np.array([0.5, -0.5], np.float32), hint="bias")
        out = b.add(scaled, bias, hint="out")
    b.block.results.append(out)
    return Function("f", b.block)
'''

GOLDEN = '''\
def f(x, y):
    # model.py:3: z = x * np.sin(y)
    sin_y = np.sin(y)
    z = x * sin_y
    # model.py:4: w = np.cos(z).reshape(2, -1)
    w = np.cos(z)
    w_1 = w.reshape((2, -1))
    # model.py:5: return w.sum(axis=-1) * 2.0 + bias
    sum_w = w_1.sum(axis=-1, keepdims=False)
    mul_sum_w = sum_w * 2.0
    out = mul_sum_w + bias_value
    return (out,)
'''


def build():
    scope: dict = {}
    exec(BUILD, scope)  # noqa: S102 - our own test source
    return scope["build"]()


def test_golden_source():
    src, namespace = to_source(build(), reuse_buffers=False)
    assert src == GOLDEN
    assert set(namespace) == {"np", "bias_value"}  # what the def reads


def test_without_comments():
    src, _ = to_source(build(), comments=False, reuse_buffers=False)
    assert "#" not in src
    assert src == "".join(line for line in GOLDEN.splitlines(True) if "#" not in line)


def test_same_function_same_source():
    fn = build()
    assert to_source(fn)[0] == to_source(fn)[0] == to_source(build())[0]


@pytest.mark.parametrize("seed", ["0", "12345"])
def test_same_source_in_another_process(seed):
    script = BUILD + "\nimport sys\nfrom ad_compiler.codegen import to_source\n" \
                     "sys.stdout.write(to_source(build(), reuse_buffers=False)[0])\n"
    env = dict(os.environ, PYTHONHASHSEED=seed)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out == GOLDEN


def test_name_collisions(ir):
    b, (x, x2, anon) = ir.new(("x", ir.arr(2)), ("x", ir.arr(2)), (None, ir.arr(2)))
    s = b.sum(x, axis=None, keepdims=False, hint="sum")
    n = b.neg(x2, hint="np")
    m = b.mul(n, anon, hint="lambda")
    k = b.const(np.ones(2), hint="k")
    clash = b.add(m, k, hint="k_value")        # a local named like the entry it would get
    odd = b.sin(clash, hint="1st value")
    fn = ir.finish(b, s, odd, name="x")
    ir.check(fn, np.ones(2), np.full(2, 2.0), np.full(2, 3.0))
    lines = to_source(fn, reuse_buffers=False)[0].splitlines()
    assert lines[0] == "def x(x, x_1, v):"      # a local may shadow the function's name
    assert {"    sum_ = x.sum(axis=None, keepdims=False)", "    np_ = -x_1",
            "    lambda_ = np_ * v", "    k_value_1 = lambda_ + k_value",
            "    v_1st_value = np.sin(k_value_1)"} <= set(lines)   # the entry came first


def test_function_name_is_made_valid(ir):
    b, (x,) = ir.new(("x", ir.arr(2)))
    fn = ir.finish(b, b.sin(x), name="<lambda>")
    assert "\ndef _lambda_(x):" in ir.check(fn, np.ones(2)).source


def test_no_outputs_and_no_arguments(ir):
    b, _ = ir.new()
    fn = ir.finish(b, name="nothing")
    assert to_source(fn, reuse_buffers=False)[0] == "def nothing():\n    return ()\n"


def test_one_namespace_entry_per_object(ir):
    table = np.arange(3.0)
    b, _ = ir.new()
    fn = ir.finish(b, b.const(table, hint="t"), b.const(table, hint="u"))
    src, namespace = to_source(fn, reuse_buffers=False)
    assert "return (t_value, t_value)" in src
    assert [k for k in namespace if namespace[k] is table] == ["t_value"]


LITERALS = [0, -7, 2**70, 2.0, -0.0, 1e-310, math.inf, -math.inf, True, False, None, "a'b\"c",
            complex(-1, 2), complex(math.nan, -math.inf), (), (1,), (1, (2.5, None)),
            [1, -2], slice(None, -1, 2), Ellipsis,
            np.float32, float, int]


@pytest.mark.parametrize("value", LITERALS, ids=repr)
def test_literal_round_trip(value):
    back = eval(literal(value), {"np": np, "math": math})  # noqa: S307
    assert type(back) is type(value) and repr(back) == repr(value)


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int32", "int64", "bool"])
def test_dtype_literal_is_the_scalar_type(name):
    # np.float32 reads better than np.dtype('float32'), and NumPy takes either as a dtype
    back = eval(literal(np.dtype(name)), {"np": np})  # noqa: S307
    assert back is np.dtype(name).type and np.dtype(back) == np.dtype(name)


@pytest.mark.parametrize("value", [math.nan, (1.0, math.nan)], ids=repr)
def test_literal_nan(value):
    assert repr(eval(literal(value), {"np": np, "math": math})) == repr(value)  # noqa: S307


@pytest.mark.parametrize("value", [np.float64(1.0), np.int32(1), np.zeros(2), {1, 2}, {"a": 1},
                                   (1, np.int64(2)), np.dtype(">f4"), np.dtype("U3"),
                                   np.dtype("datetime64[ns]"), object(), rules])
def test_no_literal_for_other_objects(value):
    assert literal(value) is None


@pytest.fixture
def power_prim(monkeypatch):
    """A primitive whose template puts a param where a bare negative number would misparse."""
    from ad_compiler.ir.core import AType
    prim = rules.Primitive("scaled_test", "{scale} ** 2 * {0} + {offset}",
                           infer=lambda t, **_: AType(t.shape, np.dtype("float64")))
    monkeypatch.setitem(rules.PRIMITIVES, "scaled_test", prim)


def test_negative_and_infinite_params_keep_their_meaning(ir, power_prim):
    b, (x,) = ir.new(("x", ir.arr(3)))
    y = b.emit("scaled_test", x, scale=-2, offset=-math.inf, hint="y")
    fn = ir.finish(b, y)
    compiled = ir.check(fn, np.ones(3))
    assert "    y = (-2) ** 2 * x + -math.inf\n" in compiled.source
    assert compiled.fn(np.ones(3))[0][0] == -math.inf


def test_comment_rules(ir):
    b, (x,) = ir.new(("x", ir.arr(2)))
    here = SourceLoc("/a/b/m.py", 3, 0, "   y = f(x)  \n")
    with b.at(here):
        y = b.sin(x, hint="y")
        y = b.cos(y, hint="y")                                  # same line: no new comment
    y = b.neg(y, hint="y")                                       # no loc: no comment
    with b.at(SourceLoc("/a/b/m.py", 3, 0, "   y = f(x)  ")):
        y = b.sin(y, hint="y")                                   # after an unlocated op: again
    with b.at(SourceLoc("other.py", 9)):
        y = b.cos(y, hint="y")                                   # no text: file and line only
    src, _ = to_source(ir.finish(b, y), reuse_buffers=False)
    assert src.splitlines()[1:8] == [
        "    # m.py:3: y = f(x)", "    y = np.sin(x)", "    y_1 = np.cos(y)", "    y_2 = -y_1",
        "    # m.py:3: y = f(x)", "    y_3 = np.sin(y_2)", "    # other.py:9"]
