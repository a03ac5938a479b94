"""The table of everything the compiler differentiates, generated from the registry.

Each callable user code may call (NumPy and ``math`` functions, operators,
builtins, array methods, MindSpore ``ops``) is listed with the primitives its
lowering emits and, from their declarations, whether reverse mode (a VJP) and
forward mode (a JVP) go through it. The primitives are found by running the
lowering on the IR builder with sample arguments (:data:`SAMPLES`, or a
function's own entry in :data:`PROBES`), so the table says what the code does,
not what someone wrote about it.

``python -m ad_compiler.catalog`` prints the page; ``--write docs/primitives.md``
writes it (a test fails when the committed page differs).
"""
from __future__ import annotations

import math
import operator
import sys
import warnings
from dataclasses import dataclass

import numpy as np

from . import ops as _ops  # noqa: F401  (registers every primitive and lowering)
from .ad import rules
from .ir.builder import Builder
from .ir.core import AType, Block, Value


@dataclass(frozen=True)
class A:
    """A sample array argument of this shape (float64)."""
    shape: tuple = ()


F = object()  # a sample Python-float argument

#: argument lists tried in turn until the lowering emits something
SAMPLES = [(A((3,)),), (A((2, 3)),), (A((1, 3)),), (A((3,)), F, F), (A((3,)), A((3,))),
           (A((2, 3)), A((3, 2))), (F,), (F, F), (A((3, 3)),), (A((2, 3)), 1), (A((2, 3)), (3, 2)),
           (A((2, 3)), (1, 0)), (A((3,)), A((3,)), A((3,))), (A((2, 3)), A((2, 3)), A((2, 3))),
           ([A((3,)), A((3,))],), ([A((3,)), A((3,))], 0), (A((2, 3)), np.float64)]

#: spelling -> the sample arguments for functions no entry of SAMPLES fits
PROBES: dict[str, tuple] = {"np.clip": (A((3,)), F, F), "x.reshape()": (A((2, 3)), (3, 2)),
                            "np.average": (A((2, 3)), 1, A((3,))),
                            "np.where": (A((3,)), A((3,)), A((3,))),
                            "ops.where": (A((3,)), A((3,)), A((3,))),
                            **{f"np.{n}": (np.array([True, False]),) * (2 - (n == "invert"))
                               for n in ("bitwise_and", "bitwise_or", "bitwise_xor", "invert")},
                            "np.linalg.solve": (A((3, 3)), A((3,))),
                            "np.linalg.matrix_power": (A((3, 3)), 2),
                            "ops.matrix_power": (A((3, 3)), 2)}
