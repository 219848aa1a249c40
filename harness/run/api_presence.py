"""Whether a program can run on the installed torch: every torch API it names must exist in this release.

A seed draws the same program on every release (the gate, shards, resume and the example database rely on
it), so a campaign on an older torch meets programs written against APIs that release lacks: a higher-order
op that torch 2.5 has not registered (`torch.ops.higher_order.wrap` before its module is imported), a
function that is still only a submodule there (`torch._higher_order_ops.associative_scan`), a decorator
added later (`torch.compiler.nested_compile_region`). Eager cannot run them, and comparing how eager and
Dynamo each fail filed buckets that were dynfuzz's. Such a case is skipped at judge time with the reason
"API X absent from torch R", counted in `summary.json` `skipped`.

Two checks, both on the release under test and never on the program's text alone:
- `absent_in_source`: before anything runs, the program's own `import` statements are imported, and each
  dotted name rooted at `torch` (`torch.a.b`, `torch.ops.ns.op`) is looked up attribute by attribute, as
  the program would; a name that is called must not be a module.
- `absent_in_error`: an error eager raised that says a torch name is missing (`module 'torch.x' has no
  attribute 'y'`, `No module named 'torch.x'`, `'Tensor' object has no attribute 'y'`...), where the name
  indeed does not resolve here: a tensor method, a keyword or a name built at run time that no static look-up
  sees.
Resolution can depend on what the process imported before (Dynamo imports some higher-order ops' modules
while it traces): the program is then runnable and judged, never skipped in error.
"""
from __future__ import annotations

import ast
import importlib
import re
from functools import lru_cache
from types import ModuleType
from typing import Any

_MISSING = object()


def release() -> str:
    import torch

    return torch.__version__.split("+")[0]


def absent_reason(api: str) -> str:
    """The skip reason recorded for a program that needs `api`."""
    return f"API {api} absent from torch {release()}"


def _chain(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


@lru_cache(maxsize=256)
def _torch_names(source: str) -> tuple[tuple[str, ...], tuple[tuple[str, bool], ...]]:
    """(imported module paths and `from` imports as `module:name`, dotted torch names with whether called)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return (), ()
    imports: list[str] = []
    names: dict[str, bool] = {}
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports += [a.name for a in node.names if a.name.split(".")[0] == "torch"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "torch" \
                and not node.level:
            imports += [f"{node.module}:{a.name}" for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Attribute):
            chain = _chain(node)
            if chain and chain.startswith("torch."):
                names[chain] = names.get(chain, False) or id(node) in called
    return tuple(dict.fromkeys(imports)), tuple(sorted(names.items()))


def _import(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def _lookup(path: str) -> Any:
    """The object `path` (`torch.a.b`) names, attribute by attribute from `torch`, or `_MISSING`."""
    import torch

    obj: Any = torch
    for part in path.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except Exception:  # AttributeError, and the RuntimeErrors of torch.ops namespaces
            return _MISSING
    return obj


def absent_in_source(source: str) -> str | None:
    """The first torch API the program names that this torch lacks, or None."""
    imports, names = _torch_names(source)
    for item in imports:
        module, _, name = item.partition(":")
        mod = _import(module)
        if mod is None:
            return module
        if name and not hasattr(mod, name) and _import(f"{module}.{name}") is None:
            return f"{module}.{name}"
    for path, is_called in names:
        obj = _lookup(path)
        if obj is _MISSING:
            return _first_missing(path)
        if is_called and isinstance(obj, ModuleType):
            return path
    return None


def _first_missing(path: str) -> str:
    parts = path.split(".")
    for k in range(2, len(parts) + 1):
        if _lookup(".".join(parts[:k])) is _MISSING:
            return ".".join(parts[:k])
    return path


_ERROR_FORMS = (
    (re.compile(r"module '(torch[\w.]*)' has no attribute '(\w+)'"), "{0}.{1}"),
    (re.compile(r"'(torch\.ops[\w.]*)' object has no attribute '(\w+)'"), "{0}.{1}"),
    (re.compile(r"'_OpNamespace' '(\w+)' object has no attribute '(\w+)'"), "torch.ops.{0}.{1}"),
    (re.compile(r"No module named '(torch[\w.]*)'"), "{0}"),
    (re.compile(r"cannot import name '(\w+)' from '(torch[\w.]*)'"), "{1}.{0}"),
    (re.compile(r"'(Tensor)' object has no attribute '(\w+)'"), "{0}.{1}"),
    (re.compile(r"type object '(torch[\w.]*|Tensor)' has no attribute '(\w+)'"), "{0}.{1}"),
)
_ERROR_TYPES = ("AttributeError", "ImportError", "ModuleNotFoundError")


def absent_in_error(type_name: str, message: str) -> str | None:
    """The torch API an error says is missing, when it is indeed missing from this torch; else None."""
    if type_name not in _ERROR_TYPES:
        return None
    for pattern, form in _ERROR_FORMS:
        m = pattern.search(message)
        if m is None:
            continue
        api = form.format(*m.groups())
        return api if not _resolves(api) else None
    return None


def _resolves(api: str) -> bool:
    if api.startswith("Tensor."):
        import torch

        return hasattr(torch.Tensor, api.split(".", 1)[1])
    return _lookup(api) is not _MISSING or _import(api) is not None
