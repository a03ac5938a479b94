"""ad_compiler: source-to-source automatic differentiation of NumPy code.

It reads a Python/NumPy function (or an ``nn.Cell``'s ``construct``), lifts it to
an SSA IR, derives the adjoint as IR, and emits plain Python source calling
NumPy, compiled and cached per input signature. The public API mirrors
MindSpore's: ``import ad_compiler as ms`` offers ``ms.grad``, ``ms.ops.GradOperation``,
``ms.Tensor``, ``ms.nn.Cell`` ... at the same places.
"""
from . import dtype, nn, ops
from . import common  # noqa: F401  (ms.common.initializer)
from .api.checking import check_grad
from .api.checkpoint import checkpoint
from .api.custom_rules import custom_jvp, custom_vjp
from .api.extension import primitive
from .api.grad import GradOperation, grad, value_and_grad
from .api.hessian import hessian, hvp
from .api.transforms import adjoint_ir, adjoint_source, jacfwd, jacrev, jvp, vjp
from .api.vmap import vmap
from .api import inside as _inside  # noqa: F401  (transforms inside compiled code)
from .dtype import (bool_, float16, float32, float64, int8, int16, int32, int64,
                    uint8)
from .nn import Parameter, ParameterTuple
from .tensor import Tensor
from .context import GRAPH_MODE, PYNATIVE_MODE, get_context, set_context, set_seed
from .serialization import load_checkpoint, load_param_into_net, save_checkpoint

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
