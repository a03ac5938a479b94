"""The generated function's ``ast`` tree -> its source text.

The text is what astor 0.8 writes for the same tree (with ``return (a,)`` keeping
its parentheses and :class:`~ad_compiler.codegen.emit.Comment` nodes as ``#``
lines, long lines never wrapped): astor's rules for where parentheses go are
applied to the node kinds code generation produces, in one pass over the tree
instead of astor's general visitor, which took half the time of code generation.
A tree holding any other kind of node (a lambda, an f-string, a multi-line string
...) is written by astor itself, so the output never depends on which of the two
wrote it.

Parentheses follow astor's precedence table (``_PRECEDENCE``): each node is
written knowing the precedence its parent asks of it, and a node binding at
least as tightly is written bare. Where astor asks nothing (the value of an
attribute or a subscript, the function of a call, a starred value) the node is
parenthesised unless it cannot need it (a name, a call, an attribute ...).
"""
from __future__ import annotations

import ast
import functools
import math

from ..ir.names import one_line

# astor's op_util table: name, symbol ("." for none), step; the precedence of an entry
# is the previous one's plus twice its step (the first one's is its step)
_TABLE = """
GeneratorExp . 1; Assign . 1; AnnAssign . 1; AugAssign . 0; Expr . 0; Yield . 1;
YieldFrom . 0; If . 1; For . 0; AsyncFor . 0; While . 0; Return . 1; Slice . 1;
Subscript . 0; Index . 1; ExtSlice . 1; comprehension_target . 1; Tuple . 0;
FormattedValue . 0; Comma . 1; NamedExpr . 1; Assert . 0; Raise . 0; call_one_arg . 1;
Lambda . 1; IfExp . 0; comprehension . 1; Or or 1; And and 1; Not not 1; Eq == 1;
Gt > 0; GtE >= 0; In in 0; Is is 0; NotEq != 0; Lt < 0; LtE <= 0; NotIn not_in 0;
IsNot is_not 0; BitOr | 1; BitXor ^ 1; BitAnd & 1; LShift << 1; RShift >> 0; Add + 1;
Sub - 0; Mult * 1; Div / 0; Mod % 0; FloorDiv // 0; MatMult @ 0; PowRHS . 1;
Invert ~ 1; UAdd + 0; USub - 0; Pow ** 1; Await . 1; Num . 1; Constant . 1
"""


def _table():
    precedence, symbol, value = {}, {}, None
    for entry in _TABLE.replace("\n", " ").split(";"):
        name, sym, step = entry.split()
        value = int(step) if value is None else value + 2 * int(step)
        precedence[name] = value
        if sym != ".":
            symbol[name] = sym.replace("_", " ")
    return precedence, symbol


_PRECEDENCE, _SYMBOL = _table()
_HIGHEST = max(_PRECEDENCE.values()) + 2   # what astor assumes where a parent sets nothing
_P = _PRECEDENCE


class _Unsupported(Exception):
    """A node this module does not write: astor writes the whole tree."""


def unparse(tree: ast.AST) -> str:
    """Source of ``tree`` (a Module of one function), as astor writes it."""
    try:
        lines: list = []
        for stmt in tree.body:
            _statement(stmt, 0, lines)
        return "\n".join(lines) + "\n"
    except _Unsupported:
        return _astor_unparse(tree)


# -- statements ----------------------------------------------------------------------

def _statement(node, level: int, lines: list) -> None:
    writer = _STATEMENTS.get(type(node).__name__)
    if writer is None:
        raise _Unsupported(type(node).__name__)
    writer(node, level, lines)


def _body(stmts, level: int, lines: list) -> None:
    for stmt in stmts:
        _statement(stmt, level, lines)


def _line(level: int, text: str) -> str:
    return "    " * level + text


def _function_def(node, level, lines):
    a = node.args
    if (level or node.decorator_list or node.returns is not None or a.posonlyargs
            or a.vararg or a.kwonlyargs or a.kwarg or a.defaults
            or any(arg.annotation is not None for arg in a.args)):
        raise _Unsupported("FunctionDef")
    lines.append(_line(level, f"def {node.name}({', '.join(arg.arg for arg in a.args)}):"))
    _body(node.body, level + 1, lines)


