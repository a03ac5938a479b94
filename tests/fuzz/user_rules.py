"""A function with rules registered through the public ``ad_compiler.primitive``.

Also a function with ``ms.custom_vjp``. Generated programs import them (``program.HEADER``), so the fuzzer checks a user's
registered primitive in combination with everything else. Registered once per
process, even when pytest imports this file under a second module name.
"""
from __future__ import annotations

import numpy as np

import ad_compiler as ms
from ad_compiler.api.extension import USER_FUNCTIONS


def _smooth_relu(x):
    return np.logaddexp(0.0, x)


def _register():
    _smooth_relu.__name__ = _smooth_relu.__qualname__ = "smooth_relu"
    _smooth_relu.__module__ = "tests.fuzz.user_rules"   # the recipe's key, whoever imports it
    return ms.primitive(_smooth_relu, vjp=lambda b, ct, out, x: (b.mul(ct, b.sigmoid(x)),),
                        jvp=lambda b, t, out, x: b.mul(t[0], b.sigmoid(x)))


smooth_relu = USER_FUNCTIONS.get("smooth_relu") or _register()


def _softsign(x):
    return x / (1.0 + np.abs(x))


def _softsign_fwd(x):
    d = 1.0 + np.abs(x)
    return x / d, d


def _softsign_bwd(d, g):
    return (g / (d * d),)


def _register_softsign():
    _softsign.__name__ = _softsign.__qualname__ = "softsign"
    _softsign.__module__ = "tests.fuzz.user_rules"
    f = ms.custom_vjp(_softsign)
    f.defvjp(_softsign_fwd, _softsign_bwd)
    return f


#: a function with a custom VJP (ms.custom_vjp; nothing global is registered, so a second
#: import of this file under another name is harmless)
softsign = _register_softsign()


def _logcosh(x):
    return np.log(np.cosh(x))


def _logcosh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return np.log(np.cosh(x)), t * np.tanh(x)


def _register_logcosh():
    _logcosh.__name__ = _logcosh.__qualname__ = "logcosh"
    _logcosh.__module__ = "tests.fuzz.user_rules"
    f = ms.custom_jvp(_logcosh)
    f.defjvp(_logcosh_jvp)
    return f


#: a function with a custom JVP (ms.custom_jvp), transposed for reverse mode
logcosh = _register_logcosh()
