"""Recipes of NumPy's orderings, rounding, casts and writes of complex values
(docs/complex.md): ``np.maximum``/``np.minimum``/``np.clip`` and comparisons
(lexicographic), ``np.median``, ``np.round``/``np.rint`` (no derivative), a cast to a
real dtype (its real part); feature ``complex``. Every recipe ends in real values.
"""
from __future__ import annotations

from .recipes_complex import _complex


def _extremum(g):
    z, w = _complex(g), _complex(g)
    return g.choice([f"np.abs(np.maximum({z}, {w}))", f"np.real(np.minimum({z}, {w}) * (1 - 2j))",
                     f"np.imag(np.maximum({z}, 0.1 + 0.2j))",
                     f"np.abs(np.clip({z}, -0.5 + 0.1j, 0.8 - 0.3j)) ** 2"])


def _compare(g):
    z, w = _complex(g), _complex(g)
    return g.choice([f"np.real(np.where({z} < {w}, {z}, {w}))",
                     f"np.abs(np.where({z} >= 0.2, {z} * {z}, 1.0))"])


def _rounded(g):
    z = _complex(g)
    return g.choice([f"np.real(np.round({z}, 1) * {z})", f"np.imag(np.rint({z} * 3.0) * {z})"])


def _median(g):
    z = _complex(g)
    return g.choice([f"np.abs(np.median({z})) ** 2", f"np.real(np.median({z}, axis=0) * 1j)"])


def _real_cast(g):
    z = _complex(g)
    return g.choice([f"np.asarray({z}, dtype=float) * 2.0",
                     f"{z}.astype(np.real({z}).dtype) ** 2"])


RECIPES = {
    "pattern.complex_extremum": _extremum,
    "pattern.complex_compare": _compare,
    "pattern.complex_round": _rounded,
    "pattern.complex_median": _median,
    "pattern.complex_real_cast": _real_cast,
}
FEATURES = dict.fromkeys(RECIPES, "complex")
