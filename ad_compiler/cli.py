"""The ``ad-compiler`` command: show generated gradients, run a demo.

    ad-compiler show FILE.py:NAME [--grad-position 0,1] [--weights] [--sens] [--ir]
                                  [--args "f32[2,3] f32[3]"] [--html OUT.html]
    ad-compiler demo
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import shlex
import sys
from pathlib import Path

from . import highlight
from .depth import on_deep_stack
from .errors import AdCompilerError

DEMO = '''\
import numpy as np
import ad_compiler as ms

def loss(w, x):
    h = np.tanh(x @ w)
    return np.mean(h * h)

w = np.array([[0.5, -0.2], [0.1, 0.4]], dtype=np.float32)
x = np.array([[1.0, 2.0], [3.0, -1.0]], dtype=np.float32)
dw = ms.grad(loss)(w, x)
'''


class UsageError(Exception):
    """A mistake in the command line (file, name, options): one line, exit status 2."""


def _one_line(text) -> str:
    return " ".join(str(text).split())


def _load(target: str):
    """The function or Cell that ``FILE.py:NAME`` names (a Cell class is built)."""
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise UsageError(f"expected FILE.py:NAME, got {target!r}")
    module = _import(Path(path))
    obj = getattr(module, name, None)
    if obj is None:
        raise UsageError(f"{path} has no {name!r}" + _defined_in(module))
    from .nn.cell import Cell
    if isinstance(obj, type) and issubclass(obj, Cell):
        return _build(obj, path, name)
    if not _compilable(obj):
        what = "a class" if isinstance(obj, type) else f"of type {type(obj).__name__}"
        raise UsageError(f"{path}:{name} is {what}, not a Python function or a Cell"
                         + _defined_in(module))
    return obj


def _compilable(obj) -> bool:
    """A function or method with Python source, a Cell, or a gradient function."""
    from .nn.cell import Cell
    return (inspect.isfunction(obj) or inspect.ismethod(obj) or isinstance(obj, Cell)
            or not isinstance(obj, type) and callable(getattr(obj, "__ad_lower__", None)))


def _import(path: Path):
    if not path.is_file():
        raise UsageError(f"cannot read {path}: " + ("it is a directory" if path.is_dir()
                                                    else "no such file"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None:
        raise UsageError(f"cannot import {path}: give a Python source file (FILE.py:NAME)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        # Python's compiler recurses on deep source (a 5,000-term expression)
        code = on_deep_stack(spec.loader.get_code, spec.name)
        exec(code, module.__dict__)  # noqa: S102 - running the user's file is the point
    except (Exception, SystemExit) as exc:
        sys.modules.pop(spec.name, None)
        raise UsageError(_import_failure(exc, path)) from None
    return module


def _import_failure(exc: BaseException, path: Path) -> str:
    if isinstance(exc, SyntaxError):
        return f"{exc.filename}:{exc.lineno}: syntax error: {exc.msg}; fix the file and run again"
    where = _where(exc, path)
    if isinstance(exc, OSError) and not where:  # the file itself could not be read
        return f"cannot read {path}: {exc.strerror or exc}"
    # the module's own code failed while it was imported
    return (f"importing {path} failed{where}: {type(exc).__name__}: {_one_line(exc)}; fix the "
            "module so that it imports")


def _where(exc: BaseException, path: Path) -> str:
    """`` at line N`` of ``path`` where ``exc`` was raised (its deepest frame there)."""
    import traceback
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__)
             if Path(f.filename).resolve() == path.resolve()]
    return f" at line {lines[-1]}" if lines else ""


def _defined_in(module) -> str:
    """``; it defines f, g, Net``: the functions and Cells the module defines itself."""
    from .nn.cell import Cell
    names = [k for k, v in vars(module).items() if not k.startswith("_")
             and getattr(v, "__module__", None) == module.__name__
             and (inspect.isfunction(v) or isinstance(v, Cell)
                  or isinstance(v, type) and issubclass(v, Cell))]
    return f"; it defines {', '.join(names)}" if names else ""


def _build(cls, path: str, name: str):
    try:
        return cls()
    except TypeError as exc:
        raise UsageError(f"cannot build {name}() with no arguments ({_one_line(exc)}); create an "
                         f"instance in {path}, e.g. net = {name}(...), and show {path}:net") \
            from None
    except Exception as exc:
        raise UsageError(f"building {name}() failed: {type(exc).__name__}: {_one_line(exc)}") \
            from None


def _positions(text: str | None):
    if text is None:
        return 0
    try:
        parts = tuple(int(p) for p in text.split(","))
    except ValueError:
        parts = ()
    if not parts or any(p < 0 for p in parts) or len(set(parts)) != len(parts):
        raise UsageError(f"--grad-position expects input positions separated by commas, such as "
                         f"0 or 0,2 (non-negative, each once); got {text!r}")
    return parts[0] if len(parts) == 1 else parts


def _types(text: str | None) -> tuple:
    from .api.transforms import example_from_type
    from .errors import GradValueError
    args = []
    for word in (text or "").split():
        try:
            args.append(example_from_type(word))
        except GradValueError:
            raise UsageError(f"--args: cannot read the type {word!r}; write one type per input, "
                             f"such as f32[3,4], f64[] or float") from None
    return tuple(args)


def _check_call(fn, args: tuple, positions) -> None:
    """The inputs ``--args`` describes fit ``fn``, and ``--grad-position`` fits them."""
    target = fn.construct if hasattr(fn, "construct") else fn
    name = getattr(target, "__qualname__", type(fn).__name__)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return
    if args:
        try:
            sig.bind(*args)
        except TypeError as exc:
            raise UsageError(f"--args gives {len(args)} input type(s) but {name}{sig} cannot "
                             f"take them ({exc}); give one type per input") from None
        n = len(args)
    elif any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()):
        return  # any number of inputs
    else:
        from .api.transforms import _n_inputs
        n = _n_inputs(fn)
    pos = positions if isinstance(positions, tuple) else (positions,)
    if max(pos) >= n:
        raise UsageError(f"--grad-position {max(pos)} is out of range: {name}{sig} has {n} "
                         f"input(s), numbered from 0")


def _check_weights(fn, entry) -> None:
    """``--weights`` needs Parameters: a Cell's, or those a function reads."""
    from .nn.cell import Cell
    if not isinstance(fn, Cell) and not any(p.requires_grad for p in entry.params):
        name = getattr(fn, "__qualname__", type(fn).__name__)
        raise UsageError(f"--weights: {name} is not a Cell and reads no trainable Parameter, so "
                         "it has no weights to differentiate; leave out --weights")


