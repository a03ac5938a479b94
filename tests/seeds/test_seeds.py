"""The MindSpore documents' examples, run with only ``mindspore`` replaced by
``ad_compiler`` in their imports, must print the same numbers the documents show.

The documents are stored beside this file verbatim: ``grad_en.txt`` (doctest
format, ``>>>`` examples with their printed output) and
``tf_gradients_comparison.md`` (a Python block whose ``# Out:`` comments hold
the printed output; its TensorFlow half is not ours to run).
"""
from __future__ import annotations

import contextlib
import doctest
import io
import linecache
import re
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).parent
NUMBER = re.compile(r"-?\d+\.?\d*(?:[eE][-+]?\d+)?")


def port(source: str) -> str:
    """Change only the imports: ``mindspore`` becomes ``ad_compiler``.

    A bare ``import mindspore`` becomes ``import ad_compiler as mindspore`` so that
    the program's later ``mindspore.float32`` keeps its meaning.
    """
    out = []
    for line in source.splitlines():
        if re.fullmatch(r"\s*import\s+mindspore\s*", line):
            line = line.replace("import mindspore", "import ad_compiler as mindspore")
        elif re.match(r"\s*(import|from)\s+mindspore", line):
            line = line.replace("mindspore", "ad_compiler")
        out.append(line)
    return "\n".join(out) + "\n"


def numbers(text: str) -> list[float]:
    return [float(n) for n in NUMBER.findall(text)]


def run_session(chunks):
    """Run (source, expected_output) chunks in one namespace; yield (expected, printed)."""
    namespace: dict = {"__name__": "seed_example"}
    for n, (source, want) in enumerate(chunks):
        code = port(source)
        filename = f"<seed example {n}>"
        # like IPython, keep the source where inspect finds it: the compiler reads it
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, filename, "exec"), namespace)
        yield source, want, buf.getvalue()


def doctest_chunks(text: str):
    examples = doctest.DocTestParser().get_examples(text)
    return [(ex.source, ex.want) for ex in examples]


def markdown_chunks(text: str):
    """The MindSpore half of the example block, split after each ``# Out:`` comment."""
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    ms_part = next(b for b in blocks if "# In MindSpore" in b).split("# In TensorFlow")[0]
    chunks, code, want, in_out = [], [], [], False
    for line in ms_part.splitlines():
        if line.startswith("# Out:"):
            in_out = True
        elif in_out and line.startswith("# "):
            want.append(line[2:])
        else:
            if in_out:
                chunks.append(("\n".join(code), "\n".join(want)))
                code, want, in_out = [], [], False
            code.append(line)
    chunks.append(("\n".join(code), "\n".join(want)))
    return chunks


def check(chunks):
    seen = 0
    for source, want, printed in run_session(chunks):
        expected = numbers(want)
        got = numbers(printed)
        assert len(got) == len(expected), f"{source!r}\nprinted:\n{printed}\nexpected:\n{want}"
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7,
                                   err_msg=f"{source}\nprinted:\n{printed}")
        seen += bool(want.strip())
    return seen


def test_grad_en_examples():
    np.random.seed(0)
    assert check(doctest_chunks((HERE / "grad_en.txt").read_text())) >= 8


def test_tf_gradients_comparison_example():
    chunks = markdown_chunks((HERE / "tf_gradients_comparison.md").read_text())
    assert check(chunks) == 1


def test_seed_files_are_verbatim_copies():
    shared = HERE.parents[2] / "shared" / "seeds"
    if not shared.is_dir():
        pytest.skip("the shared seed directory is not beside this checkout")
    texts = {p.read_text() for p in shared.glob("*.txt")}
    assert (HERE / "grad_en.txt").read_text() in texts
    assert (HERE / "tf_gradients_comparison.md").read_text() in texts
