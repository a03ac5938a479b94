"""The HTML page of a compiled gradient: the user's source and the gradient side by side.

``render(title, source, locs, ir, first)`` is the page ``ad-compiler show --html``
writes: the user's files on the left (``first``, the file the command named,
first; a file of more than WHOLE_FILE_LINES lines as the lines cited with some
around them), the generated source on the right (``locs[i]``,
from :func:`ad_compiler.codegen.linemap.source_lines`, is the user line that
line ``i + 1`` comes from), and the IR on a second tab. Each generated line
that comes from a user line links to it: pointing at it lights the user line
and every generated line from that user line; a click scrolls to it.

Invariants:

* One self-contained file: its style and script are inline, nothing is loaded
  from anywhere, and the page reads without the script (both tabs shown, plain
  ``#`` links).
* Everything that comes from outside this module is escaped: source lines,
  file names, the IR and the title are written through :func:`html.escape`
  (attributes too); ids and classes are made of numbers. The script holds no
  data: it reads the links from the document.
* The text of each line, tags removed and unescaped, is the line itself, with
  or without pygments (:mod:`ad_compiler.highlight`), so the page can be
  copied from.
* Deterministic: the same arguments give the same bytes.
"""
from __future__ import annotations

import html
import linecache
import os

from . import highlight

#: a file longer than this shows only the lines cited, with CONTEXT lines around them
WHOLE_FILE_LINES = 300
CONTEXT = 3
#: colours told apart: the k-th user line cited has class ``band{k % N_COLOURS}``
N_COLOURS = 8


def render(title: str, source: str, locs: list, ir: str, first: str | None = None) -> str:
    """The page (a str of HTML) for the generated ``source``, its line map and ``ir``.

    The user's files are shown in the order the gradient first cites them, the file
    ``first`` (the one the command named) before the others."""
    cited = _cited(locs)
    files = sorted(dict.fromkeys(file for file, _ in cited), key=lambda f: not _same(f, first))
    head = (f"<h1>{_esc(title)}</h1>\n<p class=\"help\">Point at a line of the gradient to see "
            "the line of your code it comes from; click it to go there.</p>")
    user = "\n".join(_file_pane(i, file, cited) for i, file in enumerate(files)) or \
        '<p class="help">No line of the gradient comes from a line of source.</p>'
    panels = (f'<section id="panel-source" role="tabpanel" class="split">\n'
              f'<div class="pane" id="user">{user}</div>\n'
              f'<div class="pane" id="gradient">{_gradient_pane(source, locs, cited, files)}'
              f'</div>\n</section>\n'
              f'<section id="panel-ir" role="tabpanel" class="pane">{_ir_pane(ir)}</section>')
    return _TEMPLATE.format(title=_esc(title), css=_CSS, token_css=highlight.css(), head=head,
                            tabs=_TABS, panels=panels, script=_SCRIPT)


def _same(file: str, other: str | None) -> bool:
    return other is not None and os.path.realpath(file) == os.path.realpath(other)


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _cited(locs: list) -> dict:
    """(file, line) -> (colour index, text), in the order generated lines first cite them."""
    cited: dict = {}
    for loc in locs:
        if loc is not None and (loc.file, loc.line) not in cited:
            cited[(loc.file, loc.line)] = (len(cited) % N_COLOURS, loc.text)
    return cited


def _user_id(files: list, file: str, line: int) -> str:
    return f"u{files.index(file)}-{line}"


# -- the user's files ------------------------------------------------------------

def _file_pane(index: int, file: str, cited: dict) -> str:
    here = {line: value for (f, line), value in cited.items() if f == file}
    lines = _file_lines(file, here)
    rows = []
    last = 0
    for n in _shown(lines, here):
        if n != last + 1:
            rows.append('<div class="gap">\u22ef</div>')
        colour = f" cited band{here[n][0]}" if n in here else ""
        rows.append(f'<div class="line{colour}" id="u{index}-{n}"><span class="ln">{n}</span>'
                    f'{lines[n]}</div>')
        last = n
    name = os.path.basename(file) or file
    return (f'<h2 title="{_esc(file)}">{_esc(name)}</h2>\n'
            f'<div class="code {highlight.SCOPE}">{"".join(rows)}</div>')


