"""The form of a minimized program: one fault reached from many surfaces is often minimized to one program.

A finding triage minimizes but cannot explain keeps the cheap key of the program it was found in, the
surface it came through (`outputs/wrong-value: dict-subclass global .pick`). On torch 2.5.1 a 20-minute run
filed 59 minimized bug buckets holding 49 distinct minimized programs: five of them the same
`isinstance(Holder.w, Descriptor)` read under five surface keys. Two findings whose minimized programs are
equal up to the names the program binds are one fault (the same code, run the same way, diverging the same
way), so an unexplained finding joins the bucket of its program's form (`BucketFiler.twin`). What the form
keeps: the AST, every attribute name, constant, import and operator, the program's DYNAMO_CONFIG, and the
finding's oracle and class; what it forgets: the names of functions, classes, arguments and variables the
program binds, renamed in the order they first appear.
"""
from __future__ import annotations

import ast
import builtins
import hashlib

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding

_KEPT = frozenset(dir(builtins))


class _Renamer(ast.NodeTransformer):
    """Renames every bound name (not a builtin) to `n0, n1, ...` in order of first appearance."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _name(self, name: str) -> str:
        if name in _KEPT:
            return name
        return self.names.setdefault(name, f"n{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._name(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._name(node.arg)
        self.generic_visit(node)
        return node

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        node.name = self._name(node.name)
        self.generic_visit(node)
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [self._name(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_alias(self, node: ast.alias) -> ast.AST:
        bound = node.asname or node.name.split(".")[0]
        renamed = self._name(bound)
        if node.asname is not None or "." not in node.name:
            node.asname = renamed
        return node


def program_form(case: Case, finding: Finding) -> str | None:
    """A short hash of the case's program up to the names it binds, with its settings and the finding's oracle and
    class; None when the source does not parse (it is then nobody's twin)."""
    try:
        tree = ast.parse(case.source)
    except SyntaxError:
        return None
    shape = ast.dump(_Renamer().visit(tree), annotate_fields=False, include_attributes=False)
    text = "\n".join((finding.oracle, finding.kind, repr(sorted(case.dynamo_config_items)), case.entry, shape))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
