"""The printed gradient runs as printed: ``adjoint_source`` text exec'd alone, in a fresh
namespace, computes what the compiled gradient computes, for every case of the corpus
(tests/corpus/functions.py); the docs examples run every gradient they compile both
ways (tests/docs/test_examples.py); tracebacks and pdb show the generated lines."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
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
