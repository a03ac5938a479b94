"""Reading captured state at call time: one generated function per compiled entry.

``make_reader(state)`` turns the reads a lifted function recorded
(:class:`~ad_compiler.frontend.captured.CapturedState`) into ``read(owner)``,
a small generated function that follows every recorded path from its root
(``owner`` is the Cell or the ``self`` of a bound method, passed at each call;
globals dicts and closure cells are held), checks what the compiled code
assumed about each value, and returns the captured arrays, in the order of the
compiled function's captured inputs, as a tuple. It returns None when any
check fails (a value changed, an attribute is gone, an array changed its shape
or dtype): the caller then compiles again.

For the reads ``W`` (a global ndarray) and ``n`` (a global int) it is::

    def read(owner):
        try:
            v1 = r0['W']
            if not (type(v1) is ndarray and v1.shape == s1 and (v1.dtype is d1 or ...)):
                return None
            v2 = r0['n']
            if not (v2 is e2 or type(v2) is t2 and v2 == e2):
                return None
        except Exception:
            return None
        return (v1,)

Nothing from the user's code becomes source text: names, keys and expected
values are in the function's namespace; only attribute names that are plain
ASCII identifiers are written as ``.name``.
"""
from __future__ import annotations

import itertools
import keyword
import types

import numpy as np

from ..errors import GradRuntimeError
from ..frontend.captured import Strong, matches

#: how many times a call compiles again when the captured state changes meanwhile
ATTEMPTS = 3

_SERIALS = itertools.count()


def next_serial() -> int:
    """A number above every one given before (the start of a call, of a lift)."""
    return next(_SERIALS)  # atomic under the GIL


def current_entry(lookup, read, fn, stale=None, owner=None, since=None):
    """``(entry, captured arrays)`` for the captured state now.

    ``lookup(stale)`` returns the cached entry, or builds a new one when there is
    none or it is ``stale`` (at first the one the caller found out of date);
    ``read(entry)`` is the entry's captured arrays or None. When the state changed
    again after each of ``ATTEMPTS`` compilations (another thread keeps changing
    it, or a property gives a new value at each read), the last entry, if it was
    lifted during this call (its ``serial`` is above ``since``, see
    :func:`next_serial`), runs on the arrays it read while compiling: the result is
    that of the state at one moment during the call.
    """
    for _ in range(ATTEMPTS):
        entry = lookup(stale)
        state = read(entry)
        if state is not None:
            return entry, state
        stale = entry
    if since is not None and getattr(stale, "serial", -1) > since:
        seen = stale.captured.seen() if stale.captured else ()
        if seen is not None:
            return stale, seen
    what = changed_read(stale.captured, owner) if getattr(stale, "captured", None) else None
    raise GradRuntimeError(
        f"{'what ' if what is None else what.describe() + ', which '}"
        f"{getattr(fn, '__qualname__', fn)!r} reads from outside, was different again "
        f"after each of {ATTEMPTS} compilations",
        hint="pass a value that changes at every read (a property computing a new number) "
             "as an argument instead, and do not change captured values while another "
             "thread compiles the gradient")


def make_reader(state):
    """``read(owner) -> tuple of arrays | None`` for ``state``, or None when there is
    nothing to read or check."""
    if not state:
        return None
    ns: dict = {}
    body, outs = reader_code(state, ns, "return None")
    source = ("def read(owner):\n    try:\n" + indent(body, 8)
              + "    except Exception:\n        return None\n"
              + f"    return ({''.join(o + ', ' for o in outs)})\n")
    exec(compile(source, "<ad_compiler captured state>", "exec"), ns)  # noqa: S102
    read = ns["read"]
    read.source = source
    return read


def changed_read(state, owner):
    """The first read of ``state`` whose check fails now (for messages), or None."""
    ns: dict = {}
    body, _ = reader_code(state, ns, "return {k}")
    source = ("def which(owner):\n    try:\n" + indent(body, 8)
              + "    except Exception:\n        return None\n    return None\n")
    exec(compile(source, "<ad_compiler captured state>", "exec"), ns)  # noqa: S102
    k = ns["which"](owner)
    return None if k is None else state.reads[k]