PROBES.update({name: ("ij,jk->ik", A((2, 3)), A((3, 2))) for name in ("np.einsum", "ops.einsum")})
PROBES.update({name: (A((2, 3)), A((3, 2)), 1) for name in ("np.tensordot", "ops.tensor_dot")})
PROBES["ops.bmm"] = (A((2, 2, 3)), A((2, 3, 2)))
PROBES.update({  # data movement (ops/movement.py)
    "np.dsplit": (A((2, 3, 2)), 2), "np.moveaxis": (A((2, 3)), 0, 1),
    "np.swapaxes": (A((2, 3)), 0, 1), "x.swapaxes()": (A((2, 3)), 0, 1),
    "ops.moveaxis": (A((2, 3)), 0, 1), "ops.swapaxes": (A((2, 3)), 0, 1),
    "np.take_along_axis": (A((2, 3)), np.zeros((2, 1), np.intp), 1),
    "ops.gather": (A((2, 3)), np.array([0]), 1),
    "ops.gather_elements": (A((2, 3)), 1, np.zeros((2, 1), np.intp)),
})
PROBES["math.hypot"] = (F, F)  # two floats (one gives fabs)
PROBES.update({  # convolution and pooling (ops/conv.py): (N, C, H, W) images
    "ops.conv2d": (A((1, 2, 4, 4)), A((3, 2, 2, 2))), "ops.conv1d": (A((1, 2, 5)), A((3, 2, 2))),
    "ops.conv_transpose2d": (A((1, 2, 3, 3)), A((2, 3, 2, 2))),
    **{f"ops.{name}": (A((1, 2, 4, 4)), 2) for name in ("max_pool2d", "avg_pool2d",
                                                        "adaptive_avg_pool2d")},
    "ops.MaxPool": (A((1, 2, 4, 4)),), "ops.AvgPool": (A((1, 2, 4, 4)),),
})
PROBES.update({  # normalisations and embedding (ops/normalization.py)
    "ops.batch_norm": (A((2, 3)), A((3,)), A((3,)), A((3,)), A((3,)), True),
    "ops.layer_norm": (A((2, 3)), (3,)),
    "ops.layer_norm_axes": (A((2, 3)), A((3,)), A((3,)), 1, 1, 1e-5),
    "ops.embedding": (np.array([0, 1]), A((2, 3))),
})
_MASK = np.array([True, False, True])
PROBES.update({"np.select": ([_MASK], [A((3,))]), "ops.linspace": (F, F, 3),
               **{f"np.{n}": (_MASK, _MASK) for n in ("bitwise_and", "bitwise_or", "bitwise_xor")},
               "np.invert": (_MASK,)})
PROBES.update({name: (A((2, 3)), np.float32) for name in ("ops.cast", "ops.Cast")})
PROBES.update({f"np.fft.{n}": (4, F) for n in ("fftfreq", "rfftfreq")})  # a traced spacing

#: spelling of a class form -> its constructor's arguments (default: none)
CONSTRUCT: dict[str, tuple] = {}

_OPERATORS = {operator.add: "a + b", operator.sub: "a - b", operator.mul: "a * b",
              operator.truediv: "a / b", operator.floordiv: "a // b", operator.mod: "a % b",
              operator.pow: "a ** b", operator.matmul: "a @ b", operator.neg: "-a",
              operator.pos: "+a", operator.abs: "abs(a)", operator.eq: "a == b",
              operator.ne: "a != b", operator.lt: "a < b", operator.le: "a <= b",
              operator.gt: "a > b", operator.ge: "a >= b"}

_SECTIONS = ["NumPy", "NumPy linear algebra (np.linalg)", "NumPy Fourier transforms (np.fft)",
             "Python operators and builtins",
             "math (on Python floats)", "Array and Tensor methods", "MindSpore ops (functional)",
             "MindSpore ops (classes)", "Gradients inside compiled code"]


@dataclass
class Entry:
    spelling: str
    section: str
    prims: tuple          # names of the primitives the lowering emits, sorted
    note: str = ""

    @property
    def differentiable(self) -> bool:
        return any(not rules.get(p).nondiff for p in self.prims)

    def mode(self, attr: str) -> str:
        diff = [rules.get(p) for p in self.prims if not rules.get(p).nondiff]
        if not self.prims:
            return "yes"      # gradients inside compiled code: the transform itself
        if not diff:
            return "zero"
        return "yes" if all(getattr(p, attr) is not None for p in diff) else "no"


# -- spellings ------------------------------------------------------------------------

def _spelling(obj) -> tuple[str, str] | None:
    """(spelling, section) of a lowered object, or None for objects listed elsewhere."""
    if obj in _OPERATORS:
        return _OPERATORS[obj], _SECTIONS[3]
    name = getattr(obj, "__name__", type(obj).__name__)
    module = getattr(obj, "__module__", None) or type(obj).__module__
    if getattr(np.linalg, name, None) is obj:
        return f"np.linalg.{name}", _SECTIONS[1]
    if module == "numpy.fft" and getattr(np.fft, name, None) is obj:
        return f"np.fft.{name}", _SECTIONS[2]
    if getattr(np, name, None) is obj:
        return f"np.{name}", _SECTIONS[0]
    if getattr(math, name, None) is obj:
        return f"math.{name}", _SECTIONS[4]
    if module == "builtins":
        return f"{name}()", _SECTIONS[3]
    if module.startswith("ad_compiler.api."):
        return f"ms.{name}", _SECTIONS[8]
    if module.startswith("ad_compiler.ops"):
        if isinstance(obj, type):
            return (f"ops.{name}" if not name.startswith("_") else None), _SECTIONS[7]
        return f"ops.{name}", _SECTIONS[6]
    return None


