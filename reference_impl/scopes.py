"""Names, cells, functions and assignment targets: how the interpreter resolves and binds.

A mixin of `Interpreter`. Code objects are CPython's own (found among the enclosing code's constants), so
scoping follows the compiler exactly; what a store or read means for a trace is the observer's business.
"""
from __future__ import annotations

import ast
import operator
import types
from typing import Any

import torch

from .control import first_column, short
from .frames import Frame
from .symbolic import plain
from .trace import ReferenceUnsupported


class Scopes:
    """Code objects of nested definitions, cells, function objects, name lookup and stores, targets."""

    def nested_code(self, frame: Frame, name: str, node: ast.AST) -> types.CodeType:
        """The code object CPython compiled for `node`, found among the enclosing code's constants."""
        line = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
        found = [c for c in frame.code.co_consts
                 if isinstance(c, types.CodeType) and c.co_name == name and c.co_firstlineno == line]
        if len(found) > 1:
            cols = sorted(found, key=first_column)
            found = [c for c in cols if first_column(c) >= node.col_offset] or cols  # a genexpr's code starts at it
        if not found:
            raise ReferenceUnsupported(f"no code object for {name} at line {line}", line)
        return found[0]

    def link_cells(self, frame: Frame, parent: Frame) -> None:
        for name in frame.code.co_cellvars:
            frame.cells[name] = types.CellType()
        for name in frame.code.co_freevars:
            if name not in parent.cells:
                raise ReferenceUnsupported(f"free variable {name} not found in enclosing frame")
            frame.cells[name] = parent.cells[name]

    def make_function(self, node: ast.AST, frame: Frame, name: str) -> types.FunctionType:
        args = node.args
        defaults = tuple(self.eval(d, frame) for d in args.defaults) or None
        kwdefaults = {a.arg: self.eval(d, frame) for a, d in zip(args.kwonlyargs, args.kw_defaults)
                      if d is not None}
        code = self.nested_code(frame, name, node)
        closure = tuple(frame.cells[n] if n in frame.cells else self._missing_cell(n, node)
                        for n in code.co_freevars)
        fn = types.FunctionType(code, frame.globals, name, defaults, closure or None)
        if kwdefaults:
            fn.__kwdefaults__ = kwdefaults
        self.observer.fresh(fn)
        return fn

    @staticmethod
    def _missing_cell(name: str, node: ast.AST):
        raise ReferenceUnsupported(f"free variable {name} without an enclosing cell", node.lineno)

    def load_name(self, frame: Frame, name: str, line: int) -> Any:
        where, value = frame.lookup(name)
        if where == "global":
            return self.observer.read_global(name, value)
        if where == "cell":
            return self.observer.read_cell(frame.cells[name], value)
        return value

    def store_name(self, frame: Frame, name: str, value: Any, line: int) -> None:
        if frame.scope == "class":
            frame.locals[name] = value
        elif name in frame.cells:
            value = plain(value)
            self.observer.write_cell(frame.cells[name], name, f"{name} = {short(value)}", line)
            frame.cells[name].cell_contents = value
        elif name in frame.code.co_varnames:
            frame.locals[name] = value
        else:
            value = plain(value)
            self.observer.effect("global", f"G[{name!r}]", f"{name} = {short(value)}", line)
            frame.globals[name] = value

    def delete_name(self, frame: Frame, name: str, line: int, missing_ok: bool = False) -> None:
        if frame.scope == "class" or (name in frame.code.co_varnames and name not in frame.cells):
            if name not in frame.locals and not missing_ok:
                raise UnboundLocalError(f"cannot access local variable '{name}'")
            frame.locals.pop(name, None)
        elif name in frame.cells:
            self.observer.effect("cell", name, f"del {name}", line)
            try:
                del frame.cells[name].cell_contents
            except ValueError:
                if not missing_ok:
                    raise NameError(f"free variable '{name}' referenced before assignment") from None
        else:
            self.observer.effect("global", f"G[{name!r}]", f"del {name}", line)
            del frame.globals[name]

    def assign(self, target: ast.expr, value: Any, frame: Frame) -> None:
        line = target.lineno
        if isinstance(target, ast.Name):
            self.store_name(frame, target.id, value, line)
        elif isinstance(target, ast.Attribute):
            self.store_attr(self.eval(target.value, frame), target.attr, value, line)
        elif isinstance(target, ast.Subscript):
            self.store_item(self.eval(target.value, frame), self.eval(target.slice, frame), value, line)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target.elts, value, frame, line)
        else:
            raise ReferenceUnsupported(f"assignment to {type(target).__name__}", line)

    def unpack(self, targets: list[ast.expr], value: Any, frame: Frame, line: int) -> None:
        items = list(self.iterate(value, line))
        star = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        if not star:
            if len(items) != len(targets):
                many = "too many" if len(items) > len(targets) else "not enough"
                raise ValueError(f"{many} values to unpack (expected {len(targets)}, got {len(items)})")
            for t, v in zip(targets, items):
                self.assign(t, v, frame)
            return
        k, after = star[0], len(targets) - star[0] - 1
        if len(items) < k + after:
            raise ValueError(f"not enough values to unpack (expected at least {k + after}, got {len(items)})")
        for t, v in zip(targets[:k], items[:k]):
            self.assign(t, v, frame)
        self.assign(targets[k].value, items[k:len(items) - after], frame)
        for t, v in zip(targets[k + 1:], items[len(items) - after:]):
            self.assign(t, v, frame)

    def store_attr(self, obj: Any, attr: str, value: Any, line: int) -> None:
        value = plain(value)
        kind = "tensor-meta" if isinstance(obj, torch.Tensor) and attr in ("data", "requires_grad", "grad") else "attr"
        self.observer.mutation(obj, kind, f".{attr} = {short(value)}", line)
        setattr(obj, attr, value)

    def store_item(self, obj: Any, key: Any, value: Any, line: int) -> None:
        key, value = plain(key), plain(value)
        self.observer.mutation(obj, None, f"[{short(key)}] = {short(value)}", line)
        obj[key] = value
        if isinstance(obj, torch.Tensor):
            self.observer.op(operator.setitem, (obj, key, value), {}, None, line)

