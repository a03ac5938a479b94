"""Statement recipes: each ``kind(g) -> lines`` (source lines at the body's level).

Simple kinds (assignments, aliases, ``+=``, item assignment, containers,
helper calls) run anywhere; compound kinds (``if``, ``for``, ``while``, early
``return``) build their bodies from simple kinds, validated line by line on
the first iteration's variables (see ``body``), then as a whole by the
generator. A kind is used only when its feature is on (``FEATURE_OF``).
"""
from __future__ import annotations

import numpy as np

from .recipes import Reject


def _assigned(lines):
    from .generator import _assigned as assigned
    return assigned(lines)


def assign(g):
    return [f"{g.fresh_name()} = {g.expr()}"]


def scalar(g):
    """Python-float code: ``s2 = math.sin(s) * t + 0.5``."""
    if not g.floats():
        raise Reject
    fns = ["math.sin({})", "math.cos({})", "math.tanh({})", "math.exp(math.tanh({}))",
           "math.log(abs({}) + 1.0)", "math.sqrt({} * {} + 1.0)", "{} * {}", "abs({})"]
    fmt = g.choice(fns)
    a = g.flt()
    expr = fmt.format(*[a] * fmt.count("{}"))
    return [f"{g.fresh_name('s')} = {expr} {g.choice(['+', '-', '*'])} {g.flt()}"]


def _sharing(g, name):
    """Other visible names whose arrays share memory with ``name``'s: (same object, views)."""
    v = g.env[name]
    same, views = [], []
    for n, w in g.env.items():
        if n != name and isinstance(w, np.ndarray) and np.shares_memory(v, w):
            (same if w is v else views).append(n)
    return same, views


def _writable(g, name) -> bool:
    v = g.env[name]
    if not isinstance(v, np.ndarray) or not v.flags.writeable or v.dtype.kind != "f":
        return False
    same, views = _sharing(g, name)
    if any(n in g.params for n in same + views):
        return False
    return (not same or "alias" in g.features) and (not views or "views" in g.features)


def _target(g):
    return g.choice([n for n in g.arrays(1) if _writable(g, n)])


def alias(g):
    return [f"{g.fresh_name('a')} = {g.arr()}"]


def view(g):
    x = _target(g)
    v = g.env[x]
    forms = [f"{x}[1:]", f"{x}[::-1]" if v.ndim == 1 else f"{x}[0]", f"{x}.reshape(-1)",
             f"{x}.T", f"{x}[:, 1:]" if v.ndim == 2 else f"{x}[:-1]",
             f"np.expand_dims({x}, 0)", f"np.squeeze({x}[:1], 0)", f"{x}[..., 0]",
             f"{x}[None]", f"np.transpose({x})"]
    return [f"{g.fresh_name('v')} = {g.choice(forms)}"]


def augassign(g):
    if g.floats() and g.coin(0.3):
        s = g.choice(g.floats())
        return [f"{s} {g.choice(['+=', '-=', '*='])} {g.flt()}"]
    x = _target(g)
    op = g.choice(["+=", "-=", "*=", "/="])
    e = g.partner(x)
    rhs = {"*=": f"np.tanh({e})", "/=": f"({e} * {e} + 1.0)"}.get(op, e)
    return [f"{x} {op} {rhs}"]


def index_expr(g, name) -> str:
    shape = np.shape(g.env[name])
    parts = []
    for d in shape[:g.rng.randint(1, len(shape))]:
        parts.append(g.choice([str(g.rng.randint(-d, d - 1)), ":", "1:", ":-1", "::2",
                               f"{g.rng.randint(0, d - 1)}:"]))
    return ", ".join(parts)


def index(g):
    x = g.arr()
    shape = g.env[x].shape
    forms = [f"{x}[{index_expr(g, x)}]", f"{x}[[0, {shape[0] - 1}]]", f"{x}[None]",
             f"{x}[..., 0]"]
    return [f"{g.fresh_name()} = {g.choice(forms)} * {g.num()}"]


def setitem(g):
    x = _target(g)
    rhs = g.choice([g.num(), g.expr(), g.lit()])
    op = g.choice(["=", "=", "+=", "*="])
    if op == "*=":
        rhs = f"np.tanh({rhs})"
    return [f"{x}[{index_expr(g, x)}] {op} {rhs}"]


# -- containers ---------------------------------------------------------------------

