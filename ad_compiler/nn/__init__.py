"""ad_compiler.nn: Cells, Parameters, layers and losses, mirroring ``mindspore.nn``.

``Parameter`` and ``ParameterTuple`` are defined here; the top-level package
re-exports them as ``ad_compiler.Parameter`` / ``ad_compiler.ParameterTuple``.
"""
from .cell import Cell
from .layers import CellList, Dense, ReLU, SequentialCell, Sigmoid, Softmax, Tanh, get_activation
from .loss import MSELoss, SoftmaxCrossEntropyWithLogits
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss,
                   KLDivLoss, L1Loss, LossBase, NLLLoss, SmoothL1Loss)
from .parameter import Parameter, ParameterTuple
from .conv import Conv1d, Conv2d, Conv2dTranspose
from .pooling import AdaptiveAvgPool2d, AvgPool2d, Flatten, MaxPool2d
from .lr_schedule import (CosineDecayLR, ExponentialDecayLR, LearningRateSchedule,
                          PolynomialDecayLR, WarmUpLR)
from .optim import SGD, Adagrad, Adam, AdamWeightDecay, Momentum, Optimizer, RMSProp
from .wrap import TrainOneStepCell, WithEvalCell, WithLossCell

__all__ = [
    "Cell", "Parameter", "ParameterTuple",
    "Dense", "ReLU", "Sigmoid", "Tanh", "Softmax", "get_activation",
    "SequentialCell", "CellList",
    "MSELoss", "SoftmaxCrossEntropyWithLogits",
    "Conv1d", "Conv2d", "Conv2dTranspose", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "Flatten",
    "LossBase", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
    "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss",
    "Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "Adagrad", "RMSProp",
    "LearningRateSchedule", "ExponentialDecayLR", "PolynomialDecayLR", "CosineDecayLR", "WarmUpLR",
    "WithLossCell", "WithEvalCell", "TrainOneStepCell",
]

from .layers import CellDict  # noqa: E402
from .activation import ELU, GELU, Identity, LeakyReLU, LogSoftmax, ReLU6, SiLU  # noqa: E402
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm  # noqa: E402
from .basic import Dropout, Embedding  # noqa: E402

__all__ += ["CellDict", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "LogSoftmax", "Identity",
            "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "Dropout"]

from . import dynamic_lr  # noqa: E402
from .dynamic_lr import (cosine_decay_lr, exponential_decay_lr, inverse_decay_lr,  # noqa: E402
                         natural_exp_decay_lr, piecewise_constant_lr, polynomial_decay_lr,
                         warmup_lr)

__all__ += ["dynamic_lr", "piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr",
            "inverse_decay_lr", "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr"]
