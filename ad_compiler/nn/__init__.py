"""ad_compiler.nn: Cells, Parameters, layers and losses, mirroring ``mindspore.nn``.

``Parameter`` and ``ParameterTuple`` are defined here; the top-level package
re-exports them as ``ad_compiler.Parameter`` / ``ad_compiler.ParameterTuple``.
"""
from .cell import Cell
from .layers import CellList, Dense, ReLU, SequentialCell, Sigmoid, Softmax, Tanh, get_activation
from .loss import MSELoss, SoftmaxCrossEntropyWithLogits
from .parameter import Parameter, ParameterTuple

__all__ = [
    "Cell", "Parameter", "ParameterTuple",
    "Dense", "ReLU", "Sigmoid", "Tanh", "Softmax", "get_activation",
    "SequentialCell", "CellList",
    "MSELoss", "SoftmaxCrossEntropyWithLogits",
]

from .layers import CellDict  # noqa: E402
from .activation import ELU, GELU, Identity, LeakyReLU, LogSoftmax, ReLU6, SiLU  # noqa: E402
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm  # noqa: E402
from .basic import Dropout, Embedding  # noqa: E402

__all__ += ["CellDict", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "LogSoftmax", "Identity",
            "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "Dropout"]
