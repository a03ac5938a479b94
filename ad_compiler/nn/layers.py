"""Layers: Dense, activations, and the SequentialCell / CellList containers.

Invariants:

- Every ``construct`` here is written in the subset the compiler lifts: straight
  line NumPy code on its arguments and ``self``'s Parameters, sub-cell calls, and
  ``if`` only on configuration fixed at construction (``self.has_bias``).
  SequentialCell's loop over its (fixed) list of cells is the one exception.
- Eagerly, ``construct`` works on Tensors (and on ndarrays) because it only uses
  operators and NumPy functions, which Tensor dispatches; wherever a Parameter
  takes part the result is a Tensor.
- Weights are drawn from ``np.random``'s global generator, so ``np.random.seed``
  makes them reproducible. Dense follows MindSpore 2.x: weight ``(out, in)``,
  both weight and bias uniform in ``±1/sqrt(in_channels)`` unless given.
- ReLU is written with ``np.where`` (not ``np.maximum``) so that its derivative
  at 0 is 0, while ``maximum`` splits ties 50/50.

>>> np.random.seed(0)
>>> fc = Dense(3, 2, activation="relu")
>>> fc
Dense<
  input_channels=3, output_channels=2, has_bias=True, activation=ReLU<>
  (activation): ReLU<>
  >
>>> [(p.name, p.shape) for p in fc.trainable_params()]
[('weight', (2, 3)), ('bias', (2,))]
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from .. import dtype as _mstype
from ..ad.rules import register_lowering
from ..common.initializer import initial_array
from .cell import Cell, bump_epoch
from .parameter import Parameter

__all__ = ["Dense", "ReLU", "Sigmoid", "Tanh", "Softmax", "SequentialCell", "CellList",
           "get_activation", "CellDict"]


# ------------------------------------------------------------------ activations
class ReLU(Cell):
    """``max(x, 0)`` elementwise, with derivative 0 at 0."""

    def construct(self, x):
        return np.where(x > 0, x, 0)


class Sigmoid(Cell):
    """``1 / (1 + exp(-x))`` elementwise."""

    def construct(self, x):
        # The tanh form cannot overflow, and neither can its derivative.
        return 0.5 * (np.tanh(0.5 * x) + 1)


class Tanh(Cell):
    def construct(self, x):
        return np.tanh(x)


class Softmax(Cell):
    """``exp(x) / sum(exp(x))`` along ``axis`` (default: the last)."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        # Shifting by the max changes nothing mathematically and keeps exp finite.
        e = np.exp(x - np.max(x, axis=self.axis, keepdims=True))
        return e / np.sum(e, axis=self.axis, keepdims=True)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


_ACTIVATIONS = {"relu": ReLU, "sigmoid": Sigmoid, "tanh": Tanh, "softmax": Softmax}


def _more_activations() -> None:
    from . import activation as a
    _ACTIVATIONS.update({"relu6": a.ReLU6, "leakyrelu": a.LeakyReLU, "elu": a.ELU,
                         "gelu": a.GELU, "silu": a.SiLU, "logsoftmax": a.LogSoftmax})