def _assign(node, level, lines):
    targets = "".join(_expr(t, _P["Assign"]) + " = " for t in node.targets)
    lines.append(_line(level, targets + _expr(node.value, _P["Assign"])))


def _aug_assign(node, level, lines):
    p = _P["AugAssign"]
    op = _SYMBOL[type(node.op).__name__]
    lines.append(_line(level, f"{_expr(node.target, p)} {op}= {_expr(node.value, p)}"))


def _expr_statement(node, level, lines):
    if any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(node)):
        raise _Unsupported("a string in an expression statement")  # astor may write a
        # string at the start of a line triple-quoted
    lines.append(_line(level, _expr(node.value, _P["Expr"])))


def _return(node, level, lines):
    value = node.value
    if isinstance(value, ast.Tuple):  # ``return (a,)``: the parentheses are kept
        lines.append(_line(level, f"return ({_comma_list(value.elts)})"))
    elif value is None:
        lines.append(_line(level, "return"))
    else:
        lines.append(_line(level, "return " + _expr(value, _P["Return"])))


def _comment(node, level, lines):
    lines.append(_line(level, "# " + one_line(node.text)))


def _delete(node, level, lines):
    lines.append(_line(level, "del " + _comma_list(node.targets, trailing=False)))


def _if(node, level, lines):
    lines.append(_line(level, f"if {_expr(node.test, _P['If'])}:"))
    _body(node.body, level + 1, lines)
    while True:
        other = node.orelse
        if len(other) == 1 and isinstance(other[0], ast.If):
            node = other[0]
            lines.append(_line(level, f"elif {_expr(node.test, _P['If'])}:"))
            _body(node.body, level + 1, lines)
            continue
        if other:
            lines.append(_line(level, "else:"))
            _body(other, level + 1, lines)
        return


def _for(node, level, lines):
    if getattr(node, "type_comment", None):
        raise _Unsupported("For")
    target, items = _expr(node.target, _P["For"]), _expr(node.iter, _HIGHEST)
    lines.append(_line(level, f"for {target} in {items}:"))
    _body_or_else(node, level, lines)


def _while(node, level, lines):
    lines.append(_line(level, f"while {_expr(node.test, _P['While'])}:"))
    _body_or_else(node, level, lines)


def _body_or_else(node, level, lines):
    _body(node.body, level + 1, lines)
    if node.orelse:
        lines.append(_line(level, "else:"))
        _body(node.orelse, level + 1, lines)


def _keyword_statement(word):
    def write(node, level, lines):
        lines.append(_line(level, word))
    return write


_STATEMENTS = {
    "FunctionDef": _function_def, "Assign": _assign, "AugAssign": _aug_assign,
    "Expr": _expr_statement, "Return": _return, "Comment": _comment, "Delete": _delete,
    "If": _if, "For": _for, "While": _while, "Pass": _keyword_statement("pass"),
    "Break": _keyword_statement("break"), "Continue": _keyword_statement("continue"),
}


# -- expressions ---------------------------------------------------------------------

def _expr(node, pp: int) -> str:
    """``node`` written where its parent asks for precedence ``pp``."""
    writer = _EXPRESSIONS.get(type(node).__name__)
    if writer is None:
        raise _Unsupported(type(node).__name__)
    return writer(node, pp)


def _delimit(text: str, p: int, pp: int) -> str:
    return text if p >= pp else f"({text})"


def _comma_list(items, trailing: bool | None = None) -> str:
    """Items at comma precedence; a trailing comma after a single one (``trailing``
    None) as in a tuple."""
    text = ", ".join(_expr(item, _P["Comma"]) for item in items)
    if trailing or (trailing is None and len(items) == 1):
        text += ","
    return text


def _name(node, pp):
    k = _placeholder_index(node.id)
    return node.id if k is None else f"\0{k}\0"  # NUL: in no other text written


def _constant(node, pp):
    value = node.value
    if isinstance(value, str):
        if "\n" in value or node.kind:
            raise _Unsupported("a multi-line or u'' string")  # astor may triple-quote it
        return repr(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, (int, float, complex)):  # bool too, as astor does
        return _delimit(_number(value), _P["Constant"], pp)
    return repr(value)


