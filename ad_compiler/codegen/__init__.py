"""Code generation: IR -> readable Python source -> a compiled function.

``to_source(fn)`` gives the source and the namespace dict it runs in;
``compile_function(fn)`` compiles it, registers it with ``linecache`` and
returns a :class:`Compiled`. Ops with regions plug in through
:data:`STRUCTURAL_EMIT`.
"""
from . import control  # noqa: F401  (registers the emitters of if/for/while)
from .compile import Compiled, compile_function
from .emit import STRUCTURAL_EMIT, EmitContext, to_source

__all__ = ["Compiled", "compile_function", "to_source", "STRUCTURAL_EMIT", "EmitContext"]
