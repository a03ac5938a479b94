"""docs/primitives.md is generated from the registry and must be current."""
from __future__ import annotations

import pathlib

from ad_compiler import catalog
from ad_compiler.ad import rules

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "primitives.md"


def test_the_page_is_current():
    assert PAGE.read_text(encoding="utf-8") == catalog.render(), (
        "docs/primitives.md is out of date: run "
        "`python -m ad_compiler.catalog --write docs/primitives.md` and read the diff")


def test_every_differentiable_primitive_has_both_rules():
    missing = [n for n, p in rules.PRIMITIVES.items()
               if p.family != "user" and not p.nondiff and (p.vjp is None or p.jvp is None)]
    assert not missing


def test_the_table_reads_the_rules():
    listed = {e.spelling: e for e in catalog.entries()[0]}
    assert listed["np.sin"].prims == ("sin",) and listed["np.sin"].mode("vjp") == "yes"
    assert listed["np.floor"].mode("vjp") == "zero" and listed["np.floor"].mode("jvp") == "zero"
    assert "sum" in listed["x.sum()"].prims
    assert listed["ms.grad"].section == "Gradients inside compiled code"


def test_a_function_no_sample_fits_is_reported(monkeypatch):
    def needs_four(b, a, c, d, e):
        raise TypeError("no")
    monkeypatch.setitem(rules._LOWERINGS, -1, (catalog, needs_four))
    assert catalog._probe(needs_four) is None