def reader_code(state, ns: dict, fail: str, strong_roots: bool = False,
                combined: bool = False) -> tuple[str, list[str]]:
    """The statements that read and check ``state`` (running ``fail`` when a check
    fails, with ``{k}`` replaced by the index of the read; exceptions are the
    caller's to catch) and the expressions of the captured arrays. The objects they
    use are put in ``ns``; ``owner`` must be defined.

    ``strong_roots``: the code holds its weakly held roots (the differentiated
    function, objects whose attributes it reads) strongly, saving a weak
    reference's call per root; for code that lives no longer than the roots'
    owner (the fast path's guard lives in the gradient function, which holds
    the differentiated function anyway).

    ``combined``: consecutive checked reads are one condition, each read bound where
    it is checked (``(v1 := r0.x) is e1 and ...``): the same reads and checks in the
    same order, with one ``fail`` for all (``fail`` must then not name ``{k}``)."""
    ns.update(ndarray=np.ndarray, MethodType=types.MethodType, matches=matches)
    body, conds = [], []

    def flush():
        if conds:
            body.append(f"if not ({' and '.join(conds)}):\n    {fail}")
            conds.clear()
    if state.epoch is not None:
        from ..nn import cell as cell_module
        ns["cells"] = cell_module
        body.append(f"if cells.EPOCH != {int(state.epoch)}:\n    {fail.replace('{k}', 'None')}")
    names: dict[int, str] = {}
    for k, read in enumerate(state.reads):
        if read.parent is None and isinstance(read.step[-1], Strong):
            names[id(read)] = _held(ns, f"r{k}", read.step[1])  # a dict or a cell: no check
            continue
        if (read.parent is None and strong_roots and read.step[0] == "held"
                and read.step[1]() is not None):
            names[id(read)] = _held(ns, f"r{k}", Strong(read.step[1]()))
            continue
        name = names[id(read)] = f"v{k}"
        access = _access(read, names, ns, k)
        if combined and (check := _check(read, name, ns, k, f"({name} := {access})")):
            conds.append(f"({check})")
            continue
        check = _check(read, name, ns, k)
        flush()
        body.append(f"{name} = {access}")
        if check:
            body.append(f"if not ({check}):\n    {fail.replace('{k}', str(k))}")
    flush()
    return "\n".join(body), [_output(names[id(r)], r) for r in state.arrays]


def indent(text: str, n: int) -> str:
    """``text`` with every line indented by ``n`` spaces."""
    return "".join(" " * n + line + "\n" for line in text.split("\n"))


def _access(read, names, ns, k) -> str:
    """The expression reading ``read`` from its parent's variable (or its root)."""
    if read.parent is None:
        if read.step[0] == "owner":
            return "owner"
        return _held(ns, f"r{k}", read.step[1])
    base = names[id(read.parent)]
    if read.step[0] in ("iter", "len"):
        return f"{'list' if read.step[0] == 'iter' else 'len'}({base})"
    kind, key = read.step
    if kind == "attr" and _plain_name(key):
        return f"{base}.{key}"
    ns[f"k{k}"] = key
    return f"getattr({base}, k{k})" if kind == "attr" else f"{base}[k{k}]"


def _plain_name(name) -> bool:
    """An attribute name written as ``.name`` (a private ``__name`` is not: Python
    would not mangle it here, but the user's class did)."""
    return (isinstance(name, str) and name.isascii() and name.isidentifier()
            and not keyword.iskeyword(name)
            and (not name.startswith("__") or name.endswith("__")))


def _check(read, v: str, ns, k, first: str | None = None) -> str | None:
    """The condition that the value ``v`` of ``read`` is what the code assumed, or
    None; ``first`` (its first mention) may bind ``v``."""
    f = first or v
    kind, expected = read.kind, read.expected
    if kind in ("array", "tensor"):
        ns[f"t{k}"], ns[f"s{k}"], ns[f"d{k}"] = expected, read.atype.shape, read.atype.dtype
        data = v if kind == "array" else f"{v}._data"
        return (f"type({f}) is t{k} and {data}.shape == s{k} "
                f"and ({data}.dtype is d{k} or {data}.dtype == d{k})")
    if kind == "content":
        t, shape, dtype, data = expected
        ns[f"t{k}"], ns[f"s{k}"], ns[f"d{k}"], ns[f"b{k}"] = t, shape, dtype, data
        arr = v if issubclass(t, np.ndarray) else f"{v}._data"
        return (f"type({f}) is t{k} and {arr}.shape == s{k} and {arr}.dtype == d{k} "
                f"and {arr}.tobytes() == b{k}")
    if kind == "param":
        ns[f"e{k}"] = expected
        return f"{f} is e{k}"
    if kind in ("seq", "dict"):
        t, n, keys = expected
        ns[f"t{k}"], ns[f"e{k}"] = t, keys
        return f"type({f}) is t{k} and len({v}) == {int(n)}" + (
            f" and tuple({v}) == e{k}" if kind == "dict" else "")
    if kind == "equal":
        ns[f"t{k}"], ns[f"e{k}"] = type(expected), expected
        return f"{f} is e{k} or type({v}) is t{k} and {v} == e{k}"
    if kind == "snapshot":
        ns[f"e{k}"] = expected
        return f"matches({f}, e{k})"
    if kind == "method":
        ns[f"f{k}"] = expected[0]
        return (f"type({f}) is MethodType and {v}.__func__ is f{k} "
                f"and {v}.__self__ is {_held(ns, f'e{k}', expected[1])}")
    if kind == "same":
        return f"{f} is {_held(ns, f'e{k}', expected)}"
    if kind == "type":
        return f"type({f}) is {_held(ns, f'e{k}', expected)}"
    # a weakly held root that died is None: reading its children raises, which the
    # caller's ``except Exception`` turns into a failed check (a root is only ever
    # read as the parent of checked reads)
    return None


def _held(ns, name: str, ref) -> str:
    """The expression giving back an object held by ``captured.hold`` (or a root)."""
    if isinstance(ref, Strong):
        ns[name] = ref.obj
        return name
    ns[name] = ref
    return f"{name}()"


def _output(v: str, read) -> str:
    return v if read.kind == "array" else f"{v}._data"
