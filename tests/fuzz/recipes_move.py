"""Recipes for the data-movement functions (ad_compiler/ops/movement.py): np.tile,
np.repeat, flips, rolls, rotations, axis moves, stacking, splitting, pad modes,
diagonals, triangles, sorting, kron, and their ``ops`` and method spellings.

Views they return (np.flip, swapaxes, rot90, split parts, diagonal) meet the
generator's item assignments and augmented assignments, which checks the
aliasing model on them.
"""
from __future__ import annotations

from .recipes import NOT_GENERATED, Reject


def _nd(g, x):
    return g.val(x).ndim


def _ax(g, x):
    nd = _nd(g, x)
    return str(g.choice([i for i in range(nd)] + [i - nd for i in range(nd)]))


def _shape(g, x):
    return g.val(x).shape


def _tile(g, fn="np.tile"):
    x = g.arr()
    return f"{fn}({x}, {g.choice(['2', '(2, 1)', '(1, 2)', '(2, 1, 1)'] if fn != 'ops.tile' else ['(2, 1)', '(1, 2)', '(2, 2)'])})"


def _repeat(g, method=False):
    x = g.arr()
    axis = _ax(g, x)
    n = _shape(g, x)[int(axis)]
    counts = g.choice(["2", "1", str([g.choice([0, 1, 2]) for _ in range(n)])])
    if method:
        return f"{x}.repeat({counts}, {axis})" if counts[0] != "[" else f"{x}.repeat(2)"
    return g.choice([f"np.repeat({x}, {counts}, axis={axis})", f"np.repeat({x}, 2)"])


def _flip(g):
    x = g.arr()
    axis = g.choice(["", f", {_ax(g, x)}"] + ([", (0, 1)", ", axis=(-1, 0)"] if _nd(g, x) == 2
                                               else []))
    return f"np.flip({x}{axis})"


def _roll(g, fn="np.roll"):
    x = g.arr()
    shift = g.choice(["1", "-2", "4"])
    if fn == "ops.roll":
        return f"ops.roll({x}, {shift}, {_ax(g, x)})"
    forms = [f"np.roll({x}, {shift})", f"np.roll({x}, {shift}, axis={_ax(g, x)})"]
    if _nd(g, x) == 2:
        forms.append(f"np.roll({x}, (1, -1), axis=(0, 1))")
    return g.choice(forms)


def _matrix(fmt):
    def recipe(g):
        x = g.arr(min_nd=2, max_nd=2)
        return fmt.format(x=x, k=g.choice(["0", "1", "-1"]))
    return recipe


def _any(fmt):
    def recipe(g):
        x = g.arr()
        return fmt.format(x=x, a=_ax(g, x))
    return recipe


def _vector(fmt):
    def recipe(g):
        return fmt.format(x=g.arr(max_nd=1), k=g.choice(["0", "1", "-1"]))
    return recipe


def _pair(fmt):
    def recipe(g):
        x = g.arr()
        return fmt.format(x=x, y=g.same_shape(x))
    return recipe


def _split(fn):
    def recipe(g):
        x = g.arr(min_nd=2 if fn == "vsplit" else 1)
        axis = {"hsplit": 1 if _nd(g, x) > 1 else 0, "vsplit": 0}.get(fn, int(_ax(g, x)))
        n = _shape(g, x)[axis]
        if fn == "array_split":
            sections = g.choice(["2", "[1]", "3"])
        else:
            sections = g.choice([str(k) for k in range(1, n + 1) if n % k == 0] +
                                ([f"[{n - 1}]"] if n > 1 else []))
        part = g.choice(["0", "-1"])
        if fn in ("hsplit", "vsplit"):
            return f"np.{fn}({x}, {sections})[{part}]"
        return f"np.{fn}({x}, {sections}, axis={axis})[{part}]"
    return recipe


def _pad_mode(g):
    x = g.arr()
    mode = g.choice(["edge", "reflect", "symmetric", "wrap"])
    width = g.choice(["1", "(1, 2)", "(0, 1)"])
    if mode == "reflect" and min(_shape(g, x)) < 3:
        width = "(0, 1)" if min(_shape(g, x)) > 1 else "0"
    return f"np.pad({x}, {width}, mode={mode!r})"


def _along(g, fn="np.take_along_axis"):
    x = g.arr()
    axis = _ax(g, x)
    if fn == "ops.gather_elements":
        return f"ops.gather_elements({x}, {axis}, np.argsort({x}, axis={axis}))"
    return f"np.take_along_axis({x}, np.argsort({x}, axis={axis}), axis={axis})"


def _kron(g, fn="np.kron"):
    x = g.arr()
    y = g.arr(max_nd=1)
    if g.val(x).size * g.val(y).size > 24:
        raise Reject
    return f"{fn}({x}, {y})"