# -- probing ----------------------------------------------------------------------------

def _emitted(block: Block) -> set:
    names = set()
    for op in block.ops:
        names.add(op.prim)
        for region in op.regions:
            names |= _emitted(region)
    return names


def _materialize(b: Builder, spec, counter: list):
    if isinstance(spec, A):
        counter.append(0)
        v = Value(AType(spec.shape, np.dtype(np.float64)), f"x{len(counter)}")
        b.block.args.append(v)
        return v
    if spec is F:
        counter.append(0)
        v = Value(AType((), np.dtype(np.float64), True), f"x{len(counter)}")
        b.block.args.append(v)
        return v
    if isinstance(spec, list):
        return [_materialize(b, s, counter) for s in spec]
    return spec


def _try(lower, spec, before=()) -> set | None:
    b = Builder(Block())
    counter: list = []
    args = [_materialize(b, s, counter) for s in spec]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = lower(b, *before, *args)
    except Exception:  # noqa: BLE001 - a sample that does not fit: try the next one
        return None
    prims = _emitted(b.block) - {"const"}
    return prims or None


def _probe(lower, spelling: str = "", before=()) -> set | None:
    for spec in ([PROBES[spelling]] if spelling in PROBES else SAMPLES):
        prims = _try(lower, spec, before)
        if prims is not None:
            return prims
    return None


def _instance_lowering(construct, spelling: str):
    """The lowering of an instance a class form's constructor makes at compile time."""
    try:
        instance = construct(Builder(Block()), *CONSTRUCT.get(spelling, ()))
    except Exception:  # noqa: BLE001 - reported as unprobed
        return None
    return rules.find_lowering(instance)


def _note(fn) -> str:
    doc = (getattr(fn, "__doc__", None) or "").strip().splitlines()
    return doc[0].strip().rstrip(".") if doc else ""


# -- the table -----------------------------------------------------------------------------

def entries() -> tuple[list[Entry], list[str]]:
    """Every listed callable, and the spellings no sample could probe."""
    out, unprobed = [], []
    for obj, lower in rules.all_lowerings():
        where = _spelling(obj)
        if where is None or where[0] is None:
            continue
        spelling, section = where
        if getattr(lower, "refused", False):
            continue
        if section == _SECTIONS[8]:
            out.append(Entry(spelling, section, (), "differentiated where it is called"))
            continue
        if isinstance(obj, type):   # a class form: probe what its instance does
            lower = _instance_lowering(lower, spelling)
        fixed = getattr(lower, "catalog_entry", None)   # needs more than sample arrays
        if fixed is not None:
            out.append(Entry(spelling, section, *fixed))
            continue
        prims = None if lower is None else _probe(lower, spelling)
        if prims is None:
            unprobed.append(spelling)
            continue
        out.append(Entry(spelling, section, tuple(sorted(prims))))
    for kind, table, fmt in (("method", rules.METHODS, "x.{}()"), ("attr", rules.ATTRIBUTES, "x.{}")):
        for name, lower in table.items():
            if name.startswith("__") or getattr(lower, "refused", False):
                continue
            spelling = fmt.format(name)
            prims = _probe(lower, spelling, before=())
            if prims is None:
                unprobed.append(spelling)
                continue
            out.append(Entry(spelling, _SECTIONS[5], tuple(sorted(prims))))
    out.extend(_frontend_entries())
    merged: dict[str, Entry] = {}
    for e in out:
        merged.setdefault(e.spelling, e)
    return sorted(merged.values(), key=lambda e: (_SECTIONS.index(e.section), e.spelling)), \
        sorted(set(unprobed))