def _number(x) -> str:
    def part(p, imaginary):
        s = "j" if imaginary else ""
        try:
            if math.isinf(p):
                return ("-1e1000" if p < 0 else "1e1000") + s
            if math.isnan(p):
                return f"(1e1000{s}-1e1000{s})"
        except OverflowError:  # an int too large for a float
            pass
        return repr(p) + s
    if not isinstance(x, complex):
        return part(x, False)
    real, imag = part(x.real, False), part(x.imag, True)
    if x.real == 0:
        return imag
    if x.imag == 0:
        return f"({real}+0j)"
    return f"({real}{'' if imag.startswith('-') else '+'}{imag})"


def _attribute(node, pp):
    return f"{_expr(node.value, _HIGHEST)}.{node.attr}"


def _call(node, pp):
    numargs = len(node.args) + len(node.keywords)
    p = _P["Comma"] if numargs > 1 else _P["call_one_arg"]
    parts = [_expr(a, p) for a in node.args]
    for k in node.keywords:
        value = _expr(k.value, _P["Comma"])
        parts.append(f"{k.arg}={value}" if k.arg else f"**{value}")
    return f"{_expr(node.func, _HIGHEST)}({', '.join(parts)})"


def _starred(node, pp):
    return "*" + _expr(node.value, _HIGHEST)


def _subscript(node, pp):
    return f"{_expr(node.value, _HIGHEST)}[{_expr(node.slice, _P['Subscript'])}]"


def _slice(node, pp):
    p = _P["Slice"]
    text = (_expr(node.lower, p) if node.lower is not None else "") + ":"
    if node.upper is not None:
        text += _expr(node.upper, p)
    if node.step is not None:
        text += ":"
        if not (isinstance(node.step, ast.Name) and node.step.id == "None"):
            text += _expr(node.step, p)
    return text


def _tuple(node, pp):
    text = _comma_list(node.elts)
    if not node.elts or _P["Tuple"] < pp:
        return f"({text})"
    return text


def _list(node, pp):
    return f"[{_comma_list(node.elts, trailing=False)}]"


def _binop(node, pp):
    name = type(node.op).__name__
    p = _P[name]
    if name == "Pow":
        left, right = _expr(node.left, _P["Pow"] + 1), _expr(node.right, _P["PowRHS"])
    else:
        left, right = _expr(node.left, p), _expr(node.right, p + 1)
    return _delimit(f"{left} {_SYMBOL[name]} {right}", p, pp)


def _unaryop(node, pp):
    name = type(node.op).__name__
    p = _P[name]
    sym = _SYMBOL[name]
    return _delimit(sym + (" " if sym.isalpha() else "") + _expr(node.operand, p), p, pp)


def _boolop(node, pp):
    name = type(node.op).__name__
    p = _P[name]
    return _delimit(f" {_SYMBOL[name]} ".join(_expr(v, p + 1) for v in node.values), p, pp)


def _compare(node, pp):
    p = _P[type(node.ops[0]).__name__]
    text = _expr(node.left, p + 1)
    for op, right in zip(node.ops, node.comparators):
        text += f" {_SYMBOL[type(op).__name__]} {_expr(right, p + 1)}"
    return _delimit(text, p, pp)


def _ifexp(node, pp):
    p = _P["IfExp"]
    text = (f"{_expr(node.body, p + 1)} if {_expr(node.test, p + 1)} "
            f"else {_expr(node.orelse, p)}")
    return _delimit(text, p, pp)


_EXPRESSIONS = {
    "Name": _name, "Constant": _constant, "Attribute": _attribute, "Call": _call,
    "Starred": _starred, "Subscript": _subscript, "Slice": _slice, "Tuple": _tuple,
    "List": _list, "BinOp": _binop, "UnaryOp": _unaryop, "BoolOp": _boolop,
    "Compare": _compare, "IfExp": _ifexp,
}


