"""Recipes for ``ms.vmap`` / ``ops.vmap`` (one object): a helper of one example mapped
over an array's leading or trailing axis inside the differentiated function, so the
fuzzer checks the batched code's values and its gradient (vmap inlines as IR).

Variants exercise the batching rules beyond elementwise code: a convolution and a
max pooling of each example (filters shared or per example), per-example labels
and index arrays (reads and their scatter adjoints), functions with their own
derivative rules (``custom_vjp``/``custom_jvp``: their rule runs vmapped under the
program's gradient), and per-example gradients ``vmap(grad(h))`` of helpers with
loops, lists read at other indices (list cotangents) included, which the
program's gradient then differentiates again; random draws in the helper (the
batch draws what a loop of calls draws), np.linalg.lstsq of each example, and a
boolean mask shared by the batch.
"""
from __future__ import annotations

from .recipes import Reject
from .recipes_conv import _filters


def _spelling(g) -> str:
    return g.choice(["ms.vmap", "ms.ops.vmap"])


def _mapped_helper(g):
    x = g.arr()
    helper = g.smooth_helper(elementwise=g.coin(0.5))
    axes = g.choice(["", ", in_axes=0", ", in_axes=-1", ", in_axes=(0,), out_axes=0"])
    return f"{_spelling(g)}({helper}{axes})({x})"


def _rows(g, min_width=1):
    """A 2-d array (its examples along axis 0) and its row length."""
    x = g.arr(min_nd=2)
    width = g.val(x).shape[1]
    if width < min_width:
        raise Reject("too narrow")
    return x, width


def _mapped_conv(g):
    """``conv1d`` (then maybe max pooling) of each row, filters shared or per example."""
    x, n = _rows(g)
    k = g.choice([1, 2] if n >= 2 else [1])
    name = g.fresh_name("h")
    pool = n >= 2 and g.coin(0.5)
    body = "ops.conv1d(a.reshape(1, 1, -1), f.reshape(1, 1, -1), None, 1, 'same')"
    if pool:
        body = f"ops.max_pool2d({body}.reshape(1, 1, 1, -1), (1, 2), 1)[0, 0, 0]"
    else:
        body += "[0, 0]"
    g.add_helper(f"def {name}(a, f):\n    return np.tanh({body})\n")
    if g.coin(0.5):
        return f"{_spelling(g)}({name}, in_axes=(0, None))({x}, {_filters(g, (k,))})"
    return f"{_spelling(g)}({name})({x}, {x}[:, :{k}] * 0.5)"


_LABELLED = ["a[i] * np.sum(np.tanh(a))", "-(a - np.log(np.sum(np.exp(a))))[i]",
             "np.sin(a[i]) + a[i] * a[0]"]


def _labels(g, count: int, width: int, shape=()) -> str:
    """A literal int array of ``count`` examples of ``shape`` indices in ``[-width, width)``."""
    def one():
        if not shape:
            return str(g.rng.randrange(-width, width))
        return "[" + ", ".join(str(g.rng.randrange(-width, width)) for _ in range(shape[0])) + "]"
    return "np.array([" + ", ".join(one() for _ in range(count)) + "])"


def _mapped_labels(g):
    """Each example reads its own positions: a label per row, or index arrays into a
    shared array (the gradient scatters them back with np.add.at)."""
    name = g.fresh_name("h")
    if g.coin(0.6):
        x, n = _rows(g)
        g.add_helper(f"def {name}(a, i):\n    return {g.choice(_LABELLED)}\n")
        return f"{_spelling(g)}({name})({x}, {_labels(g, g.val(x).shape[0], n)})"
    x = g.arr(max_nd=1)
    n = g.val(x).shape[0]
    body = g.choice(["a[i] * a[0]", "np.tanh(a)[i] * np.sum(a[i])", "np.take(a, i) ** 2"])
    g.add_helper(f"def {name}(a, i):\n    return {body}\n")
    count = g.choice([2, 3])
    return (f"{_spelling(g)}({name}, in_axes=(None, 0))"
            f"({x}, {_labels(g, count, n, (g.choice([1, 2]),))})")


