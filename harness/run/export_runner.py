"""Export as a way of compiling: a program whose COMPILE_OPTIONS name `export` is exported, not compiled.

`torch.export.export(strict=True)` and `torch._dynamo.export` trace with Dynamo too, but through its
export paths: the whole frame as one graph, a signature rewritten to take and return the user's
pytrees, inputs and outputs matched back by identity, parameters and constants lifted. None of that
runs under `torch.compile`. `torch.compile(fn, fullgraph=True).aot_compile((args, {}))` (mode `aot`,
torch's precompile) traces as `torch.compile` does, but writes every guard into a package: guard
serialization is a layer of its own. A program drawn with the `export` setting (generators/basic/settings.py)
is exported at the arguments of its call, and the exported graph is run on them.

Note [What an export run is judged on]
An exported program is a graph of tensor operations: the Python side effects of the traced frame
(globals written, lists appended to, attributes set) are not replayed, by design, and a graph
exported at call 0's arguments and state says nothing about call 1. So an export program makes one
call (the generator writes `CALLS = 1`) and is judged only on its outputs and on whether it raised
(`EXPORT_ORACLES`). Export's documented refusals (a deliberate graph break, a non-pytree input or output,
an optional parameter, data-dependent control flow...: `EXPORT_REFUSALS` in oracles/exceptions.py) are
deliberate skips; any other error where eager ran (another `Unsupported` is an `exceptions/unsupported`
finding), or any output that differs from eager's, is a finding.

`EXPORT_HELPER` is the one text of the wrapper: the harness executes it, and the repro template pastes
it specialized to the repro's mode (`export_helper`: the other modes' branches folded away), so a repro exports
exactly as the campaign did and carries only the lines its mode runs.
"""
from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from dynfuzz.generators.export.modes import EXPORT_MODES

EXPORT_ORACLES = ("outputs", "exceptions")
# The call each mode goes through, as reports and repro headers name it.
EXPORT_CALLS = {"strict": "torch.export.export(strict=True)", "dynamo": "torch._dynamo.export",
                "dynamo-aten": "torch._dynamo.export(aten_graph=True)",
                "aot": 'torch.compile(fullgraph=True, backend="eager").aot_compile'}

EXPORT_HELPER = '''

AOT_ABSENT = "torch.compile(...).aot_compile is absent from this torch"


def exported(fn, mode):  # fn exported at each call's arguments ("strict": torch.export; "aot": aot_compile;
    # else torch._dynamo.export)
    def call(*args):
        try:  # torch._dynamo.export runs fn once: side effects on its arguments land on a copy
            example = copy.deepcopy(args)
        except Exception:
            example = args
        if mode == "aot":  # precompiled whole (every guard serialized) by the eager backend, then called
            compiled = torch.compile(fn, fullgraph=True, backend="eager")
            if not hasattr(compiled, "aot_compile"):
                raise NotImplementedError(AOT_ABSENT)
            return compiled.aot_compile((args, {}))(*args)
        if mode == "strict":
            class Entry(torch.nn.Module):
                def forward(self, *a):
                    return fn(*a)

            return torch.export.export(Entry(), example, strict=True).module()(*args)
        return torch._dynamo.export(fn, aten_graph=mode == "dynamo-aten")(*example).graph_module(*args)

    return call
'''


def export_mode(options: dict[str, Any]) -> str | None:
    """The export mode a program's COMPILE_OPTIONS ask for, or None to compile with `torch.compile`."""
    mode = options.get("export")
    if mode is None:
        return None
    if mode not in EXPORT_MODES:
        raise ValueError(f"COMPILE_OPTIONS export={mode!r}: not one of {', '.join(EXPORT_MODES)}")
    return str(mode)


_helper_code: Any = None


class _Specialize(ast.NodeTransformer):
    """`mode` replaced by its value, and every test on it decided: only the branch the mode takes is left."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(self.mode) if node.id == "mode" else node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        node = self.generic_visit(node)
        if all(isinstance(n, ast.Constant) for n in (node.left, *node.comparators)):
            return ast.Constant(eval(ast.unparse(node)))  # a comparison of two string constants
        return node

    def visit_If(self, node: ast.If) -> Any:
        node = self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.args.args = [a for a in node.args.args if a.arg != "mode"]
        node = self.generic_visit(node)
        returns = [i for i, s in enumerate(node.body) if isinstance(s, ast.Return)]
        node.body = node.body[:returns[0] + 1] if returns else node.body  # what follows a return never runs
        return node


def export_helper(mode: str) -> str:
    """`EXPORT_HELPER` as a repro in `mode` pastes it: `exported(fn)`, with only that mode's code."""
    tree = _Specialize(mode).visit(ast.parse(EXPORT_HELPER))
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    tree.body = [n for n in tree.body if not (isinstance(n, ast.Assign) and n.targets[0].id not in used)]
    return f"# fn exported ({mode}) at the call's arguments, the exported graph run on them\n" + \
        ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def exported(fn: Callable, mode: str) -> Callable:
    """`fn` exported (in `mode`) at the arguments of each call, and the exported graph run on them: the
    function `EXPORT_HELPER` defines, executed in a namespace of its own for every program.

    Never one namespace for the process: strict export on torch 2.5 traces the helper's `forward` as its root
    frame, so Dynamo writes the alias `__import_dynfuzz_program` (the program's module) into the helper's
    globals, and the next program, a new module under that name, then fails Dynamo's own assertion in
    `import_source` (a finding that was dynfuzz's, not torch's)."""
    global _helper_code
    import copy

    import torch

    if _helper_code is None:
        _helper_code = compile(EXPORT_HELPER, "<dynfuzz-export-helper>", "exec")
    ns: dict[str, Any] = {"torch": torch, "copy": copy}
    exec(_helper_code, ns)
    return ns["exported"](fn, mode)