def _gather(g):
    x = g.arr()
    axis = _ax(g, x)
    n = _shape(g, x)[int(axis)]
    return f"ops.gather({x}, np.array([{n - 1}, 0, {n - 1}]), {axis})"


def _ops_split(g):
    x = g.arr()
    axis = _ax(g, x)
    n = _shape(g, x)[int(axis)]
    sizes = g.choice(["1", "2", f"[{n - 1}, 1]" if n > 1 else "1"])
    return f"ops.split({x}, {sizes}, {axis})[{g.choice(['0', '-1'])}]"


_OPS = "ad_compiler.ops.operations."

RECIPES = {
    "numpy.tile": _tile,
    "numpy.repeat": _repeat,
    "method.repeat": lambda g: _repeat(g, method=True),
    "numpy.flip": _flip,
    "numpy.fliplr": _matrix("np.fliplr({x})"),
    "numpy.flipud": _any("np.flipud({x})"),
    "numpy.roll": _roll,
    "numpy.rot90": _matrix("np.rot90({x}, {k})"),
    "numpy.swapaxes": _matrix("np.swapaxes({x}, 0, 1)"),
    "method.swapaxes": _matrix("{x}.swapaxes(-1, 0)"),
    "numpy.moveaxis": _matrix("np.moveaxis({x}, 0, -1)"),
    "numpy.rollaxis": _matrix("np.rollaxis({x}, 1)"),
    "numpy.hstack": _pair("np.hstack([{x}, {y}])"),
    "numpy.vstack": _pair("np.vstack(({x}, {y}))"),
    "numpy.dstack": _pair("np.dstack([{x}, {y}])[..., 1]"),
    "numpy.column_stack": _pair("np.column_stack([{x}, {y}])"),
    "numpy.split": _split("split"),
    "numpy.array_split": _split("array_split"),
    "numpy.hsplit": _split("hsplit"),
    "numpy.vsplit": _split("vsplit"),
    "numpy.dsplit": _matrix("np.dsplit(np.expand_dims({x}, -1), 1)[0][..., 0]"),
    "numpy.diag": lambda g: g.choice([_vector("np.diag({x}, {k})"),
                                      _matrix("np.diag({x}, {k})")])(g),
    "numpy.diagonal": _matrix("np.diagonal({x}, {k})"),
    "method.diagonal": _matrix("{x}.diagonal()"),
    "numpy.trace": _matrix("np.trace({x}, {k})"),
    "method.trace": _matrix("{x}.trace()"),
    "numpy.tril": _matrix("np.tril({x}, {k})"),
    "numpy.triu": _matrix("np.triu({x}, {k})"),
    "numpy.take_along_axis": _along,
    "numpy.sort": _any("np.sort({x}, axis={a})"),
    "numpy.argsort": _vector("{x}[np.argsort({x})]"),
    "method.argsort": _vector("{x}[{x}.argsort()]"),
    "numpy.kron": _kron,
    _OPS + "tile": lambda g: _tile(g, "ops.tile"),
    _OPS + "Tile": _any("ops.Tile()({x}, (2, 1))"),
    _OPS + "Sort": _any("ops.Sort({a}, True)({x})[0]"),
    _OPS + "repeat_elements": _any("ops.repeat_elements({x}, 2, {a})"),
    _OPS + "flip": _any("ops.flip({x}, ({a},))"),
    _OPS + "roll": lambda g: _roll(g, "ops.roll"),
    _OPS + "swapaxes": _matrix("ops.swapaxes({x}, 0, 1)"),
    _OPS + "moveaxis": _matrix("ops.moveaxis({x}, -1, 0)"),
    _OPS + "hstack": _pair("ops.hstack([{x}, {y}])"),
    _OPS + "vstack": _pair("ops.vstack([{x}, {y}])"),
    _OPS + "split": _ops_split,
    _OPS + "diag": _vector("ops.diag({x})"),
    _OPS + "diagonal": _matrix("ops.diagonal({x}, {k})"),
    _OPS + "tril": _matrix("ops.tril({x}, {k})"),
    _OPS + "triu": _matrix("ops.triu({x}, {k})"),
    _OPS + "sort": _any("ops.sort({x}, {a})[0]"),
    _OPS + "trace": _matrix("ops.trace({x})"),
    _OPS + "kron": lambda g: _kron(g, "ops.kron"),
    _OPS + "gather": _gather,
    _OPS + "gather_elements": lambda g: _along(g, "ops.gather_elements"),
}

FEATURES = {key: "shape" for key in RECIPES}

NOT_GENERATED["method.sort"] = "sorts in place and returns None: refused (tests/ops/test_movement.py)"
