"""Recipes for the building helpers (ops/building.py) and the functions without a
derivative (ops/predicates.py); see tests/fuzz/recipes.py for the conventions."""
from __future__ import annotations

from .recipes import RARE, Reject

OPS = "ad_compiler.ops.operations."


def _vec(g, min_len=1):
    """A 1-d array of at least ``min_len`` elements."""
    x = g.arr(max_nd=1)
    if g.val(x).shape[0] < min_len:
        raise Reject
    return x


def _append(g):
    x = g.arr()
    if g.coin():
        return f"np.append({x}, {g.num()})"
    return f"np.append({x}, {g.same_shape(x)}, axis={g.axis(x, allow_none=False)})"


def _partition(g):
    x = _vec(g, 2)
    return f"np.partition({x}, {g.choice(['0', '1', '-1'])}) * {g.num()}"


def _array_equal(g):
    x = g.num()
    return f"{x} if np.array_equal({x}, {x} * 1.0) else {x} * 0.5"


def _allclose(g):
    x = g.num()
    return f"{x} * 2.0 if np.allclose({x}, {g.lit()}, atol=0.5) else {x}"


def _diff(fn):
    def recipe(g):
        x = g.arr()
        axis = g.axis(x, allow_none=False)
        extra = g.choice(["", f", prepend={g.lit()}", f", append={g.flt()}"])
        n = g.choice(["1", "2"]) if g.val(x).shape[int(axis)] > 2 else "1"
        return f"{fn}({x}, {n}, axis={axis}{extra})" if fn == "np.diff" \
            else f"{fn}({x}, {n}, {axis})"
    return recipe


def _cross(fn):
    def recipe(g):
        x = g.arr()
        if g.val(x).shape[-1] not in (2, 3) or fn != "np.cross" and g.val(x).shape[-1] != 3:
            raise Reject
        y = g.same_shape(x)
        return f"{fn}({x}, {y})" if fn == "np.cross" else f"{fn}({x}, {y}, dim=-1)"
    return recipe


def _select(g):
    x = g.num()
    return (f"np.select([{x} > {g.lit()}, {g.num()} < {g.lit()}], [{g.partner(x)}, "
            f"{g.num()}], {g.flt()})")


def _gradient(g):
    x = g.arr()
    axis = g.axis(x, allow_none=False, length_over=2)
    n = g.val(x).shape[int(axis)]
    coords = [round(0.5 * i + 0.25 * (i % 2) * g.choice([0, 1]), 2) for i in range(n)]
    spacing = g.choice(["", f", {g.choice(['0.5', '2'])}", f", np.array({coords})"])
    order = g.choice(["", ", edge_order=2"])
    return f"np.gradient({x}{spacing}, axis={axis}{order})"


def _linspace(fn):
    def recipe(g):
        a, b = g.num(), g.num()
        if fn == "np.linspace":
            return f"np.linspace({a}, {b}, {g.choice(['1', '4', '5'])}" \
                f"{g.choice(['', ', endpoint=False'])})"
        return f"ops.linspace({g.flt()}, {g.flt()}, 4)"
    return recipe


def _nondiff_mask(fmt):
    """``np.where(<mask>, x, y)`` where ``fmt`` makes the mask from an operand."""
    return lambda g: f"np.where({fmt.format(x=g.num(), lit=g.lit())}, {g.num()}, {g.num()})"


def _order(fn):
    def recipe(g):
        x = _vec(g)
        return f"{x}[{fn.format(x=x)}] * {g.num()}"
    return recipe


def _searchsorted(fn):
    def recipe(g):
        x = g.num()
        return f"{x} * {fn.format(x=x)}"
    return recipe


