"""Deeply nested user code: compile it on a large stack, or say where it is too deep.

Compiling follows the nesting of the user's program with nested calls: the lifter
is a symbolic interpreter, so a chain of 1,000 helper calls, each inlined where it
is called, is 1,000 nested lifts; and a written-out expression of 5,000 terms is a
5,000-deep tree for Python's own parser (whose limit is tied to the recursion
limit) and for gast's conversion of it; code generation and ``compile()`` recurse once per
nested block of the generated code. Those stages are recursive by nature. The
one mechanism for them is :func:`on_deep_stack`: a build (``codegen/cache.py``),
code generation (``codegen/compile.py``) and the CLI's import of the user's file
run on a worker thread with a :data:`STACK_BYTES` stack, under a recursion limit
of at least :data:`RECURSION_LIMIT` while any such worker runs (the limit is
global to the interpreter, so it is raised once and restored when the last
worker ends). The stages that walk data (fence, comprehension rewriting, the
local-name scan, the lifter's operator chains) are loops, and the IR is flat (one
op per statement), so reverse mode and the passes need none of it.

Nesting beyond that is a :class:`~ad_compiler.errors.NestingTooDeepError` at the
user's line (:func:`too_deep`), never a bare ``RecursionError``.
"""
from __future__ import annotations

import contextvars
import sys
import threading

from .errors import NestingTooDeepError, SourceLoc

#: the worker thread's stack: far more than the recursion limit can use (a Python
#: frame called through C takes well under 1 KB of it), so the limit is reached first
STACK_BYTES = 256 << 20
#: the recursion limit while a compilation runs on the deep stack
RECURSION_LIMIT = 100_000

#: how many calls of one function a recursion unrolled while compiling may nest
#: (Python's default recursion limit: deeper, plain Python stops too)
MAX_RECURSION = 1_000

_LOCK = threading.Lock()
_ON_DEEP_STACK = threading.local()
_active = 0
_saved_limit = 0

HINT = ("split long expressions into several statements (s = a + b, then s = s + c ...) "
        "and shorten chains of helper calls; the compiler follows helper chains and "
        "expressions some thousands deep")


def on_deep_stack(fn, *args):
    """``fn(*args)`` run on a worker thread with a large stack and a raised recursion
    limit (inline when already on one, or if no thread can be started); its result
    or exception is the caller's."""
    if getattr(_ON_DEEP_STACK, "active", False):
        return fn(*args)
    outcome: list = []
    context = contextvars.copy_context()  # np.errstate and other context settings
    worker = threading.Thread(target=_run, args=(context, fn, args, outcome),
                              name="ad_compiler-deep", daemon=True)
    if not _start(worker):
        return fn(*args)
    worker.join()
    ok, value = outcome[0]
    if ok:
        return value
    try:
        raise value
    finally:
        del value, outcome


def _start(worker: threading.Thread) -> bool:
    with _LOCK:  # stack_size() is global: set it only for this thread's creation
        try:
            previous = threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):
            return False
        try:
            worker.start()
        except RuntimeError:  # no thread can be started (resources, shutdown)
            return False
        finally:
            threading.stack_size(previous)
    return True


def _run(context, fn, args, outcome: list) -> None:
    _ON_DEEP_STACK.active = True
    _raise_limit()
    try:
        outcome.append((True, context.run(fn, *args)))
    except BaseException as exc:  # handed to the caller, which re-raises it
        outcome.append((False, exc))
    finally:
        _restore_limit()


def _raise_limit() -> None:
    global _active, _saved_limit
    with _LOCK:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _active += 1


def _restore_limit() -> None:
    global _active
    with _LOCK:
        _active -= 1
        if _active == 0 and sys.getrecursionlimit() == max(_saved_limit, RECURSION_LIMIT):
            sys.setrecursionlimit(_saved_limit)


def exhausted(exc: BaseException) -> bool:
    """Whether ``exc`` is a RecursionError caused by the compiler's own nesting:
    caught where more than half the recursion limit is in use (a user's runaway
    recursion, run at compile time, unwinds to a shallow frame first)."""
    if not isinstance(exc, RecursionError) or isinstance(exc, NestingTooDeepError):
        return False
    depth, frame = 0, sys._getframe(1)
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth > sys.getrecursionlimit() // 2


def too_deep(what: str, loc: SourceLoc | None, hint: str = HINT) -> NestingTooDeepError:
    """The error for user code nested deeper than the compiler can follow."""
    return NestingTooDeepError(f"{what} is nested too deeply to compile", loc, hint=hint)
