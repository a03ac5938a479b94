"""Python syntax highlighting with pygments, when it is installed (an optional extra).

``pip install "ad_compiler[highlight]"`` installs pygments. Without it every
function here still works and returns plain text: ``terminal(text)`` is
``text``, ``html_lines(text)`` the escaped lines, ``css()`` empty.

Invariants:

* Highlighting never changes the text: the characters of ``html_lines(text)``
  outside its tags, unescaped, are ``text``, line by line (pygments' lexer is
  told to keep leading and trailing blank lines; a text holding a ``\r``, which
  it would read as a line break, is left plain).
* Everything is escaped: a token's text is written through :func:`html.escape`,
  a class name comes from pygments' fixed table of token types.
* Colour reaches a terminal only when it asks for it: stdout is a terminal,
  ``NO_COLOR`` is unset and ``TERM`` is not ``dumb`` (see :func:`wants_colour`).
"""
from __future__ import annotations

import html
import os

#: the class that scopes the token styles of :func:`css` (``.hl .k {...}``)
SCOPE = "hl"


def _pygments():
    """The pygments modules this uses, or None when pygments is not installed."""
    try:
        from pygments import highlight, token
        from pygments.formatters import HtmlFormatter, TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return None
    return highlight, token, HtmlFormatter, TerminalFormatter, PythonLexer


def available() -> bool:
    """Whether pygments is installed, so that text comes out highlighted."""
    return _pygments() is not None


def wants_colour(stream) -> bool:
    """Whether text written to ``stream`` should be coloured (a terminal that accepts it)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR") \
        and os.environ.get("TERM") != "dumb" and available()


def terminal(text: str) -> str:
    """``text`` (Python source) with ANSI colours, or unchanged without pygments."""
    p = _pygments()
    if p is None:
        return text
    highlight, _, _, TerminalFormatter, PythonLexer = p
    return highlight(text, _lexer(PythonLexer), TerminalFormatter())


def css() -> str:
    """The style rules of the token classes :func:`html_lines` writes ('' without pygments)."""
    p = _pygments()
    if p is None:
        return ""
    return "\n".join(p[2](style="default").get_token_style_defs(f".{SCOPE}"))


def html_lines(text: str) -> list[str]:
    """Each line of ``text`` (Python source, lines split at ``\\n``) as escaped HTML,
    its tokens in ``<span class="...">`` when pygments is installed."""
    p = _pygments()
    if p is None or "\r" in text:  # pygments' lexers read a \r as a line break
        return [html.escape(line) for line in text.split("\n")]
    _, token, _, _, PythonLexer = p
    lines: list[list[list[str]]] = [[]]  # per line: [class, text] runs
    for ttype, value in _lexer(PythonLexer).get_tokens(text):
        cls = _token_class(token, ttype)
        for i, piece in enumerate(value.split("\n")):
            if i:
                lines.append([])
            runs = lines[-1]
            if runs and runs[-1][0] == cls:
                runs[-1][1] += piece
            elif piece:
                runs.append([cls, piece])
    n = text.count("\n") + 1  # the lexer ends the text with a newline: drop its extra line
    lines = lines[:n] + [[]] * (n - len(lines))
    return ["".join(_span(cls, piece) for cls, piece in runs) for runs in lines]


def _lexer(PythonLexer):
    # keep blank lines at both ends, so that line numbers stay the source's
    return PythonLexer(stripnl=False, stripall=False, ensurenl=True)


def _token_class(token, ttype) -> str:
    while ttype not in token.STANDARD_TYPES:
        ttype = ttype.parent
    return token.STANDARD_TYPES[ttype]


def _span(cls: str, text: str) -> str:
    escaped = html.escape(text)
    return f'<span class="{cls}">{escaped}</span>' if cls else escaped
