"""The packages import one way (docs/development.md, "Layers"): one case (`run/`) below triage, triage below
the campaign, the command line on top. Read from the source with `ast`, so an import inside a function counts
as much as one at a module's top: hiding an import in a function does not make a loop go away."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_ROOTS = {"harness": "dynfuzz", "generators": "dynfuzz.generators", "oracles": "dynfuzz.oracles",
                 "reference_impl": "dynfuzz.reference_impl"}

# Rooms, lowest first: a module may import its own room, or one of a lower rank; rooms of one rank never import
# each other in a loop. Each entry is a module name prefix; the longest one that matches places a module.
RANKS = {"generators": 0, "oracles": 0, "reference_impl": 0, "base": 0, "run": 1, "triage": 2, "report": 3,
         "campaign": 4, "releases": 5, "top": 6, "cli": 7}
ROOMS = {
    "dynfuzz.generators": "generators",
    "dynfuzz.oracles": "oracles",
    "dynfuzz.reference_impl": "reference_impl",
    "dynfuzz.errors": "base", "dynfuzz.paths": "base", "dynfuzz.budget": "base",
    "dynfuzz.run": "run",
    # The compilers a CompileSpec can name (they subclass run/compiler_base.Compiler, run/compilers.make_compiler
    # looks them up) and the mutants make_compiler applies: part of running one case.
    "dynfuzz.doubles": "run", "dynfuzz.mutants": "run",
    "dynfuzz.triage": "triage",
    "dynfuzz.report": "report",
    "dynfuzz.campaign": "campaign",
    "dynfuzz.releases": "releases",
    "dynfuzz": "top",  # the package itself: check, gate, merge, sample, the pytest plugin
    "dynfuzz.mutants.trials": "top",  # runs `dynfuzz fuzz` against mutants and reads the repros it saved
    "dynfuzz.cli": "cli", "dynfuzz.__main__": "cli",
}


def room_of(module: str) -> str:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in ROOMS:
            return ROOMS[".".join(parts[:n])]
    raise KeyError(module)


def modules(root: Path = ROOT) -> list[tuple[str, Path]]:
    found = []
    for folder, package in PACKAGE_ROOTS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append((".".join((package, *parts)), path))
    return found


def imports(module: str, path: Path) -> list[tuple[str, int]]:
    """Every `dynfuzz` module that `module` imports, anywhere in its source (module top, functions,
    TYPE_CHECKING blocks), with the line."""
    found = []
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            if base in ("dynfuzz", *PACKAGE_ROOTS.values()):  # `from dynfuzz import run`: the names are modules
                found += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
            else:
                found.append((base, node.lineno))
    return [(name, line) for name, line in found if name == "dynfuzz" or name.startswith("dynfuzz.")]


def edges(root: Path = ROOT) -> list[tuple[str, str, str]]:
    """(importing room, imported room, where) for every import that crosses rooms."""
    found = []
    for module, path in modules(root):
        mine = room_of(module)
        for name, line in imports(module, path):
            theirs = room_of(name)
            if theirs != mine:
                found.append((mine, theirs, f"{path.relative_to(root)}:{line} imports {name}"))
    return found


def loops(pairs: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one room (Tarjan)."""
    graph = defaultdict(set)
    for a, b in pairs:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(set(graph) | {b for a, b in pairs}):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_room():
    unplaced = []
    for module, _path in modules():
        try:
            room_of(module)
        except KeyError:
            unplaced.append(module)
    assert unplaced == [] and set(ROOMS.values()) <= set(RANKS)


def test_no_room_imports_a_higher_one():
    upward = [where + f" ({mine} -> {theirs})" for mine, theirs, where in edges() if RANKS[mine] < RANKS[theirs]]
    assert upward == []


def test_no_rooms_import_each_other_in_a_loop():
    assert loops({(mine, theirs) for mine, theirs, _where in edges()}) == []


def test_the_check_sees_imports_inside_functions_and_loops(tmp_path):
    """The checks themselves: a function-level import upward is caught, and so is a loop of two rooms."""
    for folder in PACKAGE_ROOTS:
        (tmp_path / folder).mkdir()
    (tmp_path / "harness" / "run").mkdir()
    (tmp_path / "harness" / "run" / "judge.py").write_text(
        "def judge():\n    from dynfuzz.campaign.ledger import Ledger\n    return Ledger\n")
    found = edges(tmp_path)
    assert [(a, b) for a, b, _ in found] == [("run", "campaign")] and RANKS["run"] < RANKS["campaign"]
    assert loops({("run", "triage"), ("triage", "campaign"), ("campaign", "run"), ("cli", "run")}) == \
        [["campaign", "run", "triage"]]
