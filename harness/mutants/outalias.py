"""Mutant of Dynamo's `out=` handling: a resize through `out=` is traced on, and only the frame's own
names learn the new shape.

Dynamo graph-breaks when an `out=` op resizes its target, because "it's non-trivial to update all
references of the old TensorVariable" (variables/torch.py). The mutant does the partial update that
comment warns about: it traces on and rebinds the frame's local names (those of the frames it was
inlined from, and names that are cells) to the result, while a list element, dict value or object
attribute still holds the old variable with the old shape. Reading the tensor back through such a
path, as the `out-alias` construct does, then gives stale `.numel()` / `.shape` / `.stride()` values.
"""
from __future__ import annotations

from . import mutant

GB_TYPE = "Shape mismatch with out= tensor variant"


@mutant("out-resize-names-only", construct="out-alias")
def out_resize_names_only() -> None:
    """No graph break on an `out=` resize of a tensor made inside the frame (a graph input keeps the
    break); only local names are rebound to the resized result."""
    from torch._dynamo.variables import torch as torch_variables

    cls = torch_variables.TorchInGraphFunctionVariable
    original_call = cls.call_function
    original_unimplemented = torch_variables.unimplemented

    def call_function(self, tx, args, kwargs):
        skipped = []

        out = kwargs.get("out")
        intermediate = out is not None and getattr(out, "source", None) is None

        def unimplemented(*a, **kw):
            if kw.get("gb_type") == GB_TYPE and intermediate:
                skipped.append(True)
                return None
            return original_unimplemented(*a, **kw)

        torch_variables.unimplemented = unimplemented
        try:
            result = original_call(self, tx, args, kwargs)
        finally:
            torch_variables.unimplemented = original_unimplemented
        old = kwargs.get("out") if skipped else None
        if old is None:
            return result
        frame = tx
        while frame is not None:
            for name, value in list(frame.symbolic_locals.items()):
                if value is old:
                    frame.symbolic_locals[name] = result
            frame = getattr(frame, "parent", None)
        for attrs in tx.output.side_effects.store_attr_mutations.values():  # a name that is a cell
            if attrs.get("cell_contents") is old:
                attrs["cell_contents"] = result
        return result

    cls.call_function = call_function


@mutant("set-names-only", construct="set-alias")
def set_names_only() -> None:
    """`t.set_(src)` on a tensor made in the frame updates what Dynamo knows about the tensor only for the
    frame's names: a list element, dict value or attribute holding the same tensor keeps the old shape and
    strides (torch 2.5 read `l[0]` with its old size)."""
    import copy

    from torch._dynamo.variables.tensor import TensorVariable

    original = TensorVariable.call_method

    def call_method(self, tx, name, args, kwargs):
        if name != "set_" or self.source is not None:
            return original(self, tx, name, args, kwargs)
        before = dict(self.__dict__)
        result = original(self, tx, name, args, kwargs)
        fresh = copy.copy(self)
        self.__dict__.update({k: v for k, v in before.items() if k != "proxy"})
        frame = tx
        while frame is not None:
            for local, value in list(frame.symbolic_locals.items()):
                if value is self:
                    frame.symbolic_locals[local] = fresh
            frame = getattr(frame, "parent", None)
        return result

    TensorVariable.call_method = call_method