def container(g):
    items = [g.num() for _ in range(g.rng.randint(2, 3))]
    name = g.fresh_name(g.choice(["l", "p", "d"]))
    if name[0] == "l":
        return [f"{name} = [{', '.join(items)}]"]
    if name[0] == "p":
        return [f"{name} = ({', '.join(items)},)"]
    return [f"{name} = {{{', '.join(f'{k!r}: {v}' for k, v in zip('abc', items))}}}"]


def _containers(g, kinds=(list, tuple)):
    return g.visible(lambda v: type(v) in kinds and len(v) >= 2)


def use_container(g):
    dicts = g.visible(lambda v: type(v) is dict)
    if dicts and g.coin(0.3):
        d = g.choice(dicts)
        return [f"{g.fresh_name()} = {d}[{g.choice(list(g.env[d]))!r}] * {g.num()}"]
    c = g.choice(_containers(g))
    n = len(g.env[c])
    t = g.fresh_name()
    forms = [f"{t} = {c}[{g.rng.randint(-n, n - 1)}] * {g.num()}",
             f"{t} = np.stack({c})", f"{t} = sum({c})", f"{t}, *{t}r = {c}",
             f"{t} = {c}[0] + {c}[-1]", f"{t} = np.concatenate({c})",
             f"{t} = {c}[{n - 1}] * len({c})"]
    if type(g.env[c]) is list and g.depth == 0:   # in a loop over c it would never end
        forms.append(f"{c}.append({g.num()})")
    if n == 2:
        forms.append(f"{t}, {t}b = {c}")
    return [g.choice(forms)]


def comprehension(g):
    t = g.fresh_name()
    conts = _containers(g, (list,))
    if conts and g.coin():
        c = g.choice(conts)
        body = g.choice(["np.sin(u) * 2.0", "u * u", "np.tanh(u) + 1.0"])
        cond = f" if {g.flt()} > 0.0" if g.coin(0.1) else ""
        comp = f"[{body} for u in {c}{cond}]"
    else:
        x = g.arr()
        n = g.env[x].shape[0]
        cond = " if k != 1" if g.coin(0.1) else ""
        comp = f"[{x}[k] * {g.flt()} for k in range({n}){cond}]"
    return [f"{t} = {g.choice(['sum', 'np.stack', ''])}({comp})"]


def float_list(g):
    """Lists of traced Python floats given to NumPy reductions and np.array."""
    items = ", ".join(g.flt() if g.coin(0.7) else f"{g.flt()} * 2.0"
                      for _ in range(g.rng.randint(2, 3)))
    fn = g.choice(["np.sum", "np.mean", "np.array", "np.max"])
    return [f"{g.fresh_name()} = {fn}([{items}]) * {g.num()}"]


def std_degenerate(g):
    """np.std over an axis of length 1, or of a scalar: zero spread."""
    ones = [n for n in g.arrays(1) if 1 in g.env[n].shape]
    if ones and g.coin():
        x = g.choice(ones)
        axis = g.env[x].shape.index(1)
        return [f"{g.fresh_name()} = np.std({x}, axis={axis}) + {x}"]
    return [f"{g.fresh_name()} = np.std({g.flt()}) + {g.num()}"]


def helper(g):
    """A module-level helper function, inlined by the compiler, called once or twice."""
    from .generator import Gen
    a, b = g.arr(0), g.num()
    sub = Gen.__new__(Gen)
    sub.__dict__.update(g.__dict__)
    sub.params, sub.args = ["a", "b"], (g.env[a], g.env[b] if b in g.env else float(b))
    sub.top, sub.hidden, sub.env = [], set(), sub.run([])
    for _ in range(g.rng.randint(1, 3)):
        sub.statement(["assign"])
    g.counter, g.used, g.helpers, g.ns = sub.counter, sub.used, sub.helpers, sub.ns
    name = g.fresh_name("helper")
    last = [n for n in sub.env if n not in ("a", "b")] or ["a"]
    body = "".join(f"    {ln}\n" for ln in sub.top)
    g.add_helper(f"def {name}(a, b=1.0):\n{body}    return {last[-1]} * b\n")
    call = g.choice([f"{name}({a}, {b})", f"{name}({a}, b={b})", f"{name}({a})"])
    return [f"{g.fresh_name()} = {call}"]


# -- control flow ---------------------------------------------------------------------

