"""Edits the reducer refuses however well they keep the failure: each guard reads a program's AST and names what
an accepted candidate may not add.

A predicate that only asks "does it still diverge" accepts any divergence, and two kinds of edit make one that is
not torch's fault: an edit inside a function only the compiled run executes (the program becomes invalid, not
miscompiled), and an edit that lets a freshly allocated tensor's values reach what the oracles compare (its bytes
are whatever the allocator left there, different in every run).
"""
from __future__ import annotations

import ast
import copy

_FAKE_DECORATORS = ("register_fake", "impl_abstract")

# Calls whose result holds uninitialised memory, and the reads of such a result that look only at its metadata.
_UNINITIALIZED = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
_METADATA = frozenset({"dim", "ndim", "ndimension", "shape", "size", "stride", "dtype", "device", "layout", "numel",
                       "nelement", "element_size", "is_contiguous", "storage_offset", "requires_grad",
                       "is_floating_point", "is_complex"})


def _masked(node: ast.AST) -> str:
    """`node` as its shape with every name masked, so that renaming it is not a new one."""
    masked = copy.deepcopy(node)
    for m in ast.walk(masked):
        for attr in ("id", "arg", "name"):
            if isinstance(getattr(m, attr, None), str):
                setattr(m, attr, "_")
    return ast.dump(masked)


def compiled_only(tree: ast.AST) -> set[str]:
    """The functions only the compiled run executes (a leaf function's or custom op's fake), each as its shape
    with every name masked (renaming stays allowed). Eager never runs them, so an edit there that keeps the
    failure may make the program invalid instead (a fake whose output no longer matches its real function's,
    seen on 2.14.1): the reducer leaves them as drawn, or deletes them whole."""
    def fake(d: ast.expr) -> bool:
        d = d.func if isinstance(d, ast.Call) else d
        return isinstance(d, ast.Attribute) and d.attr in _FAKE_DECORATORS

    return {_masked(n) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(fake(d) for d in n.decorator_list)}


def uninitialized_reads(tree: ast.AST) -> set[str]:
    """The statements (names masked) that use a tensor made by `empty`, `empty_like`, `new_empty`... other than
    through its metadata (`torch.empty_like(t).dim()` reads none of its values). A candidate may keep the ones the
    drawn program has and add none: a 2.5.1 repro reduced `torch.empty_like(t0).dim()` to a returned
    `torch.empty_like(a)`, and filed the allocator's garbage as a wrong value."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = set()
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _UNINITIALIZED):
            continue
        if isinstance(parents.get(n), ast.Attribute) and parents[n].attr in _METADATA:
            continue
        stmt = n
        while stmt in parents and not isinstance(stmt, ast.stmt):
            stmt = parents[stmt]
        found.add(_masked(stmt))
    return found
