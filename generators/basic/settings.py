"""Dynamo settings as part of the program: one `torch._dynamo.config` flag (or `dynamic=True`) per case.

Every flag drawn here is documented as semantics-preserving: it changes how Dynamo traces, guards or
recompiles (nested graph breaks, the old nn.Module path, integer and float specialisation, static or
dynamic shapes by default, a recompile limit that falls back to eager, graph deduplication, forced
graph breaks on leaf returns), never what the program computes. So any divergence it brings out is a
torch bug, and each flag walks Dynamo code that the defaults never reach. The case carries the flag
(`DYNAMO_CONFIG`, applied around the compiled calls only) and its repro renders it. Two settings are not
config flags but `COMPILE_OPTIONS`: `logs` (compiled with torch's logs on, here) and `export` (the program is
exported instead of compiled: the `export` family, `generators/export/`).
"""
from __future__ import annotations

from ..builder import Builder
from ..fragments import fragment

# (tag, torch._dynamo.config settings); "dynamic" is torch.compile's own option, not a config flag.
SETTINGS: tuple[tuple[str, dict[str, object]], ...] = (
    ("config-nested-graph-breaks", {"nested_graph_breaks": True}),
    ("config-no-inline-nn-modules", {"inline_inbuilt_nn_modules": False}),
    ("config-specialize-int", {"specialize_int": True}),
    ("config-specialize-float", {"specialize_float": True}),
    ("config-dynamic-by-default", {"assume_static_by_default": False}),
    ("config-no-automatic-dynamic", {"automatic_dynamic_shapes": False}),
    ("config-recompile-limit", {"recompile_limit": 1}),
    # alone, as documented: `track_nodes_for_deduplication` is "testing only, ignored" under it, yet setting it
    # too hides a crash (corpus/graph_dedup_nested_compile_region_example_value.py)
    ("config-graph-deduplication", {"use_graph_deduplication": True}),
    ("config-break-on-leaf-return", {"debug_force_graph_break_on_leaf_return": True}),
    ("config-deferred-asserts", {"prefer_deferred_runtime_asserts_over_guards": True}),
    # guard evaluation shortcuts: skip a module's guards when its dict tags are unchanged, and check symbolic
    # shape guards in C++; a wrong shortcut keeps a stale graph on the next call
    ("config-recursive-dict-tags", {"use_recursive_dict_tags_for_guards": True}),
    ("config-cpp-symbolic-guards", {"enable_cpp_symbolic_shape_guards": True}),
    ("config-dynamic", {}),
)


@fragment("basic", "dynamo-config", weight=14, nestable=False)
def dynamo_config(draw, b: Builder) -> None:
    """Compile this program under one non-default Dynamo setting (first one drawn wins)."""
    if b.dynamo_config.keys() & {k for _, s in SETTINGS for k in s} or "dynamic" in b.compile_options:
        return
    tag, settings = b.pick(draw, SETTINGS)
    if tag == "config-dynamic":
        b.compile_options["dynamic"] = True
    b.dynamo_config.update(settings)
    b.tag(tag)


@fragment("basic", "torch-logs", weight=8, nestable=False)
def torch_logs(draw, b: Builder) -> None:
    """Compile this program with torch's logs on (`torch._logging.set_logs`: Dynamo's debug log and the
    graph, guard, bytecode, recompile, trace and side-effect artifacts). Formatting a graph, a guard or a
    traced value for the log runs code that a silent compile never does; a log that crashes a compile, or
    changes what it compiles, is a torch bug."""
    b.compile_options["logs"] = True
