"""Seeded random NumPy programs, organised by feature (the constructs they use).

Generation is generate-and-test: every candidate statement is run in plain
Python on the program's first input, together with everything before it, and
kept only if it runs, leaves the inputs untouched and keeps every value finite
and below ``BOUND``. So recipes can be loose, the environment (names, shapes,
which arrays share memory) is always the real one, and data-dependent
conditions get thresholds well away from the values they test.

``generate(seed, features)`` returns a :class:`~.program.Program`.
"""
from __future__ import annotations

import math
import random
import warnings

import numpy as np

from . import statements
from .program import HEADER, Program, finite, fresh, load_module
from .recipes import FEATURE_OF, RARE, RECIPES, Reject

BOUND = 1e3

#: Every feature the generator knows.
FEATURES = (
    "elementwise", "broadcast", "reduce", "matmul", "shape", "nondiff", "scalar", "ops",
    "higher_order", "index", "setitem", "alias", "augassign", "views", "containers",
    "helpers", "if", "for", "while", "break", "return", "comprehension", "float_lists",
    "std_degenerate", "mixed_dtype",
    "recursion", "loop_else", "callables", "lambdas", "nested_comprehension",
    "masks", "iterables", "complex", "algebra",
)

_REDUCE = ("sum", "mean", "max", "min", "amax", "amin", "std", "var", "argmax", "argmin",
           "all", "any", "ReduceSum", "ReduceMean")
_MATMUL = ("matmul", "dot", "outer", "MatMul")
_SHAPE = ("reshape", "ravel", "transpose", "squeeze", "expand_dims", "broadcast_to",
          "concatenate", "concat", "stack", "pad", "take", "flatten", "attr.T", "copy",
          "asarray", "numpy.array", "astype", "Reshape", "Transpose", "ExpandDims", "Squeeze",
          "Concat", "Stack")
_NONDIFF = ("_operator.eq", "_operator.ne", "_operator.gt", "_operator.ge", "_operator.lt",
            "_operator.le", "floordiv", "mod", "remainder", "floor_divide", "floor", "ceil",
            "sign", "equal", "greater", "less", "where", "clip")


def recipe_feature(key: str) -> str:
    """The feature a recipe belongs to."""
    if key in FEATURE_OF:
        return FEATURE_OF[key]
    name = key.rsplit(".", 1)[-1]
    if key.startswith("ad_compiler.api."):
        return "higher_order"
    if key.startswith("ad_compiler.ops.") and name not in ("where",):
        return "ops"
    if key.startswith("math.") or key.startswith("builtins.") and name != "sum":
        return "scalar"
    if name in _REDUCE or key == "builtins.sum":
        return "reduce"
    if name in _MATMUL:
        return "matmul"
    if name in _SHAPE or key in _SHAPE:
        return "shape"
    if name in _NONDIFF or key in _NONDIFF or name.startswith(("greater", "less", "not_equal")):
        return "nondiff"
    return "elementwise"


#: loop bodies of smooth helpers, by feature (the helper's argument is ``a``)
_LOOP_HELPERS = {
    "for": "    for _ in range(3):\n        a = np.sin(a) * 0.9 + 0.2 * a\n",
    "while": ("    k = 0\n    while np.sum(a * a) < 6.0 and k < 4:\n"
              "        a = a * 1.5 + np.tanh(a)\n        k = k + 1\n"),
    "break": ("    for _ in range(4):\n        a = np.tanh(a) * 1.3 + 0.1 * a\n"
              "        if np.sum(a) > 1.0:\n            break\n"),
}


class Returned(Exception):
    """The program returned (an early ``return`` taken on the first input)."""


