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
    """The statements (names masked) that read a tensor made by `empty`, `empty_like`, `new_empty`... other than
    through its metadata (`torch.empty_like(t).dim()` reads none of its values), directly or through a name bound
    to it before anything wrote it (`out=o`, an in-place method `o.copy_(...)`). A candidate may keep the ones the
    drawn program has and add none. On 2.5.1 one repro reduced `torch.empty_like(t0).dim()` to a returned
    `torch.empty_like(a)`; another kept `o = torch.empty_like(a)` and dropped the `torch.neg(a, out=o)` that filled
    it: both filed the allocator's garbage as a wrong value."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = set()
    for n in ast.walk(tree):
        if not _uninitialized_call(n) or _metadata_read(n, parents):
            continue
        stmt = _statement(n, parents)
        if not (isinstance(stmt, ast.Assign) and stmt.value is n and _single_name(stmt) is not None):
            found.add(_masked(stmt))
    for body in _bodies(tree):
        fresh: set[str] = set()
        for stmt in body:
            written = {name for name in fresh if _writes(stmt, name)}
            for m in ast.walk(stmt):
                if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load) and m.id in fresh - written \
                        and not _metadata_read(m, parents):
                    found.add(_masked(stmt))
            fresh -= written
            name = _single_name(stmt) if isinstance(stmt, ast.Assign) else None
            if name is not None:
                fresh.discard(name)
                if _uninitialized_call(stmt.value):
                    fresh.add(name)
    return found


def _uninitialized_call(n: ast.AST) -> bool:
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _UNINITIALIZED


def _metadata_read(n: ast.AST, parents: dict) -> bool:
    return isinstance(parents.get(n), ast.Attribute) and parents[n].attr in _METADATA


def _statement(n: ast.AST, parents: dict) -> ast.AST:
    while n in parents and not isinstance(n, ast.stmt):
        n = parents[n]
    return n


def _single_name(stmt: ast.Assign) -> str | None:
    targets = stmt.targets
    return targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else None


def _bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list of the program (module, function and block bodies), each read in order."""
    return [getattr(n, field) for n in ast.walk(tree) for field in ("body", "orelse", "finalbody")
            if isinstance(getattr(n, field, None), list) and getattr(n, field)
            and isinstance(getattr(n, field)[0], ast.stmt)]


def _writes(stmt: ast.stmt, name: str) -> bool:
    """`stmt` fills the tensor `name` holds: passed as `out=`, or the receiver of an in-place method."""
    for m in ast.walk(stmt):
        if not isinstance(m, ast.Call):
            continue
        if any(k.arg == "out" and isinstance(k.value, ast.Name) and k.value.id == name for k in m.keywords):
            return True
        f = m.func
        if isinstance(f, ast.Attribute) and f.attr.endswith("_") and not f.attr.startswith("_") \
                and isinstance(f.value, ast.Name) and f.value.id == name:
            return True
    return False


# Note [A submodule import is not dead code]
# `import torch.nn.attention.flex_attention` binds only `torch`, which `import torch` binds too; the statement's
# effect is that the submodule is loaded, and in the judging process something else has loaded it already. So
# deleting it kept the failure, and the minimized repro, run as a script, failed with "module 'torch.nn.attention'
# has no attribute 'flex_attention'" instead (torch 2.5.1). A dotted import the program still reads through stays.
def submodule_imports(tree: ast.AST) -> set[str]:
    """The dotted modules `tree` imports without a name of their own (`import a.b.c`)."""
    return {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
            if "." in a.name and a.asname is None}


def missing_imports(tree: ast.AST, modules: set[str]) -> set[str]:
    """Those of `modules` that `tree` reads through (`a.b.c.f(...)`) but no longer imports."""
    read = {ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used = {m for m in modules if any(r == m or r.startswith(m + ".") for r in read)}
    return used - submodule_imports(tree)
