"""codegen/unparse.py writes what astor writes, byte for byte.

Each tree is written twice: by :func:`unparse` and by astor's generator (the
fallback the module keeps for trees holding other nodes), on a copy, since astor
annotates the nodes it visits. Expressions are parsed from text, so every case is
also one a primitive's template can produce.
"""
from __future__ import annotations

import ast
import copy

import pytest

from ad_compiler.codegen import unparse as U
from ad_compiler.codegen.emit import Comment

pytest.importorskip("astor")

EXPRESSIONS = [
    "a + b * c", "(a + b) * c", "a - (b - c)", "(a - b) - c", "a ** b ** c", "(a ** b) ** c",
    "a ** -b", "(-a) ** 2", "-a ** 2", "-(-a)", "not a", "not (a and b)", "a and b or c",
    "a and (b or c)", "a < b < c", "(a < b) == c", "a if b else c", "(a if b else c) + 1",
    "a if (b if c else d) else e", "f(a, *b, k=c, **d)", "f(a)(b)", "(a + b).T", "(1).real",
    "(a, b)[0]", "x[1:2, ::-1]", "x[a + 1:]", "x[:, None]", "x[(1, 2)]", "x[()]", "x[...]",
    "np.sum(x, axis=(0, 1), keepdims=True)", "[a, b, (c, d)]", "(a,)", "()", "1e1000",
    "-1e1000", "1j", "2 + 3j", "1.5", "-2", "x @ (y @ z)", "x @ y @ z", "a % b // c",
    "a << b | c & d ^ e", "~a", "+a", "a is not b", "a not in b", "'s' + \"t\"", "b'x'",
    "None", "True + 1", "x.reshape((2, 3))", "np.float32", "-math.inf", "f(a + b)",
    "f((a, b))", "f(*(a + b))",
]

STATEMENTS = [
    "x = a + b", "x, y = y, x", "x += 1", "x -= a * b", "x.append(y)", "del x, y",
    "np.add(a, b, out=a)", "x[0] = 1", "return (a,)", "return (a, b)", "return a",
    "if a:\n    x = 1\nelif b:\n    x = 2\nelse:\n    x = 3",
    "if a:\n    pass\nelse:\n    if b:\n        x = 1\n    y = 2",
    "for i in range(n):\n    x = x + i\n    if x:\n        break",
    "for i in (1, 2):\n    pass", "while True:\n    if not c:\n        break\n    s = s + 1",
]


def _astor(tree) -> str:
    return U._astor_unparse(copy.deepcopy(tree))


def _function(body) -> ast.Module:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg="x"), ast.arg(arg="w")],
                         vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    fn = ast.FunctionDef(name="f", args=args, body=body, decorator_list=[], returns=None,
                         type_comment=None)
    return ast.Module(body=[fn], type_ignores=[])


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_an_expression_is_written_as_astor_writes_it(source):
    value = ast.parse(source, mode="eval").body
    tree = _function([ast.Assign(targets=[ast.Name(id="r", ctx=ast.Store())], value=value),
                      ast.Expr(value=copy.deepcopy(value))])
    assert U.unparse(tree) == _astor(tree)


@pytest.mark.parametrize("source", STATEMENTS)
def test_a_statement_is_written_as_astor_writes_it(source):
    tree = _function([Comment(text="model.py:3: y = x\n# injected"), *ast.parse(source).body])
    assert U.unparse(tree) == _astor(tree)
    assert "\n# injected" not in U.unparse(tree)  # the comment stays one line


@pytest.mark.parametrize("source", ["np.add({0}, {1})", "{0} ** (-2)", "({0}, {1})[0]",
                                    "-{0}", "{0}[:, ::-1]", "np.where({0} > (0.5), {1}, {0})"])
def test_a_rendered_template_is_the_template_filled_in(source):
    holders, names = U.placeholders(2), ["x_1", "w"]
    value = U.expression(source.format(*holders), names)
    tree = _function([ast.Assign(targets=[ast.Name(id="r", ctx=ast.Store())], value=value)])
    plain = _function([ast.Assign(targets=[ast.Name(id="r", ctx=ast.Store())],
                                  value=ast.parse(source.format(*names), mode="eval").body)])
    assert U.unparse(tree) == _astor(plain) == _astor(tree)


def test_a_template_text_that_is_no_expression_is_a_syntax_error():
    with pytest.raises(SyntaxError):
        U.expression("np.add({0}, ".format(*U.placeholders(1)), ["x"])


def test_a_tree_with_other_nodes_is_written_by_astor():
    tree = _function([ast.parse("y = lambda v: v + 1").body[0],
                      ast.parse("s = 'a\\nb'").body[0]])
    assert U.unparse(tree) == _astor(tree)


def test_a_template_of_many_inputs_takes_every_name():
    names = [f"v{k}" for k in range(80)]
    source = f"np.stack([{', '.join(U.placeholders(80))}], axis=0)"
    tree = _function([ast.Assign(targets=[ast.Name(id="r", ctx=ast.Store())],
                                 value=U.expression(source, names))])
    assert f"r = np.stack([{', '.join(names)}], axis=0)" in U.unparse(tree)