def cond(g) -> str:
    """A data-dependent condition, its threshold far from the tested value."""
    arrays, floats = g.arrays(0), g.floats()
    forms = [f"np.sum({n})" for n in arrays] + [f"np.max({n})" for n in arrays] \
        + [f"np.mean({n})" for n in arrays] + list(floats)
    expr = g.choice(forms)
    value = float(eval(expr, g.ns, dict(g.env)))
    gap = g.rng.uniform(0.2, 1.0) * (1.0 + abs(value))
    op = g.choice([">", "<"])
    true = g.coin()
    threshold = value - gap if (op == ">") == true else value + gap
    test = f"{expr} {op} {threshold:.3f}"
    return f"not {test}" if g.coin(0.1) else test


SIMPLE = ("assign", "scalar", "alias", "augassign", "index", "setitem", "view", "container",
          "use_container", "comprehension", "float_list", "std_degenerate", "mask",
          "mask_setitem", "iterable")


def body(g, binding: list[str], n: int, loop: bool) -> list[str]:
    """``n`` body statements and carried updates, indented; ``binding`` sets the loop variable."""
    saved = (g.env, g.top)
    outer = [k for k in saved[0] if k not in g.hidden and not k.startswith("_")]
    lines: list[str] = []
    kinds = [k for k in SIMPLE if FEATURE_OF[k] in g.features or k == "assign"]
    if g.depth == 0:          # one level of nesting: an 'if' or a loop inside a body
        kinds += [k for k in ("if", "for", "while") if k in g.features]
    g.depth += 1
    try:
        g.top = saved[1] + binding
        g.env = g.run(g.top)
        for _ in range(n):
            for _ in range(8):
                try:
                    new = KINDS[g.choice(kinds)](g)
                    before = set(g.env)
                    g.env = g.run(g.top + new)
                    if len(new) > 1:       # names made only inside a nested construct
                        g.hidden |= set(g.env) - before - _assigned(new)
                except Exception:  # Reject, or a recipe that does not fit these shapes
                    continue
                g.top, lines = g.top + new, lines + new
                break
        lines += carried(g, outer, saved[0])
        if loop and "break" in g.features and g.coin(0.5):
            _insert(g, saved[1] + binding, lines, g.choice(["break", "continue"]))
        if "return" in g.features and g.coin(0.2):
            _insert(g, saved[1] + binding, lines, "return {}")
    finally:
        g.env, g.top = saved
        g.depth -= 1
    text = "\n".join(lines) or "pass"
    return ["    " + ln for ln in text.split("\n")]


def _insert(g, prefix, lines, exit_):
    """Insert ``if <cond>: <exit_>`` at a random place of ``lines``."""
    at = g.rng.randint(0, len(lines))
    g.env = g.run(prefix + lines[:at])
    exit_ = exit_.format(g.result()) if "{}" in exit_ else exit_
    lines.insert(at, f"if {cond(g)}:\n    {exit_}")


def carried(g, outer, outer_env) -> list[str]:
    """Updates of variables from before the construct, keeping their type and shape."""
    names = [n for n in outer if n not in g.params or g.coin(0.3)]
    names = [n for n in names if type(outer_env[n]) in (float, np.ndarray)
             and (type(outer_env[n]) is float or outer_env[n].dtype.kind == "f")]
    lines = []
    for _ in range(g.rng.randint(1, 2)):
        if not names:
            break
        c = g.choice(names)
        for _ in range(6):
            try:
                e = g.partner(c)
                line = f"{c} = {c} * {g.choice(['0.5', '0.9', '-0.7'])} + {g.choice([e, f'np.tanh({e})'])}"
                env = g.run(g.top + [line])
            except Exception:
                continue
            if type(env[c]) is type(outer_env[c]) and np.shape(env[c]) == np.shape(outer_env[c]):
                g.top, g.env = g.top + [line], env
                lines.append(line)
                break
    return lines


def if_(g):
    lines = [f"if {cond(g)}:"] + body(g, [], g.rng.randint(1, 3), loop=False)
    if g.coin(0.4):
        lines += [f"elif {cond(g)}:"] + body(g, [], g.rng.randint(1, 2), loop=False)
    if g.coin(0.6):
        lines += ["else:"] + body(g, [], g.rng.randint(1, 2), loop=False)
    return lines


