"""``ad-compiler show --html``: the page, its links and its escaping; colour on a terminal.

The page is read back with the standard library's HTML parser: the text of each
line, tags removed and entities decoded, must be the line it shows (the user's
file, the printed gradient, the ``--ir`` text), with pygments and without it.
"""
from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import ad_compiler
from ad_compiler import highlight, nn
from ad_compiler.cli import main
from ad_compiler.errors import SourceLoc
from ad_compiler.page import render

COMMENT = re.compile(r"^\s*# (?P<file>[^:]+):(?P<line>\d+): ")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
WAVE = ["--grad-position", "0,1", "--args", "f32[2,3] f32[3]"]


class Lines(HTMLParser):
    """The ``line`` elements of a page: per pane, a dict of attributes and text (the
    line number's span left out), and every <script> element's text."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.panes: dict[str, list[dict]] = {}
        self.scripts: list[str] = []
        self._pane = None
        self._line = None   # the line being read, and the depth of tags open in it
        self._depth = 0
        self._skip = 0      # inside the line number
        self._script = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "script":
            self._script = []
        elif a.get("id") in ("user", "gradient", "panel-ir"):
            self._pane = a["id"]
            self.panes[self._pane] = []
        elif "line" in classes and self._pane:
            self._line, self._depth = dict(a, classes=classes, text=""), 0
            self.panes[self._pane].append(self._line)
        elif self._line is not None:
            self._depth += 1
            self._skip += self._skip > 0 or "ln" in classes

    def handle_endtag(self, tag):
        if tag == "script":
            self.scripts.append("".join(self._script))
            self._script = None
        elif self._line is not None:
            if self._depth == 0:
                self._line = None
            else:
                self._depth -= 1
                self._skip = max(0, self._skip - 1)

    def handle_data(self, data):
        if self._script is not None:
            self._script.append(data)
        elif self._line is not None and not self._skip:
            self._line["text"] += data


def _page(capsys, path: Path, target: str, *options, out=None) -> tuple[str, Lines]:
    out = out or path.parent / "page.html"
    assert main(["show", f"{path}:{target}", *options, "--html", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert printed == f"wrote {out}\n" and err == ""
    page = out.read_text(encoding="utf-8")
    return page, Lines(page)


def _printed(capsys, path: Path, target: str, *options) -> str:
    assert main(["show", f"{path}:{target}", *options]) == 0
    return capsys.readouterr().out


@pytest.fixture(params=["pygments", "plain"])
def highlighting(request, monkeypatch):
    """Both ways a page is written: highlighted by pygments, and plain without it."""
    if request.param == "pygments":
        pytest.importorskip("pygments")
    else:
        monkeypatch.setitem(sys.modules, "pygments", None)  # import pygments fails
    return request.param


# blank lines at both ends, a string over lines, escapes, characters str.splitlines breaks at
TEXTS = ["", "\n", "\n\nx = 1\n\n", "x = 1", "def f():\n    \"\"\"a\n\n<b>\"\"\"\n",
         "s = 'a&b'  # <!-- \\\n\ty = '\u2028\x0c'", "a = 1\r\nb\rc"]


@pytest.mark.parametrize("text", TEXTS)
def test_highlighted_lines_are_the_lines_of_the_text(text, highlighting):
    lines = highlight.html_lines(text)
    assert [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in lines] == text.split("\n")
    coloured = highlighting == "pygments" and text.strip() and "\r" not in text
    assert ("<span" in "".join(lines)) == bool(coloured)


def test_the_page_shows_the_users_file_and_the_printed_gradient(capsys, model, highlighting):
    page, lines = _page(capsys, model.path, "scaled_wave", *WAVE)
    printed = _printed(capsys, model.path, "scaled_wave", *WAVE)
    assert [ln["text"] for ln in lines.panes["gradient"]] == printed.rstrip("\n").split("\n")
    assert [ln["text"] for ln in lines.panes["user"]] == model.lines
    assert [ln["id"] for ln in lines.panes["user"]] == \
        [f"u0-{n}" for n in range(1, len(model.lines) + 1)]
    tokens = re.findall(r'<span class="(\w+)">', page)
    if highlighting == "pygments":
        assert '<span class="k">def</span>' in page and ".hl .k {" in page
    else:
        assert set(tokens) <= {"ln", "note"} and ".hl .k" not in page


def test_each_gradient_line_links_to_the_user_line_it_comes_from(capsys, model):
    _, lines = _page(capsys, model.path, "scaled_wave", *WAVE)
    user = {ln["id"]: ln for ln in lines.panes["user"]}
    linked = [ln for ln in lines.panes["gradient"] if "href" in ln]
    assert linked and lines.panes["gradient"][0]["text"].startswith("def ")
    assert "href" not in lines.panes["gradient"][0]            # the def line is no user line's
    current = None
    for ln in lines.panes["gradient"]:
        m = COMMENT.match(ln["text"])
        if m:
            assert m["file"] == model.path.name
            current = f"u0-{m['line']}"
        if "href" not in ln:
            continue
        target = user[ln["data-from"]]
        assert ln["href"] == "#" + target["id"]
        assert "cited" in target["classes"]
        colour = [c for c in ln["classes"] if c.startswith("band")]
        assert colour and colour[0] in target["classes"]        # one colour per user line
        assert target["id"] == current, ln   # straight-line code: the comment above it
    for line in ("shifted = inputs + bias", "wave = np.sin(shifted)"):
        assert f"u0-{model.line_of(line)}" in {ln["data-from"] for ln in linked}


def test_the_ir_is_on_its_own_tab(capsys, model):
    page, lines = _page(capsys, model.path, "scaled_wave", *WAVE)
    with_ir = _printed(capsys, model.path, "scaled_wave", *WAVE, "--ir")
    ir = with_ir[:with_ir.index("\n\ndef ")]
    assert [ln["text"] for ln in lines.panes["panel-ir"]] == ir.split("\n")
    assert 'role="tab" href="#panel-ir"' in page and 'role="tab" href="#panel-source"' in page


def test_a_cell_with_weights(capsys, model):
    _, lines = _page(capsys, model.path, "Net", "--weights", "--args", "f32[4,3]")
    printed = _printed(capsys, model.path, "Net", "--weights", "--args", "f32[4,3]")
    assert [ln["text"] for ln in lines.panes["gradient"]] == printed.rstrip("\n").split("\n")
    cited = {ln["id"] for ln in lines.panes["user"] if "cited" in ln["classes"]}
    assert f"u0-{model.line_of('hidden = np.tanh')}" in cited


LAYERS = '''\
import numpy as np
from ad_compiler import highlight, nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2, activation="relu")

    def construct(self, x):
        return np.mean(self.fc(x) ** 2)
'''


def test_the_files_of_library_layers_are_shown_after_the_users(capsys, tmp_path):
    path = tmp_path / "dense_model.py"
    path.write_text(LAYERS)
    try:
        page, lines = _page(capsys, path, "Net", "--weights", "--args", "f32[4,3]")
    finally:
        sys.modules.pop("dense_model", None)
    user = lines.panes["user"]
    assert [ln["text"] for ln in user if ln["id"].startswith("u0-")] == LAYERS.rstrip().split("\n")
    library = [ln for ln in user if ln["id"].startswith("u1-")]
    cited = [int(ln["id"].split("-")[1]) for ln in library if "cited" in ln["classes"]]
    source = Path(nn.layers.__file__).read_text().split("\n")
    assert len(source) > 300 and cited                   # a long file: the cited lines only,
    shown = {int(ln["id"].split("-")[1]) for ln in library}  # with 3 lines around each
    assert shown == {n + d for n in cited for d in range(-3, 4)}
    assert [ln["text"] for ln in library] == [source[n - 1] for n in sorted(shown)]
    assert page.count('<div class="gap">') >= 1 and "<h2 title=" in page


def test_a_file_that_cannot_be_read_shows_the_lines_the_map_quotes(tmp_path):
    gone = str(tmp_path / "gone.py")
    at = [SourceLoc(gone, 3, 4, "    y = np.sin(x)  # <b>"), SourceLoc(gone, 9, 4, "    return y")]
    source = "def f_grad(x):\n    dy = np.cos(x)\n    dx = dy\n    return (dx,)\n"
    lines = Lines(render("f", source, [None, at[0], at[1], None], "func f_grad() {\n}", gone))
    assert [(ln["id"], ln["text"]) for ln in lines.panes["user"]] == \
        [("u0-3", "    y = np.sin(x)  # <b>"), ("u0-9", "    return y")]
    assert [ln.get("data-from") for ln in lines.panes["gradient"]] == [None, "u0-3", "u0-9", None]


HOSTILE_NAME = "we<ird&\"q'.py"
HOSTILE = '''\
import numpy as np
import ad_compiler as ms
from ad_compiler import highlight, nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(np.ones(3, np.float32), name='</div><script>alert("w")</script>')

    def construct(self, x):
        y = x * self.w  # </div></a><script>alert('x')</script> & &amp; "q" <!--
        return np.sum(y * y)  # ]]> --> </pre></body>
'''


def test_hostile_source_and_names_are_escaped(capsys, tmp_path, highlighting):
    path = tmp_path / HOSTILE_NAME
    path.write_text(HOSTILE)
    try:
        page, lines = _page(capsys, path, "Net", "--weights", "--args", "f32[3]",
                            out=tmp_path / "a&<b>.html")
        printed = _printed(capsys, path, "Net", "--weights", "--args", "f32[3]")
    finally:
        sys.modules.pop(Path(HOSTILE_NAME).stem, None)
    assert "<script>alert" not in page and "<!--" not in page and "</pre>" not in page
    assert len(lines.scripts) == 1 and "alert" not in lines.scripts[0]
    assert [ln["text"] for ln in lines.panes["user"]] == HOSTILE.rstrip("\n").split("\n")
    assert [ln["text"] for ln in lines.panes["gradient"]] == printed.rstrip("\n").split("\n")
    assert "&lt;ird&amp;&quot;q&#x27;.py</h2>" in page                    # the file's name
    assert any("</div></a><script>alert('x')</script>" in ln["text"]     # the comment
               for ln in lines.panes["gradient"])


def test_a_page_that_cannot_be_written_is_a_usage_error(capsys, model):
    out = model.path.parent / "missing" / "page.html"
    code = main(["show", f"{model.path}:scaled_wave", "--html", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"ad-compiler: cannot write {out}: ") and not out.exists()


# -- colour on a terminal -------------------------------------------------------------

def _colours(capsys, monkeypatch, model, tty: bool, **env) -> str:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(["show", f"{model.path}:scaled_wave", *WAVE]) == 0
    return capsys.readouterr().out


def test_a_terminal_gets_the_source_highlighted(capsys, monkeypatch, model):
    pytest.importorskip("pygments")
    monkeypatch.delenv("NO_COLOR", raising=False)
    plain = _colours(capsys, monkeypatch, model, tty=False, TERM="xterm")
    coloured = _colours(capsys, monkeypatch, model, tty=True, TERM="xterm")
    assert "\x1b[" not in plain and "\x1b[" in coloured
    assert ANSI.sub("", coloured) == plain


@pytest.mark.parametrize("env", [dict(NO_COLOR="1"), dict(TERM="dumb")])
def test_a_terminal_that_declines_colour_gets_none(capsys, monkeypatch, model, env):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" not in _colours(capsys, monkeypatch, model, tty=True, **env)


def test_without_pygments_a_terminal_gets_plain_text(capsys, monkeypatch, model):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setitem(sys.modules, "pygments", None)
    assert "\x1b[" not in _colours(capsys, monkeypatch, model, tty=True, TERM="xterm")


def test_piped_output_is_never_coloured(model):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM="xterm", PYTHONPATH=str(Path(ad_compiler.__file__).parents[1]))
    done = subprocess.run([sys.executable, "-m", "ad_compiler", "show",
                           f"{model.path.name}:scaled_wave", *WAVE], cwd=model.path.parent,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("def scaled_wave_grad(")
    assert "\x1b" not in done.stdout
