"""Placeholder: Tensor is being written (see the nn/tensor work)."""
import numpy as np


class Tensor:
    def __init__(self, data, dtype=None):
        self._data = np.asarray(data)

    def asnumpy(self):
        return self._data


def unwrap(x):
    return x.asnumpy() if isinstance(x, Tensor) else x


def wrap(arr):
    return Tensor(arr)
