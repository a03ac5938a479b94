"""The control flow the frontend lifts is differentiable end to end: ``grad`` of
user functions with data-dependent branches, loops, early exits and appended lists
matches central finite differences of the Python function."""
import numpy as np
import pytest

import ad_compiler as ms
from tests.finite_differences import central


def branchy(x):
    if np.sum(x) > 0:
        y = np.sin(x) * 2
    else:
        y = x * x
    return np.sum(y)


def early_exit(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            return s + x[i] * 3
        s = s + x[i] * x[i]
    return s


def skip_and_stop(x):
    s = 0.0
    for v in x:
        if v < 0:
            continue
        if s > 2.0:
            break
        s = s + np.sin(v)
    return s


def stacked(x):
    hs = []
    h = x[0] * 0.0
    for row in x:
        h = np.tanh(h + row)
        hs.append(h * h)
    return np.sum(np.stack(hs)) + np.sum(hs[-1])


def grow(x):
    y = x
    while np.sum(y * y) < 50.0:
        y = y * 1.5 + 0.1
    return np.sum(np.sin(y))


def python_floats(a):
    x = a
    for _ in range(30):
        x = x - 0.1 * (x * x - 2.0)
    return x if x > 0 else -x


def last_item(x):
    last = 0.0
    for i in range(x.shape[0]):
        last = x[i] * 2      # carried (read after the loop), never read in the body
    return last


CASES = {
    "branch+": (branchy, np.array([0.3, -0.1, 0.5])),
    "branch-": (branchy, np.array([-0.3, -0.1, 0.5])),
    "early exit": (early_exit, np.array([0.5, -0.25, 1.5, 0.2])),
    "no exit": (early_exit, np.array([0.5, -0.25, 0.5, 0.2])),
    "skip and stop": (skip_and_stop, np.array([0.5, -1.0, 1.2, 1.5, 0.9, 0.3])),
    "stacked": (stacked, np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]])),
    "while": (grow, np.array([0.5, 1.0, 1.5])),
    "python floats": (python_floats, 0.7),
    "last item": (last_item, np.array([0.5, 2.0, -1.0])),
}

# "early exit", "no exit" and "last item" carry a value the loop body overwrites
# without reading it: its cotangent in the backward sweep is zero
_PARAMS = sorted(CASES)


@pytest.mark.parametrize("case", _PARAMS)
def test_grad_of_lifted_control_flow_matches_finite_differences(case):
    fn, x = CASES[case]
    got = ms.grad(fn)(x)
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    np.testing.assert_allclose(got, central(fn, x), rtol=1e-6, atol=1e-8)
