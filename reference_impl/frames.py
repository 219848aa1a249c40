"""Frames and the program's code map: where each name lives, and which AST node a code object came from.

Name resolution follows the code object CPython compiled for the same source:
`co_cellvars`/`co_freevars` live in cells (real `types.CellType` objects, so a
cell shared by two closures is one object), `co_varnames` are fast locals,
everything else is a global or a builtin. A class body looks in its
namespace first, then its cells, then globals.
"""
from __future__ import annotations

import ast
import builtins
import types
from dataclasses import dataclass, field
from typing import Any

FuncNode = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_UNBOUND = object()


def code_key(code: types.CodeType) -> tuple[str, int]:
    return code.co_qualname, code.co_firstlineno


class CodeMap:
    """Maps a code object compiled from the program to the AST node of its function or class body."""

    def __init__(self, tree: ast.Module, source: str) -> None:
        self.nodes: dict[tuple[str, int], list[ast.AST]] = {}
        self.codes: dict[tuple[str, int], list[types.CodeType]] = {}
        self._collect(tree.body, "")
        self._walk_codes(compile(source, "<reference>", "exec"))
        self._by_id: dict[int, tuple[ast.AST, types.CodeType]] = {}

    def _collect(self, body: Any, prefix: str) -> None:
        for node in _children_in_order(body):
            if isinstance(node, (*FuncNode, ast.ClassDef)):
                name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
                qual = prefix + name
                line = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
                self.nodes.setdefault((qual, line), []).append(node)
                inner = qual + ("." if isinstance(node, ast.ClassDef) else ".<locals>.")
                outer, body = _func_parts(node)
                self._collect(outer, prefix)
                self._collect(body, inner)
            elif isinstance(node, COMPREHENSIONS):
                self._collect(node.generators[0].iter, prefix)
                inner = f"{prefix}<{type(node).__name__.lower()}>."
                rest = [x for x in ast.iter_child_nodes(node) if x is not node.generators[0]]
                rest += [x for x in ast.iter_child_nodes(node.generators[0]) if x is not node.generators[0].iter]
                self._collect(rest, inner.replace("<generatorexp>", "<genexpr>"))
            else:
                self._collect(list(ast.iter_child_nodes(node)), prefix)

    def _walk_codes(self, code: types.CodeType) -> None:
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                self.codes.setdefault(code_key(c), []).append(c)
                self._walk_codes(c)

    def node_for(self, code: types.CodeType) -> ast.AST | None:
        key = code_key(code)
        nodes = self.nodes.get(key)
        if not nodes:
            return None
        if len(nodes) == 1:
            return nodes[0]
        ours = self.codes.get(key, [])
        for i, c in enumerate(ours):
            if c.co_code == code.co_code and list(c.co_positions()) == list(code.co_positions()) and i < len(nodes):
                return nodes[i]
        return None


def _func_parts(node: ast.AST) -> tuple[list[Any], list[Any]]:
    """Decorators, defaults and bases belong to the enclosing scope; the body to the node's own."""
    outer: list[Any] = list(getattr(node, "decorator_list", []))
    if isinstance(node, ast.ClassDef):
        outer += node.bases + [k.value for k in node.keywords]
    else:
        outer += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
    return outer, node.body if isinstance(node.body, list) else [node.body]


def _children_in_order(body: Any) -> list[ast.AST]:
    return list(body) if isinstance(body, list) else [body]


@dataclass
class Frame:
    """One activation: fast locals (or a class body's namespace), cells by name, the module globals."""

    code: types.CodeType | None
    globals: dict[str, Any]
    locals: dict[str, Any] = field(default_factory=dict)
    cells: dict[str, types.CellType] = field(default_factory=dict)
    scope: str = "function"  # function (comprehensions too: they have their own code) or class

    def lookup(self, name: str) -> tuple[str, Any]:
        """(where, value): where is local, cell, class, global or builtin; raises NameError."""
        if self.scope == "class" and name in self.locals:
            return "class", self.locals[name]
        if name in self.cells:
            try:
                return "cell", self.cells[name].cell_contents
            except ValueError:
                raise NameError(f"free variable '{name}' referenced before assignment") from None
        if self.scope == "function" and self.code is not None and name in self.code.co_varnames:
            if name not in self.locals:
                raise UnboundLocalError(f"cannot access local variable '{name}' where it is not associated "
                                        "with a value")
            return "local", self.locals[name]
        if name in self.globals:
            return "global", self.globals[name]
        b = self.globals.get("__builtins__", builtins)
        b = b if isinstance(b, dict) else vars(b)
        if name in b:
            return "builtin", b[name]
        raise NameError(f"name '{name}' is not defined")
