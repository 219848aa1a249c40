"""A mutant of Dynamo's `super()` resolution, which only user classes with a diamond reach.

`super(T, obj).name` must search `type(obj).__mro__` after `T` (`SuperVariable._resolved_getattr_and_source`
walks exactly that). A compiler that searches `T.__mro__` instead gets the same answer under single
inheritance, where `T.__mro__` is a suffix of `type(obj).__mro__`, and the wrong one under multiple
inheritance: a mixin's `super().g` skips its sibling mixin and lands on the common base. Only the
`class-mro` construct (two mixins over one base, each calling `super().g`) tells the two apart.
"""
from __future__ import annotations

from . import mutant


@mutant("super-mro-of-typevar", construct="class-mro")
def super_mro_of_typevar() -> None:
    """`super()` inside a user class resolves through the MRO of the class it is written in, not of the
    instance's type: in a diamond, a mixin's `super().g` skips the next mixin."""
    import types

    from torch._dynamo.source import AttrSource, GetItemSource, TypeMROSource, TypeSource
    from torch._dynamo.variables.misc import SuperVariable

    original = SuperVariable._resolved_getattr_and_source

    def resolved(self, tx, name):
        search_type = self.typevar.as_python_constant() if self.objvar else None
        if not isinstance(search_type, type) or search_type.__module__.startswith(("torch", "builtins")):
            return original(self, tx, name)
        full = self.objvar.python_type().__mro__
        for klass in search_type.__mro__[1:]:
            if name in klass.__dict__:
                value = klass.__dict__[name]
                if not isinstance(value, types.FunctionType) or klass not in full:
                    break  # classmethods, staticmethods, slot wrappers: resolved as Dynamo does
                source = AttrSource(GetItemSource(TypeMROSource(TypeSource(self.objvar.source)), full.index(klass)),
                                    name) if self.objvar.source else None
                return value, source
        return original(self, tx, name)

    SuperVariable._resolved_getattr_and_source = resolved


@mutant("tuplegetter-reads-first-field", construct="frame-classes")
def tuplegetter_reads_first_field() -> None:
    """A NamedTuple field read through the class's descriptor (`Rec.scale.__get__(rec)`) returns the first
    field whatever the descriptor's index: Dynamo's `TupleGetterVariable` looks the index up wrongly. Plain
    `rec.scale` takes another path, so only the `frame-classes` construct reaches it."""
    from torch._dynamo import variables
    from torch._dynamo.variables.functions import TupleGetterVariable

    def tp_descr_get_impl(self, tx, obj, owner):
        if obj is None:
            return self
        return obj.call_method(tx, "__getitem__", [variables.ConstantVariable.create(0)], {})

    TupleGetterVariable.tp_descr_get_impl = tp_descr_get_impl