# -- templates: rendered once per text -----------------------------------------------
#
# Most statements of a generated function are a primitive's template with the op's
# inputs and params filled in. The template is filled with placeholder names for the
# inputs (dunder names, which no generated name is), rendered once per distinct text
# (a pure function of the text: remembered in a bounded memo, never stale), and the
# inputs' names are put in where the placeholders were written.

def placeholders(n: int) -> list:
    """Names to fill a template's ``n`` inputs with (see :func:`expression`)."""
    return [f"__ad_in{k}__" for k in range(n)]


def _placeholder_index(name: str) -> int | None:
    if name.startswith("__ad_in") and name.endswith("__") and name[7:-2].isdigit():
        return int(name[7:-2])
    return None


class Rendered(ast.expr):
    """An expression: ``source`` (inputs named by :func:`placeholders`) with ``names``."""

    _fields = ("source", "names")


class RenderedStatement(ast.stmt):
    """A one-line statement: ``source`` (inputs named by placeholders) with ``names``."""

    _fields = ("source", "names")


def expression(source: str, names: list) -> ast.expr:
    """The expression ``source`` with its placeholders standing for ``names``: a node
    :func:`unparse` writes without parsing it again. SyntaxError if it is not one."""
    if _pieces(source, "eval", _P["Assign"]) is None:  # parses it: SyntaxError
        return _substituted(ast.parse(source, mode="eval").body, names)
    return Rendered(source=source, names=names)


def statement(source: str, names: list) -> ast.stmt:
    """The single statement ``source`` with its placeholders standing for ``names``."""
    if _pieces(source, "exec", 0) is None:
        return _substituted(ast.parse(source).body[0], names)
    return RenderedStatement(source=source, names=names)


@functools.lru_cache(maxsize=4096)
def _pieces(source: str, mode: str, pp: int) -> tuple | None:
    """``source`` written at precedence ``pp`` (a statement: on one line), split at its
    placeholders (their indices at the odd positions); None when this module does not
    write it (astor does, from the parsed tree)."""
    tree = ast.parse(source, mode=mode)
    try:
        if mode == "eval":
            text = _expr(tree.body, pp)
        else:
            lines: list = []
            if len(tree.body) != 1:
                return None
            _statement(tree.body[0], 0, lines)
            if len(lines) != 1:
                return None
            text = lines[0]
    except _Unsupported:
        return None
    parts = text.split("\0")
    return tuple(int(p) if k % 2 else p for k, p in enumerate(parts))


def _joined(pieces: tuple, names: list) -> str:
    return "".join(names[p] if k % 2 else p for k, p in enumerate(pieces))


def _rendered(node, pp):
    return _joined(_pieces(node.source, "eval", pp), node.names)


def _rendered_statement(node, level, lines):
    lines.append(_line(level, _joined(_pieces(node.source, "exec", 0), node.names)))


def _substituted(node, names: list):
    """``node`` with each placeholder name replaced by its name in ``names``."""
    for n in ast.walk(node):
        k = _placeholder_index(n.id) if isinstance(n, ast.Name) else None
        if k is not None:
            n.id = names[k]
    return node


_EXPRESSIONS["Rendered"] = _rendered
_STATEMENTS["RenderedStatement"] = _rendered_statement


# -- anything else: astor -------------------------------------------------------------

def _astor_unparse(tree) -> str:
    import astor  # only for trees holding nodes the writer above does not write

    class Writer(astor.SourceGenerator):
        """astor's generator plus comment lines and ``return (a,)`` with parentheses."""

        def visit_Comment(self, node):
            self.statement(node, "# " + one_line(node.text))

        def visit_Rendered(self, node):
            parsed = _substituted(ast.parse(node.source, mode="eval").body, node.names)
            if hasattr(node, "_pp"):
                parsed._pp = node._pp
            self.visit(parsed)

        def visit_RenderedStatement(self, node):
            self.visit(_substituted(ast.parse(node.source).body[0], node.names))

        def visit_Return(self, node):
            if not isinstance(node.value, ast.Tuple):
                return super().visit_Return(node)
            elts = node.value.elts
            self.statement(node, "return (")
            self.comma_list(elts, len(elts) == 1)
            self.write(")")

    return astor.to_source(tree, pretty_source="".join, source_generator_class=Writer)
