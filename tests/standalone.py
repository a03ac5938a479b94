"""Run a generated gradient as printed: its module text exec'd alone, in a fresh namespace.

``run_printed(compiled, inputs)`` execs ``compiled.source`` (the module
``adjoint_source`` and the CLI print) in an empty dict and calls the function it
defines; ``assert_same(got, want)`` checks two results are identical (types,
dtypes, shapes and bits). ``checking_printed()`` makes every function compiled
while it is active define no undefined name and run both ways on every call and
compare (the docs examples run under it).
"""
from __future__ import annotations

import contextlib
import copy
import functools

import numpy as np


def printed_function(compiled):
    """The function ``compiled.source`` defines, exec'd alone in a fresh namespace."""
    namespace: dict = {}
    code = compile(compiled.source, "<printed gradient>", "exec")
    exec(code, namespace)  # noqa: S102 - the text under test
    return namespace[compiled.fn.__name__]


def assert_same(got, want, where="result"):
    """Identical results: same container types, Python types, dtypes, shapes and bits."""
    assert type(got) is type(want), f"{where}: {type(got).__name__} for {type(want).__name__}"
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), f"{where}: {len(got)} items for {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert got.keys() == want.keys(), where
        for k in want:
            assert_same(got[k], want[k], f"{where}[{k!r}]")
    elif hasattr(want, "compute") and not isinstance(want, np.ndarray):  # a lazy array
        assert_same(got.compute(), want.compute(), where)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and got.shape == want.shape, \
            f"{where}: {got.dtype}{got.shape} for {want.dtype}{want.shape}"
        np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        assert got == want or (got != got and want != want), f"{where}: {got!r} != {want!r}"


def _checked(compiled):
    from benchmarks.printed import undefined_names
    missing = undefined_names(compiled.source)
    assert not missing, f"the printed {compiled.fn.__name__} reads {missing} undefined"
    printed = printed_function(compiled)
    real = compiled.fn

    @functools.wraps(real)
    def both(*inputs):
        state = np.random.get_state()  # code that draws (np.random.randn) draws the same
        try:
            got = printed(*copy.deepcopy(inputs))
        except Exception as exc:  # noqa: BLE001 - the compiled function must raise it too
            got = exc
        np.random.set_state(state)
        want = real(*inputs)  # an exception of the compiled function propagates as is
        if isinstance(got, Exception):
            raise AssertionError(f"the printed {real.__name__} raised {got!r}; the compiled "
                                 f"one returned\n{compiled.source}") from got
        assert_same(got, want, f"printed {real.__name__}")
        return want
    return type(compiled)(both, compiled.source, compiled.filename)


@contextlib.contextmanager
def checking_printed():
    """While active, every compiled gradient also runs as printed, and must agree."""
    import ad_compiler.codegen as codegen
    original = codegen.compile_function

    def compile_and_check(*args, **kwargs):
        return _checked(original(*args, **kwargs))
    codegen.compile_function = compile_and_check
    try:
        yield
    finally:
        codegen.compile_function = original
