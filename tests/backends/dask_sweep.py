"""A sweep of the whole registry on Dask arrays: which functions give lazy gradients.

For every function the compiler lowers (the spellings of docs/primitives.md, each
called with the catalog's sample arguments, ``ad_compiler.catalog``), a user function
``f(x1, ...)`` calls it on its inputs and returns a weighted sum of the result. Its
``value_and_grad`` is built with the float array inputs as Dask arrays under a
scheduler that raises on any compute, then computed (``scheduler="sync"``) and
compared with the gradient of the same call on NumPy arrays. Each case is one of:

* ``lazy``: built without computing, every result a Dask array, equal to NumPy's;
* ``compute``: building the gradient computed a graph on the client (a hidden compute);
* ``error``: a located error naming the backend (what Dask cannot do);
* ``wrong``: anything else (an unlocated error, a NumPy result, a different number),
  but for two named Dask behaviours: ``differs`` (Dask's own function gives another
  valid value, :data:`DASKS_OWN_VALUE`) and ``fails when computed``
  (:data:`FAILS_WHEN_COMPUTED`).

Every differentiable primitive's declared examples (``examples=``) are swept the same
way, compiled from the IR through the API's pipeline (:func:`run_primitive`).

``python -m tests.backends.dask_sweep`` prints the table; ``--write`` puts it into
docs/backends.md between its markers (tests/backends/test_dask_sweep.py checks the page
is current and that no case is ``compute`` or ``wrong``).
"""
from __future__ import annotations

import importlib.util
import itertools
import os
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass

import numpy as np

import ad_compiler as ms
from ad_compiler import catalog
from ad_compiler.ad import rules
from ad_compiler.backends import run_compiled
from ad_compiler.errors import GradRuntimeError, GradTypeError

LAZY, COMPUTE, ERROR, WRONG = "lazy", "compute", "error", "wrong"
_DIFFERENT = "a different value once computed"
_SECTIONS = catalog._SECTIONS[:4] + catalog._SECTIONS[5:8]   # not math (floats), not ms.grad
_COUNTER = itertools.count()


class HiddenCompute(Exception):
    """Raised by the scheduler the gradient is built under."""


def _refuse(*args, **kwargs):
    raise HiddenCompute("a Dask graph was computed while the gradient was being built")


@dataclass
class Case:
    spelling: str         # a spelling of docs/primitives.md, or ``prim[example number]``
    section: str
    spec: tuple           # the catalog's sample arguments, or (primitive name, Example)
    outcome: str = ""
    detail: str = ""


# -- the cases ------------------------------------------------------------------------------

def _sample(lower, spelling):
    """The catalog's first sample argument list the lowering takes (None when none does)."""
    for spec in ([catalog.PROBES[spelling]] if spelling in catalog.PROBES else catalog.SAMPLES):
        if catalog._try(lower, spec) is not None:
            return spec
    return None


def cases() -> list[Case]:
    """One case per spelling the catalog lists (in its order), with a float array input."""
    out = {}
    for obj, lower in rules.all_lowerings():
        where = catalog._spelling(obj)
        if where is None or where[0] is None or where[1] not in _SECTIONS:
            continue
        if getattr(lower, "refused", False):
            continue
        if isinstance(obj, type):
            lower = catalog._instance_lowering(lower, where[0])
        if lower is None or getattr(lower, "catalog_entry", None) is not None:
            continue
        spec = _sample(lower, where[0])
        if spec is not None and _has_array(spec):
            out.setdefault(where[0], Case(where[0], where[1], spec))
    for fmt, table in (("x.{}()", rules.METHODS), ("x.{}", rules.ATTRIBUTES)):
        for name, lower in table.items():
            spelling = fmt.format(name)
            if name.startswith("__") or getattr(lower, "refused", False):
                continue
            spec = _sample(lower, spelling)
            if spec is not None and _has_array(spec):
                out.setdefault(spelling, Case(spelling, catalog._SECTIONS[5], spec))
    return sorted(out.values(), key=lambda c: (catalog._SECTIONS.index(c.section), c.spelling))


def _has_array(spec) -> bool:
    return any(isinstance(s, catalog.A) or isinstance(s, list) and _has_array(s) for s in spec)


# -- a user function per case -----------------------------------------------------------------

