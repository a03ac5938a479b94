"""Recipes of the products family: np.einsum, np.tensordot, np.inner, np.vdot and the
``ops`` spellings (einsum, tensor_dot, dot, inner, outer, bmm, mm, BatchMatMul)."""
from __future__ import annotations

from .recipes import Reject


def _terms(g):
    """A matmul pair as matrices: a 1-D left operand a row, a 1-D right operand a column."""
    a, b = g.matmul_pair()
    # matmul_pair's own right operand (no variable fits) is an expression, a matrix
    a2 = a if g.val(a).ndim == 2 else f"{a}[None]"
    b2 = b if b not in g.env or g.val(b).ndim == 2 else f"{b}[:, None]"
    return a2, b2


def _einsum_one(g):
    x = g.arr()
    if g.val(x).ndim == 1:
        return f"np.einsum({g.choice(['i->', 'i', '...->...', 'i->i'])!r}, {x})"
    k = min(g.val(x).shape)
    subscripts = g.choice(["ij->ji", "ij->i", "ij->", "ij", "ji", "...j->...", "ii->i", "ii->",
                           "ii"])
    return f"np.einsum({subscripts!r}, {x}[:{k}, :{k}])" if "ii" in subscripts \
        else f"np.einsum({subscripts!r}, {x})"


def _einsum_two(g):
    x = g.arr()
    y = g.same_shape(x)
    if g.coin(0.5):
        a, b = _terms(g)
        subscripts = g.choice(["ij,jk->ik", "ij,jk", "...j,jk->...k", "ij,jk->ki", "ij,jk->"])
        return f"np.einsum({subscripts!r}, {a}, {b})"
    if g.val(x).ndim == 1:
        return f"np.einsum({g.choice(['i,i->', 'i,i->i', 'i,j->ij', 'i,i'])!r}, {x}, {y})"
    return f"np.einsum({g.choice(['ij,ij->j', 'ij,ij->', 'ij,ij', 'ij,kj->ik'])!r}, {x}, {y})"


def _einsum_three(g):
    a, b = _terms(g)
    return f"np.einsum('ij,jk,ik->', {a}, {b}, {a} @ {b}, optimize={g.choice(['True', 'False'])})"


def _einsum(g):
    return g.choice([_einsum_one, _einsum_two, _einsum_three])(g)


def _tensordot(fn):
    def recipe(g):
        if g.coin(0.5):
            a, b = _terms(g)
            return f"{fn}({a}, {b}, {g.choice(['1', '([1], [0])', '((1,), (0,))', '(-1, 0)'])})"
        x = g.arr()
        y = g.same_shape(x)
        nd = g.val(x).ndim
        axes = g.choice([str(nd), "0", "([0], [0])", f"({list(range(nd))}, {list(range(nd))})"])
        if axes == "0" and g.val(x).size > 16:
            raise Reject("an outer product of large arrays")
        return f"{fn}({x}, {y}, {axes})"
    return recipe


def _same_last(fmt):
    def recipe(g):
        x = g.arr()
        return fmt.format(x, g.same_shape(x))
    return recipe


def _pair(fmt):
    def recipe(g):
        return fmt.format(*_terms(g))
    return recipe


def _einsum_ops(g):
    return _einsum(g).replace("np.einsum(", "ops.einsum(").replace(", optimize=True", "") \
        .replace(", optimize=False", "")


RECIPES = {
    "numpy.einsum": _einsum,
    "numpy.tensordot": _tensordot("np.tensordot"),
    "numpy.inner": _same_last("np.inner({0}, {1})"),
    "numpy.vdot": _same_last("np.vdot({0}, {1})"),
    "ad_compiler.ops.operations.einsum": _einsum_ops,
    "ad_compiler.ops.operations.tensor_dot": _tensordot("ops.tensor_dot"),
    "ad_compiler.ops.operations.dot": _pair("ops.dot({0}, {1})"),
    "ad_compiler.ops.operations.inner": _same_last("ops.inner({0}, {1})"),
    "ad_compiler.ops.operations.outer":
        lambda g: f"ops.outer({g.arr(max_nd=1)}, {g.arr(max_nd=1)})",
    "ad_compiler.ops.operations.bmm": _pair("ops.bmm({0}[None], {1})"),
    "ad_compiler.ops.operations.mm": _pair("ops.mm({0}, {1})"),
    "ad_compiler.ops.operations.BatchMatMul": _pair(
        "ops.BatchMatMul(transpose_b=True)({0}[None], {1}.T[None])"),
}

FEATURES = {key: "matmul" for key in RECIPES}
