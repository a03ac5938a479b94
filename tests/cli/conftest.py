"""Fixtures for the ``ad-compiler`` command: a small user module written to tmp_path.

``model`` gives the module's path, its source lines and ``line_of(text)``, the
1-based line where ``text`` first occurs, so tests locate lines by content rather
than by counting.
"""
from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

MODULE = "cli_model"

SOURCE = '''\
import numpy as np
import ad_compiler as ms
from ad_compiler import nn


def scaled_wave(inputs, bias):
    shifted = inputs + bias
    wave = np.sin(shifted)
    return np.sum(wave * inputs)


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.weight = ms.Parameter(np.full((3, 2), 0.5, np.float32))

    def construct(self, features):
        hidden = np.tanh(features @ self.weight)
        return np.sum(hidden * hidden)


def guarded(values):
    total = np.sum(values)
    try:
        total = total * 2
    except ValueError:
        pass
    return total
'''


@pytest.fixture
def model(tmp_path):
    path = tmp_path / f"{MODULE}.py"
    path.write_text(SOURCE)
    lines = SOURCE.splitlines()

    def line_of(text):
        return next(i for i, line in enumerate(lines, 1) if text in line)
    yield SimpleNamespace(path=path, lines=lines, line_of=line_of)
    sys.modules.pop(MODULE, None)   # the command imports the file under its stem