def get_activation(name: str) -> Cell:
    """A new activation Cell by name (``'relu'``, ``'sigmoid'``, ``'tanh'``, ``'softmax'``)."""
    key = name.lower()
    if key not in _ACTIVATIONS:
        _more_activations()
    if key not in _ACTIVATIONS:
        raise KeyError(f"unknown activation {name!r}; expected one of {sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[key]()


# ------------------------------------------------------------------ initial values
def _initial_value(init, shape: tuple, np_dtype, fan_in: int = 0, fan_out: int = 0,
                   what: str = "For 'initializer', init") -> np.ndarray:
    """An array of ``shape`` from an Initializer, a name, a number, an array or a Tensor
    (fans come from the shape, see ``common.initializer``); ``what`` names the argument."""
    return initial_array(init, shape, np_dtype, what)


# ------------------------------------------------------------------ Dense
class Dense(Cell):
    """Fully connected layer: ``activation(x @ weight.T + bias)``.

    Args:
        in_channels, out_channels: sizes of the last axis of input and output.
        weight_init: None (MindSpore 2.x default: uniform in ``±1/sqrt(in_channels)``,
            i.e. HeUniform(sqrt(5))), an initializer name, a number, an ndarray or a
            Tensor of shape ``(out_channels, in_channels)``.
        bias_init: None (uniform in ``±1/sqrt(in_channels)``) or as ``weight_init``,
            shape ``(out_channels,)``.
        has_bias: whether to add the bias.
        activation: None, a name (``'relu'``, ``'sigmoid'``, ``'tanh'``, ``'softmax'``)
            or a Cell / callable applied to the output.
        dtype: dtype of the Parameters (default float32).
    """

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None,
                 has_bias=True, activation=None, dtype=_mstype.float32):
        super().__init__()
        self.in_channels = _positive_int(in_channels, "in_channels")
        self.out_channels = _positive_int(out_channels, "out_channels")
        self.has_bias = bool(has_bias)
        np_dtype = _mstype.to_numpy_dtype(dtype)
        bound = 1.0 / math.sqrt(in_channels)
        shape = (out_channels, in_channels)
        weight = (np.random.uniform(-bound, bound, shape).astype(np_dtype) if weight_init is None
                  else _initial_value(weight_init, shape, np_dtype, in_channels, out_channels,
                                      "For 'Dense', weight_init (out_channels, in_channels)"))
        self.weight = Parameter(weight, name="weight")
        self.bias = None
        if self.has_bias:
            bias = (np.random.uniform(-bound, bound, out_channels).astype(np_dtype)
                    if bias_init is None
                    else _initial_value(bias_init, (out_channels,), np_dtype, in_channels,
                                        out_channels, "For 'Dense', bias_init (out_channels,)"))
            self.bias = Parameter(bias, name="bias")
        self.activation = get_activation(activation) if isinstance(activation, str) else activation
        if self.activation is not None and not callable(self.activation):
            raise TypeError(f"Dense activation must be a name, a Cell or a callable, "
                            f"got {type(activation).__name__}")
        self.activation_flag = self.activation is not None

    def construct(self, x):
        x = check_dense_input(x, self.in_channels)
        out = x @ self.weight.T
        if self.has_bias:
            out = out + self.bias
        if self.activation_flag:
            out = self.activation(out)
        return out

    def extend_repr(self) -> str:
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}"
        if self.has_bias:
            s += f", has_bias={self.has_bias}"
        if self.activation_flag:
            s += f", activation={self.activation}"
        return s


def _positive_int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"Dense {what} must be a positive int, got {value!r}")
    return int(value)


def _check_dense_shape(shape: tuple, in_channels: int) -> None:
    """ValueError (MindSpore's MatMul shape check) unless the last axis is ``in_channels``.

    A 1-D input is accepted (MindSpore's Dense wants rank >= 2): one example, as
    ``ms.vmap`` over per-example gradients passes it."""
    if not shape or shape[-1] != in_channels:
        raise ValueError(f"For 'Dense', the last axis of the input must be in_channels = "
                         f"{in_channels}, got an input of shape {tuple(shape)}")


def check_dense_input(x, in_channels: int):
    """``x`` itself, after checking its shape as :class:`Dense` needs it (see above); in
    compiled code the check runs at compile time, on the inferred shape."""
    _check_dense_shape(np.shape(getattr(x, "_data", x)), in_channels)
    return x


def _lower_check_dense_input(b, x, in_channels):
    v = b.const(x)
    _check_dense_shape(tuple(b.type_of(v).shape), in_channels)
    return v


register_lowering(check_dense_input, _lower_check_dense_input)


# ------------------------------------------------------------------ containers
class SequentialCell(Cell):
    """Cells applied one after another; children are named ``'0'``, ``'1'`` ...

    Accepts cells as arguments, one list of cells, or one OrderedDict of named cells.
    """

    def __init__(self, *args):
        super().__init__()
        for name, cell in _named_children(args):
            self._add_child(name, cell)
        self.cell_list = list(self._cells.values())

    def _add_child(self, name: str, cell: Cell) -> None:
        _check_cell(cell, type(self).__name__)
        self.insert_child_to_cell(name, cell)
        cell.update_parameters_name(name + ".")

    def construct(self, input_data):
        for cell in self.cell_list:
            input_data = cell(input_data)
        return input_data

    def append(self, cell: Cell) -> "SequentialCell":
        self._add_child(str(len(self)), cell)
        self.cell_list = list(self._cells.values())
        return self

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._cells.values())[index])
        return list(self._cells.values())[index]

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())


