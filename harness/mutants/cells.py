"""Mutants of Dynamo's cell tracking: a pre-existing cell resolved by something other than itself.

Dynamo models every cell it meets as one `CellVariable`, found again through the identity of the
cell object (`SideEffects.id_to_variable[id(cell)]`). These mutants resolve a cell the two wrong
ways the closures seeds describe: by the identity of what it holds, and by the name of the free
variable. Each only shows when two distinct cells agree in that respect and only one of them is
later written, which is what the `cells-agree` and `preexisting-cells` constructs generate.
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
