"""Central finite differences in float64, the reference the tests check gradients against
(``ms.check_grad`` where it expresses the check; this where a test needs the array)."""
from __future__ import annotations

import numpy as np


def central(f, x, h=1e-6):
    """The gradient of the scalar function ``f`` at the float64 array ``x``, each element
    by ``(f(x + h e) - f(x - h e)) / 2h``."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g
