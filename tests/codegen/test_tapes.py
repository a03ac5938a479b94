"""A loop's tape is one list of tuples when its lists are always read together."""
from __future__ import annotations

import re

import numpy as np
import pytest

import ad_compiler as ms


def scalar_loop(a, b):
    s = 0.0
    x, y = a, b
    for _ in range(6):
        s = s + (y - x * x) ** 2 + (1.0 - x) ** 2
        x, y = 0.9 * y + 0.1, 0.5 * x + 0.3
    return s


def test_one_append_and_one_read_per_iteration():
    source = ms.adjoint_source(scalar_loop, 0.3, 0.4, grad_position=(0, 1))
    appends = re.findall(r"(\w+)\.append\(\(", source)
    assert len(appends) == 1                        # one tuple per forward iteration
    assert re.search(rf"\w+, \w+(, \w+)* = {appends[0]}\[i\w*\]", source)
    assert source.count(".append(") == 1


def test_the_packed_tape_gives_the_right_gradient():
    grad = ms.grad(scalar_loop, grad_position=(0, 1))(0.3, 0.4)
    eps = 1e-6
    fd = ((scalar_loop(0.3 + eps, 0.4) - scalar_loop(0.3 - eps, 0.4)) / (2 * eps),
          (scalar_loop(0.3, 0.4 + eps) - scalar_loop(0.3, 0.4 - eps)) / (2 * eps))
    assert grad == pytest.approx(fd, rel=1e-6)
    assert all(type(g) is float for g in grad)
