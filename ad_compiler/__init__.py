"""ad_compiler: source-to-source automatic differentiation of NumPy code.

It reads a Python/NumPy function (or an ``nn.Cell``'s ``construct``), lifts it to
an SSA IR, derives the adjoint as IR, and emits plain Python source calling
NumPy, compiled and cached per input signature. The public API mirrors
MindSpore's: ``import ad_compiler as ms`` offers ``ms.grad``, ``ms.ops.GradOperation``,
``ms.Tensor``, ``ms.nn.Cell`` ... at the same places.
"""
import importlib

from . import dtype, ops
from .api.grad import GradOperation, grad, value_and_grad
from .api.transforms import adjoint_ir, adjoint_source, jacfwd, jacrev, jvp, vjp
from .api.vmap import vmap
from .api import inside as _inside  # noqa: F401  (transforms inside compiled code)
from .dtype import (bool_, float16, float32, float64, int8, int16, int32, int64,
                    uint8)
from .nn.parameter import Parameter, ParameterTuple
from .tensor import Tensor
from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context, set_seed

#: names loaded on first use (PEP 562): what compiling a gradient does not need
_LAZY = {
    "nn": (".nn", None),
    "common": (".common", None),          # ms.common.initializer
    "check_grad": (".api.checking", "check_grad"),
    "checkpoint": (".api.checkpoint", "checkpoint"),
    "custom_jvp": (".api.custom_rules", "custom_jvp"),
    "custom_vjp": (".api.custom_rules", "custom_vjp"),
    "primitive": (".api.extension", "primitive"),
    "hessian": (".api.hessian", "hessian"),
    "hvp": (".api.hessian", "hvp"),
    "save_checkpoint": (".serialization", "save_checkpoint"),
    "load_checkpoint": (".serialization", "load_checkpoint"),
    "load_param_into_net": (".serialization", "load_param_into_net"),
}


def __getattr__(name: str):
    """``ms.nn``, ``ms.hessian`` ...: loaded on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = importlib.import_module(module, __name__)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def _load_all() -> None:
    """Load everything loaded on first use (see ``ad_compiler.ad.rules.all_lowerings``)."""
    for name in _LAZY:
        __getattr__(name)
    nn._load_all()


__version__ = "0.1.0"

__all__ = [
    "Tensor", "Parameter", "ParameterTuple", "dtype", "nn", "ops",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool_",
    "grad", "value_and_grad", "GradOperation", "adjoint_source", "adjoint_ir",
    "vjp", "jvp", "jacfwd", "jacrev", "primitive", "check_grad", "hessian", "hvp", "custom_vjp", "custom_jvp",
    "GRAPH_MODE", "PYNATIVE_MODE", "set_context", "get_context", "set_seed",
    "vmap", "checkpoint",
    "save_checkpoint", "load_checkpoint", "load_param_into_net",
]
