"""The optimisation pipeline: a flat list of passes run in order.

Set ``AD_COMPILER_PRINT_IR=1`` to print the IR after every pass, and
``AD_COMPILER_VERIFY=1`` (the tests do) to run the verifier after each.
"""
from __future__ import annotations

import os

from ..ir.core import Function
from ..ir.verifier import verify
from ..stages import run_stage
from .algebra import algebra
from .cse import cse
from .dce import dce
from .fold import fold
from .fresh import fresh_outputs
from .licm import licm
from .loops import simplify_loops
from .negate import negate
from .operands import scalar_operands
from .pyfloats import python_floats
from .reuse import reuse_buffers
from .simplify import simplify

PIPELINE = [fold, simplify, negate, dce, algebra, simplify_loops, fold, simplify, python_floats,
            scalar_operands, licm, cse, dce, fresh_outputs, reuse_buffers]


def optimize(fn: Function, passes=PIPELINE) -> Function:
    show = os.environ.get("AD_COMPILER_PRINT_IR") == "1"
    check = os.environ.get("AD_COMPILER_VERIFY") == "1"
    for p in passes:
        fn = run_stage(p.__name__, p, fn)
        if show:
            print(f"--- after {p.__name__} ---\n{fn}")
        if check:
            run_stage("verify", verify, fn)
    return fn
