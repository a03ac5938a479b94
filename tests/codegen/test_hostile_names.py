"""Text from outside the user's function source never becomes code.

File names, Parameter names, dict keys, Cell attribute names and function names
reach generated source only as ASCII identifiers made by the one ``Namespace``
(``ir/names.py``) or as comments escaped by ``one_line``. Every case checks the
gradient against central finite differences in float64 and the generated
source's identifiers, lines and determinism.
"""
from __future__ import annotations

import ast
import importlib.util
import io
import keyword
import linecache
import os
import re
import subprocess
import sys
import tokenize
import types
import unicodedata

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn
from ad_compiler.api.transforms import compiled_entry
from ad_compiler.errors import UnsupportedSyntaxError
from ad_compiler.ir.names import Namespace, one_line, sanitize
from ad_compiler.nn import Parameter
from tests.finite_differences import central, central_at

PAYLOAD = "raise SystemExit('INJECTED')"
# every character str.splitlines breaks at, quotes, a comment sign, a bidi override
SEPARATORS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85",
              "\u2028", "\u2029", "'\"", "#", "\u202e"]
# twins after NFKC of what the code below generates (x, mul, dx, np, the def's name)
HOSTILE = ["ｍｕｌ", "ｘ", "ｄｘ", "ｎｐ", "Ｎｅｔ＿ｇｒａｄ", "w²", "x\nimport os", "for", "match",
           "1a", "", "__builtins__", "٣", "é"]


# -- checks ---------------------------------------------------------------------------

def close(got, want):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-6, atol=1e-8)


def identifiers(tree) -> list:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.arg):
            found.append(node.arg)
        elif isinstance(node, ast.FunctionDef):
            found.append(node.name)
    return found


