"""Workloads with loops, branches, slicing and Python-float code, at medium size.

Each is written as a user would write it in plain Python/NumPy, with a
hand-written gradient that keeps what it needs from the forward pass (as a
careful engineer's backward would), checked against finite differences by
``python -m benchmarks.workloads``. Sizes: ``"tiny"`` (for that check) and
``"medium"`` (timed).
"""
from __future__ import annotations

import numpy as np

from .workloads import Workload


def _size(size, tiny, medium):
    if size not in ("tiny", "medium"):
        raise ValueError(f"unknown size {size!r}; expected tiny or medium")
    return tiny if size == "tiny" else medium


# --- RNN: 50 steps of h = tanh(W @ h + U @ x_t) --------------------------------

def rnn_loss(w, u, h0, xs):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t])
    return np.sum(h * h)


def rnn_grad(w, u, h0, xs):
    hs = [h0]
    for t in range(xs.shape[0]):
        hs.append(np.tanh(w @ hs[-1] + u @ xs[t]))
    dh = 2 * hs[-1]
    dw, du = np.zeros_like(w), np.zeros_like(u)
    for t in range(xs.shape[0] - 1, -1, -1):
        da = dh * (1 - hs[t + 1] ** 2)
        dw += np.outer(da, hs[t])
        du += np.outer(da, xs[t])
        dh = w.T @ da
    return dw, du


def rnn_inputs(size, rng):
    steps, hidden, inp = _size(size, (3, 3, 2), (50, 32, 16))
    w = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    u = rng.standard_normal((hidden, inp)) / np.sqrt(inp)
    return w, u, rng.standard_normal(hidden) * 0.1, rng.standard_normal((steps, inp))


# --- a while loop whose trip count depends on the data ---------------------------

def grow_loss(x, a):
    y = x
    while np.sum(y * y) < 1000.0:
        y = y * a + 0.1
    return np.sum(np.sin(y))


def grow_grad(x, a):
    ys = [x]
    while np.sum(ys[-1] * ys[-1]) < 1000.0:
        ys.append(ys[-1] * a + 0.1)
    dy = np.cos(ys[-1])
    da = np.zeros_like(a)
    for y in reversed(ys[:-1]):
        da += dy * y
        dy = dy * a
    return dy, da


def grow_inputs(size, rng):
    n = _size(size, 4, 2000)
    return rng.standard_normal(n) + 2.0, 1.2 + 0.1 * rng.random(n)


# --- a smoothness penalty from shifted and strided slices -------------------------

def smooth_loss(x):
    d1 = x[1:] - x[:-1]
    d2 = x[2:] - 2.0 * x[1:-1] + x[:-2]
    return np.sum(d1 * d1) + 0.5 * np.sum(d2 * d2) + np.sum(x[::2] * x[1::2])


def smooth_grad(x):
    g = np.zeros_like(x)
    d1 = 2.0 * (x[1:] - x[:-1])
    g[1:] += d1
    g[:-1] -= d1
    d2 = x[2:] - 2.0 * x[1:-1] + x[:-2]
    g[2:] += d2
    g[1:-1] -= 2.0 * d2
    g[:-2] += d2
    g[::2] += x[1::2]
    g[1::2] += x[::2]
    return g


def smooth_inputs(size, rng):
    return (rng.standard_normal(_size(size, 8, 100_000)),)


# --- a 3x3 stencil built from shifted slices ------------------------------------

def stencil_loss(u):
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
    return np.sum(lap * lap)


def stencil_grad(u):
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
    d = 2.0 * lap
    g = np.zeros_like(u)
    g[:-2, 1:-1] += d
    g[2:, 1:-1] += d
    g[1:-1, :-2] += d
    g[1:-1, 2:] += d
    g[1:-1, 1:-1] -= 4.0 * d
    return g


def stencil_inputs(size, rng):
    n = _size(size, 5, 300)
    return (rng.standard_normal((n, n)),)


# --- scalar Python-float code: a Rosenbrock sum along a loop -----------------------

def rosenbrock(a, b):
    s = 0.0
    x, y = a, b
    for _ in range(20):
        s = s + 100.0 * (y - x * x) ** 2 + (1.0 - x) ** 2
        x, y = 0.9 * y + 0.1, 0.5 * x + 0.3
    return s


def rosenbrock_grad(a, b):
    xs, ys = [a], [b]
    for _ in range(20):
        xs.append(0.9 * ys[-1] + 0.1)
        ys.append(0.5 * xs[-2] + 0.3)
    dx = dy = 0.0
    for k in range(19, -1, -1):
        # (x, y) at step k+1 came from (x_k, y_k); add step k's term
        x, y = xs[k], ys[k]
        gx = 0.5 * dy - 400.0 * x * (y - x * x) - 2.0 * (1.0 - x)
        gy = 0.9 * dx + 200.0 * (y - x * x)
        dx, dy = gx, gy
    return dx, dy


def rosenbrock_inputs(size, rng):
    return float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1))


CONTROL_WORKLOADS = [
    Workload("rnn_50_steps", rnn_loss, (0, 1), rnn_grad, rnn_inputs, ("medium",)),
    Workload("while_data_exit", grow_loss, (0, 1), grow_grad, grow_inputs, ("medium",)),
    Workload("smoothness_slices", smooth_loss, 0, smooth_grad, smooth_inputs, ("medium",)),
    Workload("stencil_3x3", stencil_loss, 0, stencil_grad, stencil_inputs, ("medium",)),
    Workload("rosenbrock_floats", rosenbrock, (0, 1), rosenbrock_grad, rosenbrock_inputs,
             ("medium",)),
]