def _file_lines(file: str, here: dict) -> dict:
    """Line number -> HTML of the lines of ``file``; of the cited lines only (their text
    as the map quotes it) when the file cannot be read or has changed since."""
    raw = linecache.getlines(file)
    if all(n <= len(raw) and (not text or raw[n - 1].strip() == text.strip())
           for n, (_, text) in here.items()):
        return dict(enumerate(highlight.html_lines("".join(raw).removesuffix("\n")), 1))
    return {n: highlight.html_lines(text)[0] for n, (_, text) in here.items()}


def _shown(lines: dict, here: dict) -> list:
    """The line numbers shown: all of a short file, else the cited ones with context."""
    if len(lines) <= WHOLE_FILE_LINES:
        return sorted(lines)
    near = range(-CONTEXT, CONTEXT + 1)
    return sorted({c + d for c in here for d in near if c + d in lines})


# -- the generated source and the IR -----------------------------------------------

def _gradient_pane(source: str, locs: list, cited: dict, files: list) -> str:
    rows = []
    for n, (text, loc) in enumerate(zip(highlight.html_lines(source.rstrip("\n")), locs), 1):
        number = f'<span class="ln">{n}</span>'
        if loc is None:
            rows.append(f'<div class="line" id="g{n}">{number}{text}</div>')
            continue
        target = _user_id(files, loc.file, loc.line)
        where = _esc(f"{os.path.basename(loc.file)}:{loc.line}")
        band = cited[(loc.file, loc.line)][0]
        rows.append(f'<a class="line band{band}" id="g{n}" data-line="{n}" data-from="{target}" '
                    f'href="#{target}" title="{where}">{number}{text}</a>')
    return f'<h2>generated gradient</h2>\n<div class="code {highlight.SCOPE}">{"".join(rows)}</div>'


def _ir_pane(ir: str) -> str:
    rows = []
    for n, line in enumerate(ir.rstrip("\n").split("\n"), 1):
        code, sep, comment = line.partition("  # ")
        note = f'<span class="note">{_esc(sep + comment)}</span>' if sep else ""
        rows.append(f'<div class="line"><span class="ln">{n}</span>{_esc(code)}{note}</div>')
    return f'<h2>adjoint IR</h2>\n<div class="code">{"".join(rows)}</div>'


# -- the fixed parts ---------------------------------------------------------------

_TABS = ('<nav role="tablist">'
         '<a role="tab" href="#panel-source" aria-controls="panel-source">source and gradient</a>'
         '<a role="tab" href="#panel-ir" aria-controls="panel-ir">IR</a></nav>')