def for_(g):
    n = g.rng.randint(1, 4)
    lists = _containers(g, (list,))
    arrays = [a for a in g.arrays(1) if g.env[a].shape[0] <= 4]
    i = g.fresh_name("i")
    forms = ["range"] + ["array"] * bool(arrays) + ["list", "enumerate"] * bool(lists)
    form = g.choice(forms)
    if form == "range":
        head, binding = f"for {i} in range({n}):", [f"{i} = 0"]
    elif form == "array":
        a = g.choice(arrays)
        head, binding = f"for {i} in {a}:", [f"{i} = {a}[0]"]
    elif form == "list":
        c = g.choice(lists)
        head, binding = f"for {i} in {c}:", [f"{i} = {c}[0]"]
    else:
        c = g.choice(lists)
        head, binding = f"for k{i}, {i} in enumerate({c}):", [f"k{i} = 0", f"{i} = {c}[0]"]
    return [head] + body(g, binding, g.rng.randint(1, 3), loop=True)


def while_(g):
    k = g.fresh_name("k")
    n = g.rng.randint(1, 4)
    g.env = dict(g.env, **{k: 0})
    test = f"{k} < {n}"
    if g.coin(0.5):
        test += f" and {cond(g)}"
    lines = [f"{k} = 0", f"while {test}:", f"    {k} += 1"]
    return lines + body(g, [f"{k} = 1"], g.rng.randint(1, 3), loop=True)


def early_return(g):
    return [f"if {cond(g)}:", f"    return {g.result()}"]


# -- results --------------------------------------------------------------------------

def result(g, kind: str) -> str:
    arrays, floats = _recent(g, g.arrays(0)), _recent(g, g.floats())
    if kind == "array":
        shape = np.shape(g.args[0])
        same = [n for n in arrays if np.shape(g.env[n]) == shape] or [g.params[0]]
        terms = [g.choice(same) for _ in range(g.rng.randint(1, 2))]
        return " + ".join(terms)
    if kind == "float":
        terms = [f"float(np.sum({g.choice(arrays)}))"] + [g.choice(floats) for _ in floats[:1]]
        return " + ".join(terms)
    picks = [g.choice(arrays) for _ in range(g.rng.randint(1, 3))]
    scalar_ = " + ".join(f"np.sum({n})" if i == 0 else g.choice([f"np.sum({n} * {n})", f"np.sum({n})"])
                         for i, n in enumerate(picks))
    if kind == "tuple":
        return f"({scalar_}, {result(g, 'array')})"
    if kind == "dict":
        return f"{{'loss': {scalar_}, 'out': {result(g, 'array')}}}"
    return scalar_


def _mask_of(g, x) -> tuple[str, str]:
    """A selection of ``x`` by a mask computed from it, and the mask (1-d or 2-d)."""
    lit = g.lit()
    if g.val(x).ndim == 2 and g.coin():
        mask = g.choice([f"{x}[0] > {lit}", f"np.sum({x}, axis=0) > {lit}"])
        return f"{x}[:, {mask}]", mask
    if g.val(x).ndim == 2 and g.coin():
        mask = f"{x}[:, 0] > {lit}"
        return f"{x}[{mask}]", mask
    mask = g.choice([f"{x} > {lit}", f"np.abs({x}) < {abs(float(lit)) + 0.3}"])
    return g.choice([f"{x}[{mask}]", f"{x}[np.where({mask})]"]), mask


def mask(g):
    """A selection by a mask computed in the function, reduced in the same statement."""
    x = g.arr()
    sel, _ = _mask_of(g, x)
    body = g.choice([f"np.sum({sel} ** 2)", f"np.sum(np.tanh({sel}) * {sel})",
                     f"np.sum({sel} * {g.flt()} + 1.0)", f"np.sum({sel}) / (len({sel}) + 1.0)",
                     f"np.sum(np.exp(np.tanh({sel})) * {sel}.size)"])
    return [f"{g.fresh_name()} = {body} * {g.num()}"]


def mask_setitem(g):
    """``x[mask] = v`` / ``op=`` with a mask computed in the function."""
    # not an input: an empty selection would let the program through plain Python
    # unchanged, and the compiler refuses writes into inputs whatever the mask
    x = g.choice([n for n in g.arrays(1) if _writable(g, n) and n not in g.params])
    sel, _ = _mask_of(g, x)
    where = sel[len(x) + 1:-1]
    forms = [f"{x}[{where}] = {g.flt()}", f"{x}[{where}] += {g.flt()}",
             f"{x}[{where}] = np.sin({sel}) * {g.flt()}", f"{x}[{where}] *= np.tanh({sel})",
             f"{x}[{where}] += {sel} ** 2"]
    return [g.choice(forms)]


