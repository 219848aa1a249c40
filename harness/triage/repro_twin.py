"""What the plain repro template needs to know about a program's shape.

`program_literal`: the literal a program assigns to one of its convention names (`CALLS`, `COMPILE_OPTIONS`...).

`keeps_state`: whether the program keeps state of its own at module level (a global it rebinds or mutates,
a class attribute, a `between` hook...), so that eager and compiled must each start from a fresh copy of it;
a program of functions over their arguments can share one namespace. It errs towards "keeps state".

`cond_as_if`: that rendering made from a program's source (`torch.cond(p, t, f, ops)` as `t(*ops) if bool(p)
else f(*ops)`, the rule the generator renders it by), so the reducer can edit a cond program and its rendering as
one.

`eager_twin`: a cond program's plain-Python rendering (what dynfuzz's eager run executes instead of
`torch.cond`) as extra top-level definitions: each definition that differs from the program's is renamed
`<name>_eager`, and so are its references to other renamed definitions.
"""
from __future__ import annotations

import ast
import re
from typing import Any

CONVENTION = {"CALLS", "COMPILE_OPTIONS", "DYNAMO_CONFIG", "ENTRY"}
_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset)


def program_literal(source: str, name: str) -> Any:
    """The literal value a program assigns to `name` at its top level (`CALLS`, `COMPILE_OPTIONS`...), else None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def _constant(node: ast.AST) -> bool:
    try:
        return isinstance(ast.literal_eval(node), _IMMUTABLE)
    except (ValueError, SyntaxError, TypeError):
        return False


def _top_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _mutable_default(fn: ast.AST) -> bool:
    args = getattr(fn, "args", None)
    defaults = [*args.defaults, *(d for d in args.kw_defaults if d is not None)] if args else []
    return any(not _constant(d) for d in defaults)


def keeps_state(source: str, lines: list[str], between: bool) -> bool:
    """True when eager and compiled cannot share the program's globals (see the module docstring); `lines`
    are the check and perturbation lines the repro runs (one reading `ns`/`c_ns` compares the globals)."""
    if between or any(re.search(r"\b(c_)?ns\b", line) for line in lines):
        return True
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True
    top = _top_names(tree)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.decorator_list or _mutable_default(node):
                return True
            continue
        if isinstance(node, ast.ClassDef):
            if node.decorator_list or any(not isinstance(b, (ast.FunctionDef, ast.Pass, ast.Expr)) or (
                    isinstance(b, ast.FunctionDef) and (b.decorator_list or _mutable_default(b))) for b in node.body):
                return True
            continue
        if isinstance(node, ast.Assign) and (all(isinstance(t, ast.Name) and t.id in CONVENTION for t in node.targets)
                                             or _constant(node.value)):
            continue
        return True  # any other module-level statement makes an object the program may change
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            return True
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name) and base.id in top | {"cls"} or not isinstance(base, ast.Name):
                return True
            if isinstance(node, ast.Attribute) and node.attr in ("__class__", "__dict__"):
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "setattr", "delattr", "globals", "vars"):
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("__class__", "__globals__", "__closure__", "__dict__"):
            return True
    return False


class _Rename(ast.NodeTransformer):
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.names:
            node.id += "_eager"
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [n + "_eager" if n in self.names else n for n in node.names]
        return node

    def _named(self, node):
        if node.name in self.names:
            node.name += "_eager"
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_ClassDef = visit_AsyncFunctionDef = _named


def _bound(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def eager_twin(source: str, eager_source: str, entry: str) -> tuple[str, str]:
    """The eager rendering's differing definitions, renamed, as program text, and the eager entry's name."""
    program = {ast.dump(n) for n in ast.parse(source).body}
    eager = ast.parse(eager_source).body
    differing = [n for n in eager if ast.dump(n) not in program]
    imports = [n for n in differing if isinstance(n, (ast.Import, ast.ImportFrom))]
    defs = [n for n in differing if n not in imports]
    names = set().union(*(_bound(n) for n in defs)) if defs else set()
    renamed = [_Rename(names).visit(n) for n in defs]
    text = "\n\n\n".join(ast.unparse(n) for n in [*imports, *renamed])
    return text, entry + "_eager" if entry in names else entry


class _CondAsIf(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr == "cond" and isinstance(f.value, ast.Name)
                and f.value.id == "torch" and len(node.args) == 4 and not node.keywords):
            return node
        pred, true_fn, false_fn, ops = node.args
        args = list(ops.elts) if isinstance(ops, ast.Tuple) else [ops]
        return ast.IfExp(ast.Call(ast.Name("bool", ast.Load()), [pred], []), ast.Call(true_fn, args, []),
                         ast.Call(false_fn, args, []))


def cond_as_if(source: str) -> str:
    """The program with every four-argument `torch.cond` call as the plain `if` eager runs instead."""
    tree = _CondAsIf().visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def derives_twin(source: str, eager_source: str) -> bool:
    """Whether `eager_source` is `cond_as_if(source)`: then an edited program's rendering can be made anew."""
    try:
        return ast.dump(ast.parse(cond_as_if(source))) == ast.dump(ast.parse(eager_source))
    except SyntaxError:
        return False
