"""The examples in README.md and docs/ run, and print what the docs say they print.

Three kinds of marked block, each after an HTML comment:

    <!-- example: NAME -->          a program and its exact stdout: run as NAME.py
    ```python
    print(...)
    ```
    ```text
    ...
    ```

    <!-- example: NAME -->          commands of the CLI and their exact output
    ```console
    $ ad-compiler show model.py:f
    ...
    [exit status 2]
    ```

    <!-- file: NAME.py -->          a module the doc's examples import or show
    ```python
     1  import numpy as np
    ```

All examples of one document share a temporary directory, which holds its files
and each example as ``NAME.py``, and run in order in one Python process (for
speed). A console example runs each ``$ ad-compiler ARGS`` or ``$ python -m
ad_compiler ARGS`` line; its stdout and stderr follow it, then ``[exit status N]``
when N is not 0. A file listing whose lines all start with their own number
(`` 1  import numpy``) is written without the numbers. Paths into the directory
are printed without it. A ```text or ```console block outside an example is an
error: output in the docs is tested output (other shell commands go in ```bash
blocks, which are not run).

``python tests/docs/test_examples.py [--update] [FILE.md ...]`` runs the examples
and shows the differences, or with ``--update`` writes the real output into the
docs (read the diff: a changed number may be a bug).
"""
import contextlib
import io
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"<!-- (?P<kind>example|file): (?P<name>[\w.-]+) -->\s*"
                    r"```(?P<lang>python|console)\n(?P<code>.*?)```"
                    r"(?:\s*```text\n(?P<out>.*?)```)?", re.S)
_MARK = re.compile(r"<!-- (example|file):")
_OUTPUT = re.compile(r"^```(text|console)$", re.M)
_REQUIRES = re.compile(r"<!-- requires: (?P<module>[\w.]+) -->")
_NUMBERED = re.compile(r"^ *(\d+)(?:  |$)")
_COMMAND = re.compile(r"^\$ (?:ad-compiler|python -m ad_compiler)(?: (.*))?$")


def parse(text):
    """The marked blocks of a document, in order: dicts of kind, name, code, out, span."""
    items = []
    for m in _BLOCK.finditer(text):
        kind = "file" if m["kind"] == "file" else m["lang"]
        code, out, span = m["code"], m["out"], m.span("out")
        if (out is None) == (kind == "python"):
            raise ValueError(f"{m['name']}: a python example, and nothing else, is followed "
                             "by a ```text block")
        if kind == "console":  # the block holds the commands and their output
            out, span = code, m.span("code")
        elif kind == "file":
            code = _unnumbered(code)
        items.append(dict(kind=kind, name=m["name"], code=code, out=out, span=span))
    return items


def check_marks(text):
    """Every mark opens a block, and every output block belongs to an example."""
    items = parse(text)
    starts = {m.start() for m in _BLOCK.finditer(text)}
    stray = [m.start() for m in _MARK.finditer(text) if m.start() not in starts]
    if stray:
        raise ValueError(f"the mark at line {_line(text, stray[0])} is not followed by a "
                         "```python or ```console block")
    covered = [range(*m.span()) for m in _BLOCK.finditer(text)]
    loose = [m.start() for m in _OUTPUT.finditer(text)
             if not any(m.start() in r for r in covered)]
    if loose:
        raise ValueError(f"output block outside an example at line {_line(text, loose[0])}")
    names = [i["name"].removesuffix(".py") for i in items if i["kind"] != "console"]
    clash = {n for n in names if names.count(n) > 1 or n in sys.stdlib_module_names
             or n in ("numpy", "gast", "astor", "ad_compiler", "pytest")}
    if clash:
        raise ValueError(f"example or file names used twice or shadowing a module: {clash}")
    return items


def _line(text, offset):
    return text.count("\n", 0, offset) + 1


def _unnumbered(code):
    lines = code.splitlines(True)
    numbers = [_NUMBERED.match(line) for line in lines]
    if lines and all(m and int(m[1]) == i for i, m in enumerate(numbers, 1)):
        return "".join(line[m.end():] or "\n" for line, m in zip(lines, numbers))
    return code


