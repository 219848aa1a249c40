"""What Dynamo did in one case, read from torch's internals: the one place the behaviour signal touches them.

Readers (no patch): Dynamo's counters (`graph_break`, `unimplemented`: each Unsupported by its message),
its recompile reasons (`guard_failures`), the guard trees of every cache entry of the codes Dynamo saw
(`convert_frame.input_codes`; leaf-guard and accessor classes), and the higher-order ops in the graphs
handed to the backend (`ObservedBackend`, a wrapper around dynfuzz's own backend, not a patch). Counters,
guard failures and cache entries come through run/torch_compat.py, which the harness already reads them by.

Observers (patches, count-only): they record, per case, a set of names and change nothing Dynamo computes.
Declared in `OBSERVERS` and installed once per process by `install()` (beside the torch patches of
run/torch_compat.py); summary.json lists them under `torch_observers`. A release that lacks a target gets
no observer and a one-line note (`torch_compat.note`), never a silently empty answer.

The universes (what a behaviour can be at all) come from the running torch too: the graph-break registry
(none before torch 2.7: torch 2.5.1 has no `graph_break_registry.json`), the VariableTracker subclasses, the
leaf-guard and accessor classes of the C++ guard manager, the registered higher-order ops.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dynfuzz.run import torch_compat
from dynfuzz.run.torch_compat import note

# name -> what it patches and what it records (summary.json `torch_observers`)
OBSERVERS: dict[str, str] = {
    "variable-trackers": "torch._dynamo.variables.base.VariableTracker.__init__: the tracker classes built",
    "side-effects": "torch._dynamo.side_effects.SideEffects.codegen_update_mutated and codegen_hooks: "
                    "the kinds of mutation replayed after a graph (object class, value or attribute, new or "
                    "existing) and tensor hooks",
}

_installed: list[str] = []
_seen: dict[str, set[str]] = {"tracker": set(), "side-effect": set(), "hop": set()}
_originals: list[tuple[Any, str, Any]] = []  # (owner, attribute, original) of every patch, for uninstall()
_recording = [True]


def record(installed_somewhere: set[str] | list[str]) -> dict[str, Any]:
    """summary.json's `torch_observers`: every declared observer, what it patches, and whether the processes
    that ran cases installed it."""
    return {name: {"target": what, "installed": name in installed_somewhere} for name, what in OBSERVERS.items()}


def installed() -> list[str]:
    """The observers active in this process."""
    return list(_installed)


def install() -> list[str]:
    """Install every observer this torch has a target for (idempotent); returns the names installed."""
    _recording[0] = True
    if "variable-trackers" not in _installed and _observe_trackers():
        _installed.append("variable-trackers")
    if "side-effects" not in _installed and _observe_side_effects():
        _installed.append("side-effects")
    return installed()


def uninstall() -> None:
    """Restore what the observers patched and stop recording (bench/throughput.py measures the cost so)."""
    while _originals:
        owner, name, original = _originals.pop()
        setattr(owner, name, original)
    _installed.clear()
    _recording[0] = False


def recording() -> bool:
    """False after `uninstall()` until the next `install()`: then no behaviour is read either."""
    return _recording[0]


def _patch(owner: Any, name: str, replacement: Any) -> None:
    _originals.append((owner, name, getattr(owner, name)))
    setattr(owner, name, replacement)


def start_case() -> None:
    """Forget what the observers saw (called where Dynamo is reset between cases)."""
    for seen in _seen.values():
        seen.clear()


def _observe_trackers() -> bool:
    try:
        from torch._dynamo.variables.base import VariableTracker
    except ImportError:
        note("recording variable-tracker classes", "torch._dynamo.variables.base.VariableTracker")
        return False
    original = VariableTracker.__init__
    seen = _seen["tracker"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        seen.add(type(self).__name__)
        original(self, *args, **kwargs)

    _patch(VariableTracker, "__init__", __init__)
    return True


def _observe_side_effects() -> bool:
    try:
        from torch._dynamo.side_effects import SideEffects
    except ImportError:
        note("recording side-effect kinds", "torch._dynamo.side_effects.SideEffects")
        return False
    update, hooks = getattr(SideEffects, "codegen_update_mutated", None), getattr(SideEffects, "codegen_hooks", None)
    if update is None or not hasattr(SideEffects, "_get_modified_vars"):
        note("recording side-effect kinds", "SideEffects.codegen_update_mutated")
        return False
    seen = _seen["side-effect"]

    def codegen_update_mutated(self, *args: Any, **kwargs: Any) -> Any:
        try:
            seen.update(filter(None, (_mutation_kind(self, var) for var in self._get_modified_vars())))
        except Exception:  # an observer never changes what Dynamo does
            pass
        return update(self, *args, **kwargs)

    _patch(SideEffects, "codegen_update_mutated", codegen_update_mutated)
    if hooks is not None:
        def codegen_hooks(self, *args: Any, **kwargs: Any) -> Any:
            if getattr(self, "tensor_hooks", None):
                seen.add("tensor-hook")
            return hooks(self, *args, **kwargs)

        _patch(SideEffects, "codegen_hooks", codegen_hooks)
    return True


def _mutation_kind(side_effects: Any, var: Any) -> str | None:
    """`<tracker class>.<attr|value>.<existing|new>`: what kind of object a replayed mutation writes, whether
    it stores attributes or the value itself, and whether the object existed before the frame. An object
    made in the frame without attribute stores is None: Dynamo counts every new object as modified, but
    rebuilding it replays no mutation."""
    mutation = getattr(var, "mutation_type", None) or getattr(var, "mutable_local", None)
    attrs = getattr(side_effects, "store_attr_mutations", {}).get(mutation)
    existing = getattr(var, "source", None) is not None
    if not (existing or attrs):
        return None
    return f"{type(var).__name__}.{'attr' if attrs else 'value'}.{'existing' if existing else 'new'}"


class ObservedBackend:
    """A backend callable that records the higher-order ops of each graph it is handed, then delegates."""

    def __init__(self, backend: Callable) -> None:
        self.backend = backend

    def __call__(self, gm: Any, example_inputs: Any) -> Any:
        if _recording[0]:
            try:
                _seen["hop"].update(graph_hops(gm))
            except Exception:
                pass
        return self.backend(gm, example_inputs)


def graph_hops(gm: Any) -> set[str]:
    """Names of the higher-order ops called in an FX graph module and its subgraphs."""
    from torch._ops import HigherOrderOperator
    from torch.fx import GraphModule

    found = set()
    for module in gm.modules():
        if isinstance(module, GraphModule):
            for node in module.graph.nodes:
                if node.op == "call_function" and isinstance(node.target, HigherOrderOperator):
                    found.add(node.target.__name__ if hasattr(node.target, "__name__") else str(node.target))
    return found


def observed() -> dict[str, set[str]]:
    """What the observers and the backend wrapper saw since `start_case()` (copies)."""
    return {k: set(v) for k, v in _seen.items()}


def counter_messages() -> dict[str, list[str]]:
    """Dynamo's Unsupported messages since the last reset: those that became graph breaks, and the others."""
    try:
        counters = torch_compat.dynamo_counters()
    except torch_compat.Unavailable:
        return {}
    return {"graph-break": [m for m, n in counters["graph_break"].items() if n > 0],
            "unsupported": [m for m, n in counters["unimplemented"].items() if n > 0]}


