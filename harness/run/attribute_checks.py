"""What CPython's attribute protocol says about one of Dynamo's attribute steps, decided without running user code.

`run/model_checks.py` wraps Dynamo's attribute steps and asks these questions of the real classes Dynamo models:

- a **store past a property**: `obj.name = v` on an object whose class has a property with a setter for `name`
  must call the setter (`object.__setattr__` gives data descriptors the store); Dynamo recording the store as a
  plain attribute of the object (`SideEffects.store_attr`) skipped it;
- a **descriptor returned unbound**: `Cls.name` where the class holds an object whose type defines `__get__` (a
  user-written descriptor) must be what `__get__(None, Cls)` returns, never the descriptor object itself;
- **hasattr of a special attribute**: `hasattr(obj, "__dict__")` and the like are decided by the object's type
  (its layout, `__slots__`), read statically (`inspect.getattr_static`), never by what the frame stored;
- **a metaclass `__call__`**: calling a class runs `type(cls).__call__`; one written in user code must be run
  (inlined) when Dynamo models the call, not stepped over to `__new__` and `__init__`.

Each answers None when it cannot decide without running user code (a class with `__getattr__`, a property
getter, a tracker with no real object): a check that cannot decide notes nothing.
"""
from __future__ import annotations

import dis
import inspect
import sys
import types
from typing import Any

_MISSING = object()
# Descriptor types of the language and the standard library: how CPython itself binds methods and slots.
_BUILTIN_DESCRIPTORS = (types.FunctionType, classmethod, staticmethod, property, types.MemberDescriptorType,
                        types.GetSetDescriptorType, types.WrapperDescriptorType, types.MethodDescriptorType,
                        types.BuiltinFunctionType)


def _user_class(cls: Any) -> bool:
    return isinstance(cls, type) and cls.__module__ not in ("builtins",) and not cls.__module__.startswith("torch")


def store_past_property(cls: Any, name: str) -> bool:
    """Whether a plain store of `name` on an instance of `cls` skipped a property setter."""
    if not _user_class(cls) or not isinstance(name, str):
        return False
    static = inspect.getattr_static(cls, name, _MISSING)
    return isinstance(static, property) and static.fset is not None


def descriptor_unbound(cls: Any, name: str, value: Any) -> bool:
    """Whether `value`, read as `cls.name`, is a user-written descriptor object itself although its `__get__`
    cannot return it: a `__get__` written in Python that never reads its first parameter (`self`). One that does
    read it may return it (`if obj is None: return self`, as property and NamedTuple fields do): undecided."""
    if not _user_class(cls) or not isinstance(name, str):
        return False
    static = inspect.getattr_static(cls, name, _MISSING)
    if static is _MISSING or isinstance(static, _BUILTIN_DESCRIPTORS) or not _user_class(type(static)):
        return False
    getter = inspect.getattr_static(type(static), "__get__", None)
    return isinstance(getter, types.FunctionType) and not _reads_first_parameter(getter) and value is static


def _reads_first_parameter(fn: types.FunctionType) -> bool:
    code = fn.__code__
    if not code.co_varnames or code.co_argcount == 0:
        return False
    first = code.co_varnames[0]
    if first in code.co_cellvars:
        return True
    return any(i.argval == first for i in dis.get_instructions(code) if i.opname.startswith("LOAD_FAST"))


def special_hasattr(obj: Any, name: str) -> bool | None:
    """CPython's `hasattr(obj, name)` for a special (dunder) name, read from the object's type and layout; None
    when it cannot be read without running user code."""
    if not (isinstance(name, str) and name.startswith("__") and name.endswith("__")):
        return None
    kind = type(obj)
    if not _user_class(kind) or any("__getattr__" in vars(k) or "__getattribute__" in vars(k)
                                    for k in kind.__mro__ if k is not object):
        return None
    static = inspect.getattr_static(obj, name, _MISSING)
    if isinstance(static, property):
        return None
    return static is not _MISSING


def metaclass_call(cls: Any) -> types.CodeType | None:
    """The code of the user-written `__call__` that calling `cls` runs (found on the metaclass's MRO), or None
    when the call is `type.__call__` or one of the standard library's or torch's (an Enum's, which Dynamo models
    by value)."""
    if not isinstance(cls, type):
        return None
    for klass in type(cls).__mro__:
        if "__call__" in vars(klass):
            fn = vars(klass)["__call__"]
            user = _user_class(klass) and klass.__module__ not in sys.stdlib_module_names
            return fn.__code__ if isinstance(fn, types.FunctionType) and user else None
    return None
