"""Recipes of the complex-number functions (ad_compiler/ops/complex_numbers.py).

Each recipe builds a complex value from the real variables at hand (``x + 1j * y``,
``np.exp(1j * x)``, ``x * (0.5 - 1.5j)`` ...), passes it through the function and
comes back to real numbers (``np.real``, ``np.imag``, ``np.abs``, ``np.angle``) in the
same expression: variables stay real (the gradient of a real input that met complex
values is real; docs/complex.md), and float32 inputs must give complex64
intermediates and float32 results. With the feature on, an input array may itself
be complex (generator.py); only these recipes read it, and the oracle checks its
gradient in JAX's convention.
"""
from __future__ import annotations

import numpy as np


def _complex(g) -> str:
    """A complex input, or a complex expression of the real variables."""
    inputs = g.visible(lambda v: isinstance(v, np.ndarray) and v.dtype.kind == "c")
    if inputs and g.coin(0.6):
        z = g.choice(inputs)
        return g.choice([z, f"({z} * {z})", f"np.exp({z} * 0.5)", f"np.conj({z})", f"{z}.T",
                         f"np.sum({z}, axis=0)", f"({z} @ {z}.T)" if g.val(z).ndim == 2 else
                         f"np.sin({z})"])
    x = g.num()
    y = g.partner(x)
    return g.choice([f"({x} + {y} * 1j)", f"np.exp(1j * {x})", f"({x} * (0.5 - 1.5j))",
                     f"(({x} + 1j) ** 2)", f"np.sqrt({x} + 2j)", f"(np.sin({x} - 0.5j) * {y})",
                     f"np.conj({x} - {y} * 1j)"])


def _back_to_real(g, z: str) -> str:
    return g.choice([f"np.real({z})", f"np.imag({z})", f"np.abs({z} + 3.0)",
                     f"np.abs({z}) ** 2", f"({z}).real"])


def _real(g):
    return f"np.real({_complex(g)} * {_complex(g)})"


def _imag(g):
    return f"np.imag({_complex(g)} + {g.num()})"


def _attr_real(g):
    return f"({_complex(g)} / (2.0 + 1j)).real"


def _attr_imag(g):
    return f"({_complex(g)} * {_complex(g)}).imag"


def _conj(method):
    def recipe(g):
        z = _complex(g)
        return _back_to_real(g, f"{z}.{method}() * {_complex(g)}")
    return recipe


def _np_conj(g):
    return _back_to_real(g, f"{g.choice(['np.conj', 'np.conjugate'])}({_complex(g)}) * 1.5j")


def _angle(g):
    x = g.num()
    # an imaginary part of 0.5 or more keeps the angle away from its jump (the negative reals)
    deg = g.choice(["", ", deg=True"])
    return f"np.angle({x} + (np.abs({g.partner(x)}) + 0.5) * 1j{deg})"


RECIPES = {
    "numpy.real": _real,
    "numpy.imag": _imag,
    "attr.real": _attr_real,
    "attr.imag": _attr_imag,
    "method.conj": _conj("conj"),
    "method.conjugate": _conj("conjugate"),
    "numpy.conjugate": _np_conj,
    "numpy.angle": _angle,
}
FEATURES = dict.fromkeys(RECIPES, "complex")
