"""The printed gradient runs as printed: ``adjoint_source`` text exec'd alone, in a fresh
namespace, computes what the compiled gradient computes, for every case of the corpus
(tests/corpus/functions.py); the docs examples run every gradient they compile both
ways (tests/docs/test_examples.py); tracebacks and pdb show the generated lines."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler.api.extension import forget
from ad_compiler.api.signature import flatten
from ad_compiler.codegen.module import constant_source
from tests.corpus.load import corpus
from tests.standalone import assert_same, printed_function

CASES = [c for c in corpus().CORPUS if "grad" not in c.xfail and "source" not in c.xfail]


def compiled_inputs(c):
    """The compiled gradient of case ``c`` and the flat inputs a call passes it."""
    args = c.make()
    entry, state = ms.grad(c.function, grad_position=c.grad_position).entry_and_state(args)
    inputs = flatten(args)[0] + [p.asnumpy() for p in entry.params] + list(state) \
        + [draw() for _, draw in entry.randoms]
    return entry.compiled, inputs


@pytest.mark.parametrize("c", [pytest.param(c, id=c.name) for c in CASES])
def test_printed_gradient_runs_alone_and_agrees(c):
    compiled, inputs = compiled_inputs(c)
    printed = printed_function(compiled)
    assert printed is not compiled.fn and printed.__globals__ is not compiled.fn.__globals__
    assert_same(printed(*inputs), compiled.fn(*inputs))


def test_every_corpus_function_is_checked():
    assert len(CASES) >= 0.9 * len(corpus().CORPUS)


# -- constants ----------------------------------------------------------------------
@pytest.mark.parametrize("value", [
    np.array(1.0), np.array(0.1, np.float32), np.array(-0.0), np.float64(0.3),
    np.float32(1 / 3), np.array([np.nan, np.inf, -np.inf, 1e-300, 5e-324]),
    np.arange(6, dtype=np.int32).reshape(2, 3), np.array([True, False]),
    np.array([1 + 2j, np.nan - 1j], np.complex64), np.zeros((0, 3)), np.array([], np.int64),
    np.float16(0.1) * np.ones(3, np.float16), np.linspace(0, 1, 1000, dtype=np.float32),
    np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32), np.dtype(">f4"),
    (np.array(2.0), 3, None), np.uint8(7)])
def test_constants_are_rebuilt_exactly(value):
    text = constant_source(value)
    back = eval(text, {"np": np, "rt": ms.runtime, "math": __import__("math")})  # noqa: S307
    assert_same(back, value)
    if isinstance(value, np.ndarray) and value.size > 100:
        assert text.startswith("rt.array_from_base64(")


def test_float32_constants_are_written_with_float32_digits():
    assert constant_source(np.array([0.1, 0.25], np.float32)) == \
        "np.array([0.1, 0.25], dtype=np.float32)"
    assert constant_source(np.array(1.0)) == "np.array(1.0)"


# -- tracebacks and pdb -----------------------------------------------------------------
def inverse_loss(a):
    b = np.linalg.inv(a)
    return np.sum(b * b)


def sin_loss(x, y):
    z = x * np.sin(y)
    return np.sum(z)


@pytest.mark.parametrize("calls", [1, 2])   # the general path, then the fast path
def test_a_traceback_shows_the_generated_line_and_the_users_line(calls):
    import traceback
    grad = ms.grad(inverse_loss)
    grad(np.eye(2))
    for _ in range(calls):
        with pytest.raises(np.linalg.LinAlgError) as info:
            grad(np.ones((2, 2)))                 # singular: raised inside the gradient
    text = "".join(traceback.format_exception(info.value))
    filename = ms.api.transforms.compiled_entry(inverse_loss, np.eye(2)).compiled.filename
    line = next(i for i, text in enumerate(
        ms.adjoint_source(inverse_loss, np.eye(2)).splitlines(), 1) if text == "    b = np.linalg.inv(a)")
    assert f'File "{filename}", line {line}, in inverse_loss_grad\n' \
           "    b = np.linalg.inv(a)\n" in text
    first = inverse_loss.__code__.co_firstlineno
    assert text.count(f"inverse_loss_grad line {line}: b = np.linalg.inv(a)  (from "
                      f"test_standalone.py:{first + 1}: b = np.linalg.inv(a))\n") == 1


def test_pdb_steps_into_the_generated_lines():
    import io
    import pdb
    compiled = ms.api.transforms.compiled_entry(sin_loss, "f64[3]", "f64[3]").compiled
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO("n\nl\np sin_y\nc\n"), stdout=out, nosigint=True)
    debugger.use_rawinput = False
    got = debugger.runcall(compiled.fn, np.ones(3), np.zeros(3))
    np.testing.assert_array_equal(got[0], np.sin(np.zeros(3)))
    text = out.getvalue()
    lines = compiled.source.splitlines()
    at = lines.index("    sin_y = np.sin(y)") + 1
    assert f"{compiled.filename}({at})sin_loss_grad()\n-> sin_y = np.sin(y)" in text
    assert f"# test_standalone.py:{sin_loss.__code__.co_firstlineno + 1}: z = x * np.sin(y)" \
        in text                                      # 'l' lists the lines around, comment too
    assert "array([0., 0., 0.])" in text             # 'p sin_y' after stepping over it


# -- functions of registered primitives -------------------------------------------------
def softplus_standalone(x):
    return np.logaddexp(0.0, x)


def _softplus_vjp(b, ct, out, x):
    return (b.mul(ct, b.sigmoid(x)),)


def local_softplus_standalone(x):
    return np.logaddexp(0.0, x)


def test_a_registered_function_is_imported_or_read_from_the_registry():
    not_importable = local_softplus_standalone
    del globals()["local_softplus_standalone"]   # no longer found by its module and name
    for fn in (softplus_standalone, not_importable):
        ms.primitive(fn, vjp=_softplus_vjp)
    try:
        def loss(x):
            return np.sum(softplus_standalone(x) * not_importable(x))
        compiled = ms.api.transforms.compiled_entry(loss, "f64[3]").compiled
        assert f"from {__name__} import softplus_standalone\n" in compiled.source
        assert "local_softplus_standalone = rt.registered_function(" \
               "'local_softplus_standalone')\n" in compiled.source
        assert "from ad_compiler import runtime as rt\n" in compiled.source
        x = np.ones(3) * 0.3
        assert_same(printed_function(compiled)(x), compiled.fn(x))
    finally:
        forget(softplus_standalone)
        forget(not_importable)
        globals()["local_softplus_standalone"] = not_importable


# -- the measures of benchmarks/printed.py -----------------------------------------------
def test_the_printed_corpus_reads_no_undefined_name_and_has_few_dead_copies():
    from benchmarks.printed import corpus_sources, measure
    found = measure(corpus_sources())
    assert found["undefined names"] == {}
    # left: swaps (u, v = v, u), loops inside branches started from a value the other
    # branch reads, values handed on in a nested loop's break machinery
    # coalescing (codegen/coalesce.py) is off: its plan shared a name between two live
    # values (wrong gradients, fuzz seeds 202982, 203977, 204054), so the copies between a
    # loop's versions of a variable are written again; the target is 0
    assert sum(len(f) for f in found["dead copies"].values()) <= 450, found["dead copies"]


def test_the_measures_find_what_they_count():
    from benchmarks.printed import dead_copies, repeated_comments, undefined_names
    source = ("import numpy as np\n\n\ndef f(x, n):\n    # m.py:1: h = x\n    h_1 = x\n"
              "    for i in range(n):\n        h_2 = np.sin(h_1)\n        h_1 = h_2\n"
              "    # m.py:1: h = x\n    h = h_1 * c\n    # m.py:1: h = x\n    return h\n")
    assert undefined_names(source) == ["c"]
    assert dead_copies(source) == ["h_1 = h_2"]
    assert repeated_comments(source) == ["# m.py:1: h = x"] * 2    # written 3 times
