"""The docs cite only files inside the repository, and their links resolve."""
from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_relative_links_resolve_inside_the_repository():
    broken = []
    for page in PAGES:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            path = (page.parent / target).resolve()
            if ROOT not in path.parents or not path.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken


def test_no_page_or_module_cites_a_file_outside_the_repository():
    outside = re.compile(r"\b(SPEC|DESIGN|STYLE)\.md\b|\.\./shared")
    files = PAGES + sorted((ROOT / "ad_compiler").rglob("*.py"))
    hits = [str(f.relative_to(ROOT)) for f in files if outside.search(f.read_text(encoding="utf-8"))]
    assert not hits
