"""Mutants of Dynamo's cell tracking: a pre-existing cell resolved by something other than itself.

Dynamo models every cell it meets as one `CellVariable`, found again through the identity of the
cell object (`SideEffects.id_to_variable[id(cell)]`). These mutants resolve a cell the two wrong
ways the closures seeds describe: by the identity of what it holds, and by the name of the free
variable. Each only shows when two distinct cells agree in that respect and only one of them is
later written, which is what the `cells-agree` and `preexisting-cells` constructs generate. The last
three bring back torch 2.5's own modelling, for the constructs of issue 30: name plus contents
(`cells-shadow`), a sourceless function's cells as their contents (`preexisting-writer`), a closure's free
variable resolved against the frame's locals by name (`maker-closure`).
"""
from __future__ import annotations

from . import mutant

# Values whose identity means nothing (interned, cached): resolving by them would merge cells of
# every program, so the contents mutant only merges cells that hold the same mutable object.
_SCALARS = (int, float, bool, str, bytes, complex, type(None))


@mutant("cell-by-contents", construct="cells-agree")
def cell_by_contents() -> None:
    """A pre-existing cell is found by the identity of its contents: a second cell holding the same
    object gets the first cell's variable, so a write to either lands in the first one."""
    from torch._dynamo.side_effects import SideEffects

    original = SideEffects.track_cell_existing

    def track_cell_existing(self, source, cell, contents):
        try:
            value = cell.cell_contents
        except ValueError:
            return original(self, source, cell, contents)
        if isinstance(value, _SCALARS):
            return original(self, source, cell, contents)
        seen = self.__dict__.setdefault("_mutant_cells_by_contents", {})
        if id(value) in seen:
            variable = seen[id(value)]
            self.id_to_variable[id(cell)] = variable
            self.keepalive.append(cell)
            return variable
        variable = original(self, source, cell, contents)
        seen[id(value)] = variable
        return variable

    SideEffects.track_cell_existing = track_cell_existing


@mutant("cell-by-name", construct="preexisting-cells")
def cell_by_name() -> None:
    """A pre-existing function's free variable is resolved by name: when the compiled frame has a cell
    of the same name, the inlined function reads and writes that cell instead of its own."""
    from torch._dynamo.variables import CellVariable
    from torch._dynamo.variables.functions import UserFunctionVariable

    original = UserFunctionVariable.bind_args

    def bind_args(self, parent, args, kwargs):
        result = original(self, parent, args, kwargs)
        root = parent.output.root_tx.symbolic_locals
        for name in self.fn.__code__.co_freevars:
            own, same_name = result.get(name), root.get(name)
            if isinstance(own, CellVariable) and isinstance(same_name, CellVariable):
                result[name] = same_name
        return result

    UserFunctionVariable.bind_args = bind_args


@mutant("cell-shadow-merged", construct="cells-shadow")
def cell_shadow_merged() -> None:
    """torch 2.5's `match_nested_cell`, brought back: a pre-existing function's cell is taken for the compiled
    frame's own captured cell when the two have one name and hold one object. Writes through either then land
    in the frame's cell, and reads through the function see the frame's value."""
    from torch._dynamo.variables.functions import UserFunctionVariable

    original = UserFunctionVariable.bind_args

    def bind_args(self, parent, args, kwargs):
        result = original(self, parent, args, kwargs)
        root = parent.output.root_tx
        frame_cells = dict(zip(root.freevars(), root.closure or ())) if hasattr(root, "freevars") else {}
        for name, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()):
            theirs = frame_cells.get(name)
            if theirs is None or theirs is cell:
                continue
            try:
                same = theirs.cell_contents is cell.cell_contents
            except ValueError:
                continue
            if same and name in root.symbolic_locals:
                result[name] = root.symbolic_locals[name]
        return result

    UserFunctionVariable.bind_args = bind_args


@mutant("sourceless-cell-snapshot", construct="preexisting-writer")
def sourceless_cell_snapshot() -> None:
    """torch 2.5's modelling of a function Dynamo reaches without a source (a method of an object made in the
    frame): each pre-existing cell it captures is a fresh cell holding the contents at trace start, so a write
    made through the function's own handle is never seen by it, and one it makes is never replayed."""
    from torch._dynamo.variables.base import VariableTracker
    from torch._dynamo.variables.functions import UserFunctionVariable

    original = UserFunctionVariable.bind_args

    def bind_args(self, parent, args, kwargs):
        result = original(self, parent, args, kwargs)
        if self.get_source() is not None:
            return result
        side_effects = parent.output.side_effects
        for name, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()):
            if name == "__class__":
                continue
            try:
                contents = VariableTracker.build(parent, cell.cell_contents)
            except ValueError:
                continue
            snapshot = side_effects.track_cell_new()
            side_effects.store_cell(snapshot, contents)
            result[name] = snapshot
        return result

    UserFunctionVariable.bind_args = bind_args


@mutant("freevar-by-local-name", construct="maker-closure")
def freevar_by_local_name() -> None:
    """A closure made during tracing (by a pre-existing function) resolves a free variable by name against the
    compiled frame's plain locals (the name collision pytorch#140036 fixed): when the frame has a local of that
    name, the closure reads it instead of its own cell."""
    from torch._dynamo.variables import CellVariable
    from torch._dynamo.variables.functions import NestedUserFunctionVariable

    original = NestedUserFunctionVariable.bind_args

    def bind_args(self, parent, args, kwargs):
        result = original(self, parent, args, kwargs)
        root = parent.output.root_tx.symbolic_locals
        side_effects = parent.output.side_effects
        for name in self.get_code().co_freevars:
            local = root.get(name)
            if local is not None and not isinstance(local, CellVariable):
                cell = side_effects.track_cell_new()
                side_effects.store_cell(cell, local)
                result[name] = cell
        return result

    NestedUserFunctionVariable.bind_args = bind_args