def cmd_show(ns) -> int:
    from .api.transforms import compiled_entry
    positions = _positions(ns.grad_position)
    args = _types(ns.args)
    fn = _load(ns.target)
    _check_call(fn, args, positions)
    if ns.weights:
        _check_weights(fn, compiled_entry(fn, *args, grad_position=positions))
    entry = compiled_entry(fn, *args, grad_position=positions,
                           weights=True if ns.weights else None, sens_param=ns.sens)
    if ns.html:
        _write_page(ns, entry)
        return 0
    if ns.ir:
        print(entry.ir)
        print()
    source = entry.compiled.source
    print(highlight.terminal(source) if highlight.wants_colour(sys.stdout) else source, end="")
    return 0


def _write_page(ns, entry) -> None:
    """The page of ``--html``: the user's source and the gradient side by side, the IR."""
    from .codegen.linemap import source_lines
    from .page import render
    source, locs = source_lines(entry.ir)
    page = render(_command(ns), source, locs, str(entry.ir), first=ns.target.rpartition(":")[0])
    try:
        Path(ns.html).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {ns.html}: {exc.strerror or exc}") from None
    print(f"wrote {ns.html}")


def _command(ns) -> str:
    """The ``ad-compiler show`` command line that ``ns`` was read from (without --html)."""
    words = ["ad-compiler", "show", ns.target]
    for option, value in (("--grad-position", ns.grad_position), ("--args", ns.args)):
        if value is not None:
            words += [option, value]
    words += [flag for flag, on in (("--weights", ns.weights), ("--sens", ns.sens)) if on]
    return shlex.join(words)


def cmd_demo(ns) -> int:
    import linecache
    namespace: dict = {}
    linecache.cache["<demo>"] = (len(DEMO), None, DEMO.splitlines(True), "<demo>")
    exec(compile(DEMO, "<demo>", "exec"), namespace)
    from .api.transforms import adjoint_source
    print("# a function and its compiled gradient\n" + DEMO)
    print("dw =", namespace["dw"].tolist())
    print("\n# generated adjoint source")
    print(adjoint_source(namespace["loss"], namespace["w"], namespace["x"]), end="")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ad-compiler", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated gradient of a function or Cell")
    show.add_argument("target", help="FILE.py:NAME (a function, or a Cell class built with no args)")
    show.add_argument("--grad-position", help="comma-separated input positions (default 0)")
    show.add_argument("--weights", action="store_true", help="also differentiate w.r.t. Parameters")
    show.add_argument("--sens", action="store_true", help="take the output sensitivity as input")
    show.add_argument("--ir", action="store_true", help="print the adjoint SSA IR too")
    show.add_argument("--args", help='input types, e.g. "f32[2,3] f32[3] float"')
    show.add_argument("--html", metavar="OUT.html",
                      help="write a page with the source, the gradient and the IR side by side")
    show.set_defaults(run=cmd_show)
    demo = sub.add_parser("demo", help="differentiate a small function and show the source")
    demo.set_defaults(run=cmd_demo)
    ns = parser.parse_args(argv)
    try:
        return ns.run(ns)
    except UsageError as exc:       # the command line is wrong
        print(f"ad-compiler: {exc}", file=sys.stderr)
        return 2
    except AdCompilerError as exc:  # the function cannot be compiled: a located error
        print(f"ad-compiler: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        loc = getattr(exc, "_ad_loc", None)
        if loc is None:
            raise  # an internal error: its traceback is what a bug report needs
        print(f"ad-compiler: {loc}: the function raised {type(exc).__name__}: "
              f"{_one_line(exc.args[0] if exc.args else '')}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