def iterable(g):
    """Python iteration helpers over arrays and lists of values, with a static result."""
    x = g.arr()
    n = g.val(x).shape[0]
    forms = [f"sum(map(lambda r: r * {g.flt()}, reversed(list({x}))))",
             f"sum(v * w for v, w in zip({x}, reversed(range({n}))))",
             f"sum({x}[i] ** 2 for i in sorted(range({n}), key=lambda i: -i))",
             f"sum(filter(lambda k: k > 0, range({n}))) * {x}"]
    if g.val(x).ndim == 2:
        forms.append(f"sum(np.sin(np.array(c)) * {g.flt()} for c in zip(*{x}))")
    return [f"{g.fresh_name()} = {g.choice(forms)}"]


def _recent(g, names):
    """Mostly the last few names: results then depend on most of the program."""
    return names[-4:] if len(names) > 4 and g.coin(0.8) else names


KINDS = {
    "assign": assign, "scalar": scalar, "alias": alias, "augassign": augassign,
    "index": index, "setitem": setitem, "view": view, "container": container,
    "use_container": use_container, "comprehension": comprehension, "float_list": float_list,
    "std_degenerate": std_degenerate, "helper": helper, "if": if_, "for": for_,
    "while": while_, "return": early_return, "mask": mask, "mask_setitem": mask_setitem,
    "iterable": iterable,
}

FEATURE_OF = {
    "assign": "elementwise", "scalar": "scalar", "alias": "alias", "augassign": "augassign",
    "index": "index", "setitem": "setitem", "view": "views", "container": "containers",
    "use_container": "containers", "comprehension": "comprehension",
    "float_list": "float_lists", "std_degenerate": "std_degenerate", "helper": "helpers",
    "if": "if", "for": "for", "while": "while", "return": "return", "mask": "masks",
    "mask_setitem": "masks", "iterable": "iterables",
}

_WEIGHT = {"assign": 6, "if": 2, "for": 2, "return": 1}


def top_kinds(features) -> list[str]:
    """Statement kinds for these features, repeated by weight."""
    return [k for k in KINDS if FEATURE_OF[k] in features or k == "assign"
            for _ in range(_WEIGHT.get(k, 1))]


# -- Python around the NumPy: recursion, loop else, callable objects, lambdas, nested
# -- comprehensions (features 'recursion', 'loop_else', 'callables', 'lambdas',
# -- 'nested_comprehension') ----------------------------------------------------------

_SMOOTH = ("np.sin({}) * 0.9", "np.tanh({}) + 0.1", "{} * 0.8 - 0.1", "np.cos({}) * 0.5")


def recursion(g):
    """A module-level helper that calls itself (or a partner) a static number of times."""
    a, n = g.arr(0), g.rng.randint(0, 4)
    name = g.fresh_name("rec")
    step = g.choice(_SMOOTH).format(f"{name}(a, n - 1)")
    if g.coin(0.4):   # mutual recursion through a partner
        other = g.fresh_name("rec")
        g.add_helper(f"def {name}(a, n):\n    return a if n <= 0 else {other}("
                     f"{g.choice(_SMOOTH).format('a')}, n - 1)\n\n\n"
                     f"def {other}(a, n):\n    if n <= 0:\n        return a * 1.1\n"
                     f"    return {name}({g.choice(_SMOOTH).format('a')}, n - 1) + a * 0.1\n")
    else:
        base = g.choice(["a", "a * 0.5", "np.sin(a)"])
        g.add_helper(f"def {name}(a, n):\n    if n == 0:\n        return {base}\n"
                     f"    return {step} + a * 0.1\n")
    return [f"{g.fresh_name()} = {name}({a}, {n})"]


def loop_else(g):
    """A ``for`` or ``while`` loop with a data-dependent ``break`` and an ``else`` clause."""
    lines = g.choice([for_, while_])(g)
    head = next(k for k, ln in enumerate(lines) if ln.startswith(("for ", "while ")))
    at = g.rng.randint(head + 1, len(lines))
    while at < len(lines) and (lines[at].startswith("     ")  # not inside a nested block
                               or lines[at].lstrip().startswith(("else", "elif"))):
        at += 1
    lines[at:at] = [f"    if {cond(g)}:", "        break"]
    return lines + ["else:"] + body(g, [], g.rng.randint(1, 2), loop=False)


