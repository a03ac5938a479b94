"""A progress bar showing the loss: tqdm when it is installed, else a plain text bar.

tqdm is optional (``pip install tqdm``); the examples never require it.
"""
from __future__ import annotations

import sys
import time

try:
    from tqdm import tqdm
except ImportError:  # the plain bar below
    tqdm = None


class TextBar:
    """``desc [#######.......]  70/100  loss 0.1234`` on one line of stderr."""

    width = 30

    def __init__(self, total: int, desc: str, stream=None, interval: float = 0.1):
        self.total, self.desc, self.count = total, desc, 0
        self.stream = sys.stderr if stream is None else stream
        self.interval, self.shown, self.loss = interval, 0.0, float("nan")
        self.start = time.perf_counter()

    def update(self, loss: float) -> None:
        self.count += 1
        self.loss = loss
        now = time.perf_counter()
        if now - self.shown >= self.interval or self.count == self.total:
            self.shown = now
            self._draw(now, end="\n" if self.count == self.total else "")

    def _draw(self, now: float, end: str) -> None:
        done = self.width * self.count // max(self.total, 1)
        bar = "#" * done + "." * (self.width - done)
        self.stream.write(f"\r{self.desc} [{bar}] {self.count:>{len(str(self.total))}}/"
                          f"{self.total}  loss {self.loss:.4f}  {now - self.start:5.1f}s{end}")
        self.stream.flush()

    def close(self) -> None:
        if self.count != self.total:
            self._draw(time.perf_counter(), end="\n")


class TqdmBar:
    """The same interface over tqdm."""

    def __init__(self, total: int, desc: str):
        self.bar = tqdm(total=total, desc=desc, leave=True)

    def update(self, loss: float) -> None:
        self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def progress(total: int, desc: str, plain: bool = False):
    """A bar for ``total`` steps: tqdm if installed (and ``plain`` is False), else text."""
    if tqdm is not None and not plain:
        return TqdmBar(total, desc)
    return TextBar(total, desc)
