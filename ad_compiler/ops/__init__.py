"""``ad_compiler.ops``: MindSpore's ``ops`` namespace, and the primitive declarations.

Importing this package registers every primitive family (elementwise,
reduction, shape, linalg, nn_ops) with its lowerings and methods, and exposes
the public functional and class forms (``ops.exp``, ``ops.MatMul`` ...) and the
gradient operators (``ops.GradOperation``, ``ops.grad`` ...).
"""
from . import elementwise, indexing, linalg, lists, nn_ops, reduction, shape  # noqa: F401  (registration)
from . import scans, quantiles  # noqa: F401  (registration)
from . import dynamic  # noqa: F401  (run-time lengths: sum_to, broadcast_like ...)
from . import decompositions, norms  # noqa: F401  (registration: np.linalg)
from . import einsum  # noqa: F401  (registration)
from . import conv  # noqa: F401  (registration)
from . import movement  # noqa: F401  (registration)
from . import elementwise_math  # noqa: F401  (registration)
from . import building, predicates, randomness  # noqa: F401  (registration)
from . import complex_numbers  # noqa: F401  (registration: np.real, np.imag, np.conj ...)
from . import fft  # noqa: F401  (registration: np.fft)
from . import pymath  # noqa: F401  (registration: the math module)
from ..ir import control  # noqa: F401  (the structured ops: if, for, while)
from ..ad import control as _control_vjps  # noqa: F401  (their adjoints)
from ..ad import custom as _custom_vjps  # noqa: F401  (Cells with their own bprop)
from .operations import *  # noqa: F401,F403
from .operations import __all__ as _operations_all
from ..api.grad import GradOperation, grad, value_and_grad
from ..api.transforms import jacfwd, jacrev, jvp, vjp
from ..api.vmap import vmap
from . import creation as _creation
from .creation import *  # noqa: F401,F403

__all__ = list(_operations_all) + ["GradOperation", "grad", "value_and_grad",
                                   "vjp", "jvp", "jacfwd", "jacrev", "vmap"]
__all__ += list(_creation.__all__)

# ``ms.ops`` exposes only public operation names: the modules of this package
# (``shape``, ``reduction`` ...) are reached as ``ad_compiler.ops.<module>`` imports.
for _name, _value in list(globals().items()):
    if type(_value).__name__ == "module" and _name not in __all__:
        del globals()[_name]
del _name, _value