def _frontend_entries() -> list[Entry]:
    """Builtins and ``math`` functions the frontend handles itself."""
    from .frontend import builtin_calls
    by_id = {id(getattr(math, n)): n for n in dir(math)}
    out = []
    for key, lower in builtin_calls._MATH_EXTRA.items():
        name = by_id.get(key)
        prims = _probe(lower, f"math.{name}")
        if name and prims:
            out.append(Entry(f"math.{name}", _SECTIONS[4], tuple(sorted(prims))))
    notes = {"_sum": ("add", "sum of the items"), "_max": ("maximum", "of numbers"),
             "_min": ("minimum", "of numbers"), "_float": ("pyfloat", "of a one-element value"),
             "_abs": ("abs", ""), "_int": ("cast", "truncates toward zero"),
             "_bool": ("not_equal", "v != 0")}
    for name, (prim, note) in notes.items():
        if name in builtin_calls._BUILTINS.values():
            out.append(Entry(f"{name[1:]}()", _SECTIONS[3], (prim,), note))
    return out


def render() -> str:
    listed, unprobed = entries()
    if unprobed:
        raise RuntimeError("no sample argument list fits " + ", ".join(unprobed)
                           + ": add an entry to ad_compiler.catalog.PROBES")
    numpy_diff = [e for e in listed if e.section in _SECTIONS[:3] and e.differentiable]
    lines = [
        "# Supported functions",
        "",
        "<!-- generated by `python -m ad_compiler.catalog --write docs/primitives.md`;",
        "     tests/docs/test_catalog.py fails when this page is out of date -->",
        "",
        "Every function below compiles inside a differentiated function. *Primitives*",
        "are what its call lowers to (see [ir.md](ir.md)); *reverse* and *forward* say",
        "whether `grad`/`vjp` and `jvp`/`jacfwd` go through it (`zero`: the result has",
        "no derivative, as for `np.floor`). Functions you register with",
        "`ad_compiler.primitive` join the table of your program ([extending.md](extending.md)).",
        "",
        f"{len(numpy_diff)} differentiable NumPy functions, "
        f"{sum(e.differentiable for e in listed)} differentiable callables in all, "
        f"{len(listed)} listed; {len([p for p in rules.PRIMITIVES.values() if p.family != 'user'])} "
        "primitives.",
    ]
    for section in _SECTIONS:
        rows = [e for e in listed if e.section == section]
        if not rows:
            continue
        lines += ["", f"## {section}", "", "| function | primitives | reverse | forward | note |",
                  "|---|---|---|---|---|"]
        for e in rows:
            lines.append(f"| `{e.spelling}` | {', '.join(e.prims) or '—'} | {e.mode('vjp')} "
                         f"| {e.mode('jvp')} | {e.note} |")
    lines += ["", "## Primitives", "",
              "*vmap* says whether the primitive has a batching rule (`ms.vmap`).", "",
              "| primitive | family | reverse | forward | vmap |", "|---|---|---|---|---|"]
    for name, p in sorted(rules.PRIMITIVES.items()):
        if p.family == "user":
            continue
        rev = "zero" if p.nondiff else ("yes" if p.vjp else "no")
        fwd = "zero" if p.nondiff else ("yes" if p.jvp else "no")
        batch = "yes" if p.batch_rule is not None else "no"
        lines.append(f"| `{name}` | {p.family or 'structure'} | {rev} | {fwd} | {batch} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    page = render()
    if argv[:1] == ["--write"] and len(argv) == 2:
        with open(argv[1], "w", encoding="utf-8") as f:
            f.write(page)
    elif argv:
        print("usage: python -m ad_compiler.catalog [--write FILE.md]", file=sys.stderr)
        return 2
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
