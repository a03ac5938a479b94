"""A corpus of small user-style functions, written as ordinary Python/NumPy.

Each function is registered with ``@case(make, grad_position)``: ``make()`` returns fresh
float64 inputs (arrays of small shapes, Python floats, and the occasional int, string or
tuple), chosen so that the function is smooth there: no ties, kinks, branch boundaries or
changes of a loop's trip count within ~1e-3 of the inputs. A function registered twice
(``tag=...``) is checked on both sides of its data-dependent branch.

``f32=True`` puts a case in the float32 subset. ``xfail`` maps a test kind to the
diagnosis of a known failure: "grad" (every test that calls the gradient), "fd" (only the
values are wrong), "source" (``adjoint_source``); ``crash()`` and ``wrong()`` build them.
A function using ``stop_gradient`` gives ``fd_reference``: called with the inputs, it
returns the plain-NumPy function that finite differences differentiate, with the stopped
values fixed at those inputs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import ad_compiler as ms


@dataclass(frozen=True)
class Case:
    name: str
    function: Callable
    make: Callable[[], tuple]
    grad_position: Any = 0
    f32: bool = False
    xfail: dict = field(default_factory=dict)
    fd_reference: Callable | None = None


CORPUS: list[Case] = []


def case(make, grad_position=0, *, tag="", f32=False, xfail=None, fd_reference=None):
    """Register the decorated function with an input maker (stackable for several inputs)."""
    def register(fn):
        name = f"{fn.__name__}-{tag}" if tag else fn.__name__
        CORPUS.append(Case(name, fn, make, grad_position, f32, dict(xfail or {}), fd_reference))
        return fn
    return register


def crash(reason):
    """Compiling the gradient fails: every test that builds it is expected to fail."""
    return {"grad": reason, "source": reason}


def wrong(reason):
    """The gradient compiles and runs but its values are wrong."""
    return {"fd": reason}


def a(*values):
    return np.array(values, dtype=np.float64)


def m(*rows):
    return np.array(rows, dtype=np.float64)


def spread(shape, lo=-1.0, hi=1.0, seed=0):
    """Distinct, well-separated values in [lo, hi], shuffled (no ties between elements)."""
    n = int(np.prod(shape))
    values = np.linspace(lo, hi, n)
    return np.random.default_rng(seed).permutation(values).reshape(shape)


MASK4 = np.array([True, False, True, True])
WEIGHTS4 = a(0.5, -1.0, 2.0, 0.25)


# == straight-line NumPy ================================================================
@case(lambda: (a(0.3, -1.2, 0.8, 2.0),), f32=True)
def sl_polynomial(x):
    return 3.0 * x ** 3 - 2.0 * x ** 2 + x - 1.0


@case(lambda: (a(0.1, 0.7, -0.4), a(1.3, -0.2, 0.5)), (0, 1), f32=True)
def sl_trig_mix(x, y):
    return np.sin(x) * np.cos(y) + np.tanh(x * y)


@case(lambda: (a(-2.0, -0.3, 0.4, 1.1, 3.0),))
def sl_softplus(x):
    return np.log(1.0 + np.exp(x))


@case(lambda: (a(0.5, -1.5, 2.0), a(0.3, 1.0, -0.7)), (0, 1))
def sl_sqrt_div(x, y):
    return np.sqrt(x * x + 1.0) / (y * y + 2.0)


@case(lambda: (spread((3, 2), seed=1), spread((4, 3), seed=2)), (0, 1), f32=True)
def sl_matmul_tanh(w, x):
    return np.tanh(x @ w)


@case(lambda: (spread((2, 3), seed=3), spread((3, 4), seed=4), a(0.1, -0.2, 0.3, 0.05),
               spread((4, 1), seed=5)), (1, 2, 3))
def sl_two_layer(x, w1, b1, w2):
    h = np.tanh(x @ w1 + b1)
    return np.sum((h @ w2) ** 2)


@case(lambda: (m([0.5], [-1.0], [2.0]), m([0.3, -0.6, 1.2, 0.9])), (0, 1), f32=True)
def sl_broadcast_column_row(col, row):
    z = col * row + col - row
    return z * z


@case(lambda: (spread((2, 4), seed=6),))
def sl_softmax_weighted(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    p = e / np.sum(e, axis=-1, keepdims=True)
    return np.sum(p * WEIGHTS4)


@case(lambda: (a(0.2, 1.4, -0.5, 0.9),))
def sl_logsumexp(x):
    top = np.max(x)
    return top + np.log(np.sum(np.exp(x - top)))


@case(lambda: (spread((4, 2), seed=7),))
def sl_mean_variance(x):
    mu = np.mean(x, axis=0)
    var = np.mean((x - mu) ** 2, axis=0)
    return var / (1.0 + mu ** 2)


@case(lambda: (spread((3, 2), 0.2, 1.5, seed=8),), f32=True)
def sl_row_normalize(x):
    return x / np.sqrt(np.sum(x * x, axis=1, keepdims=True))


@case(lambda: (spread((2, 3), seed=9),))
def sl_transpose_reshape(x):
    g = x.T @ x
    return g.reshape(-1)[:4] * np.ravel(x.reshape(3, 2).T)[0] + np.transpose(x)[::2].reshape(4)


@case(lambda: (a(0.4, -0.9, 1.3), a(0.7, 0.2, -1.1)), (0, 1))
def sl_concat_stack(x, y):
    z = np.concatenate([x, y * 2.0])
    s = np.stack([x, y], axis=1)
    return np.sum(z ** 2) + np.sum(s[:, 0] * s[:, 1])


@case(lambda: (a(0.5, -1.5, 2.5, 0.7),))
def sl_where_constant_mask(x):
    return np.where(MASK4, x ** 2, -3.0 * x)


@case(lambda: (a(0.1, -0.8, 1.5), a(0.6, -1.2, 0.3)), (0, 1))
def sl_maximum_clip(x, y):
    return np.maximum(x, y) + np.clip(x, -0.5, 0.5) * np.minimum(x, 2.0 * y)


@case(lambda: (a(0.6, -1.3, 2.2),))
def sl_abs_power(x):
    return np.abs(x) ** 1.5 + np.power(np.abs(x) + 1.0, x)


@case(lambda: (a(0.3, -0.4, 1.1), a(2.0, 0.5, -0.6)), (0, 1))
def sl_dot_product(x, y):
    return np.dot(x, y) * x + x.dot(y) ** 2


@case(lambda: (a(0.3, -0.4, 1.1), a(2.0, 0.5)), (0, 1))
def sl_outer(x, y):
    return np.sum(np.outer(x, y) ** 2)


@case(lambda: (a(0.2, -0.7, 1.4), 0.8), (0, 1), f32=True)
def sl_python_float_scale(x, s):
    return s * np.sin(x) + s ** 2 - np.exp(-s * x)


@case(lambda: (a(0.3, 1.2, -0.5, 0.9),))
def sl_arange_weights(x):
    return np.sum(x * np.arange(1, x.shape[0] + 1)) + np.sum(np.zeros(4) + x ** 2)


@case(lambda: (a(0.3, 1.2, -0.5, 0.9),))
def sl_variance_std(x):
    return np.var(x) + np.std(x * 2.0)


@case(lambda: (a(0.4, -0.3, 1.2), a(0.9, 1.5, -0.2)), (0, 1))
def sl_mindspore_ops(x, y):
    ops = ms.ops
    h = ops.mul(ops.exp(x), ops.sigmoid(y))
    return ops.sum(ops.square(h)) + ops.mean(ops.tanh(ops.sub(x, y)))


@case(lambda: (spread((2, 3), 0.3, 1.8, seed=10),))
def sl_reductions_axes(x):
    return np.sum(np.log(x), axis=0) * np.mean(x, axis=1).sum() + x.sum(axis=0, keepdims=True)


@case(lambda: (a(0.5, 0.25, -0.75),))
def sl_expand_squeeze_transpose(x):
    col = np.expand_dims(x, 1)
    grid = col @ col.T
    return np.squeeze(np.transpose(grid)[:, :1]) * np.square(x)


@case(lambda: (a(0.3, 0.9),))
def sl_augmented_assignments(x):
    y = x * 1.0
    y **= 2
    y /= 3.0
    y -= x
    y *= x + 1.0
    return y + 1.0 / x + x ** 0.5


@case(lambda: (np.float64(0.7), a(0.3, 0.9)), (0, 1), f32=True)
def sl_numpy_scalar_input(s, x):
    return s * s * x + np.float64(2.0) * s


@case(lambda: (a(0.3, 0.9),))
def sl_asarray(x):
    y = np.asarray(x, dtype=np.float64)
    return y * y


@case(lambda: (a(0.3, 0.9),))
def sl_static_assert(x):
    assert x.shape[0] == 2, "two elements expected"
    return x * x[::-1]


# == if / elif / else on Python values ==================================================
@case(lambda: (a(0.5, -1.0), 1.7), (0, 1), tag="high")
@case(lambda: (a(0.5, -1.0), 0.4), (0, 1), tag="middle")
@case(lambda: (a(0.5, -1.0), -0.6), (0, 1), tag="low")
def py_if_elif_else(x, s):
    if s > 1.0:
        y = x * s
    elif s > 0.0:
        y = np.sin(x) + s ** 2
    else:
        y = x - s * s * s
    return y


@case(lambda: (a(0.3, 0.9), 3), tag="big")
@case(lambda: (a(0.3, 0.9), 1), tag="small")
def py_if_int_argument(x, n):
    if n > 2:
        return x ** n
    return x * n + 1.0


@case(lambda: (a(0.2, -1.1, 0.6),))
@case(lambda: (a(0.2, -1.1, 0.6), "square"), tag="square")
def py_if_string_mode(x, mode="tanh"):
    if mode == "tanh":
        out = np.tanh(x)
    elif mode == "square":
        out = x * x
    else:
        out = x
    return np.sum(out)


@case(lambda: (1.25, 0.5), (0, 1), tag="greater")
@case(lambda: (-1.0, 2.0), (0, 1), tag="less")
def py_if_float_compare(u, v):
    if u > v:
        d = u - v
    else:
        d = 2.0 * (v - u)
    return d * d * 0.5 + u * v


@case(lambda: (a(0.7, -0.3), None), tag="none")
@case(lambda: (a(0.7, -0.3), a(2.0, 0.5)), (0, 1), tag="given")
def py_if_none_default(x, w=None):
    if w is None:
        w = np.ones_like(x)
    return np.sum(w * x ** 2)


@case(lambda: (a(0.7, -0.3), True), tag="true")
@case(lambda: (a(0.7, -0.3), False), tag="false")
def py_if_bool_flag(x, flag):
    scale = 3.0 if flag else 0.5
    if flag and x.shape[0] == 2:
        return np.exp(x) * scale
    return x * scale


# == if on 0-d arrays ===================================================================
@case(lambda: (a(1.0, 0.8, 0.9),), tag="high", f32=True)
@case(lambda: (a(0.1, -0.3, 0.5),), tag="middle")
@case(lambda: (a(-1.0, -0.8, -0.9),), tag="low")
def zd_if_sum_elif(x):
    s = np.sum(x)
    if s > 1.0:
        y = x * s
    elif s > -1.0:
        y = np.sin(x) + s
    else:
        y = x * x
    return y


@case(lambda: (a(0.9, 0.2, -0.4),), tag="first")
@case(lambda: (a(0.1, 0.6, -0.4),), tag="second")
def zd_if_elements(x):
    if x[0] > x[1]:
        return x[0] * x[2] + x[1]
    return x[1] ** 2 - x[2]


@case(lambda: (a(0.5, 2.5, 1.0),), tag="above")
@case(lambda: (a(0.5, 1.5, 1.0),), tag="below")
def zd_if_max(x):
    top = np.max(x)
    if top > 2.0:
        x = x / top
    else:
        x = x * top
    return np.sum(x ** 2)


@case(lambda: (a(0.1, 0.2), a(1.0, 0.5)), (0, 1), tag="less")
@case(lambda: (a(1.1, 0.2), a(0.1, 0.5)), (0, 1), tag="greater")
def zd_if_mean_compare(x, y):
    if np.mean(x) < np.mean(y):
        return np.sum(x * y)
    return np.sum(x - y ** 3)


@case(lambda: (a(0.4, -0.2), np.array(0.8)), (0, 1), tag="on")
@case(lambda: (a(0.4, -0.2), np.array(0.1)), (0, 1), tag="off")
def zd_if_zero_d_input(x, t):
    if t > 0.5:
        return x * t ** 2
    return x + t


@case(lambda: (a(0.5, 1.0, -0.2), a(0.3, 0.4, 0.1)), (0, 1), tag="positive")
@case(lambda: (a(0.5, -1.0, -0.2), a(0.3, 0.4, 0.1)), (0, 1), tag="negative")
def zd_if_dot(x, y):
    d = x @ y
    if d > 0:
        z = d * x
    else:
        z = -d * y
    return z


# == if on reduced booleans =============================================================
NO_ALL = "np.all has no lowering: grad raises UnsupportedOperationError 'cannot compile a call of np.all: it has no lowering (no derivative rule)'"
NO_ANY = "np.any has no lowering: grad raises UnsupportedOperationError 'cannot compile a call of np.any: it has no lowering (no derivative rule)'"

@case(lambda: (a(0.5, -0.2, 0.4),), tag="positive", f32=True)
@case(lambda: (a(-0.5, -0.2, 0.4),), tag="negative", f32=True)
def rb_if_sum_positive(x):
    if np.sum(x) > 0:
        return np.sum(np.exp(x))
    return np.sum(x ** 2)


@case(lambda: (a(0.5, 0.2, 0.4),), tag="all")
@case(lambda: (a(0.5, -0.2, 0.4),), tag="not-all")
def rb_if_all(x):
    if np.all(x > 0):
        return np.sum(np.log(x))
    return np.sum(x * 3.0)


@case(lambda: (a(0.5, 2.4, 0.4),), tag="any")
@case(lambda: (a(0.5, 1.4, 0.4),), tag="none")
def rb_if_any(x):
    if np.any(x > 2.0):
        return np.sum(x) ** 2
    return np.sum(np.sin(x))


@case(lambda: (a(0.5, -2.0, 0.4, 1.0),), tag="many")
@case(lambda: (a(-0.5, -2.0, 0.4, -1.0),), tag="few")
def rb_if_count(x):
    if np.sum(x > 0) >= 2:
        y = x * (x > 0)
    else:
        y = x * 0.5
    return np.sum(y * y)


@case(lambda: (a(0.5, 0.2), a(1.0, 2.0)), (0, 1), tag="both")
@case(lambda: (a(0.5, 0.2), a(1.0, 4.0)), (0, 1), tag="either")
@case(lambda: (a(-0.5, 0.2), a(1.0, 4.0)), (0, 1), tag="neither")
def rb_if_and_or(x, y):
    if np.sum(x) > 0 and np.max(y) < 3.0:
        return np.sum(x * y)
    elif np.sum(x) > 0 or np.max(y) < 3.0:
        return np.sum(x + y ** 2)
    return np.sum(x ** 2) * np.sum(y)


@case(lambda: (a(0.5, 0.2),), tag="positive")
@case(lambda: (a(-0.5, 0.2),), tag="negative")
def rb_if_not(x):
    if not np.sum(x) > 0:
        x = -x
    return np.sum(x ** 3)


@case(lambda: (spread((3, 2), seed=11),))
def rb_if_mean_of_rows(m):
    row_means = np.mean(m, axis=1)
    if np.max(row_means) - np.min(row_means) > 0.1:
        return np.sum(m * row_means[:, None])
    return np.sum(m)


# == branches that assign different names ===============================================
@case(lambda: (a(0.3, 0.4),), tag="then")
@case(lambda: (a(-0.3, -0.4),), tag="else")
def bn_different_names(x):
    if np.sum(x) > 0:
        scale = 2.0
        shifted = x + 1.0
    else:
        flipped = -x
        scale = 0.5
        shifted = flipped * 3.0
    return shifted * scale


@case(lambda: (a(0.3, 0.9),), tag="taken")
@case(lambda: (a(0.3, -0.9),), tag="skipped")
def bn_one_sided_assignment(x):
    y = x * 2.0
    if np.sum(x) > 0:
        y = np.sin(x) * y
    return y


@case(lambda: (a(0.9, 0.4), a(0.1, 0.2)), (0, 1), tag="swap")
@case(lambda: (a(0.1, 0.2), a(0.9, 0.4)), (0, 1), tag="keep")
def bn_swap(u, v):
    if np.sum(u) > np.sum(v):
        u, v = v, u
    return u * 2.0 - v ** 2


# branches giving arrays of different shapes are a compile-time error (test_corpus.py)
def bn_types_differ(x):
    if np.sum(x) > 0:
        k = 1.5
        z = np.sum(x)
    else:
        k = x
        z = x * 2.0
    return k * 3.0 + z


@case(lambda: (a(0.9, 0.6),), tag="a")
@case(lambda: (a(0.9, -0.6),), tag="b")
@case(lambda: (a(-0.9, 0.6),), tag="c")
def bn_nested_if(x):
    if x[0] > 0:
        if x[1] > 0:
            r = x[0] * x[1]
        else:
            r = x[0] - x[1]
        r = r * 2.0
    else:
        r = np.sum(x ** 2)
    return r


# == branches that return ===============================================================
@case(lambda: (a(-1.0, -2.0),), tag="negative")
@case(lambda: (a(20.0, 1.0),), tag="large")
@case(lambda: (a(1.0, 2.0),), tag="rest")
def rt_guard_clauses(x):
    if np.sum(x) < 0:
        return -x
    if np.max(x) > 10:
        return x / 10.0
    y = x * 2.0
    return y * y


@case(lambda: (a(1.5, 1.2, 0.9),), tag="big")
@case(lambda: (a(0.1, 0.2, 0.3),), tag="mid")
@case(lambda: (a(-0.5, -0.2, -0.3),), tag="neg")
def rt_nested_returns(x):
    s = np.sum(x)
    if s > 0:
        if s > 2:
            return x * 3.0
        x = x + 1.0
    else:
        return -x * s
    return x * x + s


@case(lambda: (a(3.0, -1.0),), tag="top")
@case(lambda: (a(0.5, -1.0),), tag="fall-through")
def rt_elif_returns_floats(x):
    top = np.max(x)
    if top > 2:
        return 2.0 * top
    elif top > 1:
        return 1.0
    elif top > 0:
        r = 0.5
    else:
        return 0.0
    return r + top * x[1]


@case(lambda: (a(0.3, 0.4),), tag="pair")
@case(lambda: (a(-0.3, 0.1),), tag="other")
def rt_tuple_in_branch(x):
    if np.sum(x) > 0:
        return x * 2.0, np.sum(x)
    return x ** 2, np.sum(x) * 3.0


def _positive_part(v):
    if np.sum(v) < 0:
        return v * 0.1
    return v


@case(lambda: (a(0.7, -0.2, 0.4),), f32=True)
def rt_helper_with_return(x):
    return _positive_part(x) * 2.0 + _positive_part(-x)


# returns of different shapes are a compile-time error (test_corpus.py)
def rt_scalar_or_array(x):
    if np.sum(x) > 0:
        return np.sum(x ** 2)
    return x * 2.0


@case(lambda: (a(0.3, 0.4), a(1.5, -0.5)), (0, 1), tag="y-unused")
@case(lambda: (a(-0.3, 0.1), a(1.5, -0.5)), (0, 1), tag="y-used")
def rt_input_unused_on_the_taken_path(x, y):
    if np.sum(x) > 0:
        return x * 2.0
    return y * x


# == conditional expressions ============================================================
@case(lambda: (a(0.9, 0.2),), tag="then")
@case(lambda: (a(0.1, 0.2),), tag="else")
def ce_ternary(x):
    y = x * 2.0 if np.max(x) > 0.5 else x - 1.0
    return y * x


@case(lambda: (0.7,), tag="positive")
@case(lambda: (-0.4,), tag="negative")
def ce_ternary_python_float(s):
    k = s if s > 0 else -s
    return k * k + (1.0 if s > 0 else 2.0) * s


@case(lambda: (a(0.9, 0.1),), tag="a")
@case(lambda: (a(0.3, 0.1),), tag="b")
@case(lambda: (a(-0.3, 0.1),), tag="c")
def ce_nested_ternary(x):
    s = np.sum(x)
    return x * 3.0 if s > 0.5 else (x ** 2 if s > 0 else -x)


@case(lambda: (a(0.4, -0.1),), tag="plus")
@case(lambda: (a(-0.4, 0.1),), tag="minus")
def ce_ternary_in_call(x):
    return np.sum(np.exp(x) if x[0] > 0 else np.exp(-x)) * np.sum(x)


# == while with a data-dependent exit ===================================================
@case(lambda: (a(0.7, 1.1, 0.9), a(1.3, 1.3, 1.3)), (0, 1), f32=True)
def wh_grow(x, rate):
    y = x
    steps = 0
    while np.sum(y * y) < 100.0:
        y = y * rate + 0.1
        steps = steps + 1
    return y, steps


@case(lambda: (2.0,))
def wh_newton_sqrt(s):
    x = s
    while True:
        x_new = 0.5 * (x + s / x)
        if abs(x_new - x) < 1e-12:
            break
        x = x_new
    return x


@case(lambda: (a(3.0, -7.0, 2.0),))
def wh_halving(x):
    y = x
    while np.max(np.abs(y)) > 1.0:
        y = y / 2.0
    return y * x


@case(lambda: (a(0.2, 0.3),))
def wh_true_with_break(x):
    k = 0
    while True:
        x = x * 1.5 + 0.05
        k += 1
        if np.sum(x) > 4.0:
            break
    return x * k


@case(lambda: (a(0.5, -1.0, 0.25, 2.0),))
def wh_continue(x):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        i += 1
        if x[i - 1] < 0:
            continue
        s += x[i - 1] ** 2
    return s


@case(lambda: (a(0.6, 0.9),))
def wh_return_inside(x):
    k = 0
    while True:
        if np.sum(x) > 50.0:
            return x * k
        x = x * 2.0 + 1.0
        k += 1


@case(lambda: (a(0.5, 0.8), 6))
def wh_python_int_countdown(x, n):
    while n > 0:
        x = np.sin(x) * 1.5
        n -= 1
    return x


# == for over range(a, b, s) ============================================================
@case(lambda: (a(0.3, -0.6),), f32=True)
def fr_range_basic(x):
    for i in range(3):
        x = np.sin(x) + i * x
    return x


@case(lambda: (a(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7),))
def fr_range_start_stop_step(x):
    s = 0.0
    for i in range(1, 6, 2):
        s = s + x[i] * x[i + 1]
    return s


@case(lambda: (a(0.5, -1.0, 2.0, 0.3),))
def fr_range_negative_step_horner(c):
    y = 0.0
    for i in range(c.shape[0] - 1, -1, -1):
        y = y * 0.7 + c[i]
    return y * c[0]


@case(lambda: (a(0.5, -0.25, 1.5),))
def fr_range_negative_step_weights(x):
    s = x * 0.0
    for i in range(5, -3, -2):
        s = s * 0.5 + x * i
    return s * x


@case(lambda: (a(0.3, 0.2, 0.6),))
def fr_range_len(x):
    out = 0.0
    for i in range(len(x)):
        out = out + np.exp(x[i]) * (i + 1)
    return out


@case(lambda: (a(0.4, 0.9),))
def fr_range_empty(x):
    y = x * 2.0
    for i in range(3, 3):
        y = y * 100.0 + i
    return y


@case(lambda: (a(0.2, -0.4, 0.7, 1.1),))
def fr_range_runtime_bound(x):
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            total = total + x[i] * x[j]
    return total


@case(lambda: (a(0.4, -0.9), 0.8), (0, 1))
def fr_python_float_factor_in_loop(x, s):
    for i in range(3):
        x = x * s + 0.1
    return x


@case(lambda: (a(0.4, -0.9, 0.3), 0.8), (0, 1))
def fr_python_float_times_element(x, s):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + s * x[i]
    return total


@case(lambda: (m([0.1, 0.2], [0.3, 0.4]), 0.8), (0, 1))
def fr_python_float_carried(mat, s):
    for row in mat:
        s = s * 0.5 + row[0] * row[1]
    return s


# == for over rows, lists and tuples ====================================================
@case(lambda: (spread((4, 3), seed=12),), f32=True)
def it_rows(m):
    acc = m[0] * 0.0
    for row in m:
        acc = acc + row * row
    return acc


@case(lambda: (spread((4, 3), seed=13), spread((3, 3), -0.5, 0.5, seed=14)), (0, 1), f32=True)
def it_rnn(xs, w):
    h = xs[0] * 0.0
    for x in xs:
        h = np.tanh(w @ h + x)
    return h


@case(lambda: (a(0.3, -0.2, 0.5),))
def it_static_tuple(x):
    for k in (1.0, 2.0, 0.5):
        x = x * k + np.sin(x)
    return x


@case(lambda: (a(0.3, -0.2), a(1.5, 0.7)), (0, 1))
def it_list_of_arrays(x, y):
    total = 0.0
    for v in [x, y, x * y]:
        total = total + np.sum(v ** 2)
    return total


@case(lambda: (spread((3, 2), seed=15),))
def it_columns(m):
    out = 0.0
    for col in m.T:
        out = out + col[0] * col[1] - col[2]
    return out


@case(lambda: (a(0.5, 1.5, -0.5),))
def it_reversed(x):
    y = 0.0
    for v in reversed(x):
        y = y * 0.5 + v
    return y


@case(lambda: ((a(0.3, 0.6), a(-0.2, 0.4), a(1.0, 0.1)),))
def it_tuple_argument(vs):
    acc = vs[0] * 0.0
    for v in vs:
        acc = acc * 0.5 + np.tanh(v)
    return acc


# == enumerate and zip ==================================================================
@case(lambda: (a(0.3, -0.6, 0.9, 0.2),))
def ez_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * v * i
    return s


@case(lambda: (spread((3, 2), seed=16),))
def ez_enumerate_start_rows(m):
    out = m[0] * 0.0
    for i, row in enumerate(m, 1):
        out = out + row / i
    return out


@case(lambda: (a(0.3, -0.6, 0.9), a(1.2, 0.4, -0.5)), (0, 1), f32=True)
def ez_zip(x, y):
    s = 0.0
    for u, v in zip(x, y):
        s = s + u * v + u ** 2
    return s


@case(lambda: (a(0.3, -0.6, 0.9), a(1.2, 0.4, -0.5)), (1, 0))
def ez_enumerate_zip(x, y):
    s = 0.0
    for i, (u, v) in enumerate(zip(x, y)):
        s = s + u * v * (i + 1)
    return s


@case(lambda: (spread((3, 2), seed=17), [1.0, 2.0, 3.0]))
def ez_zip_with_static_list(m, scales):
    out = m[0] * 0.0
    for row, k in zip(m, scales):
        out = out + row * k
    return out


@case(lambda: (a(0.4, -0.7),))
def ez_enumerate_list(x):
    for i, w in enumerate([0.5, 1.5, -1.0]):
        x = x * w + i
    return x


# == nested loops =======================================================================
@case(lambda: (a(0.3, 0.7),), tag="for")
@case(lambda: (a(-0.3, -0.7),), tag="while")
def nl_loops_inside_branches(x):
    if np.sum(x) > 0:
        for i in range(2):
            x = np.sin(x) * 2.0
    else:
        while np.sum(x) < 3.0:
            x = x * x + 1.0
    return x


@case(lambda: (spread((3, 3), seed=18),))
def nl_matrix_double_loop(m):
    s = 0.0
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            s = s + m[i, j] * m[j, i] * (i + 1)
    return s


@case(lambda: (m([0.6, 1.0], [3.0, 2.0], [0.2, 0.7]),))
def nl_while_in_for(mat):
    out = mat[:, 0] * 0.0
    for i in range(mat.shape[0]):
        v = mat[i][0]
        while v < 10.0:
            v = v * 2.0 + 1.0
            if v > 5.0:
                break
        out = out + v
    return out


@case(lambda: (a(0.3, 0.4),))
def nl_for_in_while(x):
    rounds = 0
    while np.sum(x) < 5.0:
        for k in range(2):
            x = x * 1.2 + 0.1 * k
        rounds += 1
    return x * rounds


@case(lambda: (a(0.3, -0.2, 0.5), spread((3, 3), -0.8, 0.8, seed=19)), (0, 1))
def nl_loop_with_branch(x, w):
    h = x
    for t in range(4):
        z = w @ h
        if np.sum(z) > 0:
            h = np.tanh(z)
        else:
            h = -z
    return h


@case(lambda: (spread((2, 3), seed=20), spread((3, 2), seed=21)), (0, 1))
def nl_hand_matmul(p, q):
    out = []
    for i in range(p.shape[0]):
        row = []
        for j in range(q.shape[1]):
            acc = 0.0
            for k in range(p.shape[1]):
                acc = acc + p[i, k] * q[k, j]
            row.append(acc)
        out.append(np.stack(row))
    return np.stack(out) ** 2


# == break, continue and return inside loops ============================================
MOD = ("k % 2 on a loop-carried Python int counter: the counter is a run-time int64 value "
       "and grad raises UnsupportedOperationError \"operator '%' on arrays needs the primitive "
       "'mod', which is not declared\"")

@case(lambda: (a(0.5, 0.3, 1.5, 0.2),))
def bc_break(x):
    s = 0.0
    for v in x:
        if v > 1.0:
            break
        s = s + v * v
    return s


@case(lambda: (a(0.5, -0.3, 1.5, -0.2),))
def bc_continue(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        s = s + np.exp(v)
    return s


@case(lambda: (m([0.5, -1.0, 0.25, 2.0, 0.5], [1.5, 0.5, 0.5, 0.5, 0.5],
                 [0.1, 0.2, -0.3, 0.4, 0.6]),))
def bc_nested_break_continue(mat):
    total = 0.0
    count = 0
    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            v = mat[i][j]
            if v < 0:
                continue
            if v > 1.0:
                break
            total = total + v * v
            count = count + 1
    return total, count


@case(lambda: (a(0.2, 0.4, 0.9, 0.1), 0.5), tag="found")
@case(lambda: (a(0.2, 0.4, 0.9, 0.1), 5.0), tag="not-found")
def bc_return_in_loop(x, limit):
    for i in range(x.shape[0]):
        if x[i] > limit:
            return x[i] * 10.0 + x[0], i
    return np.sum(x ** 2), -1


@case(lambda: (m([0.5, 1.0, 0.3], [0.7, -0.4, 0.2]),))
def bc_return_in_nested_loop(mat):
    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            if mat[i, j] < 0:
                return mat[i, j] * mat[0, 0] + i + j
    return np.sum(mat)


@case(lambda: (a(0.3, 0.6, -0.2, 1.4, 0.5),))
def bc_enumerate_break(x):
    s = 0.0
    for i, v in enumerate(x):
        if i > 2 and v > 0:
            break
        s = s + v * i
    return s


@case(lambda: (a(0.3, 0.25),), tag="three-steps")
@case(lambda: (a(3.0, 2.0),), tag="one-step")
def bc_break_in_static_tuple(x):
    total = x * 0.0
    for k in (1.0, 2.0, 3.0, 4.0):
        if np.sum(total) > 3.0:
            break
        total = total + k * x
    return total


@case(lambda: (a(0.9, 0.4),))
def bc_break_in_while_after_continue(x):
    k = 0
    y = x
    while k < 8:
        k += 1
        if k % 2 == 0:
            continue
        y = y * 1.3
        if np.max(y) > 2.0:
            break
    return y * k


@case(lambda: (a(0.3, 0.5),), xfail=crash(
    "a variable first assigned before a data-dependent 'break' of a loop op has no value "
    "after the loop: UnresolvedNameError \"local variable 'r' is assigned in only one "
    "branch of the data-dependent 'if'\""))
def bc_for_else(x):
    for v in x:
        if v > 1.0:
            r = v
            break
    else:
        r = np.sum(x)
    return r * x


# == user helper functions ==============================================================
def _poly(v, power=2, *, shift=0.0):
    return v ** power + shift


def _blend(u, v, weight=0.5):
    return weight * u + (1.0 - weight) * v


def _sum_all(*parts):
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def make_scaler(k, bias):
    def scaled(v):
        return k * v + bias
    return scaled


SCALE_BY_3 = make_scaler(3.0, 0.5)


def _smooth_abs(v):
    total = 0.0
    for e in v:
        total = total + np.sqrt(e * e + 0.01)
    return total


@case(lambda: (a(0.3, -1.1),))
def hp_nested_def(x):
    def g(v):
        return v * np.sin(v)
    return g(x) + g(2.0 * x)


@case(lambda: (a(0.3, -1.1), 1.5), (0, 1))
def hp_closure_over_argument(x, s):
    def scale(v):
        return s * v + s ** 2
    return scale(np.tanh(x)) * scale(x)


@case(lambda: (a(0.3, -1.1),))
def hp_closure_factory(x):
    return SCALE_BY_3(x) * make_scaler(0.5, -1.0)(x)


@case(lambda: (a(0.7, -0.4),), f32=True)
def hp_default_arguments(x):
    return _poly(x) + _poly(x, 3) + _poly(x, power=1, shift=2.0)


@case(lambda: (a(0.7, -0.4), a(1.5, 0.2)), (0, 1))
def hp_keyword_arguments(x, y):
    return _blend(x, y) * _blend(u=y, v=x, weight=0.3) + _blend(x, y, weight=0.9)


@case(lambda: (a(0.7, -0.4), a(1.5, 0.2), a(-0.3, 0.8)), (0, 1, 2))
def hp_star_args(x, y, z):
    parts = (x, y * y, z)
    return _sum_all(x, y, z) * _sum_all(*parts)


@case(lambda: (a(0.7, -0.4),))
def hp_lambda(x):
    square = lambda v: v * v  # noqa: E731
    return square(np.sin(x)) + square(x)


@case(lambda: (a(0.7, -0.4, 0.05),))
def hp_helper_with_loop(x):
    return _smooth_abs(x) * _smooth_abs(x * 2.0)


@case(lambda: (a(0.7, -0.4),))
def hp_helper_with_branch(x):
    def clip_sum(v):
        s = np.sum(v)
        if s > 1.0:
            return 1.0 + 0.1 * s
        return s
    return clip_sum(x) * clip_sum(x * 5.0)


@case(lambda: (a(0.7, -0.4), a(0.2, 0.9)), (0, 1))
def hp_nested_helpers(x, y):
    def outer(u):
        def inner(v):
            return v * y
        return inner(u) + inner(u * u)
    return outer(x)


@case(lambda: (a(0.7, -0.4), a(0.2, 0.9)), (0, 1))
def hp_keyword_unpacking(x, y):
    def product(**kw):
        return kw["u"] * kw["v"]
    options = {"u": x, "v": y}
    return product(**options) + product(u=y, v=y)


@case(lambda: (a(0.3, 0.5),))
def hp_closure_in_loop(x):
    s = x * 0.0
    for i in range(3):
        def g(v):
            return v * i + s
        s = g(x)
    return s * x


# == tuples, lists and dicts ============================================================
@case(lambda: (a(0.3, 0.8), a(-0.5, 1.2)), (0, 1))
def ct_tuple_unpack(x, y):
    p = (x, y)
    u, v = p
    (c, d), e = (v, u), x
    return c + d * e + u * v


@case(lambda: (a(0.3, 0.8, -0.4),))
def ct_tuple_index_constant(x):
    t = (x * 2.0, np.sin(x), x ** 2)
    return t[0] * t[-1] + t[1]


@case(lambda: (a(0.3, 0.8),), f32=True)
def ct_list_build_and_index(x):
    items = [x, x * 2.0, np.exp(x)]
    first, *rest = items
    return items[0] * items[-1] + rest[0] + first


@case(lambda: (spread((3, 2), seed=22),))
def ct_append_then_stack(x):
    ys = []
    for row in x:
        ys.append(np.sin(row) * 2.0)
    return np.stack(ys) * x


@case(lambda: (a(0.2, -0.5, 0.9),))
def ct_append_then_sum(x):
    terms = []
    h = 0.0
    for i in range(x.shape[0]):
        h = 0.5 * h + x[i]
        terms.append(h * h)
    return sum(terms) + max(terms)


@case(lambda: (a(0.2, -0.5),))
def ct_list_item_assignment(x):
    items = [x, x * 2.0, x * 3.0]
    items[1] = np.sin(items[1])
    items[-1] = items[0] * items[2]
    return items[0] + items[1] + items[2]


@case(lambda: (a(0.2, -0.5), a(1.0, 0.3)), (0, 1))
def ct_dict_constant_keys(x, y):
    d = {"a": x, "b": y}
    d["c"] = d["a"] * d["b"]
    return d["c"] + d["a"] ** 2


@case(lambda: (a(0.2, -0.5),))
def ct_dict_loop_over_keys(x):
    weights = {"first": 0.5, "second": 2.0}
    d = {}
    for key in ("first", "second"):
        d[key] = x * weights[key]
    return d["first"] * d["second"]


@case(lambda: (a(0.2, -0.5),))
def ct_tuple_output(x):
    return x * 2.0, np.sum(x ** 2), (np.sin(x), 3)


@case(lambda: ((a(0.3, 0.5), a(1.0, -0.2)),))
def ct_tuple_input(pair):
    x, y = pair
    return np.sum(x * y) + np.sum(x ** 2)


@case(lambda: ({"w": a(0.3, 0.5), "b": 0.7},))
def ct_dict_input(params):
    return np.sum(np.tanh(params["w"] * params["b"]))


@case(lambda: ([a(0.3, 0.5), a(1.0, -0.2), a(0.1, 0.4)],))
def ct_list_input(xs):
    total = 0.0
    for v in xs:
        total = total + np.sum(v ** 3)
    return total * len(xs)


@case(lambda: (a(0.3, -0.5),))
def ct_dict_items(x):
    d = {"a": x, "b": np.sin(x)}
    t = 0.0
    for key, value in d.items():
        t = t + np.sum(value ** 2) * len(key)
    return t


@case(lambda: (a(0.3, 0.5), [a(1.0, 2.0), a(0.5, -0.5)]), (0, 1))
def ct_list_argument_indexed_by_counter(x, ws):
    for i in range(len(ws)):
        x = np.sin(x) * ws[i]
    return x


@case(lambda: (a(0.3, -0.5),))
def ct_list_comprehension(x):
    return np.stack([np.sin(v) for v in x]) * x


@case(lambda: (a(0.3, -0.5),))
def ct_generator_sum(x):
    return sum(v * v for v in x)


@case(lambda: (a(0.3, 0.5, -0.1),))
def ct_list_of_pairs(x):
    pairs = [(x[0], x[1]), (x[1], x[2]), (x[2], x[0])]
    s = 0.0
    for p, q in pairs:
        s = s + p * q
    return s


# == builtins ===========================================================================
@case(lambda: (a(0.3, 0.5, -0.1),))
def bi_len(x):
    return x * len(x) + np.sum(x) / len(x)


@case(lambda: (-0.8, 1.3), (0, 1))
def bi_abs_python_floats(u, v):
    return abs(u) * v + abs(u - v)


@case(lambda: (a(0.3, -0.5, -0.1),))
def bi_abs_array(x):
    return abs(x) * x


@case(lambda: (spread((3, 2), seed=23),))
def bi_sum_builtin(m):
    return sum(m) * sum([m[0, 0], m[1, 1]], 1.0)


@case(lambda: (1.5, -0.25), (0, 1))
def bi_max_min_python_floats(u, v):
    return max(u, v) * min(u, v, 0.5) + max([u * v, 0.1])


@case(lambda: (a(0.5, -2.0, 1.0),))
def bi_max_min_zero_d(x):
    s = np.sum(x)
    return max(s, np.max(x)) * min(s, 0.0) + abs(s)


@case(lambda: (a(0.5, -2.0, 1.0),))
def bi_float(x):
    k = float(np.sum(x))
    return x * k


@case(lambda: (a(0.5, 0.65, 1.0),))
def bi_int(x):
    k = int(np.sum(x) * 2.0)
    return x * k + x[k - 3]


@case(lambda: (0.75,))
def bi_float_of_python_float(s):
    return float(s) * s + int(s * 10.0)


@case(lambda: (a(0.3, 0.9, 0.5),))
def bi_max_in_loop(x):
    best = x[0]
    for v in x:
        best = max(best, v)
    return best * 2.0 + min(x[0], x[2])


# == the math module on Python floats ===================================================
@case(lambda: (1.7,), f32=False)
def mt_basic(s):
    return math.sin(s) * math.exp(s) + math.log(s) - math.cos(s) ** 2


@case(lambda: (1.7, 0.3), (0, 1))
def mt_sqrt_pow_tanh(u, v):
    return math.sqrt(u) * math.pow(u, 1.5) + math.tanh(v) * u


@case(lambda: (1.7, 0.3), (0, 1))
def mt_log_bases_hypot(u, v):
    return math.log(u, 2.0) + math.log10(u) * math.log2(u) + math.hypot(u, v)


@case(lambda: (a(0.2, 0.7), 0.4), (0, 1))
def mt_math_with_arrays(x, s):
    return x * math.cos(s) + math.exp(-s) * np.sin(x) + math.pi * s


@case(lambda: (0.9,))
def mt_in_a_loop(s):
    y = s
    for k in range(4):
        y = math.sin(y) + s * k * 0.1
    return y


# == indexing: reads ====================================================================
@case(lambda: (a(0.3, -0.8, 1.2, 0.5),), f32=True)
def ix_integer(x):
    return x[2] * x[0] + x[1]


@case(lambda: (a(0.3, -0.8, 1.2, 0.5),))
def ix_negative(x):
    return x[-1] - x[-2] ** 2


@case(lambda: (a(0.3, -0.8, 1.2, 0.5, 0.9, -0.1, 0.6),))
def ix_slice_with_step(x):
    return x[1:6:2] * x[::3] + x[5:0:-2]


@case(lambda: (a(0.3, -0.8, 1.2, 0.5),))
def ix_reverse(x):
    return x[::-1] * x


@case(lambda: (spread((3, 4), seed=24),), f32=True)
def ix_column(mat):
    return mat[:, 1] * mat[:, -1] + mat[1, :3]


@case(lambda: (spread((3, 4), seed=25),))
def ix_negative_row_and_block(mat):
    return mat[-1, :] * np.sum(mat[:2, 1:3] ** 2)


@case(lambda: (a(0.3, -0.8, 1.2),))
def ix_ellipsis_newaxis(x):
    return x[..., None] * x[None, ...] + x[:, np.newaxis]


@case(lambda: (a(0.3, -0.8, 1.2, 0.5),))
def ix_integer_list_repeats(x):
    return x[[0, 0, 2]] * x[[1, 3, 1]]


@case(lambda: (a(0.3, -0.8, 1.2, 0.5),))
def ix_integer_array_repeats(x):
    idx = np.array([3, 1, 3, 3])
    return np.sum(np.sin(x[idx]))


@case(lambda: (spread((3, 4), seed=26),))
def ix_two_integer_arrays(mat):
    return mat[[0, 1, 0], [2, 2, 2]] * mat[[2, 2], :][:, 0].sum()


@case(lambda: (a(0.3, -0.8, 1.2, 0.5),))
def ix_constant_mask(x):
    return x[MASK4] ** 2


@case(lambda: (spread((2, 3), seed=27),))
def ix_mask_built_inside(mat):
    keep = np.array([[False, True, True], [True, False, False]])
    return np.sum(mat[keep] * mat[:, np.array([True, False, True])].sum())


@case(lambda: (spread((3, 4), seed=28),))
def ix_chained(mat):
    return mat[1][2] * mat[2][::-1][0] + mat[0, :][1:][0]


@case(lambda: (spread((2, 3), seed=29),))
def ix_take(mat):
    return np.take(mat, [2, 0, 2], axis=1) * mat.take([0, 0], axis=0).sum()


@case(lambda: (spread((3, 2), seed=30), 1), tag="dynamic")
def ix_integer_argument(mat, i):
    return mat[i] * mat[i - 1, 0] + mat[-i, :]


# == indexing: writes ===================================================================
@case(lambda: (a(0.3, -0.8, 1.2, 0.5), a(2.0, -1.5)), (0, 1), f32=True)
def iw_slice_assign(x, v):
    y = x.copy()
    y[1:3] = v
    return y * x


@case(lambda: (a(0.3, -0.8, 1.2, 0.5), a(2.0, -1.5)), (0, 1))
def iw_slice_assign_into_argument(x, v):
    x = x.copy()  # writing into the caller's array itself is refused
    x[1:3] = v * 2.0
    return x ** 2


@case(lambda: (a(0.3, -0.8, 1.2), 0.7), (0, 1))
def iw_iadd_item(x, v):
    y = x * 1.0
    y[1] += v
    return y * y


@case(lambda: (a(0.3, -0.8, 1.2, 0.5, 0.1), a(2.0, -1.5)), (0, 1))
def iw_iadd_slice_with_step(x, v):
    y = np.sin(x)
    y[1:4:2] += v * x[0]
    return y ** 2


@case(lambda: (a(0.3, -0.8, 1.2, 0.5),))
def iw_assign_in_loop(x):
    out = np.zeros_like(x)
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i]
        out[i] = s * s
    return out


@case(lambda: (spread((3, 2), seed=31), a(0.5, -1.0, 2.0)), (0, 1))
def iw_column_assign(mat, v):
    out = mat.copy()
    out[:, 0] = v
    return out * mat


@case(lambda: (a(0.3, -0.8, 1.2, 0.5), a(2.0, -1.5, 0.4)), (0, 1))
def iw_repeated_indices_iadd(x, v):
    y = x * 2.0
    y[[0, 0, 2]] += v
    return y * x


@case(lambda: (a(0.3, -0.8, 1.2, 0.5), 0.6), (0, 1))
def iw_constant_mask_assign(x, v):
    y = x ** 2
    y[MASK4] = v
    return y * x


@case(lambda: (spread((2, 3), seed=32), a(0.5, 0.25)), (0, 1))
def iw_iadd_column_in_loop(mat, v):
    out = mat * 1.0
    for j in range(mat.shape[1]):
        out[:, j] += v * j
    return out ** 2


@case(lambda: (a(0.3, 0.7, 0.9), np.array([2, 0, 2])))
def ix_index_array_argument(x, idx):
    return np.sum(x[idx] ** 2) + x[idx[1]]


# == non-differentiable values flowing through ==========================================
@case(lambda: (spread((2, 3), seed=33),))
def nd_shape(mat):
    n, k = mat.shape
    return mat * n / k + mat.ndim + mat.size * mat[0, 0]


@case(lambda: (spread((4, 3), seed=34),))
def nd_integer_counter(mat):
    n = 0
    acc = np.zeros(mat.shape[1])  # 0.0 would stay a number when no row is positive
    for row in mat:
        if np.sum(row) > 0:
            n += 1
            acc = acc + row * n
    return np.sum(acc) * (n + 1)


@case(lambda: (a(0.5, -0.3, 1.2, -0.9),), f32=True)
def nd_boolean_mask_arithmetic(x):
    positive = x > 0
    return np.sum(x * positive) + np.sum(np.where(positive, x ** 2, 0.1 * x))


@case(lambda: (a(0.5, -0.3, 1.2, -0.9),))
def nd_argmax(x):
    i = np.argmax(x)
    j = np.argmin(x)
    return x[i] * x[0] + x[j] ** 2


@case(lambda: (a(0.5, -0.3, 1.2, -0.9),))
def nd_floor(x):
    return np.floor(x * 3.0) * x + np.floor(x) ** 2


@case(lambda: (0.37,))
def nd_math_floor(s):
    return math.floor(s * 10.0) * s + s


@case(lambda: (a(0.5, -0.3, 1.2, -0.9),))
def nd_sign(x):
    return np.sign(x) * x ** 2


@case(lambda: (a(0.5, -0.3), a(1.5, 0.7)), (0, 1), f32=True,
      fd_reference=lambda x0, y0: lambda x, y: (x0 * y0) * x + y)
def nd_stop_gradient(x, y):
    c = ms.ops.stop_gradient(x * y)
    return c * x + y


@case(lambda: (a(0.5, -0.3), 0.8), (0, 1),
      fd_reference=lambda x0, s0: lambda x, s: np.sin(x0) * x * (s0 * 2.0) + s * x)
def nd_stop_gradient_tuple_and_float(x, s):
    frozen, k = ms.ops.stop_gradient((np.sin(x), s * 2.0))
    return frozen * x * k + s * x


@case(lambda: (a(0.5, -0.3), 4, a(1.5, 0.7)), 2)
def nd_int_between_arrays(x, n, y):
    return x * n + y ** n


@case(lambda: (a(0.5, -0.3, 0.8), a(1.5, -0.7, 0.2)), (0, 1))
def nd_comparison_cast(x, y):
    bigger = (x > y).astype(np.float64)
    return np.sum(bigger * x + (1.0 - bigger) * y ** 2) + (x[0] > y[0]) * 1.0


@case(lambda: (a(0.5, -0.3, 1.1),))
def nd_leaky_relu_dynamic_where(x):
    return np.where(x > 0, x, 0.1 * x) * x


@case(lambda: (a(0.5, -0.3, 1.1),))
def nd_argmax_as_loop_bound(x):
    k = int(np.argmax(x))
    s = 0.0
    for i in range(k + 1):
        s = s + x[i] ** 2
    return s


@case(lambda: (a(0.3, 0.7, 0.9),))
def nd_run_time_mask_assign(x):
    y = x * 1.0
    y[x > 0.5] = 0.0
    return y * x


@case(lambda: (a(0.3, 0.7),))
def nd_bool_arithmetic(x):
    n = int(x.shape[0] > 1) + True
    return x * n + (x[0] < x[1])


@case(lambda: ((lambda v: (v, v))(a(0.3, 0.7))), (0, 1))
def nd_same_array_at_two_positions(x, y):
    return x * y ** 2


# == a long loop over a Python float ====================================================
@case(lambda: (0.8,))
def ll_ten_thousand_iterations(s):
    total = 0.0
    for i in range(10_000):
        total = total + math.sin(s * i * 1e-4) * 1e-4
    return total


@case(lambda: (0.8,))
def ll_ten_thousand_recurrence(s):
    y = s
    for i in range(10_000):
        y = y * 0.9999 + s * s * 1e-4
    return y
