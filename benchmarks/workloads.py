"""Benchmark workloads: user-style NumPy losses with hand-written gradients.

Each `Workload` pairs a forward function, written in plain NumPy as a user
would, with the gradient a careful engineer would write by hand for the same
``grad_position``. The hand-written gradient returns exactly what
``ad_compiler.grad(fn, grad_position=...)`` returns: a bare array for one
position, a tuple in the listed order for several.

``make_inputs(size, rng)`` builds float64 arrays for two sizes:

- ``"tiny"``: about 10 elements per array, where per-call overhead dominates;
- ``"large"``: 256x256 matrices or ~100k-element arrays, where arithmetic
  dominates.

`verify_handwritten` checks every hand-written gradient against central finite
differences. Run it alone with ``python -m benchmarks.workloads``.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

SIZES = ("tiny", "medium", "large")


@dataclass(frozen=True)
class Workload:
    """A forward function, what to differentiate, and its hand-written gradient."""

    name: str
    fn: Callable[..., Any]
    grad_position: int | tuple[int, ...]
    grad: Callable[..., Any]
    make_inputs: Callable[[str, np.random.Generator], tuple[np.ndarray, ...]]
    sizes: tuple[str, ...] = ("tiny", "large")


def _pick(size, tiny, large):
    """Return the ``tiny`` or ``large`` variant of a size-dependent value."""
    if size not in ("tiny", "large"):
        raise ValueError(f"unknown size {size!r}; expected tiny or large")
    return tiny if size == "tiny" else large


# --- elementwise chain ------------------------------------------------------

def elementwise_chain(x):
    return np.sum(np.sin(x) * np.exp(-x * x) + x ** 3 / (1 + x * x))


def elementwise_chain_grad(x):
    x2 = x * x
    e = np.exp(-x2)
    d = 1 + x2
    return e * (np.cos(x) - 2 * x * np.sin(x)) + x2 * (x2 + 3) / (d * d)


def elementwise_chain_inputs(size, rng):
    return (rng.standard_normal(_pick(size, 10, 100_000)),)


# --- logistic regression ----------------------------------------------------

def logistic_loss(w, x, y):
    p = 1 / (1 + np.exp(-(x @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def logistic_loss_grad(w, x, y):
    p = 1 / (1 + np.exp(-(x @ w)))
    return x.T @ (p - y) / y.shape[0]


def logistic_inputs(size, rng):
    n, d = _pick(size, (5, 2), (1024, 256))
    w = rng.standard_normal(d) / np.sqrt(d)
    x = rng.standard_normal((n, d))
    y = (rng.random(n) < 0.5).astype(np.float64)
    return w, x, y


# --- two-layer MLP ----------------------------------------------------------

def mlp_loss(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.mean(np.square(out - y))


def mlp_loss_grad(w1, b1, w2, b2, x, y):
    h = np.tanh(x @ w1 + b1)
    dout = (2.0 / y.size) * (h @ w2 + b2 - y)
    dpre = (dout @ w2.T) * (1 - h * h)
    return x.T @ dpre, np.sum(dpre, axis=0), h.T @ dout, np.sum(dout, axis=0)


def mlp_inputs(size, rng):
    n, d_in, d_hid, d_out = _pick(size, (5, 2, 4, 2), (256, 256, 256, 64))
    w1 = rng.standard_normal((d_in, d_hid)) / np.sqrt(d_in)
    b1 = 0.1 * rng.standard_normal(d_hid)
    w2 = rng.standard_normal((d_hid, d_out)) / np.sqrt(d_hid)
    b2 = 0.1 * rng.standard_normal(d_out)
    x = rng.standard_normal((n, d_in))
    y = rng.standard_normal((n, d_out))
    return w1, b1, w2, b2, x, y


# --- softmax cross-entropy --------------------------------------------------

def softmax_cross_entropy(z, labels):
    m = np.max(z, axis=1, keepdims=True)
    s = z - m
    log_p = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * log_p, axis=1))


def softmax_cross_entropy_grad(z, labels):
    # Each row of labels is one-hot, so it sums to 1.
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    return (e / np.sum(e, axis=1, keepdims=True) - labels) / z.shape[0]


def softmax_inputs(size, rng):
    n, k = _pick(size, (2, 5), (512, 256))
    z = 3.0 * rng.standard_normal((n, k))
    labels = np.eye(k)[rng.integers(0, k, size=n)]
    return z, labels


# --- chain of three matmuls -------------------------------------------------
# The square makes the output cotangent full rank, so the hand-written gradient
# does the same matmuls as any reverse pass instead of collapsing to outer
# products of row/column sums, as it could for a plain sum.

def matmul_chain(a, b, c, d):
    return np.sum(np.square(a @ b @ c @ d))


def matmul_chain_grad(a, b, c, d):
    ab = a @ b
    abc = ab @ c
    dabc = (2 * (abc @ d)) @ d.T
    return a.T @ (dabc @ c.T), ab.T @ dabc


def matmul_chain_inputs(size, rng):
    n = _pick(size, 3, 256)
    a = rng.standard_normal((n, n))
    b, c, d = (rng.standard_normal((n, n)) / np.sqrt(n) for _ in range(3))
    return a, b, c, d


# --- layer normalisation ----------------------------------------------------

def layernorm_loss(x, w, t):
    mu = np.mean(x, axis=1, keepdims=True)
    xc = x - mu
    var = np.mean(np.square(xc), axis=1, keepdims=True)
    xhat = xc / np.sqrt(var + 1e-5)
    return np.mean(np.square(xhat * w - t))


def layernorm_loss_grad(x, w, t):
    xc = x - np.mean(x, axis=1, keepdims=True)
    inv = 1 / np.sqrt(np.mean(xc * xc, axis=1, keepdims=True) + 1e-5)
    xhat = xc * inv
    dy = (2.0 / t.size) * (xhat * w - t)
    dxhat = dy * w
    dx = inv * (dxhat - np.mean(dxhat, axis=1, keepdims=True)
                - xhat * np.mean(dxhat * xhat, axis=1, keepdims=True))
    return dx, np.sum(dy * xhat, axis=0)


def layernorm_inputs(size, rng):
    n, d = _pick(size, (2, 5), (256, 256))
    x = 2.0 * rng.standard_normal((n, d)) + 1.0
    w = 1.0 + 0.1 * rng.standard_normal(d)
    t = rng.standard_normal((n, d))
    return x, w, t


# --- identity (probes the cache-hit path) -------------------------------------

def identity(x):
    return x


def identity_grad(x):
    return np.ones_like(x)


def identity_inputs(size, rng):
    return (rng.standard_normal(_pick(size, 10, 100_000)),)


WORKLOADS = [
    Workload("elementwise_chain", elementwise_chain, 0,
             elementwise_chain_grad, elementwise_chain_inputs),
    Workload("logistic_regression", logistic_loss, 0,
             logistic_loss_grad, logistic_inputs),
    Workload("mlp", mlp_loss, (0, 1, 2, 3), mlp_loss_grad, mlp_inputs),
    Workload("softmax_xent", softmax_cross_entropy, 0,
             softmax_cross_entropy_grad, softmax_inputs),
    Workload("matmul_chain", matmul_chain, (1, 2),
             matmul_chain_grad, matmul_chain_inputs),
    Workload("layernorm", layernorm_loss, (0, 1),
             layernorm_loss_grad, layernorm_inputs),
]

IDENTITY = Workload("identity", identity, 0, identity_grad, identity_inputs)


def positions(grad_position):
    """The differentiated positions as a tuple."""
    if isinstance(grad_position, int):
        return (grad_position,)
    return tuple(grad_position)


def as_grad_tuple(result, grad_position):
    """Check a gradient's structure and return its arrays as a tuple.

    One position must give a bare array, several a tuple of that length.
    Raises TypeError otherwise.
    """
    if isinstance(grad_position, int):
        if isinstance(result, tuple):
            raise TypeError(f"expected a bare array, got a {len(result)}-tuple")
        return (result,)
    if not isinstance(result, tuple) or len(result) != len(grad_position):
        got = (f"a {len(result)}-tuple" if isinstance(result, tuple)
               else type(result).__name__)
        raise TypeError(f"expected a {len(grad_position)}-tuple, got {got}")
    return result


def numeric_grad(fn, inputs, pos, eps=1e-6):
    """Central finite differences of ``sum(fn(*inputs))`` w.r.t. ``inputs[pos]``."""
    if isinstance(inputs[pos], float):  # a Python-float argument: its gradient is a float
        def at(delta):
            args = list(inputs)
            args[pos] = inputs[pos] + delta
            return float(np.sum(fn(*args)))
        return (at(eps) - at(-eps)) / (2 * eps)

    def total(index, delta):
        args = list(inputs)
        args[pos] = inputs[pos].copy()
        args[pos][index] += delta
        return float(np.sum(fn(*args)))

    grad = np.zeros_like(inputs[pos])
    for index in np.ndindex(grad.shape):
        grad[index] = (total(index, eps) - total(index, -eps)) / (2 * eps)
    return grad


def _handwritten_problems(w, inputs, eps):
    """Problems of one workload's hand-written gradient at ``inputs``."""
    try:
        grads = as_grad_tuple(w.grad(*inputs), w.grad_position)
    except TypeError as exc:
        return [f"{w.name}: {exc}"]
    problems = []
    for pos, got in zip(positions(w.grad_position), grads):
        want = numeric_grad(w.fn, inputs, pos, eps)
        if np.shape(got) != np.shape(want):
            problems.append(f"{w.name}: argument {pos}: shape {np.shape(got)}, "
                            f"expected {np.shape(want)}")
        elif not np.allclose(got, want, rtol=1e-5, atol=1e-7):
            problems.append(f"{w.name}: argument {pos}: max abs error "
                            f"{np.max(np.abs(got - want)):.3g} against finite differences")
    return problems


def verify_handwritten(workloads=None, seed=0, eps=1e-6):
    """Check hand-written gradients against finite differences at tiny size.

    Returns a list of problem descriptions; empty means all are right.
    """
    if workloads is None:
        from .control_workloads import CONTROL_WORKLOADS
        workloads = [*WORKLOADS, *CONTROL_WORKLOADS, IDENTITY]
    rng = np.random.default_rng(seed)
    problems = []
    for w in workloads:
        problems += _handwritten_problems(w, w.make_inputs("tiny", rng), eps)
    return problems


def main():
    problems = verify_handwritten()
    for problem in problems:
        print("FAIL", problem)
    if problems:
        return 1
    print("all hand-written gradients agree with finite differences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
