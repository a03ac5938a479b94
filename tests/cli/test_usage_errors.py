"""Mistakes on the ``ad-compiler`` command line: one line on stderr, exit status 2, no traceback.

A wrong option, file or name is the command's fault (status 2, like argparse's own
usage errors); a function that cannot be compiled is reported with its location and
exits with status 1 (tests/cli/test_cli.py).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ad_compiler
from ad_compiler.cli import main

#: the command runs the ad_compiler under test, wherever the current directory is
ENV = {**os.environ, "PYTHONPATH": str(Path(ad_compiler.__file__).parents[1])}

EXTRA = {
    "cli_bad_syntax": "import numpy as np\n\n\ndef f(x)\n    return x\n",
    "cli_import_fails": "import numpy as np\n\nSCALE = 2.0\nRATIO = SCALE / 0\n\n\ndef f(x):\n"
                        "    return x\n",
    "cli_needs_data": "import numpy as np\n\nDATA = np.load('weights.npy')\n",
    "cli_cells": '''\
import numpy as np
import ad_compiler as ms
from ad_compiler import nn
from numpy import sqrt


class Sized(nn.Cell):
    def __init__(self, n):
        super().__init__()
        self.w = ms.Parameter(np.ones(n), name="w")

    def construct(self, x):
        return np.sum(x * self.w)


class Broken(nn.Cell):
    def __init__(self):
        super().__init__()
        raise RuntimeError("no device found")


class Plain:
    pass


CONST = 3


def raises(x):
    raise ValueError("negative input")
''',
}


@pytest.fixture
def project(model):
    """The conftest's ``cli_model.py`` plus files with mistakes in the same directory."""
    for stem, text in EXTRA.items():
        (model.path.parent / f"{stem}.py").write_text(text)
    yield model.path.parent
    for stem in EXTRA:
        sys.modules.pop(stem, None)


# (arguments after "show", phrases the one-line message must contain)
CASES = {
    "position-not-int": (["cli_model.py:scaled_wave", "--grad-position", "a"],
                         ["--grad-position expects input positions", "got 'a'"]),
    "position-negative": (["cli_model.py:scaled_wave", "--grad-position", "-1"],
                          ["non-negative", "got '-1'"]),
    "position-twice": (["cli_model.py:scaled_wave", "--grad-position", "0,0"],
                       ["each once", "got '0,0'"]),
    "position-empty": (["cli_model.py:scaled_wave", "--grad-position", ""], ["got ''"]),
    "position-out-of-range": (["cli_model.py:scaled_wave", "--grad-position", "0,2",
                               "--args", "f32[3] f32[3]"],
                              ["--grad-position 2 is out of range",
                               "scaled_wave(inputs, bias) has 2 input(s)"]),
    "args-unknown-type": (["cli_model.py:scaled_wave", "--args", "f32[3] vec3"],
                          ["--args: cannot read the type 'vec3'", "f32[3,4]"]),
    "args-too-few": (["cli_model.py:scaled_wave", "--args", "f32[3]"],
                     ["--args gives 1 input type(s) but scaled_wave(inputs, bias) cannot take",
                      "missing a required argument: 'bias'"]),
    "args-too-many": (["cli_model.py:scaled_wave", "--args", "f32[3] f32[3] f32[3]"],
                      ["--args gives 3 input type(s)", "too many positional arguments"]),
    "syntax-error": (["cli_bad_syntax.py:f"],
                     ["cli_bad_syntax.py:4: syntax error", "fix the file"]),
    "import-fails": (["cli_import_fails.py:f"],
                     ["importing cli_import_fails.py failed at line 4: ZeroDivisionError"]),
    "import-reads-missing-data": (["cli_needs_data.py:f"],
                                  ["importing cli_needs_data.py failed at line 3: "
                                   "FileNotFoundError", "weights.npy"]),
    "missing-file": (["missing.py:f"], ["cannot read missing.py: no such file"]),
    "directory": ([".:f"], ["cannot read .: it is a directory"]),
    "missing-name": (["cli_model.py:nothing"],
                     ["cli_model.py has no 'nothing'; it defines scaled_wave, Net, guarded"]),
    "no-name": (["cli_model.py"], ["expected FILE.py:NAME, got 'cli_model.py'"]),
    "empty-name": (["cli_model.py:"], ["expected FILE.py:NAME"]),
    "no-file": ([":scaled_wave"], ["expected FILE.py:NAME"]),
    "cell-needs-arguments": (["cli_cells.py:Sized"],
                             ["cannot build Sized() with no arguments",
                              "missing 1 required positional argument: 'n'",
                              "net = Sized(...)"]),
    "cell-constructor-fails": (["cli_cells.py:Broken"],
                               ["building Broken() failed: RuntimeError: no device found"]),
    "not-callable": (["cli_cells.py:CONST"], ["CONST is of type int, not a Python function"]),
    "plain-class": (["cli_cells.py:Plain"], ["Plain is a class, not a Python function"]),
    "numpy-function": (["cli_cells.py:sqrt"], ["sqrt is of type ufunc, not a Python function"]),
    "module": (["cli_cells.py:np"], ["np is of type module, not a Python function"]),
    "weights-of-a-function": (["cli_model.py:scaled_wave", "--weights", "--args", "f32[3] f32[3]"],
                              ["--weights: scaled_wave is not a Cell and reads no trainable "
                               "Parameter", "leave out --weights"]),
}


def _assert_one_line(err: str, phrases) -> None:
    assert err.startswith("ad-compiler: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    for phrase in phrases:
        assert phrase in err, (phrase, err)


@pytest.mark.parametrize("case", list(CASES))
def test_usage_error_is_one_line_with_status_2(capsys, monkeypatch, project, case):
    argv, phrases = CASES[case]
    monkeypatch.chdir(project)
    code = main(["show", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    _assert_one_line(err, phrases)


@pytest.mark.parametrize("case", ["position-not-int", "syntax-error", "import-fails",
                                  "cell-needs-arguments", "missing-name"])
def test_usage_error_as_a_command(project, case):
    argv, phrases = CASES[case]
    done = subprocess.run([sys.executable, "-m", "ad_compiler", "show", *argv], cwd=project,
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    _assert_one_line(done.stderr, phrases)


def test_a_failed_import_leaves_no_half_module(capsys, monkeypatch, project):
    monkeypatch.chdir(project)
    assert main(["show", "cli_import_fails.py:f"]) == 2
    assert "cli_import_fails" not in sys.modules


def test_a_gradient_function_can_be_shown(capsys, monkeypatch, project):
    (project / "cli_second.py").write_text("import numpy as np\nimport ad_compiler as ms\n\n\n"
                                           "def cube(x):\n    return np.sum(x ** 3)\n\n\n"
                                           "dcube = ms.grad(cube)\n")
    monkeypatch.chdir(project)
    try:
        code = main(["show", "cli_second.py:dcube", "--args", "f64[2]"])
    finally:
        sys.modules.pop("cli_second", None)
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and out.startswith("import numpy as np\n") and "\ndef " in out


def test_an_exception_the_function_raises_is_located_with_status_1(capsys, monkeypatch, project):
    monkeypatch.chdir(project)
    code = main(["show", "cli_cells.py:raises", "--args", "f32[3]"])
    out, err = capsys.readouterr()
    line = EXTRA["cli_cells"].splitlines().index('    raise ValueError("negative input")') + 1
    assert code == 1 and out == ""
    _assert_one_line(err, [f"cli_cells.py:{line}: the function raised ValueError: negative input"])