_TEMPLATE = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
{css}
{token_css}
</style>
</head>
<body>
<header>
{head}
{tabs}
</header>
<main>
{panels}
</main>
<script>
{script}
</script>
</body>
</html>
"""

_CSS = """\
html, body { height: 100%; margin: 0; }
[hidden] { display: none !important; }
body { display: flex; flex-direction: column; font: 14px/1.4 system-ui, sans-serif;
       color: #1f2328; background: #fff; }
header { padding: 8px 16px 0; border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
h1 { font: 600 15px ui-monospace, monospace; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font: 600 13px system-ui, sans-serif; margin: 0; padding: 6px 12px; position: sticky;
     top: 0; background: #f6f8fa; border-bottom: 1px solid #d0d7de; z-index: 1; }
.help { margin: 0 0 6px; color: #57606a; font-size: 12px; }
nav { display: flex; gap: 4px; }
nav a { padding: 6px 14px; color: #57606a; text-decoration: none;
        border: 1px solid transparent; border-bottom: none; border-radius: 6px 6px 0 0; }
nav a[aria-selected="true"] { color: #1f2328; background: #fff; border-color: #d0d7de;
                              margin-bottom: -1px; }
main { flex: 1; min-height: 0; }
.split { display: grid; grid-template-columns: 1fr 1fr; height: 100%; }
.pane { overflow: auto; height: 100%; box-sizing: border-box; position: relative; }
#user { border-right: 1px solid #d0d7de; }
.code { font: 13px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
        padding: 4px 0 24px; }
.line { display: block; white-space: pre; color: inherit; text-decoration: none;
        border-left: 4px solid transparent; padding-right: 12px; }
.ln { display: inline-block; width: 3em; padding-right: 12px; text-align: right;
      color: #8c959f; user-select: none; }
a.line:hover, .line.cited:hover { cursor: pointer; }
.line.hot { background: #fff8c5; }
.line.picked, .line:target { background: #ffe58f; }
.gap { color: #8c959f; padding-left: 3.5em; user-select: none; }
.note { color: #6e7781; }
.band0 { border-left-color: #0969da; } .band1 { border-left-color: #1a7f37; }
.band2 { border-left-color: #bf3989; } .band3 { border-left-color: #bc4c00; }
.band4 { border-left-color: #8250df; } .band5 { border-left-color: #1b7c83; }
.band6 { border-left-color: #9a6700; } .band7 { border-left-color: #cf222e; }"""

_SCRIPT = """\
(() => {
  const all = (s) => Array.from(document.querySelectorAll(s));
  const tabs = all('[role=tab]');
  function select(id) {
    for (const t of tabs) {
      const on = t.getAttribute('aria-controls') === id;
      t.setAttribute('aria-selected', String(on));
      document.getElementById(t.getAttribute('aria-controls')).hidden = !on;
    }
    window.scrollTo(0, 0);  // the panes scroll, not the page
  }
  for (const t of tabs) {
    t.addEventListener('click', (e) => {
      e.preventDefault();
      select(t.getAttribute('aria-controls'));
    });
  }
  select(location.hash === '#panel-ir' ? 'panel-ir' : 'panel-source');

  const from = {};  // user line id -> the generated lines from it
  for (const a of all('a.line[data-from]')) (from[a.dataset.from] ||= []).push(a);
  function hot(id, on) {
    const u = document.getElementById(id);
    if (u) u.classList.toggle('hot', on);
    for (const a of from[id] || []) a.classList.toggle('hot', on);
  }
  function pick(el) {
    for (const p of all('.picked')) p.classList.remove('picked');
    el.classList.add('picked');
    el.scrollIntoView({block: 'center'});
  }
  for (const a of all('a.line[data-from]')) {
    a.addEventListener('mouseenter', () => hot(a.dataset.from, true));
    a.addEventListener('mouseleave', () => hot(a.dataset.from, false));
    a.addEventListener('click', (e) => {
      const u = document.getElementById(a.dataset.from);
      if (u) { e.preventDefault(); pick(u); }
    });
  }
  for (const [id, lines] of Object.entries(from)) {
    const u = document.getElementById(id);
    if (!u) continue;
    u.title = 'gradient line' + (lines.length > 1 ? 's ' : ' ')
      + lines.map((a) => a.dataset.line).join(', ');
    u.addEventListener('mouseenter', () => hot(id, true));
    u.addEventListener('mouseleave', () => hot(id, false));
    u.addEventListener('click', () => pick(lines[0]));
  }
  // the user's pane opens a few lines above the first line the gradient comes from,
  // or at the line the address names, with the lines from it lit
  const first = document.querySelector('#user .cited'), user = document.getElementById('user');
  const named = location.hash.slice(1);
  if (from[named]) hot(named, true);
  else if (first) user.scrollTop = Math.max(0, first.offsetTop - 5 * first.offsetHeight);
  document.body.dataset.ready = 'yes';
})();"""
