"""Statements: one `visit_<Kind>` method per statement node kind, run in a `Frame`.

A mixin of `Interpreter` (which supplies `eval`, `call`, `assign`, `truth`, `iterate` and `observer`).
"""
from __future__ import annotations

import ast
import sys
import types

from .control import INPLACE, Break, Continue, Return
from .frames import Frame
from .symbolic import plain
from .trace import ReferenceUnsupported


class Statements:
    """`exec(stmt, frame)` dispatches to `visit_<Kind>`; an unknown kind is `ReferenceUnsupported`."""

    def exec_block(self, body: list[ast.stmt], frame: Frame) -> None:
        for stmt in body:
            self.exec(stmt, frame)

    def exec(self, node: ast.stmt, frame: Frame) -> None:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise ReferenceUnsupported(f"statement {type(node).__name__}", getattr(node, "lineno", None))
        method(node, frame)

    def visit_Expr(self, node: ast.Expr, frame: Frame) -> None:
        self.eval(node.value, frame)

    def visit_Pass(self, node: ast.Pass, frame: Frame) -> None:
        pass

    def visit_Global(self, node: ast.Global, frame: Frame) -> None:
        pass  # resolution already follows the compiled code object

    visit_Nonlocal = visit_Global

    def visit_Return(self, node: ast.Return, frame: Frame) -> None:
        raise Return(self.eval(node.value, frame) if node.value is not None else None)

    def visit_Break(self, node: ast.Break, frame: Frame) -> None:
        raise Break()

    def visit_Continue(self, node: ast.Continue, frame: Frame) -> None:
        raise Continue()

    def visit_Assign(self, node: ast.Assign, frame: Frame) -> None:
        value = self.eval(node.value, frame)
        for target in node.targets:
            self.assign(target, value, frame)

    def visit_AnnAssign(self, node: ast.AnnAssign, frame: Frame) -> None:
        if node.value is not None:
            self.assign(node.target, self.eval(node.value, frame), frame)

    def visit_AugAssign(self, node: ast.AugAssign, frame: Frame) -> None:
        op, line = INPLACE[type(node.op)], node.lineno
        rhs_of = lambda old: self.binop(op, type(node.op).__name__, old, self.eval(node.value, frame), line)  # noqa
        t = node.target
        if isinstance(t, ast.Name):
            self.store_name(frame, t.id, rhs_of(self.load_name(frame, t.id, line)), line)
        elif isinstance(t, ast.Attribute):
            obj = self.eval(t.value, frame)
            self.store_attr(obj, t.attr, rhs_of(self.get_attr(obj, t.attr, line)), line)
        elif isinstance(t, ast.Subscript):
            obj, key = self.eval(t.value, frame), self.eval(t.slice, frame)
            self.store_item(obj, key, rhs_of(self.get_item(obj, key, line)), line)
        else:
            raise ReferenceUnsupported(f"augmented assignment to {type(t).__name__}", line)

    def visit_Delete(self, node: ast.Delete, frame: Frame) -> None:
        for t in node.targets:
            if isinstance(t, ast.Name):
                self.delete_name(frame, t.id, node.lineno)
            elif isinstance(t, ast.Attribute):
                obj = self.eval(t.value, frame)
                self.observer.mutation(obj, "attr", f"del .{t.attr}", node.lineno)
                delattr(obj, t.attr)
            elif isinstance(t, ast.Subscript):
                obj, key = self.eval(t.value, frame), plain(self.eval(t.slice, frame))
                self.observer.mutation(obj, None, "del []", node.lineno)
                del obj[key]
            else:
                raise ReferenceUnsupported(f"del of {type(t).__name__}", node.lineno)

    def visit_If(self, node: ast.If, frame: Frame) -> None:
        taken = self.truth(self.eval(node.test, frame), node.lineno, "if")
        self.exec_block(node.body if taken else node.orelse, frame)

    def visit_While(self, node: ast.While, frame: Frame) -> None:
        while self.truth(self.eval(node.test, frame), node.lineno, "while"):
            try:
                self.exec_block(node.body, frame)
            except Break:
                return
            except Continue:
                continue
        self.exec_block(node.orelse, frame)

    def visit_For(self, node: ast.For, frame: Frame) -> None:
        for item in self.iterate(self.eval(node.iter, frame), node.lineno):
            self.assign(node.target, item, frame)
            try:
                self.exec_block(node.body, frame)
            except Break:
                return
            except Continue:
                continue
        self.exec_block(node.orelse, frame)

    def visit_Assert(self, node: ast.Assert, frame: Frame) -> None:
        if not self.truth(self.eval(node.test, frame), node.lineno, "assert"):
            raise AssertionError(self.eval(node.msg, frame)) if node.msg else AssertionError()

    def visit_Raise(self, node: ast.Raise, frame: Frame) -> None:
        if node.exc is None:
            raise  # re-raise the exception being handled by the enclosing visit_Try
        exc = self.eval(node.exc, frame)
        cause = self.eval(node.cause, frame) if node.cause is not None else None
        if isinstance(exc, type):
            exc = exc()
        if node.cause is not None:
            raise exc from cause
        raise exc

    def visit_Try(self, node: ast.Try, frame: Frame) -> None:
        try:
            try:
                self.exec_block(node.body, frame)
            except ReferenceUnsupported:
                raise
            except Exception as e:
                for h in node.handlers:
                    if h.type is None or isinstance(e, self.eval(h.type, frame)):
                        if h.name:
                            self.store_name(frame, h.name, e, h.lineno)
                        try:
                            self.exec_block(h.body, frame)
                        finally:
                            if h.name:
                                self.delete_name(frame, h.name, h.lineno, missing_ok=True)
                        break
                else:
                    raise
            else:
                self.exec_block(node.orelse, frame)
        finally:
            self.exec_block(node.finalbody, frame)

    def visit_With(self, node: ast.With, frame: Frame) -> None:
        self.with_items(node.items, node.body, frame, node.lineno)

    def with_items(self, items: list[ast.withitem], body: list[ast.stmt], frame: Frame, line: int) -> None:
        if not items:
            self.exec_block(body, frame)
            return
        mgr = self.eval(items[0].context_expr, frame)
        kind = type(mgr)
        value = self.call(kind.__enter__, (mgr,), {}, line)
        if items[0].optional_vars is not None:
            self.assign(items[0].optional_vars, value, frame)
        try:
            self.with_items(items[1:], body, frame, line)
        except ReferenceUnsupported:
            raise
        except Exception:
            if not self.call(kind.__exit__, (mgr, *sys.exc_info()), {}, line):
                raise
        except BaseException:
            self.call(kind.__exit__, (mgr, None, None, None), {}, line)
            raise
        else:
            self.call(kind.__exit__, (mgr, None, None, None), {}, line)

    def visit_Import(self, node: ast.Import, frame: Frame) -> None:
        for alias in node.names:
            module = __import__(alias.name)
            if alias.asname:
                for part in alias.name.split(".")[1:]:
                    module = getattr(module, part)
            self.store_name(frame, alias.asname or alias.name.split(".")[0], module, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom, frame: Frame) -> None:
        if node.level:
            raise ReferenceUnsupported("relative import", node.lineno)
        module = __import__(node.module, fromlist=[a.name for a in node.names])
        for alias in node.names:
            if alias.name == "*":
                raise ReferenceUnsupported("import *", node.lineno)
            self.store_name(frame, alias.asname or alias.name, getattr(module, alias.name), node.lineno)

    def visit_FunctionDef(self, node: ast.FunctionDef, frame: Frame) -> None:
        decorators = [self.eval(d, frame) for d in node.decorator_list]
        fn = self.make_function(node, frame, node.name)
        for deco in reversed(decorators):
            fn = self.call(deco, (fn,), {}, node.lineno)
        self.store_name(frame, node.name, fn, node.lineno)

    def visit_ClassDef(self, node: ast.ClassDef, frame: Frame) -> None:
        decorators = [self.eval(d, frame) for d in node.decorator_list]
        bases = tuple(self.eval(b, frame) for b in node.bases)
        keywords = {k.arg: self.eval(k.value, frame) for k in node.keywords}
        code = self.nested_code(frame, node.name, node)
        resolved = types.resolve_bases(bases)
        meta, ns, kwds = types.prepare_class(node.name, resolved, keywords)
        ns["__module__"] = frame.globals.get("__name__")
        ns["__qualname__"] = code.co_qualname
        body = Frame(code, frame.globals, ns, scope="class")
        self.link_cells(body, frame)
        self.exec_block(node.body, body)
        if "__class__" in body.cells:
            ns["__classcell__"] = body.cells["__class__"]
        if resolved is not bases:
            ns["__orig_bases__"] = bases
        cls = meta(node.name, resolved, ns, **kwds)
        for deco in reversed(decorators):
            cls = self.call(deco, (cls,), {}, node.lineno)
        self.store_name(frame, node.name, cls, node.lineno)

