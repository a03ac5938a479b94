"""Recipes of the complex-number functions (ad_compiler/ops/complex_numbers.py).

Each recipe builds a complex value from the real variables at hand (``x + 1j * y``,
``np.exp(1j * x)``, ``x * (0.5 - 1.5j)`` ...), passes it through the function and
comes back to real numbers (``np.real``, ``np.imag``, ``np.abs``, ``np.angle``) in the
same expression: programs keep real variables, so every check of the oracle applies
(the gradient of a real input that met complex values is real; docs/complex.md), and
float32 inputs must give complex64 intermediates and float32 results.
"""
from __future__ import annotations


def _complex(g) -> str:
    """A complex expression of the real variables."""
    x = g.num()
    y = g.partner(x)
    return g.choice([f"({x} + 1j * {y})", f"np.exp(1j * {x})", f"({x} * (0.5 - 1.5j))",
                     f"(({x} + 1j) ** 2)", f"np.sqrt({x} + 2j)", f"(np.sin({x} - 0.5j) * {y})",
                     f"np.conj({x} - 1j * {y})"])


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
    return f"np.angle({x} + 1j * (np.abs({g.partner(x)}) + 0.5){deg})"


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
