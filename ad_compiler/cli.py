"""The ``ad-compiler`` command: show generated gradients, run a demo.

    ad-compiler show FILE.py:NAME [--grad-position 0,1] [--weights] [--sens] [--ir]
                                  [--args "f32[2,3] f32[3]"]
    ad-compiler demo
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

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


def _load(target: str):
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise SystemExit(f"ad-compiler: expected FILE.py:NAME, got {target!r}")
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if spec is None:
        raise SystemExit(f"ad-compiler: cannot load {path!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        # Python's compiler recurses on deep source (a 5,000-term expression)
        code = on_deep_stack(spec.loader.get_code, spec.name)
        exec(code, module.__dict__)  # noqa: S102 - running the user's file is the point
    except OSError as exc:
        raise SystemExit(f"ad-compiler: cannot read {path}: {exc.strerror or exc}") from None
    obj = getattr(module, name, None)
    if obj is None:
        raise SystemExit(f"ad-compiler: {path} has no {name!r}")
    from .nn.cell import Cell
    if isinstance(obj, type) and issubclass(obj, Cell):
        obj = obj()
    return obj


def _positions(text: str | None):
    if text is None:
        return 0
    parts = tuple(int(p) for p in text.split(",") if p.strip())
    return parts[0] if len(parts) == 1 else parts


def cmd_show(ns) -> int:
    from .api.transforms import compiled_entry, example_from_type
    fn = _load(ns.target)
    # on the command line every --args word describes an input's type
    args = tuple(example_from_type(a) for a in ns.args.split()) if ns.args else ()
    entry = compiled_entry(fn, *args, grad_position=_positions(ns.grad_position),
                           weights=True if ns.weights else None, sens_param=ns.sens)
    if ns.ir:
        print(entry.ir)
        print()
    print(entry.compiled.source, end="")
    return 0


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
    show.set_defaults(run=cmd_show)
    demo = sub.add_parser("demo", help="differentiate a small function and show the source")
    demo.set_defaults(run=cmd_demo)
    ns = parser.parse_args(argv)
    try:
        return ns.run(ns)
    except AdCompilerError as exc:
        print(f"ad-compiler: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