class CellList(Cell):
    """A list of Cells registered as children ``'0'``, ``'1'`` ...; it has no construct.

    >>> cl = CellList([ReLU(), Tanh()])
    >>> len(cl), [name for name, _ in cl.cells_and_names()]
    (2, ['', '0', '1'])
    """

    def __init__(self, args=None):
        super().__init__()
        if args is not None:
            self.extend(args)

    def append(self, cell: Cell) -> "CellList":
        _check_cell(cell, type(self).__name__)
        index = str(len(self))
        if self._auto_prefix:
            cell.update_parameters_name(index + ".")
        self.insert_child_to_cell(index, cell)
        return self

    def extend(self, cells) -> "CellList":
        for cell in cells:
            self.append(cell)
        return self

    def insert(self, index: int, cell: Cell) -> None:
        _check_cell(cell, type(self).__name__)
        cells = list(self._cells.values())
        index = _clamp(index, len(cells))
        cells.insert(index, cell)
        if self._auto_prefix:
            cell.update_parameters_name(f"{index}.")
        self._renumber(cells)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._cells.values())[index])
        return list(self._cells.values())[index]

    def __setitem__(self, index: int, cell: Cell) -> None:
        _check_cell(cell, type(self).__name__)
        cells = list(self._cells.values())
        cells[index] = cell
        self._renumber(cells)

    def __delitem__(self, index) -> None:
        cells = list(self._cells.values())
        del cells[index]
        self._renumber(cells)

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def _renumber(self, cells: list) -> None:
        bump_epoch()  # compiled code may have iterated the old cells
        self._cells.clear()
        for i, cell in enumerate(cells):
            self._cells[str(i)] = cell

    def construct(self, *inputs):
        raise NotImplementedError("CellList is a container; call its cells from a construct")


class CellDict(Cell):
    """Cells by name, registered as children under their keys; it has no construct.

    >>> cd = CellDict({"act": ReLU()})
    >>> cd["out"] = Tanh()
    >>> list(cd.keys()), "act" in cd
    (['act', 'out'], True)
    """

    def __init__(self, *args, **kwargs):
        super().__init__()
        if len(args) > 1:
            raise TypeError(f"CellDict takes at most one positional argument, got {len(args)}")
        if args:
            self.update(args[0])

    def __getitem__(self, key: str) -> Cell:
        return self._cells[key]

    def __setitem__(self, key: str, cell: Cell) -> None:
        _check_cell(cell, type(self).__name__)
        if not isinstance(key, str):
            raise TypeError(f"CellDict keys are str, got {type(key).__name__}")
        if self._auto_prefix:
            cell.update_parameters_name(key + ".")
        self.insert_child_to_cell(key, cell)

    def __delitem__(self, key: str) -> None:
        bump_epoch()
        del self._cells[key]

    def __contains__(self, key) -> bool:
        return key in self._cells

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells)

    def keys(self):
        return self._cells.keys()

    def values(self):
        return self._cells.values()

    def items(self):
        return self._cells.items()

    def clear(self) -> None:
        bump_epoch()
        self._cells.clear()

    def pop(self, key: str) -> Cell:
        cell = self[key]
        del self[key]
        return cell

    def update(self, cells) -> None:
        """Add ``(key, cell)`` pairs from a mapping or an iterable of pairs."""
        pairs = cells.items() if hasattr(cells, "items") else cells
        for pair in pairs:
            if len(pair) != 2:
                raise ValueError(f"CellDict.update expects (key, cell) pairs, got {pair!r}")
            self[pair[0]] = pair[1]

    def construct(self, *inputs):
        raise NotImplementedError("CellDict is a container; call its cells from a construct")


def _named_children(args: tuple):
    """``(name, cell)`` pairs from SequentialCell's arguments."""
    if len(args) == 1 and isinstance(args[0], OrderedDict):
        return list(args[0].items())
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return [(str(i), cell) for i, cell in enumerate(args)]


def _check_cell(cell, owner: str) -> None:
    if not isinstance(cell, Cell):
        raise TypeError(f"{owner} holds Cells, got {type(cell).__name__}")


def _clamp(index: int, n: int) -> int:
    if index < 0:
        index += n
    return min(max(index, 0), n)
