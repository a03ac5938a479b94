"""How well the printed gradients read: names, meaning changes, dead copies, undefined names.

    python -m benchmarks.readability            # summary over the corpus and the docs
    python -m benchmarks.readability --worst 20 # also the most frequent non-derived names
    python -m benchmarks.readability --show NAME  # the sources of programs whose name contains NAME

The programs: the gradient of every case of the test corpus (tests/corpus/functions.py,
float64), and every function the examples of README.md and docs/*.md compile (run as
tests/docs/test_examples.py runs them). Every generated source is measured, with the IR
it was generated from. The figures, per source, summed:

* **names**: the distinct names a generated function binds (assignment, ``for`` and
  augmented-assignment targets), not counting its arguments (the user's, by construction).
* **derived**: those of them that derive from the user's program. A name's *stem* is the
  name without ``_N`` suffixes and trailing ``_``; the *user words* are the identifiers
  in the source lines the IR's ops came from (keywords, ``np``, ``math``, ``self`` and
  the other module aliases left out), and the *user variables* are the user words not
  called (not followed by ``(``) plus the function's argument hints; the *expression
  words* are the names of the primitives (``mul``, ``getitem``, ``square`` ...), ``T``,
  ``d`` and ``tape``, which name the operation an intermediate value comes from (an
  identifier ``a_b`` of the user's gives the words ``a`` and ``b`` too). A name is derived when
  its stem, without a leading ``d`` or ``d_`` (an adjoint), splits at ``_`` into pieces
  each of which is a concatenation of user and expression words, with at least one
  user variable among them: ``dx``, ``h``, ``xw``, ``d_xw``, ``tanh_x``, ``mul_h``,
  ``dlogits_1``, ``x_tape`` are derived; ``matmul``, ``square``, ``sum_``, ``c``, ``reshape``,
  ``n_iter`` are not (unless the user has a variable of that name).
* **meaning changes**: names that hold two different quantities in one function: the
  IR values the name stands for (a buffer and the result an op writes into it, or
  several values a codegen shares a name between) carry hints with different stems
  (``matmul`` holding ``h`` after ``np.tanh(matmul, out=matmul)`` is one; ``dx += dx_1``,
  both ``dx``, is not). Hints are what the IR says a value is.
* **dead copies**: ``a = b`` (or ``a, c = b, d``) of plain names whose target is never
  read, or whose source is read nowhere else (a pure rename: one name would do).
* **undefined**: distinct names a generated function reads but neither it nor Python's
  builtins define (namespace constants such as ``f64_1``; ``np``, ``math`` and ``rt``
  are counted apart as *modules*, which a printed module defines with its imports).
"""
from __future__ import annotations