def assert_safe_source(source: str) -> None:
    """One line per ``\\n``, nothing unprintable, every identifier ASCII and
    unique after NFKC, and anything injected only inside comments."""
    lines = source.split("\n")
    assert lines == source.splitlines() + [""], "a line separator other than \\n"
    assert all(line.isprintable() for line in lines), source
    tree = ast.parse(source)
    names = identifiers(tree)
    for name in names:
        assert name.isascii() and name.isidentifier() and not keyword.iskeyword(name), name
    distinct = set(names)
    assert len({unicodedata.normalize("NFKC", n) for n in distinct}) == len(distinct)
    (fn,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    args = [a.arg for a in fn.args.args]
    assert len(set(args)) == len(args)
    # the module's header imports numpy, math and the runtime, nothing else, and only there
    header = source[:source.index("\ndef ") + 1]
    assert set(line for line in header.splitlines() if "import" in line) <= {
        "import numpy as np", "import math", "from ad_compiler import runtime as rt"}
    assert not any(isinstance(n, (ast.Import, ast.ImportFrom, ast.Raise)) for n in ast.walk(fn))
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if "INJECTED" in tok.string:
            assert tok.type == tokenize.COMMENT, tok
        assert tok.string != "raise" and (tok.string != "import" or tok.start[0] <= len(
            header.splitlines())), tok


def assert_safe_ir(text: str) -> None:
    lines = text.split("\n")
    assert lines == text.splitlines() and all(line.isprintable() for line in lines), text
    for line in lines:  # the file name stays after the '@' of its own line
        assert "INJECTED" not in line.partition("@")[0], line


# -- the mechanism ----------------------------------------------------------------

@pytest.mark.parametrize("hint, name", [
    ("x", "x"), ("ｘ", "x"), ("ｍｕｌ", "mul"), ("w²", "w2"), ("ﬁ", "fi"), ("é", "e"),
    ("x\nimport os", "x_import_os"), ("a b-c", "a_b_c"), ("1a", "v_1a"), ("", "v"),
    (None, "v"), ("λ", "lamda"), ("dσ", "dsigma"), ("Δ", "Delta"), ("ø", "o"), ("中文", "v"),
    ("٣", "v"), ("_", "_"), ("layer.w", "layer_w")])
def test_sanitize_gives_ascii_identifiers_after_nfkc(hint, name):
    assert sanitize(hint) == name


def test_namespace_is_unique_after_nfkc_and_never_reserved():
    ns = Namespace(taken={"np"})
    got = [ns.fresh(h) for h in HOSTILE + ["x", "mul", "w2", "np", "Net_grad", "type",
                                           "case", "len", "__name__"]]
    assert len(set(got)) == len(got)
    for name in got:
        assert name.isascii() and name.isidentifier() and not keyword.iskeyword(name)
        assert name not in keyword.softkwlist + ["type", "np", "len", "__builtins__", "__name__"]


def test_reserved_builtins_do_not_depend_on_how_python_started():
    # site adds 'exit' and 'help'; the interactive prompt adds '_': none is reserved
    ns = Namespace()
    assert [ns.fresh(h) for h in ("exit", "help", "_", "len")] == ["exit", "help", "_", "len_"]


@pytest.mark.parametrize("sep", SEPARATORS + ["\x00", "\t", "\U000e0001"])
def test_one_line_escapes_every_line_break_and_unprintable_character(sep):
    text = one_line(f"a{sep}b")
    assert text.isprintable() and text.splitlines() == [text]
    assert text.startswith("a") and text.endswith("b")


# -- hostile file names -------------------------------------------------------------

MODULE = (
    "import numpy as np\n"
    "\n"
    "def f(x):\n"
    "    y = np.sin(x) * x  # \u2028import os \x0c \u0085 \u202e\n"
    "    return np.sum(y * y)\n"
    "\n"
    "def bad(x):\n"
    "    try:\n"
    "        return x\n"
    "    except ValueError:\n"
    "        return x\n")


def reference(x):
    y = np.sin(x) * x
    return np.sum(y * y)


def load(path: str, name: str):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(MODULE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


X = np.array([0.3, -1.2, 0.7])


@pytest.mark.parametrize("sep", SEPARATORS, ids=[repr(s) for s in SEPARATORS])
def test_a_file_name_is_a_comment_never_code(tmp_path, sep):
    module = load(str(tmp_path / f"m{sep}{PAYLOAD}{sep}.py"), f"hostile_{ord(sep[0])}")
    close(ms.grad(module.f)(X), central(reference, X))
    source = ms.adjoint_source(module.f, "f64[3]")
    assert_safe_source(source)
    assert one_line(f"m{sep}{PAYLOAD}{sep}.py:4") in source
    assert_safe_ir(ms.adjoint_ir(module.f, "f64[3]"))


def test_an_error_in_a_hostile_file_names_it_on_one_line(tmp_path):
    module = load(str(tmp_path / f"m\n{PAYLOAD}.py"), "hostile_error")
    with pytest.raises(UnsupportedSyntaxError) as info:
        ms.grad(module.bad)(X)
    head = str(info.value).splitlines()[0]
    assert "m\\n" + PAYLOAD + ".py:8:5: " in head and "try" in head


@pytest.mark.parametrize("filename", [f"<exec\n{PAYLOAD}>", f"m\u2028{PAYLOAD}.py", "<'#\">"])
def test_exec_code_with_its_source_registered(filename):
    namespace: dict = {}
    exec(compile(MODULE, filename, "exec"), namespace)  # noqa: S102
    # registered as a file is read (only '\n' ends a line), so inspect finds it
    linecache.cache[filename] = (len(MODULE), None, io.StringIO(MODULE).readlines(), filename)
    try:
        close(ms.grad(namespace["f"])(X), central(reference, X))
        assert_safe_source(ms.adjoint_source(namespace["f"], "f64[3]"))
        assert_safe_ir(ms.adjoint_ir(namespace["f"], "f64[3]"))
    finally:
        linecache.cache.pop(filename, None)


def test_exec_code_without_source_is_a_located_error():
    namespace: dict = {}
    exec(compile(MODULE, f"<exec\n{PAYLOAD}>", "exec"), namespace)  # noqa: S102
    with pytest.raises(UnsupportedSyntaxError) as info:
        ms.grad(namespace["f"])(X)
    head = str(info.value).splitlines()[0]
    assert head.startswith(f"<exec\\n{PAYLOAD}>:3:1: cannot read the source of 'f'")


# -- Parameter names, Cell attribute names -------------------------------------------

def cell_with_parameter(name):
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.array([0.5, -1.5, 2.0]), name=name)
            self.v = Parameter(np.array([1.0, 0.25, -0.5]), name="x")

        def construct(self, x):
            mul = x * self.w
            dx = mul * np.sin(x)
            return np.sum(dx * self.v)
    return Net()


def net_reference(x, w, v):
    return np.sum(x * w * np.sin(x) * v)


@pytest.mark.parametrize("name", HOSTILE, ids=[repr(h) for h in HOSTILE])
def test_parameter_names(name):
    net = cell_with_parameter(name)
    weights = net.trainable_params()
    gx, (gw, gv) = ms.grad(net, grad_position=0, weights=weights)(X)
    args = [X, net.w.asnumpy(), net.v.asnumpy()]
    for got, i in ((gx, 0), (gw, 1), (gv, 2)):
        close(got, central_at(net_reference, args, i))
    source = ms.adjoint_source(net, "f64[3]", weights=weights)
    assert_safe_source(source)
    again = cell_with_parameter(name)
    assert source == ms.adjoint_source(again, "f64[3]", weights=again.trainable_params())
    assert_safe_ir(ms.adjoint_ir(net, "f64[3]", weights=weights))


class Twins(nn.Cell):
    """Attributes that are NFKC twins of each other and of names the code generates."""

    def __init__(self):
        super().__init__()
        setattr(self, "ｘ", Parameter(np.array([1.0, 2.0, -1.0])))
        setattr(self, "x", Parameter(np.array([3.0, -4.0, 0.5])))
        setattr(self, "ｍｕｌ", np.array([0.5, 0.25, 2.0]))
        setattr(self, "mul", np.array([2.0, 8.0, -1.0]))
        setattr(self, "mul_value", np.array([-3.0, 1.0, 0.5]))
        setattr(self, "ｍｕｌ＿ｖａｌｕｅ", np.array([0.125, 1.5, 4.0]))

    def construct(self, x):
        mul = x * getattr(self, "ｘ") * getattr(self, "ｍｕｌ") * getattr(self, "mul_value")
        return np.sum(np.sin(mul) * self.x * self.mul * getattr(self, "ｍｕｌ＿ｖａｌｕｅ"))


def twins_reference(x, p1, p2, net):
    a = {k: getattr(net, k) for k in ("ｍｕｌ", "mul", "mul_value", "ｍｕｌ＿ｖａｌｕｅ")}
    mul = x * p1 * a["ｍｕｌ"] * a["mul_value"]
    return np.sum(np.sin(mul) * p2 * a["mul"] * a["ｍｕｌ＿ｖａｌｕｅ"])


def test_cell_attribute_names_that_are_twins():
    net = Twins()
    weights = net.trainable_params()
    assert [p.name for p in weights] == ["ｘ", "x"]
    gx, (g1, g2) = ms.grad(net, grad_position=0, weights=weights)(X)
    args = [X, weights[0].asnumpy(), weights[1].asnumpy()]
    ref = lambda x, p1, p2: twins_reference(x, p1, p2, net)  # noqa: E731
    for got, i in ((gx, 0), (g1, 1), (g2, 2)):
        close(got, central_at(ref, args, i))
    assert_safe_source(ms.adjoint_source(net, "f64[3]", weights=weights))


class Shadow(nn.Cell):
    """An array attribute named like the local it is multiplied into, after NFKC."""

    def __init__(self):
        super().__init__()
        setattr(self, "ｍｕｌ", np.array([0.5, 0.25, 2.0]))
        self.mul = np.array([2.0, 8.0, -1.0])

    def construct(self, x):
        mul = x * getattr(self, "ｍｕｌ")
        return np.sum(np.sin(mul) * self.mul)


def test_an_attribute_twin_of_a_local_is_not_that_local():
    # 'ｍｕｌ = mul_value' then 'mul = x * mul' used to read x * x: a wrong gradient
    net = Shadow()
    a, b = getattr(net, "ｍｕｌ"), net.mul
    close(ms.grad(net)(X), central_at(lambda x: np.sum(np.sin(x * a) * b), [X], 0))
    assert_safe_source(ms.adjoint_source(net, "f64[3]"))


# -- dict keys ------------------------------------------------------------------------

KEYS = ["ｘ", "x", "w²", "w2", "", "\n", "for", "d_x", "ｄ＿ｘ"]


def keyed(d):
    total = d["ｘ"] * np.sin(d["x"]) + d["w²"] * d["w2"] ** 2 + d[""] * d["\n"]
    return np.sum(total + d["for"] * d["d_x"] - d["ｄ＿ｘ"] ** 3)


def test_dict_keys_that_are_twins():
    d = {k: np.array([0.2 + 0.1 * i, -0.3 * i - 0.1]) for i, k in enumerate(KEYS)}
    grads = ms.grad(keyed)(d)
    assert list(grads) == KEYS
    flat = [d[k] for k in KEYS]
    ref = lambda *vs: keyed(dict(zip(KEYS, vs)))  # noqa: E731
    for i, k in enumerate(KEYS):
        close(grads[k], central_at(ref, flat, i))
    assert_safe_source(ms.adjoint_source(keyed, d))


# -- function names -------------------------------------------------------------------

def _body(x):
    return np.sum(np.sin(x) * x)


def renamed(name: str, code_too: bool):
    code = _body.__code__
    if code_too:
        code = code.replace(co_name=name, co_qualname=name) if sys.version_info >= (3, 11) \
            else code.replace(co_name=name)
    fn = types.FunctionType(code, globals())
    fn.__name__ = fn.__qualname__ = name
    return fn


@pytest.mark.parametrize("code_too", [False, True])
@pytest.mark.parametrize("name", ["f²", "ｆ", "f\nimport os", "1f", "for", "", "__builtins__"])
def test_function_names(name, code_too):
    fn = renamed(name, code_too)
    close(ms.grad(fn)(X), central(_body, X))
    compiled = compiled_entry(fn, "f64[3]").compiled
    assert re.fullmatch(r"<ad_compiler:[A-Za-z0-9_]+:[0-9]+>", compiled.filename)
    source = compiled.source
    assert_safe_source(source)
    assert source == ms.adjoint_source(renamed(name, code_too), "f64[3]")
    assert_safe_ir(ms.adjoint_ir(fn, "f64[3]"))


def test_cell_class_names():
    cls = type("Ｎｅｔ²\nimport os", (nn.Cell,), {"construct": lambda self, x: _body(x)})
    source = ms.adjoint_source(cls(), "f64[3]")
    assert_safe_source(source)
    assert "\ndef Net2_import_os_grad(x):" in source
    ir_text = ms.adjoint_ir(cls(), "f64[3]")
    assert_safe_ir(ir_text)
    assert ir_text.startswith("func Ｎｅｔ²\\nimport os_grad(%x: f64[3]) {")


def greek(x):
    α = np.sin(x)
    β = α * x
    return np.sum(β * α)


def test_non_ascii_variables_of_the_source_are_spelled_out():
    close(ms.grad(greek)(X), central(greek, X))
    source = ms.adjoint_source(greek, "f64[3]")
    assert_safe_source(source)
    assert "alpha = np.sin(x)" in source


# -- determinism across processes -------------------------------------------------------

SCRIPT = """
import numpy as np, ad_compiler as ms, sys
sys.path.insert(0, {here!r})
from test_hostile_names import hostile_sources
print(hostile_sources())
"""


def hostile_sources() -> str:
    net = Twins()
    d = {k: np.ones(2) for k in KEYS}
    return (ms.adjoint_source(net, "f64[3]", weights=net.trainable_params())
            + ms.adjoint_source(keyed, d))


def test_sources_are_the_same_in_every_process():
    script = SCRIPT.format(here=os.path.dirname(__file__))
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True).stdout
    assert other == hostile_sources() + "\n"
    assert "def Twins_grad(" in other
