"""A generated program: its source, its inputs, and running it in plain Python.

``Program.load()`` writes the source to a real ``.py`` file (the compiler reads
source through ``inspect``) and imports it; ``run_plain`` calls a function the
way the oracle's reference does: on fresh copies of the inputs, with NumPy
floating-point warnings raised as errors.
"""
from __future__ import annotations

import copy
import importlib.util
import itertools
import math
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

HEADER = ("import math\n\nimport numpy as np\n\nimport ad_compiler as ms\nfrom ad_compiler import ops\n"
          "from tests.fuzz.user_rules import logcosh, smooth_relu, softsign\n")
_DIR = None
_COUNTER = itertools.count()


@dataclass
class Program:
    seed: int
    source: str                 # a whole module defining ``f``
    args: tuple                 # float64 inputs
    args2: tuple                # a second input of the same signature
    features: tuple = ()
    used: set = field(default_factory=set)   # recipe keys and constructs in the program

    def load(self):
        """The function ``f`` of this program, imported from a fresh file."""
        return load_function(self.source)

    def reproduction(self) -> str:
        """Self-contained Python that runs this program both ways."""
        n = len(self.args)
        return (f"{self.source}\n\nargs = {literal(self.args)}\n"
                f"print(f(*args))\n"
                f"print(ms.value_and_grad(f, grad_position={tuple(range(n))})(*args))\n")


def _directory() -> str:
    global _DIR
    if _DIR is None:
        _DIR = tempfile.mkdtemp(prefix="ad_fuzz_")
    return _DIR


def load_function(source: str, name: str = "f"):
    """Write ``source`` to a new module file, import it, return its ``name``."""
    return getattr(load_module(source), name)


def load_module(source: str):
    """Write ``source`` to a new module file and import it (the compiler reads its source)."""
    module_name = f"fz_{os.getpid()}_{next(_COUNTER)}"
    path = os.path.join(_directory(), module_name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fresh(args):
    return tuple(copy.deepcopy(a) for a in args)


def run_plain(fn, args):
    """``fn(*args)`` on copies of the inputs, NumPy warnings raised as errors."""
    with np.errstate(all="raise"):
        return fn(*fresh(args))


def leaves(value):
    """The numeric leaves of a (nested) result, in order."""
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in leaves(v)]
    if isinstance(value, dict):
        return [x for k in value for x in leaves(value[k])]
    return [value]


def finite(value, bound=math.inf) -> bool:
    """Whether every leaf is a finite real or complex number of magnitude below ``bound``."""
    for leaf in leaves(value):
        if isinstance(leaf, (bool, np.bool_)):
            continue
        try:
            arr = np.asarray(leaf)
        except Exception:
            return False
        if arr.dtype == object or arr.dtype.kind not in "fiubc":
            return False
        if arr.dtype.kind in "fc" and (not np.all(np.isfinite(arr)) or
                                      (arr.size and np.max(np.abs(arr)) >= bound)):
            return False
    return True


def literal(value) -> str:
    """Python source that rebuilds ``value`` (arrays as ``np.array(..., dtype=...)``)."""
    if isinstance(value, np.ndarray):
        dtype = "" if value.dtype == np.float64 else f", dtype=np.{value.dtype}"
        return f"np.array({value.tolist()!r}{dtype})"
    if isinstance(value, np.generic):
        return f"np.{value.dtype}({value.item()!r})"
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(value)