def recompile_reasons() -> list[str]:
    """Every guard-failure reason Dynamo recorded since the last reset (one per recompilation)."""
    try:
        return torch_compat.guard_failures()
    except torch_compat.Unavailable:
        return []


def guard_kinds() -> tuple[set[str], set[str]]:
    """Leaf-guard and accessor class names in the guard trees of every cache entry Dynamo made since the
    last reset (the codes it saw: `convert_frame.input_codes`)."""
    leaves: set[str] = set()
    accessors: set[str] = set()
    try:
        from torch._dynamo.convert_frame import input_codes
    except ImportError:
        note("recording guard kinds", "torch._dynamo.convert_frame.input_codes")
        return leaves, accessors
    for ref in list(getattr(input_codes, "seen", ())):
        code = ref() if callable(ref) else ref
        if code is None:
            continue
        try:
            entries = torch_compat.cache_entries(code)
        except torch_compat.Unavailable:
            return leaves, accessors
        for entry in entries:
            manager = getattr(entry, "guard_manager", None) or getattr(entry, "check_fn", None)
            root = getattr(manager, "root", None)
            if root is not None:
                _walk(root, leaves, accessors)
    return leaves, accessors


def _walk(manager: Any, leaves: set[str], accessors: set[str]) -> None:
    stack = [manager]
    while stack:
        node = stack.pop()
        leaves.update(type(leaf).__name__ for leaf in node.get_leaf_guards())
        for accessor, child in zip(node.get_accessors(), node.get_child_managers()):
            accessors.add(type(accessor).__name__)
            stack.append(child)


# ---- the universes ----

def registry_types() -> set[str] | None:
    """Every graph-break type of Dynamo's registry (current and historical names), or None where the
    release has no registry (torch < 2.7, 2.5.1 among them)."""
    import torch._dynamo

    path = Path(torch._dynamo.__file__).with_name("graph_break_registry.json")
    if not path.is_file():
        return None
    return {entry["Gb_type"] for entries in json.loads(path.read_text()).values() for entry in entries}


def tracker_classes() -> set[str]:
    """Names of every VariableTracker subclass of this torch (its variables package imported)."""
    import importlib
    import pkgutil

    import torch._dynamo.variables as package
    from torch._dynamo.variables.base import VariableTracker

    for mod in pkgutil.iter_modules(package.__path__):
        try:
            importlib.import_module(f"{package.__name__}.{mod.name}")
        except Exception:  # a module for hardware or packages this machine lacks
            continue
    found, stack = set(), [VariableTracker]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub.__name__ not in found:
                found.add(sub.__name__)
                stack.append(sub)
    return found


def guard_classes() -> tuple[set[str], set[str]]:
    """Leaf-guard and accessor classes of the C++ guard manager (the two roots left out)."""
    try:
        import torch._C._dynamo.guards as guards
    except ImportError:
        note("the guard-kind universe", "torch._C._dynamo.guards")
        return set(), set()

    def subclasses(base: str) -> set[str]:
        root = getattr(guards, base, None)
        if root is None:
            return set()
        return {n for n in dir(guards) if isinstance(getattr(guards, n), type)
                and issubclass(getattr(guards, n), root) and getattr(guards, n) is not root}

    return subclasses("LeafGuard"), subclasses("GuardAccessor")


def hop_names() -> set[str]:
    """Every higher-order op this torch registers."""
    import torch._higher_order_ops  # noqa: F401  (registers them)
    from torch._ops import _higher_order_ops

    return set(_higher_order_ops)
