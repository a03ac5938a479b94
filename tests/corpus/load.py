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


def to_float64(tree):
    """``tree`` with its float arrays and NumPy floats made float64 (containers kept)."""
    import numpy as np
    if isinstance(tree, (tuple, list)):
        return type(tree)(to_float64(t) for t in tree)
    if isinstance(tree, dict):
        return {k: to_float64(v) for k, v in tree.items()}
    if isinstance(tree, (np.ndarray, np.floating)) and tree.dtype.kind == "f":
        return tree.astype(np.float64)
    return tree


def checkable_cases() -> list:
    """The corpus cases a derivative checker can take as they are: not expected to fail,
    with a float argument, and without stop_gradient (which cuts derivatives central
    differences see)."""
    import numpy as np

    def has_float(args) -> bool:
        return any(isinstance(a, float) or isinstance(a, np.ndarray) and a.dtype.kind == "f"
                   for a in args)
    return [c for c in corpus().CORPUS
            if not c.xfail and c.fd_reference is None and has_float(c.make())]