def _mapped_rule(g):
    """Functions with their own rules, mapped: under the program's gradient their rules
    run vmapped on the batch."""
    x = g.arr()
    name = g.fresh_name("h")
    body = g.choice(["softsign(a) * logcosh(a)", "np.sum(softsign(a)) * a",
                     "logcosh(np.sin(a)) + softsign(a * 0.5)"])
    g.add_helper(f"def {name}(a):\n    return {body}\n")
    return f"{_spelling(g)}({name}{g.choice(['', ', in_axes=-1'])})({x})"


_LIST_READ = ("    ys = []\n    k = 0\n    while k < 3:\n        a = np.sin(a) * 0.9 + 0.1 * a\n"
              "        ys.append(a)\n        k = k + 1\n    s = 0.0\n    for j in range(2):\n"
              "        s = s + np.sum(ys[j] * ys[j + 1])\n    return s\n")


def _per_example_grad(g):
    """``vmap(grad(h))``: per-example gradients (through the helper's loops; a list read
    at other indices has a list cotangent), differentiated again by the program."""
    x = g.arr()
    if g.coin(0.4):
        helper = g.fresh_name("h")
        g.add_helper(f"def {helper}(a):\n{_LIST_READ}")
    else:
        helper = g.smooth_helper(elementwise=False)
    return f"{_spelling(g)}(ms.grad({helper}))({x})"


_NOISE = ["np.tanh(a + 0.1 * np.random.randn(N).astype(a.dtype))",
          "a * np.random.uniform(0.5, 1.5) + np.random.normal(0.0, 0.1, N).astype(a.dtype)",
          "np.random.seed(3) or a * (np.random.rand(N) + np.random.permutation(N)).astype("
          "a.dtype)"]


def _mapped_noise(g):
    """A helper drawing noise, mapped: the batch draws what a loop of calls draws (one
    call of size (B, N), or a loop over the examples for several draws or a seed);
    seeded first, so plain Python, the compiled code and finite differences agree."""
    if g.depth:  # a draw inside a loop or branch body is refused
        raise Reject("draw in a body")
    x, n = _rows(g)
    name = g.fresh_name("h")
    g.add_helper(f"def {name}(a):\n    return {g.choice(_NOISE).replace('N', str(n))}\n")
    return f"(np.random.seed({g.choice([0, 5])}) or {_spelling(g)}({name})({x}))"


def _mapped_lstsq(g):
    """np.linalg.lstsq of each example: a well-conditioned (n, 2) matrix built from the
    row (singular values near 1) and the row's sines."""
    x, n = _rows(g)
    name = g.fresh_name("h")
    g.add_helper(f"def {name}(a):\n"
                 f"    m = np.eye({n}, 2, dtype=a.dtype) + 0.1 * np.tanh(np.outer(a, a[:1] * 0 "
                 f"+ np.array([1.0, -0.5], dtype=a.dtype)))\n"
                 f"    return np.linalg.lstsq(m, np.sin(a), rcond=None)[0]\n")
    return f"{_spelling(g)}({name})({x})"


def _mapped_mask(g):
    """A boolean mask shared by the batch: the same number of elements in each example
    (x[m], len, np.nonzero), so the selection and its gradient batch."""
    x, n = _rows(g)
    keep = [g.coin(0.6) for _ in range(n)]
    keep[g.rng.randrange(n)] = True
    mask = "np.array([" + ", ".join(str(k) for k in keep) + "])"
    name = g.fresh_name("h")
    body = g.choice(["np.sum(np.sin(a[m])) * a", "a[m] * np.mean(a[m]) / len(a[m])",
                     "a[np.nonzero(m)[0]] ** 2"])
    g.add_helper(f"def {name}(a, m):\n    return {body}\n")
    return f"{_spelling(g)}({name}, in_axes=(0, None))({x}, {mask})"


def _vmap(g):
    return g.choice([_mapped_helper, _mapped_conv, _mapped_labels, _mapped_rule,
                     _per_example_grad, _mapped_noise, _mapped_lstsq, _mapped_mask])(g)


RECIPES = {"ad_compiler.api.vmap.vmap": _vmap}
