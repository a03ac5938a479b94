"""Compiled gradients do not keep user objects alive.

Nothing the cache holds outlives both the function object and the gradient
function that use it: objects that cannot be weakly referenced (``__slots__``)
keep their compiled code on the gradient function, entries never hold the
owner they read captured state from, and each generated function's
``linecache`` entry goes with it.
"""
from __future__ import annotations

import gc
import linecache
import tracemalloc
import weakref

import numpy as np

import ad_compiler as ms
from ad_compiler import nn

X = np.array([0.5, -1.0, 2.0])


def generated_sources() -> int:
    return sum(1 for name in list(linecache.cache) if name.startswith("<ad_compiler:"))


class Slotted:
    """Cannot be weakly referenced; counts its live instances."""

    __slots__ = ("w", "n")
    alive = 0

    def __init__(self, w):
        self.w, self.n = w, 2
        Slotted.alive += 1

    def __del__(self):
        Slotted.alive -= 1

    def loss(self, x):
        return np.sum(self.w * x ** self.n)


def test_gradients_of_methods_of_slots_objects_do_not_keep_them_alive(api):
    gc.collect()
    before, sources = Slotted.alive, generated_sources()
    objects = [Slotted(float(i)) for i in range(2000)]
    for obj in objects[::40]:   # one in forty compiles; all of them get a gradient function
        api.assert_grad(ms.grad(obj.loss)(X), 2.0 * obj.w * X, X)
    gradient_functions = [ms.grad(obj.loss) for obj in objects]
    gradient_functions[-1](X)
    del objects, gradient_functions, obj
    gc.collect()
    assert Slotted.alive == before, f"{Slotted.alive - before} objects kept alive"
    assert generated_sources() <= sources, "linecache entries of dead gradients remain"


class Plain:
    def __init__(self):
        self.w = np.array([1.0, 2.0, 3.0])

    def loss(self, x):
        return np.sum(self.w * x)


class WithArray(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = np.array([1.0, 2.0, 3.0])   # captured, read at call time
        self.gain = 2.0

    def construct(self, x):
        return np.sum(np.sin(x) * self.w) * self.gain


def test_captured_state_does_not_keep_its_owner_alive(api):
    owners = [Plain(), WithArray()]
    refs = [weakref.ref(o) for o in owners]
    api.assert_grad(ms.grad(owners[0].loss)(X), owners[0].w, X)
    api.assert_grad(ms.grad(owners[1])(X), np.cos(X) * owners[1].w * 2.0, X)
    captured = weakref.ref(owners[1].w)
    del owners
    gc.collect()
    assert [r() for r in refs] == [None, None]
    assert captured() is None, "the captured array outlives its Cell"


def test_gradients_of_closures_over_large_arrays_are_freed():
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            big = np.ones(100_000)

            def f(x):
                return np.sum(x * big[:3])
            ms.grad(f)(X)
            del f, big
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    assert grown < 1_000_000, f"{grown} bytes kept after 10 closures over 800 kB arrays"


def test_the_generated_source_of_a_dead_gradient_leaves_linecache():
    gc.collect()
    sources = generated_sources()

    def make():
        w = np.array([1.0, 2.0, 3.0])
        return lambda x: np.sum(x * w)
    for _ in range(20):
        ms.grad(make())(X)
    gc.collect()
    assert generated_sources() <= sources
