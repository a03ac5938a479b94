"""The generated function as a module that runs as printed.

:func:`~ad_compiler.codegen.emit.to_source` writes a ``def`` and the namespace dict it
runs in. :func:`module_source` writes that namespace as Python in front of the
``def``: the imports it uses, then one line per constant. The text, exec'd alone in a
fresh namespace, defines a function that computes what the compiled one computes::

    import numpy as np

    f64_1 = np.array(1.0)
    reshape_value = np.array([[1.0, 1.0, 1.0]], dtype=np.float32)


    def f_grad(x, y):
        ...

Invariants:

* Every name the ``def`` reads from its namespace is defined by the header: a
  module by an ``import`` (``import numpy as np``, ``import math``, ``from
  ad_compiler import runtime as rt``, each only when read), a function by ``from
  MODULE import NAME`` (a function registered with ``ad_compiler.primitive`` that
  cannot be imported by its ``__module__`` and ``__qualname__`` is looked up in the
  registry: ``rt.registered_function('NAME')``), a constant by its value.
* A constant's text rebuilds it exactly: same type, dtype, shape and bits. A NumPy
  scalar is ``np.float32(0.25)``; an array of up to :data:`LITERAL_LIMIT` elements
  is an ``np.array([...], dtype=...)`` literal; a larger one is its bytes in base64,
  read back by ``rt.array_from_base64(dtype, shape, data)`` (one long line: the
  printed module stays self-contained). A float is written with the fewest digits
  that give back the same value in its dtype.
* The header has one line per import and per constant and a fixed number of
  blank lines, so its length is known before the constants are written
  (:func:`header_length`): the compiled function's line numbers are the module's.
"""
from __future__ import annotations

import base64
import importlib
import math
import types

import numpy as np

#: the largest array written as an ``np.array([...])`` literal
LITERAL_LIMIT = 100

_MODULES = {"math": "import math", "np": "import numpy as np",
            "rt": "from ad_compiler import runtime as rt"}


def used_namespace(source: str, namespace: dict) -> dict:
    """The entries of ``namespace`` that the generated ``source`` reads: its name tokens
    (templates reach the source as text, not as name nodes; comments and strings are
    not names)."""
    import io
    import tokenize
    read = {tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.NAME}
    return {k: v for k, v in namespace.items() if k in read}


def header_length(namespace: dict) -> int:
    """The number of lines :func:`module_source` puts before the ``def``."""
    imports, constants = _split(namespace)
    n = len(imports) + len(constants)
    # a blank line between imports and constants, two before the def
    return n + (1 if imports and constants else 0) + (2 if n else 0)


def module_source(function_source: str, namespace: dict) -> str:
    """``function_source`` with the imports and constants of ``namespace`` before it."""
    imports, constants = _split(namespace)
    lines = [_import_line(name, obj) for name, obj in imports]
    if imports and constants:
        lines.append("")
    lines += [f"{name} = {constant_source(obj)}" for name, obj in constants]
    if lines:
        lines += ["", ""]
    text = "".join(line + "\n" for line in lines) + function_source
    assert len(lines) == header_length(namespace)
    return text


def _split(namespace: dict) -> tuple[list, list]:
    imports, constants = [], []
    for name, obj in namespace.items():
        if name.startswith("__"):
            continue
        if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                            np.ufunc)):
            imports.append((name, obj))
        else:
            constants.append((name, obj))
    # the standard library, numpy, ad_compiler (PEP 8's order), then functions by name
    modules = [(n, o) for n, o in imports if n in _MODULES]
    if constants and "np" not in namespace:
        modules.append(("np", np))
    if "rt" not in namespace and (any(not _printable(o) for _, o in constants) or any(
            _import_line(n, o).startswith(n + " =") for n, o in imports if n not in _MODULES)):
        modules.append(("rt", None))
    modules.sort(key=lambda item: list(_MODULES).index(item[0]))
    others = sorted((item for item in imports if item[0] not in _MODULES), key=lambda i: i[0])
    return modules + others, constants


def _import_line(name: str, obj) -> str:
    if name in _MODULES:
        return _MODULES[name]
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
    if module and "." not in qualname and _importable(obj, module, qualname):
        return f"from {module} import {qualname}" + ("" if qualname == name else f" as {name}")
    return f"{name} = rt.registered_function({name!r})"


