"""``Cell.recompute()`` after a gradient was compiled: the next call compiles again
(the flag is part of what the compiled code read), through the general path and
through the fast path's guard; values and gradients stay those of central
differences (``ms.check_grad``)."""
from __future__ import annotations

import numpy as np
import pytest

import ad_compiler as ms
from ad_compiler import nn
from ad_compiler.api import grad as grad_module

X = np.array([0.3, -0.2, 0.5])


class Inner(nn.Cell):
    """No Parameters: a gradient w.r.t. the input alone takes the fast path."""

    def __init__(self):
        super().__init__()
        self.w = np.array([0.8, -0.6, 1.2])

    def construct(self, x):
        for _ in range(3):
            x = np.sin(x * self.w)
        return x


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def construct(self, x):
        return np.sum(self.inner(x) ** 2)


class Listed(nn.Cell):
    """Its sub-cells are iterated in Python (a CellList)."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.CellList([Inner(), Inner()])

    def construct(self, x):
        for block in self.blocks:
            x = block(x)
        return np.sum(x * x)


@pytest.fixture
def builds(monkeypatch):
    """The entries compiled during the test (``build_entry`` counted)."""
    built = []
    real = grad_module.build_entry

    def counting(*args, **kwargs):
        built.append(real(*args, **kwargs))
        return built[-1]
    monkeypatch.setattr(grad_module, "build_entry", counting)
    return built


def _recomputes(entry) -> bool:
    return "bprop_call" in str(entry.ir)


@pytest.mark.parametrize("make, cell_of, visible", [
    (Outer, lambda net: net.inner, True),
    # the differentiated Cell itself: recomputing the whole function right before its
    # backward sweep compiles to the same code, but it is compiled again all the same
    (Outer, lambda net: net, False),
    (Listed, lambda net: net.blocks[1], True),      # reached through a Cell container
], ids=["sub-cell", "top-level", "in-a-CellList"])
def test_recompute_after_the_first_call_compiles_again(builds, make, cell_of, visible):
    net = make()
    g = ms.grad(net)
    first = g(X)
    g(X)  # a cache hit: the fast path's guard is the hot one now
    assert len(builds) == 1 and not _recomputes(builds[0])
    cell_of(net).recompute()
    again = g(X)
    assert len(builds) == 2 and _recomputes(builds[1]) == visible
    np.testing.assert_allclose(again, first, rtol=1e-13)
    g(X)
    assert len(builds) == 2  # the new entry is cached
    ms.check_grad(net, (X,), modes=("rev",))  # (compiles its own entries)
    n = len(builds)
    cell_of(net).recompute(False)
    np.testing.assert_allclose(g(X), first, rtol=1e-13)
    assert len(builds) == n + 1 and not _recomputes(builds[n])

def test_recompute_before_compiling_needs_no_recompile(builds):
    net = Outer()
    net.inner.recompute()
    g = ms.grad(net)
    g(X)
    g(X)
    assert len(builds) == 1 and _recomputes(builds[0])
    ms.check_grad(net, (X,), modes=("rev",))


def test_value_and_grad_with_parameters_sees_recompute(builds):
    class WithParam(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.scale = ms.Parameter(np.array([1.5, 0.5, -1.0]), name="scale")

        def construct(self, x):
            return np.sum(self.inner(x * self.scale) ** 2)

    net = WithParam()
    vg = ms.value_and_grad(net, grad_position=0, weights=net.trainable_params())
    before = vg(X)
    net.inner.recompute()
    after = vg(X)
    assert len(builds) == 2 and _recomputes(builds[1]) and not _recomputes(builds[0])
    assert after[0] == before[0] == net(X)
    np.testing.assert_allclose(after[1][0], before[1][0], rtol=1e-13)
    np.testing.assert_allclose(after[1][1][0], before[1][1][0], rtol=1e-13)
