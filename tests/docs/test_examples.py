"""The examples in docs/ run, and print what the docs say they print.

An example is marked in the Markdown with an HTML comment naming it, followed by a
```python block and a ```text block holding its exact output:

    <!-- example: aliasing -->
    ```python
    print(...)
    ```
    ```text
    ...
    ```

Each example runs as its own module file ``<name>.py`` in a temporary directory
(the compiler reads source from files), and paths into that directory are printed
without it.
"""
import pathlib
import re
import subprocess
import sys

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
ROOT = DOCS.parent
_EXAMPLE = re.compile(r"<!-- example: (?P<name>[\w-]+) -->\s*```python\n(?P<code>.*?)```\s*"
                      r"```text\n(?P<out>.*?)```", re.S)


def _examples():
    for doc in sorted(DOCS.glob("*.md")):
        for m in _EXAMPLE.finditer(doc.read_text()):
            yield pytest.param(m["name"], m["code"], m["out"], id=f"{doc.stem}:{m['name']}")


@pytest.mark.parametrize("name, code, out", list(_examples()))
def test_documented_example(tmp_path, name, code, out):
    path = tmp_path / f"{name.replace('-', '_')}.py"
    path.write_text(code)
    done = subprocess.run([sys.executable, path.name], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.replace(f"{tmp_path}/", "") == out


def test_examples_are_found():
    assert any(True for _ in _examples())
