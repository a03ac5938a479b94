"""The ``ad-compiler`` command: ``show`` and ``demo``, in process and as a subprocess."""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ad_compiler
from ad_compiler.cli import main

COMMENT = re.compile(r"^\s*# (?P<file>[^:]+):(?P<line>\d+): (?P<text>.*)$")


def _show(capsys, model, name, *options):
    code = main(["show", f"{model.path}:{name}", *options])
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    return out


def _function(source) -> ast.FunctionDef:
    """The generated function, once the source has compiled as Python."""
    compile(source, "<generated>", "exec")
    (fn,) = [node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]
    return fn


def _signature(source):
    return [a.arg for a in _function(source).args.args]


def _n_returned(source) -> int:
    (ret,) = [n for n in ast.walk(_function(source)) if isinstance(n, ast.Return)]
    return len(ret.value.elts)


def _assigned(source) -> set:
    return {n.id for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _assert_comments_cite(source, model, at_least):
    """Every location comment names the user's file and quotes the line it names."""
    cited = set()
    for line in source.splitlines():
        m = COMMENT.match(line)
        if m:
            assert m["file"] == model.path.name
            assert model.lines[int(m["line"]) - 1].strip() == m["text"]
            cited.add(int(m["line"]))
    assert len(cited) >= at_least, source


# -- show: a function ---------------------------------------------------------------------

def test_show_both_positions(capsys, model):
    out = _show(capsys, model, "scaled_wave", "--grad-position", "0,1", "--args", "f32[2,3] f32[3]")
    assert out.startswith("import numpy as np\n") and "\n\ndef scaled_wave_grad(inputs, bias):\n" in out
    assert _n_returned(out) == 2
    assert {"shifted", "wave", "dbias"} <= _assigned(out)
    _assert_comments_cite(out, model, at_least=2)


def test_show_defaults_to_position_0_and_guessed_shapes(capsys, model):
    out = _show(capsys, model, "scaled_wave")
    assert _signature(out) == ["inputs", "bias"] and _n_returned(out) == 1


def test_show_with_sensitivity_argument(capsys, model):
    out = _show(capsys, model, "scaled_wave", "--sens", "--args", "f32[3] f32[3]")
    params = _signature(out)
    assert params[:2] == ["inputs", "bias"] and len(params) == 3 and params[2].startswith("d")
    assert params[2] in {n.id for n in ast.walk(_function(out)) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Load)}          # the sensitivity is read


def test_show_ir_prints_the_adjoint_ir_first(capsys, model):
    out = _show(capsys, model, "scaled_wave", "--ir", "--args", "f64[3] f64[3]")
    ir_text, _, source = out.partition("\n\n")
    assert ir_text.startswith("func scaled_wave_grad(%inputs: f64[3], %bias: f64[3]) {")
    assert ir_text.endswith("}")
    assert f"@{model.path}:{model.line_of('wave = np.sin')}" in ir_text
    assert "\n\ndef scaled_wave_grad(" in source
    _function(source)


# -- show: a Cell ---------------------------------------------------------------------------

def test_show_cell_with_weights(capsys, model):
    out = _show(capsys, model, "Net", "--weights", "--args", "f32[4,3]")
    assert "\n\ndef Net_grad(features, weight):\n" in out   # the Parameter, named
    assert _n_returned(out) == 2 and {"dfeatures", "dweight"} <= _assigned(out)
    _assert_comments_cite(out, model, at_least=2)


def test_show_cell_without_weights(capsys, model):
    out = _show(capsys, model, "Net", "--args", "f32[4,3]")
    assert _n_returned(out) == 1 and "dweight" not in _assigned(out)


# -- show: errors -----------------------------------------------------------------------------

def test_unsupported_syntax_is_a_located_error(capsys, model):
    code = main(["show", f"{model.path}:guarded", "--args", "f32[3]"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.startswith(f"ad-compiler: {model.path}:{model.line_of('try:')}:")
    assert "'try'" in err and "hint:" in err and "Traceback" not in err


# -- demo -------------------------------------------------------------------------------------

def test_demo_prints_the_gradient_and_its_source(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    (dw_line,) = [line for line in out.splitlines() if line.startswith("dw = [")]
    dw = np.array(ast.literal_eval(dw_line[len("dw = "):]))
    w = np.array([[0.5, -0.2], [0.1, 0.4]])
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    h = np.tanh(x @ w)                       # d mean(h*h)/dw = x.T @ (2 h (1 - h^2) / n)
    np.testing.assert_allclose(dw, x.T @ (2 * h * (1 - h * h) / h.size), rtol=1e-5)
    source = out[out.index("def loss_grad("):]
    assert _signature(source) == ["w", "x"] and _n_returned(source) == 1


# -- as a command ---------------------------------------------------------------------------

def _run(*argv, cwd):
    """Run a command in ``cwd`` with the ad_compiler under test first on the path."""
    env = {**os.environ, "PYTHONPATH": str(Path(ad_compiler.__file__).parents[1])}
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)


SHOW = ["show", "cli_model.py:scaled_wave", "--grad-position", "0,1", "--args", "f32[2,3] f32[3]"]


def test_python_m_matches_in_process_output(capsys, model):
    want = _show(capsys, model, "scaled_wave", *SHOW[2:])
    done = _run(sys.executable, "-m", "ad_compiler", *SHOW, cwd=model.path.parent)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == want                # byte-identical across processes


@pytest.mark.skipif(shutil.which("ad-compiler") is None, reason="ad-compiler is not on PATH")
def test_console_script(model):
    done = _run("ad-compiler", *SHOW, cwd=model.path.parent)
    module = _run(sys.executable, "-m", "ad_compiler", *SHOW, cwd=model.path.parent)
    assert done.returncode == 0 and done.stdout == module.stdout
    assert "\n\ndef scaled_wave_grad(inputs, bias):\n" in done.stdout


def test_compile_error_exits_1_without_traceback(model):
    done = _run(sys.executable, "-m", "ad_compiler", "show", "cli_model.py:guarded", "--args",
                "f32[3]", cwd=model.path.parent)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("ad-compiler: ") and "Traceback" not in done.stderr, done.stderr
    assert f"cli_model.py:{model.line_of('try:')}:" in done.stderr


def test_no_command_prints_usage(tmp_path):
    done = _run(sys.executable, "-m", "ad_compiler", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("usage: ad-compiler")