RECIPES = {
    "numpy.append": _append,
    "numpy.diff": _diff("np.diff"),
    OPS + "diff": _diff("ops.diff"),
    "numpy.cross": _cross("np.cross"),
    OPS + "cross": _cross("ops.cross"),
    "numpy.select": _select,
    OPS + "select": lambda g: f"ops.select({g.num()} > {g.lit()}, {g.num()}, {g.num()})",
    "numpy.gradient": _gradient,
    "numpy.linspace": _linspace("np.linspace"),
    OPS + "linspace": _linspace("ops.linspace"),
    "numpy.atleast_1d": lambda g: f"np.atleast_1d({g.num()})",
    "numpy.atleast_2d": lambda g: f"np.atleast_2d({g.num()})",
    "numpy.atleast_3d": lambda g: f"np.atleast_3d({g.num()})",
    OPS + "atleast_1d": lambda g: f"ops.atleast_1d({g.num()})",
    OPS + "atleast_2d": lambda g: f"ops.atleast_2d({g.num()})",
    OPS + "atleast_3d": lambda g: f"ops.atleast_3d([{g.num()}])[0]",
    "numpy.partition": _partition,
    # tests and logical combinations: masks (np.logical_*, np.bitwise_*, np.invert:
    # recipes_pyiter.py)
    "numpy.isnan": _nondiff_mask("np.isnan({x})"),
    "numpy.isfinite": _nondiff_mask("np.isfinite({x})"),
    "numpy.isinf": _nondiff_mask("np.isinf({x} * 1e308 * 10)"),
    OPS + "isnan": _nondiff_mask("ops.isnan({x})"),
    OPS + "isfinite": _nondiff_mask("ops.isfinite({x})"),
    OPS + "isinf": _nondiff_mask("ops.isinf({x})"),
    "numpy.isclose": _nondiff_mask("np.isclose({x}, {lit}, atol=0.3)"),
    OPS + "isclose": _nondiff_mask("ops.isclose({x}, {lit}, atol=0.3)"),
    "numpy.allclose": _allclose,
    "numpy.array_equal": _array_equal,
    OPS + "logical_and": _nondiff_mask("ops.logical_and({x} > 0, {x} < {lit})"),
    OPS + "logical_or": _nondiff_mask("ops.logical_or({x} > 0.5, {x} < {lit})"),
    OPS + "logical_xor": _nondiff_mask("ops.logical_xor({x} > 0, {x} < {lit})"),
    OPS + "logical_not": _nondiff_mask("ops.logical_not({x} > {lit})"),
    # orderings and counts: integers used as indices and factors
    OPS + "argsort": _order("ops.argsort({x}, descending=True)"),
    "numpy.argpartition": _order("np.argpartition({x}, 0)"),
    "method.argpartition": _order("{x}.argpartition(0)"),
    "numpy.searchsorted": _searchsorted("np.searchsorted(np.array([-0.5, 0.0, 0.5]), {x})"),
    "method.searchsorted": _searchsorted("np.array([-0.5, 0.0, 0.5]).searchsorted({x})"),
    OPS + "searchsorted": _searchsorted("ops.searchsorted(np.array([-0.5, 0.5]), {x})"),
    "numpy.count_nonzero": lambda g: f"{g.num()} * np.count_nonzero({g.num()} > 0)",
    OPS + "count_nonzero": lambda g: f"{g.num()} * ops.count_nonzero({g.num()} > 0)",
}

_NONDIFF = ("isnan", "isfinite", "isinf", "isclose", "allclose", "array_equal", "logical_and",
            "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
            "bitwise_xor", "invert", "argpartition", "searchsorted",
            "count_nonzero")
_SHAPE = ("append", "diff", "cross", "select", "gradient", "linspace", "atleast_1d",
          "atleast_2d", "atleast_3d", "partition")

FEATURES = {**{f"numpy.{n}": "nondiff" for n in _NONDIFF},
            **{f"method.{n}": "nondiff" for n in ("argpartition", "searchsorted")},
            **{f"numpy.{n}": "shape" for n in _SHAPE}}


# -- np.random inside the function: each draw seeds first, so plain Python, the compiled
# code and the finite differences all see the same numbers -------------------------------

def _draw(call, use="{x} * {r}"):
    def recipe(g):
        # inside a loop or branch body a draw is refused with a located error (after a
        # data-dependent return too: drawn rarely)
        if g.depth:
            raise Reject
        r = f"(np.random.seed({g.choice(['0', '1', '7'])}) or np.random.{call})"
        x = g.num()
        shape = getattr(g.val(x), "shape", ()) if x in g.env else ()
        return use.format(x=x, r=r.replace("SHAPE", repr(tuple(shape)) if shape else "None"))
    return recipe


_DRAWS = {
    "rand": _draw("rand()", "{x} * {r}"),
    "randn": _draw("randn(3)", "np.sum({r}) * {x}"),
    "random": _draw("random()", "{x} * {r}"),
    "random_sample": _draw("random_sample(SHAPE)"),
    "randint": _draw("randint(1, 4)"),
    "normal": _draw("normal(0.5, 2.0, size=SHAPE)"),
    "standard_normal": _draw("standard_normal(SHAPE)"),
    "uniform": _draw("uniform(-1.0, 1.0)"),
    "choice": _draw("choice(3)", "{x} * {r}"),
    "permutation": _draw("permutation(4)", "{x} * np.sum({r} * np.arange(4.0))"),
    "exponential": _draw("exponential(2.0, size=SHAPE)"),
    "poisson": _draw("poisson(3.0)"),
    "binomial": _draw("binomial(5, 0.5)"),
    "beta": _draw("beta(2.0, 3.0, size=SHAPE)"),
    "gamma": _draw("gamma(2.0, size=SHAPE)"),
    "laplace": _draw("laplace(size=SHAPE)"),
    "logistic": _draw("logistic(size=SHAPE)"),
    "lognormal": _draw("lognormal(size=SHAPE)"),
    "seed": _draw("rand()"),
}
RECIPES.update({f"numpy.random.{name}": recipe for name, recipe in _DRAWS.items()})
FEATURES.update({f"numpy.random.{name}": "nondiff" for name in _DRAWS})
RARE.update(f"numpy.random.{name}" for name in _DRAWS)
