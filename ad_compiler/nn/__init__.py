"""ad_compiler.nn: Cells, Parameters, layers and losses, mirroring ``mindspore.nn``.

``Parameter`` and ``ParameterTuple`` are defined here; the top-level package
re-exports them as ``ad_compiler.Parameter`` / ``ad_compiler.ParameterTuple``.
``Cell`` and the Parameters are loaded with the package; each other name is loaded
from its module on first use (``nn.Dense``, ``from ad_compiler.nn import Adam``), so
compiling a gradient does not load the layers, losses and optimizers.
"""
import importlib

from .cell import Cell
from .parameter import Parameter, ParameterTuple

#: module -> the public names it defines (loaded on first access)
_MODULES = {
    "layers": ("CellList", "Dense", "ReLU", "SequentialCell", "Sigmoid", "Softmax", "Tanh",
               "get_activation", "CellDict"),
    "loss": ("MSELoss", "SoftmaxCrossEntropyWithLogits", "BCELoss", "BCEWithLogitsLoss",
             "CosineEmbeddingLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss",
             "LossBase", "NLLLoss", "SmoothL1Loss"),
    "conv": ("Conv1d", "Conv2d", "Conv2dTranspose"),
    "pooling": ("AdaptiveAvgPool2d", "AvgPool2d", "Flatten", "MaxPool2d"),
    "lr_schedule": ("CosineDecayLR", "ExponentialDecayLR", "LearningRateSchedule",
                    "PolynomialDecayLR", "WarmUpLR"),
    "optim": ("SGD", "Adagrad", "Adam", "AdamWeightDecay", "Momentum", "Optimizer", "RMSProp"),
    "wrap": ("TrainOneStepCell", "WithEvalCell", "WithLossCell"),
    "activation": ("ELU", "GELU", "Identity", "LeakyReLU", "LogSoftmax", "ReLU6", "SiLU"),
    "normalization": ("BatchNorm1d", "BatchNorm2d", "GroupNorm", "LayerNorm"),
    "basic": ("Dropout", "Embedding"),
    "dynamic_lr": ("cosine_decay_lr", "exponential_decay_lr", "inverse_decay_lr",
                   "natural_exp_decay_lr", "piecewise_constant_lr", "polynomial_decay_lr",
                   "warmup_lr"),
}
_LAZY = {name: module for module, names in _MODULES.items() for name in names}

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

__all__ += ["CellDict", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "LogSoftmax", "Identity",
            "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "Dropout"]

__all__ += ["dynamic_lr", "piecewise_constant_lr", "exponential_decay_lr", "natural_exp_decay_lr",
            "inverse_decay_lr", "cosine_decay_lr", "polynomial_decay_lr", "warmup_lr"]


def __getattr__(name: str):
    """A public name (or a module) of this package, loaded on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    elif name in _MODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_MODULES))


def _load_all() -> None:
    """Load every module of the package (what lists every lowering needs: some layers
    register the lowerings of their own functions)."""
    for module in _MODULES:
        importlib.import_module(f"{__name__}.{module}")