def start(doc, directory):
    """Write the document's files and examples into ``directory`` and start running them."""
    items = check_marks(doc.read_text())
    for item in items:
        if item["kind"] != "console":
            name = item["name"] if item["kind"] == "file" else f"{item['name']}.py"
            (directory / name).write_text(item["code"])
    (directory / "examples.json").write_text(json.dumps(items))
    return subprocess.Popen([sys.executable, __file__, "--run", str(directory)],
                            cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def finish(process, directory):
    """``{name: output}`` of the examples ``start`` ran (raises if the runner failed)."""
    try:
        _, err = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    if process.returncode:
        raise RuntimeError(err)
    return json.loads((directory / "results.json").read_text())


# ---- run inside the subprocess, in the document's directory ----

def _run_python(item):
    import runpy
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(f"{item['name']}.py", run_name="__main__")
        except BaseException:  # noqa: BLE001 - the traceback is the test's failure message
            return out.getvalue() + "\n[the example raised]\n" + traceback.format_exc()
    return out.getvalue()


def _run_console(item):
    from ad_compiler.cli import main
    out = io.StringIO()
    for line in item["code"].splitlines():
        if not line.startswith("$ "):
            continue
        m = _COMMAND.match(line)
        print(line, file=out)
        if m is None:
            print("[only ad-compiler and python -m ad_compiler commands are run]", file=out)
            continue
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                status = main(shlex.split(m[1] or ""))
            except SystemExit as e:
                status = e.code
        if status:
            print(f"[exit status {status}]", file=out)
    return out.getvalue()


def run_all(directory):
    os.chdir(directory)
    sys.path.insert(0, str(directory))
    results = {}
    for item in json.loads(pathlib.Path("examples.json").read_text()):
        run = {"python": _run_python, "console": _run_console}.get(item["kind"])
        if run:
            text = run(item)
            for path in {str(directory), os.path.realpath(directory)}:
                text = text.replace(path + os.sep, "")
            results[item["name"]] = text
    pathlib.Path("results.json").write_text(json.dumps(results))


# ---- the tests ----

def missing_requirements(doc) -> list:
    """The optional modules a document's examples need (``<!-- requires: dask -->``) that
    are not installed: its examples are skipped, not failed."""
    import importlib.util
    return [m for m in _REQUIRES.findall(doc.read_text())
            if importlib.util.find_spec(m.partition(".")[0]) is None]


def _documented():
    for doc in DOCS:
        for item in parse(doc.read_text()):
            if item["kind"] != "file":
                yield doc, item


if __name__ != "__main__":  # imported by pytest, not run as the runner
    import pytest

    @pytest.fixture(scope="session")
    def doc_results(tmp_path_factory):
        """Every document's examples, run in one process per document, all at once."""
        started, cache = {}, {}
        for doc in DOCS:
            if missing_requirements(doc):
                continue
            directory = tmp_path_factory.mktemp(doc.stem)
            try:
                started[doc] = (start(doc, directory), directory)
            except ValueError as e:  # reported by test_marks_are_well_formed
                cache[doc] = e

        def results(doc):
            if doc not in cache:
                cache[doc] = finish(*started[doc])
            if isinstance(cache[doc], Exception):
                raise cache[doc]
            return cache[doc]
        return results

    @pytest.mark.parametrize("doc, item", [pytest.param(d, i, id=f"{d.stem}:{i['name']}")
                                           for d, i in _documented()])
    def test_documented_example(doc_results, doc, item):
        missing = missing_requirements(doc)
        if missing:
            pytest.skip(f"{doc.name} needs {', '.join(missing)}, an optional extra (pyproject.toml)")
        assert doc_results(doc)[item["name"]] == item["out"]

    @pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
    def test_marks_are_well_formed(doc):
        check_marks(doc.read_text())

    def test_examples_are_found():
        assert sum(1 for _ in _documented()) > 1


def main(argv):
    """Run the examples of the named documents; show or (--update) write the differences."""
    update = "--update" in argv
    docs = [pathlib.Path(a).resolve() for a in argv if a != "--update"] or DOCS
    failed = 0
    for doc in docs:
        with tempfile.TemporaryDirectory() as d:
            results = finish(start(doc, pathlib.Path(d)), pathlib.Path(d))
        text = doc.read_text()
        for item in reversed(parse(text)):
            got = results.get(item["name"])
            if got is None or got == item["out"]:
                continue
            failed += 1
            print(f"--- {doc.name}:{item['name']}\n{got}")
            if update:
                text = text[:item["span"][0]] + got + text[item["span"][1]:]
        if update:
            doc.write_text(text)
    return 1 if failed and not update else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        run_all(pathlib.Path(sys.argv[2]))
    else:
        sys.exit(main(sys.argv[1:]))
