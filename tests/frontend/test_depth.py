"""Deeply nested user code: 1,000-deep chains of helper calls and 5,000-term
expressions compile, with Python's value and a gradient checked against central
finite differences; deeper nesting is a located NestingTooDeepError.

The user modules are written to a temporary directory and imported as a user
would (a 5,000-term expression needs a raised recursion limit for Python itself
to compile the module and for a 1,000-deep chain to run in plain Python; the
compiler needs neither).
"""
from __future__ import annotations

import importlib.util
import sys
from contextlib import contextmanager

import gast
import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import depth
from ad_compiler.ad.reverse import ONES, vjp_function
from ad_compiler.api.signature import spec_of
from ad_compiler.cli import main
from ad_compiler.codegen.emit import to_source
from ad_compiler.errors import NestingTooDeepError, UnsupportedSyntaxError
from ad_compiler.frontend import lift
from ad_compiler.frontend.comprehensions import desugar_comprehensions
from ad_compiler.frontend.fence import fence
from ad_compiler.frontend.parse import Source
from ad_compiler.frontend.resolve import local_names
from ad_compiler.passes.pipeline import optimize
from tests.finite_differences import central

CHAIN = 1000
TERMS = 5000
X = np.array([0.3, -0.2, 0.5])


@contextmanager
def plain_python_depth(limit=50_000):
    """Room for plain Python to compile and run the deep reference code."""
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(max(saved, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(saved)


def write_module(directory, name, source):
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # imported as a user would import it
    with plain_python_depth():
        spec.loader.exec_module(module)
    return module, path


def chain_source(n: int) -> str:
    """``f1`` calls ``f2`` ... calls ``f<n>``; every 100th level computes something."""
    lines = ["import numpy as np", ""]
    for i in range(1, n):
        body = f"f{i + 1}(x) * 1.5 + x" if i % 100 == 0 else f"f{i + 1}(x)"
        lines += [f"def f{i}(x):", f"    return {body}", ""]
    lines += [f"def f{n}(x):", "    return np.sin(x) * x", ""]
    return "\n".join(lines)


def chain_derivative(x, n: int):
    """d f1 / dx for :func:`chain_source` (closed form)."""
    d = np.cos(x) * x + np.sin(x)
    for i in reversed(range(1, n)):
        if i % 100 == 0:
            d = d * 1.5 + 1.0
    return d


def sum_source(n: int) -> str:
    """``g(x) = 1.0 + 2.0 + ... + x * <n-9> + ... + x * <n>``: one expression of
    ``n`` terms, a left-deep tree ``n`` levels deep; the last ten terms are arrays."""
    terms = [f"{k}.0" for k in range(1, n - 9)] + [f"x * {k}.0" for k in range(n - 9, n + 1)]
    return "def g(x):\n    return " + " + ".join(terms) + "\n"


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    directory = tmp_path_factory.mktemp("deep")
    chain, chain_path = write_module(directory, "deep_chain", chain_source(CHAIN))
    terms, terms_path = write_module(directory, "deep_sum", sum_source(TERMS))
    return chain, chain_path, terms, terms_path


def check(f, value, grad):
    with plain_python_depth():
        expected = f(X)
        numeric = central(lambda v: np.sum(f(v)), X)
    assert np.array_equal(value, expected)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_chain_of_1000_helper_calls(deep):
    chain = deep[0]
    value, grad = ms.value_and_grad(chain.f1)(X)
    check(chain.f1, value, grad)
    np.testing.assert_allclose(grad, chain_derivative(X, CHAIN), rtol=1e-12)


def test_chain_through_grad_and_grad_operation(deep):
    chain = deep[0]
    expected = chain_derivative(X, CHAIN)
    np.testing.assert_allclose(ms.grad(chain.f1)(X), expected, rtol=1e-12)
    (dx,) = ms.ops.GradOperation(get_all=True)(chain.f1)(ms.Tensor(X))
    np.testing.assert_allclose(dx.asnumpy(), expected, rtol=1e-12)


def test_chain_grad_of_grad(deep):
    chain = deep[0]
    second = ms.grad(ms.grad(chain.f1))(X)
    first = ms.grad(chain.f1)
    np.testing.assert_allclose(second, central(lambda v: np.sum(first(v)), X), rtol=1e-6, atol=1e-8)


def test_chain_adjoint_source_and_cli(deep, capsys):
    chain, path = deep[0], deep[1]
    source = ms.adjoint_source(chain.f1, X)
    compile(source, "<adjoint>", "exec")
    assert main(["show", f"{path}:f1"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "\ndef f1_grad(" in out


def test_expression_of_5000_terms(deep):
    terms = deep[2]
    value, grad = ms.value_and_grad(terms.g)(X)
    check(terms.g, value, grad)
    np.testing.assert_allclose(grad, np.full(3, sum(range(TERMS - 9, TERMS + 1))))


def test_expression_of_5000_terms_in_the_cli(deep, capsys):
    assert main(["show", f"{deep[3]}:g"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "def g_grad(" in out


@pytest.mark.parametrize("source", [
    "\n".join([f"def f{i}(x):\n    return f{i + 1}(x) * 1.001 + 0.01 * x\n"
               for i in range(1, 100)] + ["def f100(x):\n    return np.sin(x)\n"]),
    "def f1(x):\n    return np.sum(" + " + ".join(
        ["x"] + [f"x * {k}.0" for k in range(2, 301)]) + ")\n",
], ids=["100 helpers, three ops each", "300 array terms"])
def test_the_cases_that_crashed(tmp_path, source):
    """Each crashed with a RecursionError from inside the compiler."""
    module, _ = write_module(tmp_path, "deep_reported", "import numpy as np\n\n" + source)
    value, grad = ms.value_and_grad(module.f1)(X)
    check(module.f1, value, grad)


def test_walks_over_a_deep_tree_are_loops(deep):
    """Once parsed, nothing in the frontend recurses along an expression: fence,
    comprehension rewriting, the local-name scan and the lifter run at the
    default recursion limit on a 5,000-deep tree."""
    terms, path = deep[2], deep[3]
    text = path.read_text()
    tree = depth.on_deep_stack(gast.parse, text).body[0]
    source = Source(str(path), 1, tuple(text.splitlines(True)))
    fence(tree, source)
    desugar_comprehensions(tree)
    assert local_names(tree) == {"x"}
    ms.value_and_grad(terms.g)(X)  # parses (on the deep stack) and caches the tree
    lifted = lift(terms.g, (spec_of(X),))
    assert len(lifted.function.body.ops) > 10


def test_ir_stages_are_flat(tmp_path):
    """Reverse mode (activity included), every pass (and the verifier), code
    generation and compile() of the result run within 150 frames of the caller on
    the IR of a 250-term expression: nothing recurses once per op."""
    terms = " + ".join(["x"] + [f"x * {k}.0" for k in range(2, 251)])
    module, _ = write_module(tmp_path, "deep_flat", f"def f(x):\n    return {terms}\n")
    lifted = depth.on_deep_stack(lift, module.f, (spec_of(X),))
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(_frames() + 150)
    try:
        adjoint = optimize(vjp_function(lifted.function, [0], [ONES], with_outputs=True))
        source, _ = to_source(adjoint)
        compile(source, "<flat>", "exec")
    finally:
        sys.setrecursionlimit(saved)
    assert len(adjoint.body.ops) > 500


def _frames() -> int:
    frame, n = sys._getframe(), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n


def test_fence_finds_what_is_deep_inside(tmp_path):
    terms = " + ".join(["x"] * 3000)
    module, path = write_module(tmp_path, "deep_fstring", (
        "def h(x):\n"
        f"    return {terms} + len(f'{{x}}')\n"))
    with pytest.raises(UnsupportedSyntaxError, match="f-string") as info:
        ms.grad(module.h)(X)
    assert info.value.loc.file == str(path) and info.value.loc.line == 2


def test_too_deep_a_chain_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.setattr(depth, "RECURSION_LIMIT", 2500)
    module, path = write_module(tmp_path, "deep_chain_short_limit", chain_source(400))
    with pytest.raises(NestingTooDeepError, match="nested too deeply") as info:
        ms.grad(module.f1)(X)
    error = info.value
    assert isinstance(error, RecursionError)
    assert error.loc.file == str(path) and error.loc.text.strip().startswith("return f")
    assert "shorten chains of helper calls" in str(error)
    notes = error.__notes__
    assert len(notes) <= 21 and "more enclosing calls" in notes[-1]
    assert sys.getrecursionlimit() < 2500  # restored


def test_too_deep_an_expression_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.setattr(depth, "RECURSION_LIMIT", 2500)
    module, path = write_module(tmp_path, "deep_sum_short_limit", sum_source(3000))
    with pytest.raises(NestingTooDeepError, match="source of 'g'") as info:
        ms.grad(module.g)(X)
    assert info.value.loc.file == str(path) and info.value.loc.line == 1
    assert "split long expressions" in str(info.value)


def test_loops_nested_beyond_python_are_a_located_error(tmp_path):
    n = 22
    lines = ["import numpy as np", ""]
    for i in range(1, n):
        lines += [f"def k{i}(x):", "    for i in range(2):",
                  f"        x = k{i + 1}(x)", "    return x", ""]
    lines += [f"def k{n}(x):", "    return np.sin(x)", ""]
    module, path = write_module(tmp_path, "deep_loops", "\n".join(lines))
    with pytest.raises(NestingTooDeepError, match="inside 20 others") as info:
        ms.grad(module.k1)(X)
    assert info.value.loc.file == str(path)
    assert info.value.loc.text.strip() == "for i in range(2):"
    assert "20 nested loops" in str(info.value)


def test_a_users_runaway_recursion_stays_the_users(tmp_path, monkeypatch):
    monkeypatch.setattr(depth, "RECURSION_LIMIT", 5000)  # to fail fast
    module, path = write_module(tmp_path, "deep_runaway", (
        "class Settings:\n"
        "    @property\n"
        "    def scale(self):\n"
        "        return self.scale\n"
        "\n"
        "SETTINGS = Settings()\n"
        "\n"
        "def f(x):\n"
        "    return x * SETTINGS.scale\n"))
    with pytest.raises(RecursionError) as info:
        ms.grad(module.f)(X)
    assert not isinstance(info.value, NestingTooDeepError)
    assert any(f"{path}:9" in note for note in info.value.__notes__)


def test_concurrent_compilations_restore_the_recursion_limit(deep):
    import threading

    before = sys.getrecursionlimit()
    results = []

    def work(scale):
        results.append((scale, ms.grad(lambda x: np.sum(np.sin(x) * scale))(X)))

    threads = [threading.Thread(target=work, args=(float(k),)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6 and sys.getrecursionlimit() == before
    for scale, grad in results:
        np.testing.assert_allclose(grad, np.cos(X) * scale, rtol=1e-12)
