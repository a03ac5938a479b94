"""``ms.check_grad``: compiled derivatives against central differences.

Reverse mode is checked as a vector-Jacobian product: with a random cotangent
``v`` of the output's structure, the gradient of ``<v, fn(x)>`` with respect to
each input, element by element, against central differences of that same
scalar. Forward mode is checked as a Jacobian-vector product along a random
direction ``u`` of every input at once, output element by output element,
against ``(fn(x + eps u) - fn(x - eps u)) / (2 eps)``. Everything runs in
float64 (float32 inputs are checked through float64 copies).

``order=2`` checks the first-order gradient function ``x -> grad <v, fn(x)>``
(compiled, with reverse mode) in the same way: reverse over reverse and
forward over reverse. A disagreement raises :class:`GradCheckError`, an
``AssertionError`` naming the mode, the order, the argument and the worst element.

>>> import numpy as np
>>> import ad_compiler as ms
>>> def f(x, y):
...     return np.sin(x) * y
>>> ms.check_grad(f, (np.array([0.3, 1.2]), np.array([2.0, -1.0])))
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import GradCheckError, GradTypeError, GradValueError
from ..tensor import Tensor


def check_grad(fn: Callable[..., Any], args: Sequence[Any], order: int = 1,
               modes: Sequence[str] = ("fwd", "rev"), *, eps: float = 1e-6,
               atol: float = 1e-5, rtol: float = 1e-4, seed: int = 0) -> None:
    """Check ``fn``'s compiled derivatives at ``args`` against central differences.

    Args:
        fn: the function; its float inputs (ndarrays, Tensors, Python floats)
            are differentiated, the others are passed through unchanged.
        args: the inputs, a tuple.
        order: 1 checks the first derivatives; 2 also checks the derivatives
            of the (compiled) gradient function.
        modes: ``"rev"`` (vector-Jacobian products) and/or ``"fwd"``
            (Jacobian-vector products).
        eps: the central-difference step.
        atol, rtol: an element passes when ``|got - fd| <= atol + rtol * |fd|``.
        seed: the seed of the random cotangent and direction.

    Raises:
        GradCheckError: (an ``AssertionError``) on the first disagreement.
    """
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    if order not in (1, 2):
        raise GradValueError(f"check_grad: order must be 1 or 2, not {order!r}")
    unknown = [m for m in modes if m not in ("fwd", "rev")]
    if unknown or not modes:
        raise GradValueError(f"check_grad: modes must be a non-empty selection of 'fwd' and "
                             f"'rev', not {tuple(modes)!r}")
    positions = [i for i, a in enumerate(args) if _is_float(a)]
    if not positions:
        raise GradTypeError("check_grad: no argument is a float array, Tensor or Python float")
    names = _names(fn, len(args))
    full = [_as_float64(a) if i in positions else a for i, a in enumerate(args)]
    checked = _bound(fn, full, positions)
    xs = tuple(full[i] for i in positions)
    labels = [names[i] for i in positions]
    rng = np.random.default_rng(seed)
    tolerance = (atol, rtol, eps)
    for mode in modes:
        _check(mode, 1, checked, xs, labels, rng, tolerance)
    if order == 2:
        cotangent = _random_like(_plain(checked(*xs)), rng)
        gradient = _gradient_function(checked, cotangent, len(xs))
        for mode in modes:
            _check(mode, 2, gradient, xs, labels, rng, tolerance)


# -- the two checks ----------------------------------------------------------------------

def _check(mode, order, fn, xs, labels, rng, tolerance) -> None:
    atol, rtol, eps = tolerance
    if mode == "rev":
        cotangent = _random_like(_plain(fn(*xs)), rng)
        from .transforms import vjp
        _, pullback = vjp(fn, *xs)
        got = _as_tuple(pullback(cotangent))
        for k, (x, label) in enumerate(zip(xs, labels)):
            want = _central(lambda *ys: _dot(_plain(fn(*ys)), cotangent), xs, k, eps)
            _compare(np.asarray(_plain(got[k]), dtype=np.float64), want, mode, order,
                     f"argument {label}", atol, rtol)
    else:
        direction = tuple(_random_like(x, rng) for x in xs)
        from .transforms import jvp
        _, tangent = jvp(fn, xs, direction)
        plus = _plain(fn(*(_step(x, d, eps) for x, d in zip(xs, direction))))
        minus = _plain(fn(*(_step(x, d, -eps) for x, d in zip(xs, direction))))
        want = _leaves(plus), _leaves(minus)
        for k, (got, hi, lo) in enumerate(zip(_leaves(_plain(tangent)), *want)):
            what = "the output" if len(want[0]) == 1 else f"output {k}"
            _compare(np.asarray(got, dtype=np.float64), (hi - lo) / (2 * eps), mode, order,
                     f"{what} (along a random direction of every argument)", atol, rtol)


def _compare(got, want, mode, order, what, atol, rtol) -> None:
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        raise GradCheckError(f"check_grad: {_mode(mode)} (order {order}) gives shape "
                             f"{got.shape} for {what}, central differences {want.shape}")
    err = np.abs(got - want) - (atol + rtol * np.abs(want))
    bad = ~(err <= 0)  # NaN fails
    if not bad.any():
        return
    worst = np.unravel_index(int(np.nanargmax(np.where(bad, np.nan_to_num(err, nan=np.inf), -np.inf))),
                             got.shape) if got.ndim else ()
    element = f" at element {tuple(int(i) for i in worst)}" if got.ndim else ""
    g, w = float(got[worst]), float(want[worst])
    raise GradCheckError(
        f"check_grad: {_mode(mode)} (order {order}) disagrees with central differences for "
        f"{what}{element}: got {g!r}, central differences give {w!r} "
        f"(|difference| {abs(g - w):.3g} > atol + rtol * |expected| = "
        f"{atol + rtol * abs(w):.3g}; {int(bad.sum())} of {bad.size} elements disagree)")


def _mode(mode: str) -> str:
    return "reverse mode" if mode == "rev" else "forward mode"


# -- the functions checked ------------------------------------------------------------

def _bound(fn, full, positions):
    """``fn`` as a function of its float arguments only (the others fixed)."""
    if len(positions) == len(full):
        return fn
    fixed = list(full)

    def of_floats(*xs):
        args = list(fixed)
        for p, x in zip(positions, xs):
            args[p] = x
        return fn(*args)
    of_floats.bound = (fn, fixed, positions)
    return of_floats


def _gradient_function(fn, cotangent, n: int):
    """``xs -> gradient of <cotangent, fn(xs)>`` w.r.t. every ``xs``, compiled."""
    from .grad import grad
    leaves = _paths(cotangent)
    # a function of ad_compiler is not inlined: call the user's function itself
    user, fixed, positions = getattr(fn, "bound", (fn, [], ()))

    def objective(*xs):
        args = list(fixed) if positions else list(xs)
        for p, x in zip(positions, xs):
            args[p] = x
        out = user(*args)
        total = 0.0
        for path, c in leaves:
            o = out
            for k in path:
                o = o[k]
            total = total + np.sum(o * c)
        return total
    return grad(objective, grad_position=tuple(range(n)))


def _paths(tree, path=()) -> list:
    """``[(path, leaf)]`` of a tuple tree (the index of each leaf, level by level)."""
    if isinstance(tree, tuple):
        return [item for k, t in enumerate(tree) for item in _paths(t, path + (k,))]
    return [(path, tree)]


def _central(scalar, xs, k, eps) -> np.ndarray:
    """Central differences of ``scalar(*xs)`` w.r.t. every element of ``xs[k]``."""
    x = xs[k]
    if isinstance(x, float):
        hi = scalar(*xs[:k], x + eps, *xs[k + 1:])
        lo = scalar(*xs[:k], x - eps, *xs[k + 1:])
        return np.float64((hi - lo) / (2 * eps))
    out = np.empty(x.shape)
    for index in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[index] += eps
        lo[index] -= eps
        out[index] = (scalar(*xs[:k], hi, *xs[k + 1:]) - scalar(*xs[:k], lo, *xs[k + 1:])) / (2 * eps)
    return out


# -- values ---------------------------------------------------------------------------------

def _is_float(a) -> bool:
    if isinstance(a, bool):
        return False
    if isinstance(a, float):
        return True
    if isinstance(a, Tensor):
        a = a.asnumpy()
    return isinstance(a, (np.ndarray, np.floating)) and a.dtype.kind == "f"


def _as_float64(a):
    if isinstance(a, float) and not isinstance(a, np.floating):
        return a
    if isinstance(a, Tensor):
        a = a.asnumpy()
    return np.array(a, dtype=np.float64)


def _plain(v):
    """Tensors as ndarrays (inside tuples and lists too)."""
    if isinstance(v, Tensor):
        return v.asnumpy()
    if isinstance(v, (tuple, list)):
        return tuple(_plain(x) for x in v)
    return v


def _leaves(v) -> list:
    if isinstance(v, tuple):
        return [leaf for x in v for leaf in _leaves(x)]
    return [np.asarray(v, dtype=np.float64)]


def _random_like(v, rng):
    if isinstance(v, tuple):
        return tuple(_random_like(x, rng) for x in v)
    if isinstance(v, float) and not isinstance(v, np.floating):
        return float(rng.uniform(0.5, 1.5) * rng.choice([-1.0, 1.0]))
    v = np.asarray(v)
    return (rng.uniform(0.5, 1.5, v.shape) * rng.choice([-1.0, 1.0], v.shape)).astype(np.float64)


def _dot(out, cotangent) -> float:
    if isinstance(out, tuple):
        return sum(_dot(o, c) for o, c in zip(out, cotangent))
    return float(np.sum(np.asarray(out, dtype=np.float64) * cotangent))


def _step(x, d, eps):
    return x + eps * d


def _as_tuple(v) -> tuple:
    return v if isinstance(v, tuple) else (v,)


def _names(fn, n: int) -> list[str]:
    """``'x' (position 0)`` for each argument, from ``fn``'s signature where it has names."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [f"{params[i].name!r} (position {i})" if i < len(params) else f"at position {i}"
            for i in range(n)]
