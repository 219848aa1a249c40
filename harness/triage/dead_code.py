"""Dead code the reducer removes in one candidate instead of one judge call per statement.

A generated program returns a tuple of every value it computed, so every statement is live until the tuple
shrinks, and a reduction that deletes statements one at a time ran out of its 60 s with the whole program
left (a 2.14.1 repro of 118 lines whose divergence needed five). These edits are proposals like any other:
the judge keeps one only when the same failure still shows, so a statement removed for being unread that
mattered by its side effect (a metaclass counting instances) costs one rejected candidate, not a wrong repro.
"""
from __future__ import annotations

import ast
import copy
from collections.abc import Iterator

_BODIES = ("body", "orelse", "finalbody")


def _read_names(fn: ast.AST) -> set[str]:
    """Names `fn` (nested functions, lambdas and comprehensions included) reads, deletes or declares shared."""
    names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    return names | {x for n in ast.walk(fn) if isinstance(n, (ast.Global, ast.Nonlocal)) for x in n.names}


def _stored(target: ast.expr) -> set[str] | None:
    """The names a plain assignment target binds, or None when it writes anything else (an attribute, an item)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        out: set[str] = set()
        for elt in target.elts:
            inner = _stored(elt.value if isinstance(elt, ast.Starred) else elt)
            if inner is None:
                return None
            out |= inner
        return out
    return None


def _dead(stmt: ast.stmt, read: set[str]) -> bool:
    if isinstance(stmt, ast.Assign):
        bound = [_stored(t) for t in stmt.targets]
        return all(b is not None and not b & read for b in bound)
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        bound_one = _stored(stmt.target)
        return bound_one is not None and not bound_one & read
    if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
        lists = [getattr(stmt, name, None) or [] for name in _BODIES]
        return all(isinstance(s, ast.Pass) for body in lists for s in body)
    return False


def _statement_lists(fn: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every statement list of `fn`'s own body, nested blocks included, nested definitions not."""
    stack: list[ast.AST] = [fn]
    while stack:
        node = stack.pop()
        for name in _BODIES:
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body
                stack.extend(s for s in body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                     ast.ClassDef)))
        if isinstance(node, ast.Try):
            stack.extend(node.handlers)


def drop_dead_locals(tree: ast.Module) -> bool:
    """Remove, in every function, assignments to names the function never reads and blocks left holding only
    `pass`, to a fixed point (in place). True when anything went."""
    changed = False
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        while True:
            read = _read_names(fn)
            removed = False
            for body in _statement_lists(fn):
                keep = [s for s in body if not _dead(s, read)]
                if len(keep) != len(body):
                    body[:] = keep or [ast.Pass()]
                    removed = True
            if not removed:
                break
            changed = True
    return changed


def entry_returns(tree: ast.Module, entry: str) -> list[ast.Return]:
    """The entry's own `return` statements (not those of functions defined inside it)."""
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry), None)
    if fn is None:
        return []
    return [r for body in _statement_lists(fn) for r in body if isinstance(r, ast.Return)]


def keep_one_output(tree: ast.Module, entry: str) -> Iterator[tuple[int, ast.Module]]:
    """For each position of the entry's returned tuple, a copy returning that element alone (as a 1-tuple, so
    an output path keeps its shape), one position per candidate."""
    returns = entry_returns(tree, entry)
    sizes = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else -1 for r in returns}
    if len(sizes) != 1 or (size := sizes.pop()) < 2:
        return
    for i in range(size):
        new = copy.deepcopy(tree)
        for r in entry_returns(new, entry):
            assert isinstance(r.value, ast.Tuple)
            r.value = ast.Tuple([r.value.elts[i]], ast.Load())
        yield i, new


def _bound_names(stmt: ast.stmt) -> set[str] | None:
    """The module-level names a definition binds, or None for a statement that is not a plain definition."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        simple = all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store)) for t in targets for n in ast.walk(t))
        return names if simple and names else None
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    return None


def drop_unread_definitions(tree: ast.Module, keep: set[str]) -> bool:
    """Remove module-level definitions (outside `keep`) that no other statement reads, to a fixed point (in
    place). True when anything went."""
    changed = False
    while True:
        loaded = [_read_names(s) for s in tree.body]
        dead = []
        for i, stmt in enumerate(tree.body):
            names = _bound_names(stmt)
            if not names or names & keep:
                continue
            if not any(names & used for j, used in enumerate(loaded) if j != i):
                dead.append(i)
        if not dead:
            return changed
        tree.body = [s for i, s in enumerate(tree.body) if i not in dead] or [ast.Pass()]
        changed = True


def remove_dead(tree: ast.Module, keep: set[str]) -> bool:
    """Dead locals first (they may be a definition's last reader), then unread definitions (in place)."""
    locals_gone = drop_dead_locals(tree)
    return drop_unread_definitions(tree, keep) or locals_gone