def _arguments(spec, rng):
    """(parameter names, their NumPy values, call-argument source texts, constants)."""
    names, values, texts, consts = [], [], [], {}

    def one(s):
        if isinstance(s, catalog.A):
            names.append(f"x{len(names) + 1}")
            v = rng.uniform(0.2, 0.8, s.shape)
            if len(s.shape) >= 2 and s.shape[-1] == s.shape[-2]:
                v = v + 2.0 * np.eye(s.shape[-1])       # well conditioned, positive definite
                v = (v + np.swapaxes(v, -1, -2)) / 2
            values.append(v)
            return names[-1]
        if s is catalog.F:
            names.append(f"x{len(names) + 1}")
            values.append(0.25 + 0.5 * rng.uniform())
            return names[-1]
        if isinstance(s, list):
            return "[" + ", ".join(one(i) for i in s) + "]"
        if isinstance(s, np.ndarray):
            consts[f"c{len(consts)}"] = s
            return f"c{len(consts) - 1}"
        if isinstance(s, type):
            return f"np.{s.__name__}"
        return repr(s)

    texts = [one(s) for s in spec]
    return names, values, texts, consts


def _call_text(spelling, texts) -> str:
    if spelling.startswith("x.") and spelling.endswith("()"):
        return f"{texts[0]}.{spelling[2:-2]}({', '.join(texts[1:])})"
    if spelling.startswith("x."):
        return f"{texts[0]}.{spelling[2:]}"
    if spelling.endswith("()"):
        return f"{spelling[:-2]}({', '.join(texts)})"
    if spelling in catalog._OPERATORS.values():
        return "(" + re.sub(r"\b[ab]\b", lambda m: texts[0] if m[0] == "a" else texts[-1],
                            spelling) + ")"
    construct = catalog.CONSTRUCT.get(spelling)
    if construct is not None or spelling.split(".")[-1][:1].isupper():
        return f"{spelling}({', '.join(map(repr, construct or ()))})({', '.join(texts)})"
    return f"{spelling}({', '.join(texts)})"


def _leaves(value, path="out"):
    if isinstance(value, (tuple, list)):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, np.asarray(value))]


def _reduction(result, rng, consts) -> str:
    """Source of a real scalar weighing every float or complex leaf of ``result``."""
    terms = []
    for path, leaf in _leaves(result):
        if leaf.dtype.kind not in "biufc":
            continue
        w = f"w{len(consts)}"
        consts[w] = rng.uniform(0.5, 1.5, leaf.shape)
        if leaf.dtype.kind in "biu":     # its length may depend on the data (np.nonzero)
            terms.append(f"0.5 * np.sum({path})")
        else:
            terms.append(f"np.sum({path} * {w})" if leaf.dtype.kind == "f"
                         else f"np.sum(np.real({path}) * {w} + np.imag({path}) * {w})")
    return " + ".join(terms) or "0.0 * np.sum(x1)"


_HEADER = "import math\nimport numpy as np\nfrom ad_compiler import ops\n\n\n"


def build(case: Case):
    """(the user function, its NumPy arguments, the float array positions)."""
    rng = np.random.default_rng(sum(map(ord, case.spelling)))
    names, values, texts, consts = _arguments(case.spec, rng)
    if "searchsorted" in case.spelling:    # defined for a sorted first argument only
        values[0] = np.sort(values[0])
    call = _call_text(case.spelling, texts)
    probe = _load(f"def f({', '.join(names)}):\n    return {call}\n", consts)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = probe(*values)
    body = f"    out = {call}\n    return {_reduction(result, rng, consts)}\n"
    fn = _load(f"def f({', '.join(names)}):\n{body}", consts)
    positions = tuple(i for i, v in enumerate(values) if isinstance(v, np.ndarray))
    return fn, values, positions


def _directory():
    path = os.path.join(tempfile.gettempdir(), f"dask_sweep_{os.getpid()}")
    os.makedirs(path, exist_ok=True)
    return path


def _load(src: str, consts: dict):
    """``f`` from ``src`` written to a module file (the compiler reads its source)."""
    name = f"dask_sweep_{next(_COUNTER)}"
    path = os.path.join(_directory(), name + ".py")
    with open(path, "w") as fh:
        fh.write(_HEADER + src)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(consts)
    spec.loader.exec_module(module)
    return module.f


