"""The corpus of functions.py as one module, shared by the tests that run it (gradients,
forward mode, second order), whatever name pytest imports each test file under."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_NAME = "ad_compiler_tests_corpus_functions"


def corpus():
    """The module ``tests/corpus/functions.py`` (loaded once per process)."""
    if _NAME not in sys.modules:
        spec = importlib.util.spec_from_file_location(_NAME, Path(__file__).with_name("functions.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module
        spec.loader.exec_module(module)
    return sys.modules[_NAME]
