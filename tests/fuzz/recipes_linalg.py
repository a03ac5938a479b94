"""Recipes for ``np.linalg`` and MindSpore's linear-algebra ``ops`` (ops/decompositions.py).

Every matrix a recipe decomposes is built to be well conditioned with a simple
spectrum, whatever array it starts from: ``0.1 * tanh(x)`` moves singular values
(and eigenvalues) by at most 0.3 (Weyl), and is added to a diagonal
``3, 6, 9 ...``; so inverses, determinants, Cholesky factors, and the
eigenvector and singular-vector adjoints (which divide by gaps) are all defined.
"""
from __future__ import annotations

def _shape(g, x):
    return g.val(x).shape


def _diag(n: int) -> str:
    return f"np.arange(3.0, {3 * n + 1}.0, 3.0)"


def _square(g) -> str:
    """A symmetric positive definite (m, m) matrix built from a 2-D array."""
    x = g.arr(2, 2)
    m = _shape(g, x)[0]
    return f"(0.1 * np.tanh({x}) @ np.tanh({x}).T + np.eye({m}) * {_diag(m)})"


def _rect(g, tall=False) -> str:
    """An (m, n) matrix with singular values near 3, 6, 9 ... (transposed to tall)."""
    x = g.arr(2, 2)
    m, n = _shape(g, x)
    if tall and m < n:
        x, (m, n) = f"{x}.T", (n, m)
    return f"(0.1 * np.tanh({x}) + np.eye({m}, {n}) * {_diag(n)})"


def _rhs(g) -> str:
    """A right-hand side for the (m, m) matrix just built: a vector or a matrix."""
    x = g.last
    return g.choice([f"{x}[:, 0]", x, f"np.sin({x})"])


def _solve(g):
    a = _square(g)
    return f"np.linalg.solve({a}, {_rhs(g)})"


def _lstsq(g):
    a = _rect(g, tall=True)
    x = g.last
    m, n = _shape(g, x)
    rhs = f"np.cos({x}[:, 0])" if m >= n else f"np.cos({x}[0])"
    part = g.choice(["[0]", "[3]", "[0] * 2.0"])
    return f"np.linalg.lstsq({a}, {rhs}, rcond=None){part}"


def _svd(g, fn="np.linalg.svd"):
    a = _rect(g)
    if fn == "ops.svd":
        return g.choice([f"ops.svd({a})[0]", f"ops.svd({a})[1] ** 2",
                         f"ops.svd({a}, compute_uv=False)"])
    return g.choice([f"np.linalg.svd({a}, compute_uv=False)",
                     f"np.linalg.svd({a}, full_matrices=False)[0] ** 2",
                     f"np.linalg.svd({a}, full_matrices=False)[2] * 2.0"])


def _qr(g, fn="np.linalg.qr"):
    a = _rect(g, tall=True)
    return g.choice([f"{fn}({a})[0] ** 2", f"{fn}({a})[1]"])


def _eigh(g):
    a = _square(g)
    return g.choice([f"np.linalg.eigh({a})[0]", f"np.linalg.eigh({a})[1] ** 2",
                     f"np.linalg.eigh({a}, UPLO='U')[1] ** 2"])


def _matrix_power(fn):
    def recipe(g):
        return f"{fn}({_square(g)}, {g.choice([0, 1, 2, 3, 5, -1])})"
    return recipe


def _norm(fn, axis_name="axis"):
    def recipe(g):
        x = g.arr(1, 2)
        nd = len(_shape(g, x))
        if nd == 1 or g.coin():
            ords = ["None", "1", "2", "np.inf", "-np.inf", "3", "0"]
            axis = g.choice(["0", "-1"] if nd == 1 else ["0", "1", "-1"])
        else:
            ords = ["None", "'fro'", "'nuc'", "1", "-1", "np.inf", "-np.inf", "2", "-2"]
            axis = g.choice(["(0, 1)", "(1, 0)", "None"])
        keep = g.choice(["", ", keepdims=True"]) if fn == "np.linalg.norm" else \
            g.choice(["", ", keepdim=True"])
        return f"{fn}({x}, {g.choice(ords)}, {axis_name}={axis}{keep})"
    return recipe


def _vector_norm(g):
    x = g.arr(1, 2)
    nd = len(_shape(g, x))
    axis = g.choice(["None", "0", "-1"] + (["(1, 0)", "(0, 1)"] if nd == 2 else []))
    ord = g.choice(["2", "1", "np.inf", "-np.inf", "3", "0"])
    keep = g.choice(["", ", keepdims=True"])
    return f"np.linalg.vector_norm({x}, axis={axis}, ord={ord}{keep})"


def _matrix_norm(g):
    ord = g.choice(["'fro'", "'nuc'", "1", "-1", "np.inf", "-np.inf", "2", "-2"])
    keep = g.choice(["", ", keepdims=True"])
    return f"np.linalg.matrix_norm({g.arr(2, 2)}, ord={ord}{keep})"


def _cond(g):
    p = g.choice(["", ", -2", ", 1", ", np.inf", ", 'fro'"])
    return f"np.linalg.cond({_square(g)}{p})"


def _unary(fmt, build=_square):
    def recipe(g):
        return fmt.format(build(g))
    return recipe


def _cholesky(fn):
    def recipe(g):
        upper = g.choice(["", ", upper=True"])
        return f"{fn}({_square(g)}{upper})"
    return recipe


def _pinv(fn):
    def recipe(g):
        a = _rect(g)
        return f"{fn}({a})"
    return recipe


RECIPES = {
    "numpy.linalg.inv": _unary("np.linalg.inv({0})"),
    "numpy.linalg.det": _unary("np.linalg.det({0})"),
    "numpy.linalg.slogdet": _unary("np.linalg.slogdet({0})[1]"),
    "numpy.linalg.solve": _solve,
    "numpy.linalg.cholesky": _cholesky("np.linalg.cholesky"),
    "numpy.linalg.eigh": _eigh,
    "numpy.linalg.eigvalsh": _unary("np.linalg.eigvalsh({0})"),
    "numpy.linalg.svd": _svd,
    "numpy.linalg.qr": _qr,
    "numpy.linalg.pinv": _pinv("np.linalg.pinv"),
    "numpy.linalg.lstsq": _lstsq,
    "numpy.linalg.matrix_power": _matrix_power("np.linalg.matrix_power"),
    "numpy.linalg.norm": _norm("np.linalg.norm"),
    "numpy.linalg.vector_norm": _vector_norm,
    "numpy.linalg.matrix_norm": _matrix_norm,
    "numpy.linalg.cond": _cond,
    "numpy.linalg.svdvals": _unary("np.linalg.svdvals({0})", _rect),
    "ad_compiler.ops.operations.inverse": _unary("ops.inverse({0})"),
    "ad_compiler.ops.operations.det": _unary("ops.det({0})"),
    "ad_compiler.ops.operations.slogdet": _unary("ops.slogdet({0})[1]"),
    "ad_compiler.ops.operations.cholesky": _cholesky("ops.cholesky"),
    "ad_compiler.ops.operations.svd": lambda g: _svd(g, "ops.svd"),
    "ad_compiler.ops.operations.qr": lambda g: _qr(g, "ops.qr"),
    "ad_compiler.ops.operations.pinv": _pinv("ops.pinv"),
    "ad_compiler.ops.operations.matrix_power": _matrix_power("ops.matrix_power"),
    "ad_compiler.ops.operations.norm": _norm("ops.norm", "dim"),
}

FEATURES = {key: "matmul" for key in RECIPES}
