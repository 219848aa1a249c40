"""Mutants of the Dynamo paths behind two settings torch still ships off: tracing a class statement in the frame
(`enable_trace_load_build_class`) and resuming a graph break inside the nested call it happens in
(`nested_graph_breaks`). Only the `frontier` family's constructs turn either setting on, so only they reach
these paths: the trials show each mutant found by its construct and not without it.

- `build-class-method-write-dropped`: an attribute write made inside a method of a class that Dynamo built
  itself (`BuiltinVariable.call___build_class__`, the call the setting gates) (`__init__` aside) is never
  recorded, so the object keeps its old attribute; instances of module-level classes, and classes a graph break left to eager, are
  untouched.
- `nested-break-cell-write-dropped`: at a graph break inside a nested call (`OutputGraph.compile_subgraph` with
  an inlined frame as its `tx`, which only `nested_graph_breaks` allows), the cell writes the nested calls made
  before the break are dropped instead of applied before the resumed frames run.
"""
from __future__ import annotations

import weakref

from . import mutant


@mutant("build-class-method-write-dropped", construct="build-class")
def build_class_method_write_dropped() -> None:
    """A method of a class Dynamo built from a class statement in the frame writes `self.name = value`: the write
    is dropped, and later reads see the attribute's old value."""
    from torch._dynamo.side_effects import SideEffects
    from torch._dynamo.variables.builtin import BuiltinVariable
    from torch._dynamo.variables.user_defined import UserDefinedObjectVariable

    built: weakref.WeakSet[type] = weakref.WeakSet()
    build_class = BuiltinVariable.call___build_class__

    def call___build_class__(self, tx, *args, **kwargs):
        result = build_class(self, tx, *args, **kwargs)
        value = getattr(result, "value", None)
        if isinstance(value, type):
            built.add(value)
        return result

    store_attr = SideEffects.store_attr

    def dropping_store_attr(self, item, name, value, *args, **kwargs):
        tx = self.output_graph_weakref().current_tx
        in_method = getattr(tx, "parent", None) is not None and tx.f_code.co_name != "__init__"
        if in_method and isinstance(item, UserDefinedObjectVariable) and item.python_type() in built:
            return None
        return store_attr(self, item, name, value, *args, **kwargs)

    BuiltinVariable.call___build_class__ = call___build_class__
    SideEffects.store_attr = dropping_store_attr


@mutant("nested-break-cell-write-dropped", construct="nested-break-closures")
def nested_break_cell_write_dropped() -> None:
    """A graph break inside a nested call drops the cell writes that the nested calls made before it (a
    `nonlocal` rebinding): the cells are handed to the resumed frames with the contents they had before the first
    such write, the writes of the outermost frame kept."""
    from torch._dynamo.output_graph import OutputGraph
    from torch._dynamo.side_effects import SideEffects

    store_cell = SideEffects.store_cell

    def remembering_store_cell(self, cellvar, value):
        graph = self.output_graph_weakref()
        if graph is not None and graph.current_tx.parent is not None:
            before = graph.__dict__.setdefault("_dynfuzz_cells_before", {})
            if cellvar not in before:
                try:
                    before[cellvar] = self.load_cell(cellvar)
                except Exception:  # an empty cell: nothing to hand back
                    before[cellvar] = None
        return store_cell(self, cellvar, value)

    compile_subgraph = OutputGraph.compile_subgraph

    def dropping_compile_subgraph(self, tx, *args, **kwargs):
        if getattr(tx, "parent", None) is not None:
            pending = self.side_effects.store_attr_mutations
            for cellvar, value in self.__dict__.pop("_dynfuzz_cells_before", {}).items():
                if value is not None and "cell_contents" in pending.get(cellvar, {}):
                    pending[cellvar]["cell_contents"] = value
        return compile_subgraph(self, tx, *args, **kwargs)

    SideEffects.store_cell = remembering_store_cell
    OutputGraph.compile_subgraph = dropping_compile_subgraph
