"""Where compilation spends its time: optional per-stage timing.

Off by default. Inside ``with stage_times() as times:`` every compilation stage run
(parse, lift, reverse, each pass, codegen, Python's compile()) is timed in wall
and CPU time, and ``times.report()`` prints the table::

    with stage_times() as times:
        ms.grad(f)(x)
    print(times.report())

Stages nest (``parse`` runs inside ``lift``): a row's time includes its nested rows,
which the report indents under it. When no ``stage_times`` block is open, a timed stage
costs one global read.
"""
from __future__ import annotations

import contextlib
import functools
import time

from .records import Equal

_ACTIVE: list = []          # the open StageTimes, innermost last
_DEPTH = [0]                # nesting of the stage running now


class StageTimes(Equal):
    """The stages timed inside one ``stage_times()`` block, in the order they ended."""

    rows: list   # (name, depth, wall seconds, cpu seconds)

    _fields = ("rows",)

    def __init__(self, rows=None):
        self.rows = [] if rows is None else rows

    __hash__ = None

    def totals(self) -> dict:
        """Stage name -> (wall, cpu) seconds summed over its runs (nested runs included
        in their parents' times too)."""
        out: dict = {}
        for name, _, wall, cpu in self.rows:
            w, c = out.get(name, (0.0, 0.0))
            out[name] = (w + wall, c + cpu)
        return out

    def total(self) -> tuple:
        """(wall, cpu) seconds of the outermost stages."""
        top = [(w, c) for _, depth, w, c in self.rows if depth == 0]
        return sum(w for w, _ in top), sum(c for _, c in top)

    def report(self) -> str:
        """One line per stage name (nested ones indented), in first-run order."""
        order: dict = {}
        for name, depth, _, _ in self.rows:
            order.setdefault(name, depth)
        totals = self.totals()
        lines = [f"{'stage':<24}{'wall ms':>10}{'cpu ms':>10}"]
        for name, depth in order.items():
            wall, cpu = totals[name]
            lines.append(f"{'  ' * depth + name:<24}{wall * 1e3:>10.2f}{cpu * 1e3:>10.2f}")
        wall, cpu = self.total()
        lines.append(f"{'total':<24}{wall * 1e3:>10.2f}{cpu * 1e3:>10.2f}")
        return "\n".join(lines)


@contextlib.contextmanager
def stage_times():
    """Time every compilation stage run inside the block (see the module docstring)."""
    times = StageTimes()
    _ACTIVE.append(times)
    try:
        yield times
    finally:
        _ACTIVE.remove(times)


def run_stage(name: str, fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)``, timed as stage ``name`` when a ``stage_times`` block is open."""
    if not _ACTIVE:
        return fn(*args, **kwargs)
    depth = _DEPTH[0]
    _DEPTH[0] = depth + 1
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        return fn(*args, **kwargs)
    finally:
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        _DEPTH[0] = depth
        for times in _ACTIVE:
            times.rows.append((name, depth, wall, cpu))


def stage(name: str):
    """Decorator: every call of the function is the stage ``name`` (see :func:`run_stage`)."""
    def wrap(fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            if not _ACTIVE:
                return fn(*args, **kwargs)
            return run_stage(name, fn, *args, **kwargs)
        return timed
    return wrap