_CLASS = """import functools


class {C}:
    k = 1.5

    def __init__(self, w):
        self.w = w

    def __call__(self, a):
        return {call}

    def method(self, a):
        return {method}

    @staticmethod
    def static(a):
        return {static}

    @classmethod
    def by_class(cls, a):
        return a * cls.k


{obj} = {C}({w})


def {h}(a, b, c=1.0):
    return {helper}


{p} = functools.partial({h}, c={c})
{pn} = functools.partial(np.multiply, {w})
"""


def callables(g):
    """Calls of an instance with ``__call__``, a bound method, a static or class method,
    and ``functools.partial`` objects of a helper and of a NumPy function."""
    names = getattr(g, "callable_names", None)
    if names is None or names["pn"] not in g.ns:  # one class per program (kept if it ran)
        names = g.callable_names = _add_callables(g)
    a, b = g.arr(0), g.num()
    obj, p = names["obj"], names["p"]
    forms = [f"{obj}({a})", f"{obj}.method({a})", f"{names['C']}.static({a})",
             f"{obj}.by_class({a})", f"{p}({a}, {b})", f"{p}({a}, b={b}, c=0.2)",
             f"{names['pn']}({a})", f"{names['C']}.method({obj}, {a})"]
    return [f"{g.fresh_name()} = {g.choice(forms)} * {g.num()}"]


def _add_callables(g) -> dict:
    names = {k: g.fresh_name(k) for k in ("C", "obj", "h", "p", "pn")}
    g.add_helper(_CLASS.format(
        **names, w=g.choice(["0.7", "-1.3", "np.array(0.5)"]), c=g.choice(["0.3", "-0.4"]),
        call=g.choice(_SMOOTH).format("a") + " * self.w",
        method="np.tanh(a) + self.w", static=g.choice(_SMOOTH).format("a"),
        helper="np.sin(a) * b + c"))
    return names


def lambdas(g):
    """Lambdas (two on one line, here or at module level) and a nested ``def`` that
    closes over a local array."""
    a = g.arr(0)
    form = g.rng.randint(0, 2)
    t = g.fresh_name()
    if form == 0:
        f1, f2 = g.fresh_name("fa"), g.fresh_name("fb")
        e1, e2 = (g.choice(_SMOOTH).format("u") for _ in range(2))
        return [f"{f1}, {f2} = (lambda u: {e1}), (lambda u: {e2})",
                f"{t} = {f1}({a}) * {f2}({a})"]
    if form == 1:
        f1, f2 = g.fresh_name("la"), g.fresh_name("lb")
        e1, e2 = (g.choice(_SMOOTH).format("a") for _ in range(2))
        g.add_helper(f"{f1}, {f2} = (lambda a: {e1}), (lambda a: {e2})\n")
        return [f"{t} = {g.choice([f1, f2])}({a}) + {f2}({a})"]
    inner, w = g.fresh_name("inner"), g.partner(a)
    return [f"def {inner}(u):", f"    return {g.choice(_SMOOTH).format('u')} * {w}",
            f"{t} = {inner}({a}) + {inner}({g.num()})"]


def nested_comprehension(g):
    """Comprehensions with several ``for`` clauses over ``range``, the inner bound read
    from the outer counter, and filters on the counters; a list of lists."""
    x = g.arr()
    n = g.env[x].shape[0]
    c = g.flt() if g.floats() and g.coin(0.3) else g.lit()
    forms = [f"sum([{x}[i] * {x}[j] for i in range({n}) for j in range(i, {n})])",
             f"sum([{x}[i] - {x}[j] * {c} for i in range({n}) for j in range(i)"
             f" if (i + j) % 2 == 0]) + {x}[0]",
             f"np.stack([{x}[j] * {c} for i in range({n}) for j in range({n}) if i != j])",
             f"sum({x}[i] * np.tanh({x}[j]) for i in range({n}) for j in range(i + 1))"]
    if g.env[x].ndim == 1:
        forms.append(f"np.array([[{x}[i] * {x}[j] for j in range({n})] for i in range({n})])")
    return [f"{g.fresh_name()} = {g.choice(forms)}"]


KINDS.update({"recursion": recursion, "loop_else": loop_else, "callables": callables,
              "lambdas": lambdas, "nested_comprehension": nested_comprehension})
FEATURE_OF.update({"recursion": "recursion", "loop_else": "loop_else",
                   "callables": "callables", "lambdas": "lambdas",
                   "nested_comprehension": "nested_comprehension"})
#: also inside loop and branch bodies
SIMPLE = SIMPLE + ("recursion", "callables", "lambdas", "nested_comprehension")
