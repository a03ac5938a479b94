"""The page of ``ad-compiler show --html`` in a real headless browser (Chromium).

Skipped when no Chromium or Chrome is installed (``apt-get install chromium`` on
Debian). The browser runs the page's script, so ``--dump-dom`` shows what it did
(tabs switched, user lines annotated), and ``--screenshot`` shows that it draws.
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter

import pytest

from ad_compiler.cli import main

BROWSER = next(filter(None, map(shutil.which, ["chromium", "chromium-browser", "google-chrome",
                                               "google-chrome-stable", "chrome"])), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium or Chrome installed")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--window-size=1200,800"]


@pytest.fixture
def page(model, capsys):
    out = model.path.parent / "page.html"
    assert main(["show", f"{model.path}:scaled_wave", "--grad-position", "0,1",
                 "--args", "f32[2,3] f32[3]", "--html", str(out)]) == 0
    capsys.readouterr()
    return out


def _browse(tmp_path, url: str, *action: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "profile"
    try:
        return subprocess.run([BROWSER, *FLAGS, f"--user-data-dir={profile}", *action, url],
                              capture_output=True, timeout=90, check=True)
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"{BROWSER} failed: {exc.stderr.decode(errors='replace')[-2000:]}")


def _png(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and the decompressed (still filtered) scanlines of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (n,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        chunks[kind] = chunks.get(kind, b"") + data[pos + 8:pos + 8 + n]
        pos += 12 + n
    width, height = struct.unpack(">II", chunks[b"IHDR"][:8])
    return width, height, zlib.decompress(chunks[b"IDAT"])


def test_the_page_draws_something_in_a_browser(tmp_path, page):
    png = tmp_path / "page.png"
    _browse(tmp_path, page.as_uri(), f"--screenshot={png}")
    shot = png.read_bytes()
    width, height, rows = _png(shot)
    assert (width, height) == (1200, 800)
    # a blank page is one colour: its filtered rows are nearly all one byte value and
    # compress to a few kilobytes; text in two panes gives many values
    common = Counter(rows).most_common(1)[0][1]
    assert len(shot) > 20_000 and common < 0.98 * len(rows) and len(set(rows)) > 64


def test_the_script_sets_up_tabs_and_links(tmp_path, page, model):
    # an address naming a user line lights the gradient lines that come from it
    named = f"u0-{model.line_of('wave = np.sin(shifted)')}"
    dom = _browse(tmp_path, f"{page.as_uri()}#{named}", "--dump-dom").stdout.decode()
    assert '<body data-ready="yes">' in dom                     # the script ran to its end
    assert '<section id="panel-ir" role="tabpanel" class="pane" hidden="">' in dom
    assert 'aria-controls="panel-source" aria-selected="true"' in dom
    assert 'aria-controls="panel-ir" aria-selected="false"' in dom
    links = set(_attr("data-from", dom))
    assert len(links) >= 2 and all(f'id="{u}"' in dom for u in links)
    # each user line a gradient line comes from now names those lines
    annotated = [t for t in _attr("title", dom) if t.startswith("gradient line")]
    assert len(annotated) == len(links)
    lit = re.findall(r'<a class="line band\d hot" id="g\d+" data-line="\d+" data-from="([^"]+)"',
                     dom)
    assert lit and set(lit) == {named} and lit == [u for u in _attr("data-from", dom)
                                                   if u == named]


def _attr(name: str, dom: str) -> list:
    return re.findall(rf'{name}="([^"]*)"', dom)