class Gen:
    """The state of one program being generated (see the module docstring)."""

    SHAPES = [(3,), (4,), (2, 3), (3, 3), (3, 2), (2, 1), (1, 3)]

    def __init__(self, seed: int, features):
        self.seed = seed
        self.rng = random.Random(seed)
        self.features = frozenset(features)
        self.recipes = sorted(k for k in RECIPES if recipe_feature(k) in self.features)
        self.used: set = set()
        self.params, self.args = self._inputs(np.random.default_rng(seed))
        self.args2 = self._inputs(np.random.default_rng(seed + 10**9))[1]
        self.helpers: list[str] = []
        self.ns = self._namespace()
        self.top: list[str] = []
        self.hidden: set = set()
        self.counter = 0
        self.depth = 0
        self.last = None
        self.done = False
        self.env = self.run([])
        self.out_kind = self.choice(["scalar"] * 4 + ["array", "tuple", "float", "dict"])

    # -- inputs and running -----------------------------------------------------------

    def _inputs(self, nrng):
        rng = random.Random(self.seed)
        names, values = [], []
        for i in range(rng.randint(1, 3)):
            shape = rng.choice(self.SHAPES)
            names.append("xyzw"[i])
            values.append(_away_from_zero(nrng, shape))
        if "complex" in self.features and rng.random() < 0.3:  # an input array is complex
            k = rng.randrange(len(values))
            values[k] = values[k] + 1j * _away_from_zero(nrng, np.shape(values[k]))
        for i in range(rng.randint(0, 2) if "scalar" in self.features else 0):
            names.append("st"[i])
            values.append(float(np.round(_away_from_zero(nrng, ()), 6)))
        return names, tuple(values)

    def _namespace(self) -> dict:
        if not self.helpers:
            ns: dict = {}
            exec(compile(HEADER, "<fuzz>", "exec"), ns)
            return ns
        return dict(vars(load_module(HEADER + "".join(self.helpers))))

    def run(self, lines: list[str]) -> dict:
        """The variables after ``lines`` ran on the first input; Reject if they fail."""
        src = (f"def __fz({', '.join(self.params)}):\n" + "".join(f"    {ln}\n" for ln in lines)
               + "    return ('__env__', locals())\n")
        ns = dict(self.ns)
        try:
            exec(compile(src, "<fuzz>", "exec"), ns)
        except SyntaxError:
            raise Reject from None
        args = fresh(self.args)
        try:
            with np.errstate(all="raise"), warnings.catch_warnings():
                warnings.simplefilter("error")
                # a cast of complex values to a real dtype warns by design (docs/complex.md)
                warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
                out = ns["__fz"](*args)
                if "mixed_dtype" not in self.features:
                    _single_dtype(ns["__fz"](*_float32(args)))
        except Exception:
            raise Reject from None
        if any(not np.array_equal(a, b) for a, b in zip(args, self.args)):
            raise Reject                       # the program would change its inputs
        if isinstance(out, tuple) and len(out) == 2 and out[0] == "__env__":
            env = out[1]
            if not finite([v for v in env.values() if _numeric(v)], BOUND):
                raise Reject
            return env
        if not finite(out, BOUND):
            raise Reject
        raise Returned

    # -- choices ------------------------------------------------------------------------

    def choice(self, seq):
        if not seq:
            raise Reject
        return seq[self.rng.randrange(len(seq))]

    def coin(self, p=0.5) -> bool:
        return self.rng.random() < p

    def fresh_name(self, prefix="t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def lit(self, lo=-1.5, hi=1.5) -> str:
        return repr(round(self.rng.uniform(lo, hi), 2))

    def visible(self, test) -> list[str]:
        return [n for n, v in self.env.items()
                if n not in self.hidden and not n.startswith("_") and test(v)]

    def arrays(self, min_nd=1, max_nd=2) -> list[str]:
        return self.visible(lambda v: isinstance(v, np.ndarray) and v.dtype.kind == "f"
                            and min_nd <= v.ndim <= max_nd and v.size > 0
                            or min_nd == 0 and isinstance(v, np.floating))

    def arr(self, min_nd=1, max_nd=2) -> str:
        self.last = self.choice(self.arrays(min_nd, max_nd))
        return self.last

    def floats(self) -> list[str]:
        return self.visible(lambda v: type(v) is float)

    def flt(self) -> str:
        names = self.floats()
        return self.choice(names) if names and self.coin(0.85) else self.lit()

    def num(self) -> str:
        names = self.arrays(0) + self.floats()
        return self.choice(names) if names and self.coin(0.9) else self.lit()

    def val(self, name):
        return self.env[name]

    def partner(self, x: str) -> str:
        """An operand that combines with ``x`` (same shape, unless 'broadcast')."""
        shape = np.shape(self.env.get(x, 0.0))
        names = [n for n in self.arrays(0) + self.floats() if _fits(np.shape(self.env[n]), shape)
                 and ("broadcast" in self.features or np.shape(self.env[n]) in (shape, ()))]
        return self.choice(names) if names and self.coin(0.9) else self.lit()

    def same_shape(self, x: str) -> str:
        shape = self.env[x].shape
        return self.choice([n for n in self.arrays(0) if np.shape(self.env[n]) == shape])

    def axis(self, name, allow_none=True, length_over=0) -> str:
        shape = np.shape(self.env[name])
        axes = [str(self.choice([i, i - len(shape)])) for i, d in enumerate(shape)
                if d > length_over]
        if allow_none and length_over == 0:
            axes.append("None")
        return self.choice(axes)

    def matmul_pair(self):
        arrays = self.arrays(1, 2)
        pairs = [(a, b) for a in arrays for b in arrays
                 if self.env[a].shape[-1] == self.env[b].shape[0]]
        if pairs:
            return self.choice(pairs)
        a = self.arr()
        n = self.env[a].shape[-1]
        return a, f"np.linspace(-1.0, 1.0, {2 * n}).reshape({n}, 2)"

    def broadcast_to(self) -> str:
        x = self.arr(1, 1)
        n = self.env[x].shape[0]
        return f"np.broadcast_to({x}, (2, {n}))"

    def smooth_helper(self, elementwise=False) -> str:
        """A module-level smooth helper: scalar-valued, or elementwise (``elementwise``).
        With the loop features, most of them loop (``for``, ``while``, ``break``), so a
        gradient of the helper inside the program is a gradient through a loop."""
        name = self.fresh_name("h")
        loops = [k for k in _LOOP_HELPERS if k in self.features]
        if loops and self.coin(0.7):
            body = _LOOP_HELPERS[self.choice(loops)]
            out = self.choice(["a * np.cos(a)", "np.tanh(a) * a"] if elementwise else
                              ["np.sum(a * a)", "np.sum(np.sin(a) * a)"])
            self.add_helper(f"def {name}(a):\n{body}    return {out}\n")
            return name
        body = self.choice(["np.sin(a) * a", "np.tanh(a) ** 2", "np.cos(a) * 0.5"]
                           if elementwise else
                           ["np.sum(np.sin(a) * a)", "np.sum(np.tanh(a) ** 2)",
                            "np.mean(np.cos(a)) * np.sum(a)"])
        self.add_helper(f"def {name}(a):\n    return {body}\n")
        return name

    def add_helper(self, source: str) -> None:
        self.helpers.append("\n\n" + source)
        self.ns = self._namespace()

    # -- statements -------------------------------------------------------------------

    def expr(self) -> str:
        key = self.choice(self.recipes)
        if self.coin(0.3) and any(np.iscomplexobj(a) for a in self.args):
            key = self.choice([k for k in self.recipes if recipe_feature(k) == "complex"])
        if key in RARE and self.coin(0.8):
            key = self.choice(self.recipes)
        text = RECIPES[key](self)
        self.used.add(key)
        return text

    def commit(self, lines: list[str], used: str | None = None) -> None:
        """Append ``lines`` at top level if the program still runs; Reject otherwise."""
        before = set(self.env)
        try:
            env = self.run(self.top + lines)
        except Returned:
            self.top += lines
            self.done = True
        else:
            self.top += lines
            if any(ln.startswith(("if ", "for ", "while ")) for ln in lines):
                self.hidden |= set(env) - before - _assigned(lines)
            self.env = env
        if used:
            self.used.add(used)

    def statement(self, kinds) -> None:
        for _ in range(12):
            kind = self.choice(kinds)
            saved = (set(self.used), list(self.helpers), self.counter)
            try:
                lines = statements.KINDS[kind](self)
                self.commit(lines, used=kind)
                return
            except Exception:       # Reject, or a recipe that does not fit these shapes
                self.used, self.helpers, self.counter = saved
                self.ns = self._namespace()

    def result(self) -> str:
        """The returned expression, of the kind chosen for this program."""
        return statements.result(self, self.out_kind)


def _final(g) -> str:
    """A result expression that runs (when the end is reached on the first input)."""
    for _ in range(10):
        try:
            expr = g.result()
            if g.done:
                return expr
            g.run(g.top + [f"return {expr}"])
        except Returned:
            return expr
        except Reject:
            continue
    return f"np.sum({g.params[0]})"


def _float32(args):
    """float32 (complex64) copies of the array inputs."""
    return tuple(a.astype(np.complex64 if a.dtype.kind == "c" else np.float32)
                 if isinstance(a, np.ndarray) else a for a in args)


def _single_dtype(out) -> None:
    """Raise if float32 inputs made a float64 array or NumPy scalar (feature 'mixed_dtype')."""
    values = out[1].values() if isinstance(out, tuple) and out and out[0] == "__env__" else [out]
    for leaf in (x for v in values for x in _leaves(v)):
        if isinstance(leaf, (np.ndarray, np.floating, np.complexfloating)) \
                and leaf.dtype in (np.float64, np.complex128):
            raise Reject


def _leaves(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in _leaves(item)]
    if isinstance(v, dict):
        return [x for item in v.values() for x in _leaves(item)]
    return [v]


def _assigned(lines) -> set:
    return {ln.split("=")[0].strip() for ln in lines
            if "=" in ln and not ln.startswith((" ", "if ", "for ", "while "))
            and ln.split("=")[0].strip().isidentifier()}


def _numeric(v) -> bool:
    return isinstance(v, (float, np.ndarray, np.generic, list, tuple, dict)) \
        and not isinstance(v, (bool, np.bool_))


def _fits(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _away_from_zero(nrng, shape):
    """Values in ±[0.2, 1.5], none near another (no ties, no kink of abs at 0)."""
    n = int(np.prod(shape)) if shape else 1
    grid = nrng.permutation(np.linspace(0.2, 1.5, 27))[:n] + nrng.uniform(0, 0.01, n)
    values = grid * nrng.choice([-1.0, 1.0], n)
    return values.reshape(shape) if shape else float(values[0])


def generate(seed: int, features=FEATURES, size: int | None = None) -> Program:
    """The program of ``seed`` using ``features`` (a subset of FEATURES)."""
    g = Gen(seed, features)
    kinds = statements.top_kinds(g.features)
    for _ in range(size if size is not None else g.rng.randint(3, 12)):
        if g.done:
            break
        g.statement(kinds)
    body = "".join(f"    {ln}\n" for ln in g.top)
    source = (HEADER + "".join(g.helpers) + f"\n\ndef f({', '.join(g.params)}):\n" + body
              + f"    return {_final(g)}\n")
    return Program(seed, source, g.args, g.args2, tuple(sorted(g.features)), g.used)
