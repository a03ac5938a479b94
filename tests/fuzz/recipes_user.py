"""Recipes for functions registered with ``ad_compiler.primitive`` (tests/fuzz/user_rules.py)."""
from __future__ import annotations

from . import user_rules  # noqa: F401  (registers them, as generated programs do)
from .recipes import _unary

RECIPES = {"tests.fuzz.user_rules.smooth_relu": _unary("smooth_relu({0})"),
           "tests.fuzz.user_rules.softsign": _unary("softsign({0})"),
           "tests.fuzz.user_rules.logcosh": _unary("logcosh({0})")}
