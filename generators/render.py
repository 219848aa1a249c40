"""Render program IR to readable Python source, through `ast` so precedence is exact."""
from __future__ import annotations

import ast
import textwrap
from functools import singledispatch

from . import ir


@singledispatch
def to_ast(node):  # pragma: no cover - a new IR kind without a renderer is a bug
    raise TypeError(f"no renderer for IR node {type(node).__name__}")


_BIN = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv, "%": ast.Mod,
        "**": ast.Pow, "@": ast.MatMult, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor,
        "<<": ast.LShift, ">>": ast.RShift}
_CMP = {"<": ast.Lt, ">": ast.Gt, "<=": ast.LtE, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq,
        "is": ast.Is, "is not": ast.IsNot, "in": ast.In, "not in": ast.NotIn}
_UNARY = {"-": ast.USub, "+": ast.UAdd, "not": ast.Not, "~": ast.Invert}


def _load(e):
    return to_ast(e)


def _store(e):
    node = to_ast(e)
    for sub in ast.walk(node):
        if hasattr(sub, "ctx"):
            sub.ctx = ast.Load()
    node.ctx = ast.Store() if not isinstance(node, ast.Tuple) else ast.Store()
    if isinstance(node, ast.Tuple):
        for elt in node.elts:
            elt.ctx = ast.Store()
    return node


@to_ast.register
def _(n: ir.Name):
    return ast.Name(n.id, ast.Load())


@to_ast.register
def _(n: ir.Const):
    return ast.Constant(n.value)


@to_ast.register
def _(n: ir.Call):
    return ast.Call(_load(n.func), [_load(a) for a in n.args], [ast.keyword(k, _load(v)) for k, v in n.kwargs])


@to_ast.register
def _(n: ir.Attr):
    return ast.Attribute(_load(n.value), n.attr, ast.Load())


@to_ast.register
def _(n: ir.Sub):
    return ast.Subscript(_load(n.value), _load(n.index), ast.Load())


@to_ast.register
def _(n: ir.Slice):
    return ast.Slice(*(None if p is None else _load(p) for p in (n.lower, n.upper, n.step)))


@to_ast.register
def _(n: ir.BinOp):
    if n.op in ("and", "or"):
        return ast.BoolOp(ast.And() if n.op == "and" else ast.Or(), [_load(n.left), _load(n.right)])
    if n.op in _CMP:
        return ast.Compare(_load(n.left), [_CMP[n.op]()], [_load(n.right)])
    return ast.BinOp(_load(n.left), _BIN[n.op](), _load(n.right))


@to_ast.register
def _(n: ir.Unary):
    return ast.UnaryOp(_UNARY[n.op](), _load(n.operand))


@to_ast.register
def _(n: ir.TupleExpr):
    return ast.Tuple([_load(e) for e in n.elts], ast.Load())


@to_ast.register
def _(n: ir.ListExpr):
    return ast.List([_load(e) for e in n.elts], ast.Load())


@to_ast.register
def _(n: ir.SetExpr):
    return ast.Set([_load(e) for e in n.elts]) if n.elts else ast.Call(ast.Name("set", ast.Load()), [], [])


@to_ast.register
def _(n: ir.DictExpr):
    return ast.Dict([_load(k) for k, _ in n.items], [_load(v) for _, v in n.items])


@to_ast.register
def _(n: ir.Lambda):
    args = ast.arguments([], [ast.arg(p) for p in n.params], None, [], [], None, [])
    return ast.Lambda(args, _load(n.body))


@to_ast.register
def _(n: ir.IfExp):
    return ast.IfExp(_load(n.test), _load(n.body), _load(n.orelse))


def _body(stmts):
    out = [to_ast(s) for s in stmts]
    return out or [ast.Pass()]


@to_ast.register
def _(n: ir.Assign):
    return ast.Assign([_store(n.target)], _load(n.value), lineno=0)


@to_ast.register
def _(n: ir.AugAssign):
    return ast.AugAssign(_store(n.target), _BIN[n.op](), _load(n.value))


@to_ast.register
def _(n: ir.ExprStmt):
    return ast.Expr(_load(n.value))


@to_ast.register
def _(n: ir.Return):
    return ast.Return(None if n.value is None else _load(n.value))


@to_ast.register
def _(n: ir.Def):
    positional = [ast.arg(p.name) for p in n.params]
    defaults = [_load(p.default) for p in n.params if p.default is not None]
    args = ast.arguments([], positional, None, [], [], None, defaults)
    return ast.FunctionDef(n.name, args, _body(n.body), [_load(d) for d in n.decorators], None, lineno=0,
                           type_params=[])


@to_ast.register
def _(n: ir.ClassDef):
    return ast.ClassDef(n.name, [_load(b) for b in n.bases], [], _body(n.body), [], type_params=[])


@to_ast.register
def _(n: ir.Nonlocal):
    return ast.Nonlocal(list(n.names))


@to_ast.register
def _(n: ir.Global):
    return ast.Global(list(n.names))


@to_ast.register
def _(n: ir.If):
    return ast.If(_load(n.test), _body(n.body), [to_ast(s) for s in n.orelse])


@to_ast.register
def _(n: ir.For):
    return ast.For(_store(n.target), _load(n.iter), _body(n.body), [], lineno=0)


@to_ast.register
def _(n: ir.Del):
    targets = []
    for t in n.targets:
        node = to_ast(t)
        node.ctx = ast.Del()
        targets.append(node)
    return ast.Delete(targets)


@to_ast.register
def _(n: ir.Pass):
    return ast.Pass()


@to_ast.register
def _(n: ir.Import):
    return ast.Import([ast.alias(n.module, n.alias)])


@to_ast.register
def _(n: ir.ImportFrom):
    return ast.ImportFrom(n.module, [ast.alias(x) for x in n.names], 0)


@to_ast.register
def _(n: ir.With):
    items = [ast.withitem(_load(ctx), None if var is None else _store(var)) for ctx, var in n.items]
    return ast.With(items, _body(n.body), lineno=0)


@to_ast.register
def _(n: ir.Try):
    handlers = [ast.ExceptHandler(None if t is None else _load(t), nm, _body(body)) for t, nm, body in n.handlers]
    return ast.Try(_body(n.body), handlers, [], [])


@to_ast.register
def _(n: ir.Code):
    body = ast.parse(textwrap.dedent(n.text)).body
    if len(body) != 1:
        raise ValueError(f"ir.Code must hold exactly one statement, got {len(body)}: {n.text!r}")
    return body[0]


@to_ast.register
def _(n: ir.CodeExpr):
    return ast.parse(textwrap.dedent(n.text).strip(), mode="eval").body


def render_stmt(stmt: ir.Stmt) -> str:
    """Source text of one statement (used by tests and the minimizer)."""
    return ast.unparse(ast.Module([to_ast(stmt)], []))


def render(program: ir.Program) -> str:
    """Source text of a whole program, PEP 8 spaced: two blank lines around top-level defs and classes."""
    chunks: list[str] = []
    prev_block = False
    for stmt in program.body:
        block = isinstance(stmt, (ir.Def, ir.ClassDef))
        text = render_stmt(stmt)
        if chunks:
            chunks.append("\n\n\n" if block or prev_block else "\n")
        chunks.append(text)
        prev_block = block
    return "".join(chunks) + "\n"
