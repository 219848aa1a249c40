"""Taking one construct out of a program, or making its call-plan change happen from the start.

`Construct` is what `dynfuzz.triage.constructs` names; `ablate` returns the program without it (a
statement replaced by `pass`, an argument no longer varied by call, a compile setting dropped) and
`fresh` returns the program with a perturbation applied once before the first call and never again, so
`dynfuzz.triage.explain` can tell a missing guard (the divergence needs the change between calls) from
a change that merely leads to the buggy path (the divergence shows when compiled on the changed state).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

SETTING_NAMES = ("COMPILE_OPTIONS", "DYNAMO_CONFIG")


@dataclass(frozen=True)
class Construct:
    """One named construct, its rank (lower: more specific, preferred for a key) and how to remove it."""

    name: str
    rank: int
    role: str = "construct"
    stmts: tuple[int, ...] = ()  # statement numbers (in `statements()` order) that removing it deletes
    revert_inputs: bool = False  # replace `call` by 0 in `inputs()`
    setting: str | None = None  # a COMPILE_OPTIONS / DYNAMO_CONFIG key to drop

    def ablate(self, source: str) -> str | None:
        """The program without this construct, or None when it cannot be taken out."""
        tree = ast.parse(source)
        if self.stmts:
            slots = statements(tree)
            for k in self.stmts:
                body, i = slots[k]
                body[i] = ast.Pass()
        elif self.revert_inputs:
            fn = function(tree, "inputs")
            if fn is None:
                return None
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and node.id == "call" and isinstance(node.ctx, ast.Load):
                    node.id = "0"
        elif self.setting is not None:
            if not _drop_setting(tree, self.setting):
                return None
        else:
            return None
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"

    def fresh(self, source: str) -> str | None:
        """For a perturbation: the program whose calls all start from the changed state (no change between)."""
        tree = ast.parse(source)
        if self.revert_inputs:
            fn = function(tree, "inputs")
            if fn is None:
                return None
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and node.id == "call" and isinstance(node.ctx, ast.Load):
                    node.id = "1"
        elif self.role == "perturbation" and function(tree, "between") is not None:
            function(tree, "between").name = "_between_once"
            tree.body += ast.parse("_between_once(1)\n\ndef between(call):\n    pass\n").body
        else:
            return None
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def statements(tree: ast.Module) -> list[tuple[list, int]]:
    """Every statement as (its body list, index), in a stable walk order; construct `stmts` index this."""
    out = []
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                out.extend((body, i) for i in range(len(body)))
    return out


def function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _drop_setting(tree: ast.Module, key: str) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in SETTING_NAMES and isinstance(node.value, ast.Dict):
            for i, k in enumerate(node.value.keys):
                if isinstance(k, ast.Constant) and k.value == key:
                    del node.value.keys[i], node.value.values[i]
                    return True
    return False