# -- running a case ----------------------------------------------------------------------

def _dask(v):
    import dask.array as da
    if isinstance(v, np.ndarray) and v.ndim and v.dtype.kind == "f":
        chunks = (max(1, (v.shape[0] + 1) // 2),) + v.shape[1:]
        return da.from_array(v, chunks=chunks, name=False)   # no hashing of the data
    return v


def _compute_cause(exc) -> bool:
    while exc is not None:
        if isinstance(exc, HiddenCompute):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def run(case: Case) -> Case:
    try:
        fn, values, positions = build(case)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            expected = ms.value_and_grad(fn, grad_position=positions)(*values)
    except Exception as exc:  # noqa: BLE001 - the sample is not one NumPy takes
        case.outcome, case.detail = "skipped", f"{type(exc).__name__}: {exc}"[:120]
        return case
    dargs = [_dask(v) for v in values]
    return _classify(case, lambda: ms.value_and_grad(fn, grad_position=positions)(*dargs),
                     expected)


def _classify(case: Case, build, expected) -> Case:
    """Build under the refusing scheduler, then compute and compare with ``expected``."""
    import dask
    import dask.array as da
    try:
        with dask.config.set(scheduler=_refuse), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = build()
    except Exception as exc:  # noqa: BLE001 - classified
        if _compute_cause(exc):
            case.outcome, case.detail = COMPUTE, _where(exc)
        elif isinstance(exc, (GradRuntimeError, GradTypeError)) and "dask" in str(exc) \
                and exc.loc is not None:
            case.outcome, case.detail = ERROR, _reason(exc.__cause__ or exc)
        else:
            case.outcome, case.detail = WRONG, f"{type(exc).__name__}: {_first_line(exc)}"
        return case
    leaves = _flat(got)
    # a value made of constants alone (np.sum(np.ones_like(x))) is folded: nothing computed
    value_is_constant = isinstance(got[0], (float, np.generic))
    if not all(isinstance(g, da.Array) for g in leaves[value_is_constant:]):
        case.outcome = WRONG
        case.detail = "not lazy: " + ", ".join(type(g).__name__ for g in leaves)
        return case
    with dask.config.set(scheduler="sync"), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            computed = dask.compute(*leaves)
        except Exception as exc:  # noqa: BLE001 - a graph Dask built but cannot run
            case.outcome, case.detail = WRONG, f"computing fails: {_reason(exc)}"
            return case
    for g, e in zip(computed, _flat(expected), strict=True):
        if np.shape(g) != np.shape(e) or not np.allclose(g, e, rtol=1e-7, atol=1e-10,
                                                         equal_nan=True):
            case.outcome, case.detail = WRONG, _DIFFERENT
            return case
    case.outcome = LAZY
    return case


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    return [value]


def _first_line(exc) -> str:
    return str(exc).splitlines()[0][:160]


def _where(exc) -> str:
    """The innermost frame outside Dask that asked for the compute."""
    tb = exc.__traceback__
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__
        tb = exc.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        file = frame.f_code.co_filename
        if "dask" not in file and "numpy" not in file and __file__ not in file:
            return f"{os.path.basename(file)}:{frame.f_lineno} {frame.f_code.co_name}"
    return ""


# -- primitives, from their declared examples ----------------------------------------------

PRIMITIVES = "Primitives (their declared examples)"
_DOMAIN = {"positive": (0.5, 2.0), "above_one": (1.5, 3.0), "nonzero": (0.5, 2.0)}


def primitive_cases() -> list[Case]:
    """One case per differentiable primitive example with a float array input."""
    out = []
    for name, prim in sorted(rules.PRIMITIVES.items()):
        if prim.family in ("user", "lists") or prim.nondiff:
            continue
        for i, example in enumerate(prim.examples or ()):
            if any(isinstance(s, tuple) and s for s in example.inputs):
                out.append(Case(f"{name}[{i}]", PRIMITIVES, (name, example)))
    return out


def _example_values(prim, example, rng):
    low, high = _DOMAIN.get(prim.domain, (0.2, 0.8))
    values = []
    for s in example.inputs:
        if s is float:
            values.append(float(rng.uniform(low, high)))
        elif isinstance(s, np.ndarray):
            values.append(s)
        else:
            v = rng.uniform(low, high, s)
            if prim.domain in ("wellcond", "spd") and len(s) >= 2 and s[-1] == s[-2]:
                v = v + 2.0 * np.eye(s[-1])
                v = (v + np.swapaxes(v, -1, -2)) / 2
            values.append(v)
    return values


def _primitive_gradient(prim, example, values, rng, backend):
    """The compiled value-and-gradient of ``sum(W * prim(*values))`` (``real`` of a complex
    result), as ``backend`` or NumPy inputs get it (api/compiler.py's pipeline)."""
    from ad_compiler.ad.reverse import ARG, vjp_function
    from ad_compiler.codegen import compile_function
    from ad_compiler.errors import SourceLoc
    from ad_compiler.ir.builder import Builder
    from ad_compiler.ir.core import AType, Block, Function, Value
    from ad_compiler.passes.backend import for_backend
    from ad_compiler.passes.pipeline import PIPELINE, optimize
    from ad_compiler.passes.primal import prepare_for_reverse
    args = [Value(AType.of(v), f"x{i}") for i, v in enumerate(values)]
    loc = SourceLoc("example.py", 1, 0, f"{prim.name}(...)")
    b = Builder(Block(args=list(args)), loc=loc)
    out = b.emit(prim.name, *args, **example.params)
    if out.type.dtype.kind == "c":
        out = b.emit("real", out)
    weights = rng.uniform(0.5, 1.5, out.type.shape)
    total = b.emit("sum", b.emit("mul", out, b.const(weights)), axis=None, keepdims=False)
    b.block.results = [total]
    fn = prepare_for_reverse(Function(f"{prim.name}_example", b.block, loc=loc))
    wrt = [i for i, v in enumerate(values) if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    ir = optimize(vjp_function(fn, wrt, [ARG], with_outputs=True), PIPELINE)
    if backend is not None:
        ir = for_backend(ir)
    compiled = compile_function(ir, reuse_buffers=backend is None)
    seed = np.ones((), total.type.dtype) if backend is None else backend.ones((), total.type.dtype)
    entry = type("Entry", (), {"compiled": compiled, "ir": ir, "backend": backend})
    return lambda *vals: compiled.fn(*vals, seed) if backend is None else \
        run_compiled(entry, *vals, seed)


def run_primitive(case: Case) -> Case:
    """:func:`run` for a primitive example, compiled from IR (no user source)."""
    from ad_compiler.backends import BACKENDS
    name, example = case.spec
    prim = rules.PRIMITIVES[name]
    rng = np.random.default_rng(sum(map(ord, case.spelling)))
    values = _example_values(prim, example, rng)
    state = rng.bit_generator.state
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            expected = _primitive_gradient(prim, example, values, rng, None)(*values)
    except Exception as exc:  # noqa: BLE001 - not an example the pipeline takes whole
        case.outcome, case.detail = "skipped", f"{type(exc).__name__}: {exc}"[:120]
        return case
    rng.bit_generator.state = state
    grad = _primitive_gradient(prim, example, values, rng, BACKENDS["dask"])
    case = _classify(case, lambda: grad(*[_dask(v) for v in values]), expected)
    if case.outcome == WRONG and case.detail == _DIFFERENT and name in DASKS_OWN_VALUE:
        case.outcome, case.detail = DIFFERS, DASKS_OWN_VALUE[name]
    elif case.outcome == WRONG and case.detail.startswith("computing fails") \
            and name in FAILS_WHEN_COMPUTED:
        case.outcome, case.detail = FAILS, FAILS_WHEN_COMPUTED[name]
    return case


FAILS = "fails when computed"
#: primitives whose Dask function builds a graph that fails when computed (not located)
FAILS_WHEN_COMPUTED = {"einsum": "Dask's einsum of an index repeated in one operand "
                                 "('ii->i') fails unless those axes have the same chunks"}


DIFFERS = "differs"
#: primitives whose Dask function gives another (equally valid) value than NumPy's: the
#: gradient is that of the value Dask computes, as plain Python on Dask arrays gives it
DASKS_OWN_VALUE = {"qr": "Dask's QR factorisation has other column signs than NumPy's"}


def sweep() -> list[Case]:
    return [run(c) for c in cases()] + [run_primitive(c) for c in primitive_cases()]


# -- the page ------------------------------------------------------------------------------

PAGE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "backends.md")
BEGIN, END = "<!-- dask sweep: begin -->", "<!-- dask sweep: end -->"


def _reason(exc) -> str:
    """The backend's own words: the first sentence of what was raised in the code."""
    message = " ".join(str(exc).split()).split(". ")[0].rstrip(".").replace("|", "\\|")
    return f"{type(exc).__name__}: {message}"


def _render_primitives(results) -> list[str]:
    """Per primitive, lazy when every example is; else each example's outcome."""
    by_name: dict = {}
    for c in results:
        if c.outcome != "skipped":
            by_name.setdefault(c.spelling.partition("[")[0], []).append(c)
    lazy = [n for n, cs in by_name.items() if all(c.outcome == LAZY for c in cs)]
    lines = ["", f"The primitives, each example of its declaration (`examples=`) compiled from "
                 f"the IR: **{len(lazy)} of {len(by_name)} lazy in every example**: "
                 + ", ".join(f"`{n}`" for n in lazy) + ".", "",
             "| primitive | examples lazy | otherwise |", "|---|---|---|"]
    for name, cs in by_name.items():
        if name in lazy:
            continue
        reasons = sorted({f"{c.outcome}: {c.detail}" for c in cs if c.outcome != LAZY})
        n = sum(c.outcome == LAZY for c in cs)
        lines.append(f"| `{name}` | {n} of {len(cs)} | {'; '.join(reasons)} |")
    return lines


def environment() -> str:
    """What the outcomes depend on: Dask's version, and whether SciPy is installed (Dask's
    ``inv``/``solve`` use SciPy's LU when it is)."""
    import dask
    try:
        import scipy  # noqa: F401
    except ImportError:
        return dask.__version__
    return f"{dask.__version__}, with scipy"


def render(results) -> str:
    import dask
    prims = [c for c in results if c.section == PRIMITIVES]
    results = [c for c in results if c.section != PRIMITIVES]
    lazy = [c for c in results if c.outcome == LAZY]
    errors = [c for c in results if c.outcome == ERROR]
    other = [c for c in results if c.outcome not in (LAZY, ERROR, "skipped")]
    skipped = [c for c in results if c.outcome == "skipped"]
    lines = [BEGIN,
             "<!-- generated by `python -m tests.backends.dask_sweep --write`; "
             "tests/backends/test_dask_sweep.py fails when it is out of date -->", "",
             f"Every function of [primitives.md](primitives.md) that takes an array, called "
             f"with the catalog's sample arguments, the float arrays as Dask arrays of two "
             f"chunks along the first axis (dask {environment()}): "
             f"**{len(lazy)} give lazy gradients** equal to NumPy's, built without computing; "
             f"**{len(errors)} are a located `GradRuntimeError`** naming the dask backend and "
             f"your line; {len(other)} compute on the client or differ.", ""]
    for section in catalog._SECTIONS:
        names = [f"`{c.spelling}`" for c in lazy if c.section == section]
        if names:
            lines += [f"- **{section}** ({len(names)}): " + ", ".join(names)]
    lines += ["", "What Dask cannot do (a `GradRuntimeError` at your line, with Dask's reason):",
              "", "| function | reason |", "|---|---|"]
    lines += [f"| `{c.spelling}` | {c.detail} |" for c in errors]
    lines += [f"| `{c.spelling}` | {c.outcome}: {c.detail} |" for c in other]
    lines += _render_primitives(prims)
    if skipped:
        lines += ["", "Not swept (the catalog's sample call is not one NumPy or the compiler "
                      "takes): " + ", ".join(f"`{c.spelling}`" for c in skipped) + "."]
    return "\n".join(lines + ["", END])


def page_section(text: str) -> str:
    return text[text.index(BEGIN):text.index(END) + len(END)]


def write(results) -> None:
    with open(PAGE, encoding="utf-8") as fh:
        text = fh.read()
    old = page_section(text)
    with open(PAGE, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, render(results)))


if __name__ == "__main__":
    results = sweep()
    if sys.argv[1:] == ["--write"]:
        write(results)
    for c in results:
        print(f"{c.outcome:8} {c.spelling:34} {c.detail}")
    from collections import Counter
    print(Counter(c.outcome for c in results))