import argparse
import ast
import builtins
import collections
import contextlib
import io
import json
import keyword
import os
import pathlib
import re
import sys
import tempfile
import warnings
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
_MODULES = {"np", "math", "rt"}
_NOT_WORDS = set(keyword.kwlist) | {"np", "numpy", "math", "self", "ms", "ops", "nn", "mnp",
                                    "ad_compiler", "True", "False", "None"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\s*\()?")
_SUFFIX = re.compile(r"(_\d+|_)+$")


@dataclass
class Figures:
    names: int = 0
    derived: int = 0
    meaning_changes: int = 0
    dead_copies: int = 0
    undefined: int = 0
    modules: int = 0
    sources: int = 0
    not_derived: collections.Counter = field(default_factory=collections.Counter)
    examples: dict = field(default_factory=lambda: collections.defaultdict(list))

    def add(self, other: "Figures") -> None:
        for k in ("names", "derived", "meaning_changes", "dead_copies", "undefined", "modules",
                  "sources"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.not_derived.update(other.not_derived)
        for k, v in other.examples.items():
            self.examples[k].extend(v)

    def line(self, title: str) -> str:
        share = 100.0 * self.derived / self.names if self.names else 100.0
        return (f"{title:<8} {self.sources:>4} sources  {self.names:>5} names  "
                f"derived {self.derived:>5} ({share:5.1f}%)  meaning changes "
                f"{self.meaning_changes:>4}  dead copies {self.dead_copies:>4}  undefined "
                f"{self.undefined:>4} (+{self.modules} module names)")


# -- user words ----------------------------------------------------------------------

def user_words(fn) -> tuple[set, set]:
    """(user words, user variables) of the IR ``fn``: see the module docstring."""
    words, variables = set(), set()
    for op in fn.body.walk():
        if op.loc is None or not op.loc.text:
            continue
        for m in _WORD.finditer(op.loc.text):
            word = m.group(0).rstrip("( \t")
            if word in _NOT_WORDS:
                continue
            pieces = {word, *(p for p in word.split("_") if p)}
            words |= pieces
            if not m.group(0).endswith("("):
                variables |= pieces
    for a in fn.args:
        if a.hint:
            stem = _SUFFIX.sub("", a.hint)
            pieces = {stem, *(p for p in stem.split("_") if p)}
            words |= pieces
            variables |= pieces
    return words, variables


def expression_words() -> set:
    """The names of the primitives, and ``T`` (``xT`` is ``x.T``)."""
    from ad_compiler.ad import rules
    return {w for name in rules.PRIMITIVES for w in name.split("_") if w} | {"T", "d", "tape"}


def is_derived(name: str, words: set, variables: set) -> bool:
    stem = _SUFFIX.sub("", name)
    if name in variables or not stem and "_" in variables:
        return True   # the user's own name, even ``_`` (``__1`` after it)
    candidates = [stem]
    for prefix in ("d_", "d"):
        if stem.startswith(prefix) and len(stem) > len(prefix):
            candidates.append(stem[len(prefix):])
    return any(_built_from(c, words, variables) for c in candidates)


def _built_from(stem: str, words: set, variables: set) -> bool:
    pieces = [p for p in stem.split("_") if p]
    if not pieces:
        return False
    found_variable = False
    for piece in pieces:
        split = _segment(piece, words)
        if split is None:
            return False
        found_variable = found_variable or any(s in variables for s in split)
    return found_variable


def _segment(piece: str, words: set):
    """``piece`` as a concatenation of ``words`` (fewest parts), or None."""
    best: list = [[]] + [None] * len(piece)
    for end in range(1, len(piece) + 1):
        for start in range(end):
            if best[start] is not None and piece[start:end] in words:
                if best[end] is None or len(best[start]) + 1 < len(best[end]):
                    best[end] = best[start] + [piece[start:end]]
    return best[len(piece)]


# -- one source ----------------------------------------------------------------------

def measure(fn, source: str) -> Figures:
    """The figures of one generated ``source`` of the IR ``fn``."""
    tree = ast.parse(source)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    args = {a.arg for a in func.args.args}
    stored, loads = _names(func)
    words, variables = user_words(fn)
    words |= expression_words()
    f = Figures(sources=1)
    local = sorted(stored - args)
    f.names = len(local)
    for name in local:
        if is_derived(name, words, variables):
            f.derived += 1
        else:
            f.not_derived[_SUFFIX.sub("", name)] += 1
    changes = _meaning_changes(fn)
    f.meaning_changes = len(changes)
    f.examples["meaning change"].extend(changes)
    copies = _dead_copies(func, loads)
    f.dead_copies = len(copies)
    f.examples["dead copy"].extend(copies)
    imported = {a.asname or a.name.split(".")[0] for n in ast.walk(tree)
                if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    defined_at_top = {t.id for n in tree.body if isinstance(n, ast.Assign)
                      for t in n.targets if isinstance(t, ast.Name)}
    undefined = set(loads) - stored - args - imported - defined_at_top - set(dir(builtins))
    f.modules = len(undefined & _MODULES)
    f.undefined = len(undefined - _MODULES)
    f.examples["undefined"].extend(sorted(undefined - _MODULES))
    return f


def _names(func) -> tuple[set, collections.Counter]:
    stored, loads = set(), collections.Counter()
    for node in ast.walk(func):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads[node.id] += 1
            else:
                stored.add(node.id)
    for node in ast.walk(func):  # x += y reads x too
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            loads[node.target.id] += 1
    return stored, loads


def _dead_copies(func, loads) -> list:
    found = []
    for node in ast.walk(func):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            pairs = list(zip(target.elts, value.elts))
        else:
            pairs = [(target, value)]
        for t, s in pairs:
            if isinstance(t, ast.Name) and isinstance(s, ast.Name) and t.id != s.id \
                    and (loads[t.id] == 0 or loads[s.id] == 1):
                found.append(f"{t.id} = {s.id}")
    return found


def _meaning_changes(fn) -> list:
    from ad_compiler.codegen.emit import EmitContext
    from ad_compiler.ir.names import sanitize
    ctx = EmitContext(fn)
    named = ctx.value_names()
    stems: dict = collections.defaultdict(set)
    for value, name in named:
        if not name.isidentifier() or keyword.iskeyword(name) or name in ctx.namespace:
            continue  # a constant written where it is used, or read under the name of
            #           its value (``f64_3``: every value so named is that number)
        stems[name].add(_SUFFIX.sub("", sanitize(value.hint)) or "v")
    return [f"{name}: {' / '.join(sorted(s))}" for name, s in sorted(stems.items()) if len(s) > 1]


# -- the programs --------------------------------------------------------------------

_RECORD: list = []
_PROGRAM = ["?"]


def _record_sources() -> None:
    from ad_compiler.codegen import compile as compile_module
    original = compile_module.to_source

    def recording(fn, *args, **kwargs):
        source, namespace = original(fn, *args, **kwargs)
        _RECORD.append((_PROGRAM[0], fn, source))
        return source, namespace
    compile_module.to_source = recording


def corpus() -> None:
    import ad_compiler as ms
    from ad_compiler.codegen import cache
    sys.path.insert(0, str(ROOT))
    from tests.corpus.load import corpus as load, to_float64
    cache.clear()  # every gradient is generated again, so that it is recorded
    for c in load().CORPUS:
        if "source" in c.xfail or "grad" in c.xfail:
            continue
        _PROGRAM[0] = f"corpus {c.name}"
        try:
            ms.grad(c.function, grad_position=c.grad_position)(*to_float64(c.make()))
        except Exception as e:  # noqa: BLE001 - the corpus says which cases compile
            print(f"!! corpus {c.name}: {type(e).__name__}: {e}", file=sys.stderr)


def docs() -> None:
    """Every example of README.md and docs/*.md, run in a temporary directory."""
    sys.path.insert(0, str(ROOT))
    from tests.docs import test_examples as te
    here = os.getcwd()
    for doc in te.DOCS:
        with tempfile.TemporaryDirectory() as d:
            directory = pathlib.Path(d)
            items = te.check_marks(doc.read_text())
            for item in items:
                if item["kind"] != "console":
                    name = item["name"] if item["kind"] == "file" else f"{item['name']}.py"
                    (directory / name).write_text(item["code"])
            modules = set(sys.modules)
            os.chdir(directory)
            sys.path.insert(0, str(directory))
            try:
                for item in items:
                    run = {"python": te._run_python, "console": te._run_console}.get(item["kind"])
                    if run:
                        _PROGRAM[0] = f"{doc.name}:{item['name']}"
                        with contextlib.redirect_stderr(io.StringIO()):
                            run(item)
            finally:
                os.chdir(here)
                sys.path.remove(str(directory))
                for m in set(sys.modules) - modules:  # the doc's own modules (model.py ...)
                    if getattr(sys.modules[m], "__file__", None) and \
                            str(sys.modules[m].__file__).startswith(str(directory)):
                        del sys.modules[m]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worst", type=int, default=0,
                        help="list the N most frequent names that are not derived")
    parser.add_argument("--show", default=None,
                        help="print the sources of the programs whose name contains this")
    parser.add_argument("--json", action="store_true", help="the totals as JSON")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    _record_sources()
    corpus()
    docs()
    totals = {"corpus": Figures(), "docs": Figures(), "all": Figures()}
    for program, fn, source in _RECORD:
        f = measure(fn, source)
        totals["corpus" if program.startswith("corpus ") else "docs"].add(f)
        totals["all"].add(f)
        if args.show and args.show in program:
            print(f"==== {program}\n{source}")
    if args.json:
        print(json.dumps({k: {n: getattr(v, n) for n in ("sources", "names", "derived",
                                                       "meaning_changes", "dead_copies",
                                                       "undefined", "modules")}
                          for k, v in totals.items()}))
        return 0
    for title, f in totals.items():
        print(f.line(title))
    if args.worst:
        everything = totals["all"]
        print("not derived:", ", ".join(f"{n} ({c})" for n, c in
                                        everything.not_derived.most_common(args.worst)))
        for kind, found in everything.examples.items():
            common = collections.Counter(found).most_common(args.worst)
            print(f"{kind}:", ", ".join(f"{n} ({c})" for n, c in common))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