def _importable(obj, module: str, qualname: str) -> bool:
    try:
        return getattr(importlib.import_module(module), qualname, None) is obj
    except Exception:  # noqa: BLE001 - any failure to import means: not importable
        return False


# -- constants -----------------------------------------------------------------------

def constant_source(value) -> str:
    """Python source that rebuilds ``value`` exactly (see the module's invariants)."""
    from .emit import literal
    if isinstance(value, np.generic) and value.dtype in _LITERAL_DTYPES:
        return f"np.{value.dtype.name}({_item_texts(np.asarray(value))[0]})"
    if isinstance(value, np.ndarray) and not value.dtype.hasobject:
        return _array(value)
    if isinstance(value, np.dtype):
        return f"np.dtype({value.str!r})"
    if isinstance(value, (tuple, list)):
        items = [constant_source(v) for v in value]
        if isinstance(value, list):
            return f"[{', '.join(items)}]"
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    source = literal(value)
    if source is not None:
        return source
    return f"rt.unpickle({base64.b64encode(_pickled(value)).decode()!r})"


#: dtypes whose elements are written as Python literals
_LITERAL_DTYPES = {np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                         np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
                                         np.float32, np.float64, np.complex64, np.complex128)}


def _printable(value) -> bool:
    """Whether :func:`constant_source` writes ``value`` without a function of ``rt``."""
    if isinstance(value, np.ndarray):
        return value.dtype in _LITERAL_DTYPES and value.size <= LITERAL_LIMIT \
            and (value.size > 0 or value.ndim == 1)
    if isinstance(value, (tuple, list)):
        return all(_printable(v) for v in value)
    from .emit import literal
    return isinstance(value, np.dtype) or literal(value) is not None or (
        isinstance(value, np.generic) and value.dtype in _LITERAL_DTYPES)


def _pickled(value) -> bytes:
    import pickle
    return pickle.dumps(value)


def _array(value: np.ndarray) -> str:
    dtype = "" if value.dtype == np.float64 else f", dtype={_dtype(value.dtype)}"
    if not _printable(value):
        data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()
        return f"rt.array_from_base64({value.dtype.str!r}, {value.shape!r}, {data!r})"
    texts = _item_texts(value)
    return f"np.array({_nested(texts, value.shape)}{dtype})"


def _dtype(dtype: np.dtype) -> str:
    native = np.dtype(dtype.type) == dtype and getattr(np, dtype.type.__name__, None) is dtype.type
    return f"np.{dtype.type.__name__}" if native else f"np.dtype({dtype.str!r})"


def _item_texts(value: np.ndarray) -> list[str]:
    """The elements of ``value`` as literals, flat in C order, each giving back its bits."""
    flat = value.ravel().tolist()
    texts = [_item(x, value.dtype) for x in flat]
    if value.dtype.kind in "fc":  # shortest digits for the dtype: check they round-trip
        back = np.array([eval(t, {"np": np, "complex": complex}) for t in texts],  # noqa: S307
                        dtype=value.dtype)
        exact = back.view(np.uint8) == np.ascontiguousarray(value).ravel().view(np.uint8)
        if not exact.all():
            texts = [_item(x, np.dtype(np.float64 if value.dtype.kind == "f" else np.complex128))
                     for x in flat]
    return texts


def _item(x, dtype: np.dtype) -> str:
    if dtype.kind == "b":
        return repr(bool(x))
    if dtype.kind in "iu":
        return repr(int(x))
    if dtype.kind == "c":
        return f"complex({_float(x.real, dtype)}, {_float(x.imag, dtype)})"
    return _float(x, dtype)


def _float(x: float, dtype: np.dtype) -> str:
    if math.isnan(x):
        return "np.nan"
    if math.isinf(x):
        return "np.inf" if x > 0 else "-np.inf"
    if dtype.itemsize <= 4 or (dtype.kind == "c" and dtype.itemsize <= 8):
        text = str(np.float32(x) if dtype.itemsize in (4, 8) else np.float16(x))
        return text if any(c in text for c in ".en") else text + ".0"
    return repr(float(x))


def _nested(texts: list[str], shape: tuple) -> str:
    if not shape:
        return texts[0]
    if len(shape) == 1:
        return f"[{', '.join(texts)}]"
    step = len(texts) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(texts[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"
