"""The reference interpreter: one `visit_<Kind>` method per AST node kind, real torch ops underneath.

State lives in three explicit objects: the `Frame` stack (fast locals and real
cells), the `Recorder` (the trace being built: ops, guards, effects, breaks,
and the provenance of values read from outside the call), and the program
`Program` (AST plus the code objects CPython compiled for it). Functions the
program defines become real Python functions built from their genuine code
objects and real cells, so native code (sort keys, hooks, autograd) can call
them; when the interpreter itself calls one, it interprets the body.
"""
from __future__ import annotations

import ast
import functools
import inspect
import operator
import sys
import types
from collections.abc import Callable
from typing import Any

import torch

from .frames import CodeMap, Frame
from .recorder import Recorder
from .symbolic import combine, is_symbolic, negate, plain, relation
from .trace import CallTrace, ReferenceUnsupported

BINOPS: dict[type, Callable] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
INPLACE: dict[type, Callable] = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul, ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod, ast.Pow: operator.ipow, ast.MatMult: operator.imatmul,
    ast.BitAnd: operator.iand, ast.BitOr: operator.ior, ast.BitXor: operator.ixor, ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift,
}
COMPARE: dict[type, Callable] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
UNARY: dict[type, Callable] = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                               ast.Invert: operator.invert}
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class _Return(BaseException):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(BaseException):
    pass


class _Continue(BaseException):
    pass


class Program:
    """A program's source, its AST and the map from its code objects back to AST nodes."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self.codes = CodeMap(self.tree, source)

    def node_for(self, fn: Any) -> ast.AST | None:
        code = getattr(fn, "__code__", None)
        return self.codes.node_for(code) if isinstance(code, types.CodeType) else None


class Interpreter:
    """Traces calls of a program's functions: `trace_call(fn, args, names)` -> CallTrace."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.rec = Recorder()
        self.depth = 0

    # ---- entry points -------------------------------------------------------------------------------
    def trace_call(self, fn: Callable, args: tuple, names: tuple[str, ...] = ()) -> CallTrace:
        """Interpret one call of `fn(*args)`; the returned trace holds the output or the raised error."""
        if self.program.node_for(fn) is None:
            raise ReferenceUnsupported(f"entry {getattr(fn, '__qualname__', fn)!r} is not program code")
        self.rec = Recorder()
        args = tuple(self.rec.input(names[i] if i < len(names) else f"arg{i}", v, i) for i, v in enumerate(args))
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            self.rec.cell_source(cell, f"L[{name!r}]")
        try:
            out = self.call(fn, tuple(args), {}, 0)
            self.rec.trace.output = _plain_deep(out)
            self.rec.output_refs(self.rec.trace.output)
        except ReferenceUnsupported:
            raise
        except Exception as e:  # the program itself raised: part of its observable behaviour
            self.rec.trace.error = e
        return self.rec.trace

    # ---- calls --------------------------------------------------------------------------------------
    def call(self, fn: Any, args: tuple, kwargs: dict, line: int) -> Any:
        if fn is torch.cond:
            return self.cond(args, kwargs, line)
        if isinstance(fn, types.MethodType) and self.program.node_for(fn.__func__) is not None:
            return self.call(fn.__func__, (fn.__self__, *args), kwargs, line)
        if isinstance(fn, functools.partial) and self.program.node_for(fn.func) is not None:
            return self.call(fn.func, (*fn.args, *args), {**fn.keywords, **kwargs}, line)
        if isinstance(fn, type) and type(fn) is type and self._program_init(fn):
            return self.construct(fn, args, kwargs, line)
        node = self.program.node_for(fn) if isinstance(fn, types.FunctionType) else None
        if node is None or fn.__code__.co_flags & _GENERATOR_FLAGS:
            return self.native(fn, args, kwargs, line)
        return self.run_function(fn, node, args, kwargs)

    def _program_init(self, cls: type) -> bool:
        return any(self.program.node_for(getattr(cls, m, None)) is not None for m in ("__init__", "__new__"))

    def construct(self, cls: type, args: tuple, kwargs: dict, line: int) -> Any:
        """`cls(*args)` as `type.__call__` does it, so program-defined __new__/__init__ are traced."""
        new = cls.__new__
        obj = self.call(new, (cls, *args), kwargs, line) if new is not object.__new__ else object.__new__(cls)
        if isinstance(obj, cls):
            self.rec.fresh(obj)
            init = type(obj).__init__
            if init is not object.__init__:
                self.call(types.MethodType(init, obj), args, kwargs, line)
        return obj

    def run_function(self, fn: types.FunctionType, node: ast.AST, args: tuple, kwargs: dict) -> Any:
        code = fn.__code__
        try:
            bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{fn.__name__}() {e}") from None
        bound.apply_defaults()
        frame = Frame(code, fn.__globals__)
        for name in code.co_cellvars:
            frame.cells[name] = types.CellType()
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            frame.cells[name] = cell
        for name, value in bound.arguments.items():
            if name in frame.cells:
                frame.cells[name].cell_contents = value
            else:
                frame.locals[name] = value
        self.depth += 1
        if self.depth > 200:
            raise RecursionError("maximum recursion depth exceeded (reference interpreter)")
        try:
            if isinstance(node, ast.Lambda):
                return self.eval(node.body, frame)
            self.exec_block(node.body, frame)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
        return None

    def native(self, fn: Any, args: tuple, kwargs: dict, line: int) -> Any:
        """Call something the program did not define; record it as a tensor op or a graph break."""
        raw_args = args
        args = tuple(plain(a) for a in args)
        kwargs = {k: plain(v) for k, v in kwargs.items()}
        if fn is print or fn is input or fn is breakpoint:
            self.rec.graph_break(f"call to {fn.__name__}", line)
        if fn is range:
            self.rec.loop_count(raw_args, line)
        if fn is len and len(args) == 1:
            sym = self.rec.sym_sizes(args[0])
            if sym:
                return sym[0]
        result = fn(*args, **kwargs)
        self.rec.op(fn, args, kwargs, result, line)
        return result

    def cond(self, args: tuple, kwargs: dict, line: int) -> Any:
        """torch.cond(pred, true_fn, false_fn, operands) traced as a plain Python if on bool(pred)."""
        params = ("pred", "true_fn", "false_fn", "operands")
        bound = dict(zip(params, args), **kwargs)
        pred = self.truth(bound["pred"], line, "torch.cond predicate")
        branch = bound["true_fn"] if pred else bound["false_fn"]
        return self.call(branch, tuple(bound.get("operands", ())), {}, line)

    # ---- statements ---------------------------------------------------------------------------------
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
        raise _Return(self.eval(node.value, frame) if node.value is not None else None)

    def visit_Break(self, node: ast.Break, frame: Frame) -> None:
        raise _Break()

    def visit_Continue(self, node: ast.Continue, frame: Frame) -> None:
        raise _Continue()

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
                self.rec.mutation(obj, "attr", f"del .{t.attr}", node.lineno)
                delattr(obj, t.attr)
            elif isinstance(t, ast.Subscript):
                obj, key = self.eval(t.value, frame), plain(self.eval(t.slice, frame))
                self.rec.mutation(obj, None, "del []", node.lineno)
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
            except _Break:
                return
            except _Continue:
                continue
        self.exec_block(node.orelse, frame)

    def visit_For(self, node: ast.For, frame: Frame) -> None:
        for item in self.iterate(self.eval(node.iter, frame), node.lineno):
            self.assign(node.target, item, frame)
            try:
                self.exec_block(node.body, frame)
            except _Break:
                return
            except _Continue:
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

    # ---- functions and scopes -----------------------------------------------------------------------
    def nested_code(self, frame: Frame, name: str, node: ast.AST) -> types.CodeType:
        """The code object CPython compiled for `node`, found among the enclosing code's constants."""
        line = node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno
        found = [c for c in frame.code.co_consts
                 if isinstance(c, types.CodeType) and c.co_name == name and c.co_firstlineno == line]
        if len(found) > 1:
            cols = sorted(found, key=_first_column)
            found = [c for c in cols if _first_column(c) > node.col_offset] or cols
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
        self.rec.fresh(fn)
        return fn

    @staticmethod
    def _missing_cell(name: str, node: ast.AST):
        raise ReferenceUnsupported(f"free variable {name} without an enclosing cell", node.lineno)

    def load_name(self, frame: Frame, name: str, line: int) -> Any:
        where, value = frame.lookup(name)
        if where == "global":
            self.rec.read(value, f"G[{name!r}]")
            return self.rec.symbolic_read(value, f"G[{name!r}]")
        if where == "cell":
            src = self.rec.cell_sources.get(id(frame.cells[name]))
            if src is not None:
                self.rec.read(value, src)
                return self.rec.symbolic_read(value, src)
        return value

    def store_name(self, frame: Frame, name: str, value: Any, line: int) -> None:
        if frame.scope == "class":
            frame.locals[name] = value
        elif name in frame.cells:
            value = plain(value)
            self.rec.effect("cell", self.rec.cell_sources.get(id(frame.cells[name]), name), f"{name} = {_short(value)}",
                            line)
            frame.cells[name].cell_contents = value
        elif name in frame.code.co_varnames:
            frame.locals[name] = value
        else:
            value = plain(value)
            self.rec.effect("global", f"G[{name!r}]", f"{name} = {_short(value)}", line)
            frame.globals[name] = value

    def delete_name(self, frame: Frame, name: str, line: int, missing_ok: bool = False) -> None:
        if frame.scope == "class" or (name in frame.code.co_varnames and name not in frame.cells):
            if name not in frame.locals and not missing_ok:
                raise UnboundLocalError(f"cannot access local variable '{name}'")
            frame.locals.pop(name, None)
        elif name in frame.cells:
            self.rec.effect("cell", name, f"del {name}", line)
            try:
                del frame.cells[name].cell_contents
            except ValueError:
                if not missing_ok:
                    raise NameError(f"free variable '{name}' referenced before assignment") from None
        else:
            self.rec.effect("global", f"G[{name!r}]", f"del {name}", line)
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
        self.rec.mutation(obj, kind, f".{attr} = {_short(value)}", line)
        setattr(obj, attr, value)

    def store_item(self, obj: Any, key: Any, value: Any, line: int) -> None:
        key, value = plain(key), plain(value)
        self.rec.mutation(obj, None, f"[{_short(key)}] = {_short(value)}", line)
        obj[key] = value
        if isinstance(obj, torch.Tensor):
            self.rec.op(operator.setitem, (obj, key, value), {}, None, line)

    # ---- expressions --------------------------------------------------------------------------------
    def eval(self, node: ast.expr, frame: Frame) -> Any:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise ReferenceUnsupported(f"expression {type(node).__name__}", getattr(node, "lineno", None))
        return method(node, frame)

    def visit_Constant(self, node: ast.Constant, frame: Frame) -> Any:
        return node.value

    def visit_Name(self, node: ast.Name, frame: Frame) -> Any:
        return self.load_name(frame, node.id, node.lineno)

    def visit_NamedExpr(self, node: ast.NamedExpr, frame: Frame) -> Any:
        value = self.eval(node.value, frame)
        self.assign(node.target, value, frame)
        return value

    def visit_Tuple(self, node: ast.Tuple, frame: Frame) -> Any:
        return tuple(self.elements(node.elts, frame))

    def visit_List(self, node: ast.List, frame: Frame) -> Any:
        return self.rec.fresh(list(self.elements(node.elts, frame)))

    def visit_Set(self, node: ast.Set, frame: Frame) -> Any:
        return self.rec.fresh({plain(x) for x in self.elements(node.elts, frame)})

    def visit_Dict(self, node: ast.Dict, frame: Frame) -> Any:
        out: dict = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.eval(v, frame))
            else:
                key = plain(self.eval(k, frame))
                out[key] = self.eval(v, frame)
        return self.rec.fresh(out)

    def elements(self, elts: list[ast.expr], frame: Frame) -> list:
        out: list = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self.iterate(self.eval(e.value, frame), e.lineno))
            else:
                out.append(self.eval(e, frame))
        return out

    def visit_JoinedStr(self, node: ast.JoinedStr, frame: Frame) -> Any:
        return "".join(str(self.eval(v, frame)) for v in node.values)

    def visit_FormattedValue(self, node: ast.FormattedValue, frame: Frame) -> Any:
        value = plain(self.eval(node.value, frame))
        value = {115: str, 114: repr, 97: ascii}.get(node.conversion, lambda v: v)(value)
        spec = self.eval(node.format_spec, frame) if node.format_spec is not None else ""
        return format(value, spec)

    def visit_Slice(self, node: ast.Slice, frame: Frame) -> Any:
        part = lambda e: plain(self.eval(e, frame)) if e is not None else None  # noqa: E731
        return slice(part(node.lower), part(node.upper), part(node.step))

    def visit_BinOp(self, node: ast.BinOp, frame: Frame) -> Any:
        left, right = self.eval(node.left, frame), self.eval(node.right, frame)
        return self.binop(BINOPS[type(node.op)], type(node.op).__name__, left, right, node.lineno)

    def binop(self, fn: Callable, name: str, left: Any, right: Any, line: int) -> Any:
        if isinstance(left, list) and fn is operator.iadd:
            self.rec.mutation(left, "list", "+=", line)
        result = fn(left, right) if not _tensorish(left, right) else fn(plain(left), plain(right))
        if isinstance(left, torch.Tensor) and fn in INPLACE.values():
            self.rec.mutation(left, "tensor-data", f"{fn.__name__}", line)
        self.rec.op(fn, (left, right), {}, result, line)
        return combine(name, left, right, result)

    def visit_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Any:
        value = self.eval(node.operand, frame)
        if isinstance(node.op, ast.Not):
            return not self.truth(value, node.lineno, "not")
        if isinstance(node.op, ast.USub) and is_symbolic(value):
            return negate(value)
        result = UNARY[type(node.op)](value)
        self.rec.op(UNARY[type(node.op)], (value,), {}, result, node.lineno)
        return result

    def visit_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Any:
        value = None
        for operand in node.values:
            value = self.eval(operand, frame)
            truth = self.truth(value, node.lineno, "and/or")
            if isinstance(node.op, ast.And) and not truth or isinstance(node.op, ast.Or) and truth:
                return value
        return value

    def visit_Compare(self, node: ast.Compare, frame: Frame) -> Any:
        left = self.eval(node.left, frame)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, frame)
            fn = COMPARE[type(op)]
            result = fn(plain(left), plain(right)) if _tensorish(left, right) else fn(left, right)
            if isinstance(result, bool):
                self.rec.relation(relation(type(op).__name__, left, right, result), node.lineno)
            else:
                self.rec.op(fn, (left, right), {}, result, node.lineno)
            if len(node.ops) > 1 and not self.truth(result, node.lineno, "chained comparison"):
                return result
            left = right
        return result

    def visit_IfExp(self, node: ast.IfExp, frame: Frame) -> Any:
        taken = self.truth(self.eval(node.test, frame), node.lineno, "conditional expression")
        return self.eval(node.body if taken else node.orelse, frame)

    def visit_Lambda(self, node: ast.Lambda, frame: Frame) -> Any:
        return self.make_function(node, frame, "<lambda>")

    def visit_Attribute(self, node: ast.Attribute, frame: Frame) -> Any:
        return self.get_attr(self.eval(node.value, frame), node.attr, node.lineno)

    def get_attr(self, obj: Any, attr: str, line: int) -> Any:
        value = getattr(obj, attr)
        if isinstance(obj, torch.Tensor) and attr in ("shape", "ndim", "T", "mT", "H", "data", "grad"):
            if attr == "shape":
                return self.rec.shape_of(obj, value)
            if attr == "ndim":
                return value
            self.rec.op(getattr, (obj, attr), {}, value, line)
            return value
        return self.rec.attribute(obj, attr, value)

    def visit_Subscript(self, node: ast.Subscript, frame: Frame) -> Any:
        return self.get_item(self.eval(node.value, frame), self.eval(node.slice, frame), node.lineno)

    def get_item(self, obj: Any, key: Any, line: int) -> Any:
        sym = self.rec.sym_sizes(obj) if isinstance(obj, torch.Size) else None
        if sym is not None and isinstance(key, int):
            return sym[key]
        value = obj[plain(key)]
        if isinstance(obj, torch.Tensor):
            self.rec.op(operator.getitem, (obj, plain(key)), {}, value, line)
            return value
        return self.rec.item(obj, key, value)

    def visit_Starred(self, node: ast.Starred, frame: Frame) -> Any:
        raise ReferenceUnsupported("starred expression outside a call or display", node.lineno)

    def visit_Call(self, node: ast.Call, frame: Frame) -> Any:
        dotted = _dotted(node.func)
        if dotted and dotted.endswith("_dynamo.graph_break"):
            self.rec.graph_break("torch._dynamo.graph_break()", node.lineno)
            return None
        if isinstance(node.func, ast.Attribute):
            obj = self.eval(node.func.value, frame)
            fn = self.get_attr(obj, node.func.attr, node.lineno)
            self.rec.method_effect(obj, node.func.attr, node.lineno)
        else:
            obj, fn = None, self.eval(node.func, frame)
        args: list = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.iterate(self.eval(a.value, frame), node.lineno))
            else:
                args.append(self.eval(a, frame))
        kwargs: dict = {}
        for k in node.keywords:
            if k.arg is None:
                kwargs.update(self.eval(k.value, frame))
            else:
                kwargs[k.arg] = self.eval(k.value, frame)
        if fn is super and not args:
            args = self.super_args(frame, node.lineno)
        if "out" in kwargs and isinstance(kwargs["out"], torch.Tensor):
            self.rec.mutation(kwargs["out"], "tensor-data", "out=", node.lineno)
        if isinstance(obj, torch.Tensor):
            return self.tensor_method(obj, node.func.attr, fn, tuple(args), kwargs, node.lineno)
        return self.call(fn, tuple(args), kwargs, node.lineno)

    def tensor_method(self, obj: torch.Tensor, name: str, fn: Any, args: tuple, kwargs: dict, line: int) -> Any:
        if name in ("item", "tolist", "numpy", "nonzero", "unique", "data_ptr", "__bool__"):
            self.rec.graph_break(f"Tensor.{name}()", line)
        if name in ("size", "dim", "numel", "stride") and not kwargs:
            sym = self.rec.tensor_query(obj, name, tuple(plain(a) for a in args))
            if sym is not None:
                return sym
        return self.call(fn, args, kwargs, line)

    def super_args(self, frame: Frame, line: int) -> list:
        cell = frame.cells.get("__class__")
        if cell is None or not frame.code.co_argcount:
            raise RuntimeError("super(): no arguments")
        first = frame.code.co_varnames[0]
        self_value = frame.cells[first].cell_contents if first in frame.cells else frame.locals[first]
        return [cell.cell_contents, self_value]

    # ---- comprehensions -----------------------------------------------------------------------------
    def visit_ListComp(self, node: ast.ListComp, frame: Frame) -> Any:
        return self.rec.fresh(list(self.comprehension(node, frame, "<listcomp>", lambda f: self.eval(node.elt, f))))

    def visit_SetComp(self, node: ast.SetComp, frame: Frame) -> Any:
        return self.rec.fresh(set(plain(x) for x in self.comprehension(node, frame, "<setcomp>",
                                                                        lambda f: self.eval(node.elt, f))))

    def visit_GeneratorExp(self, node: ast.GeneratorExp, frame: Frame) -> Any:
        return iter(list(self.comprehension(node, frame, "<genexpr>", lambda f: self.eval(node.elt, f))))

    def visit_DictComp(self, node: ast.DictComp, frame: Frame) -> Any:
        pairs = self.comprehension(node, frame, "<dictcomp>",
                                   lambda f: (plain(self.eval(node.key, f)), self.eval(node.value, f)))
        return self.rec.fresh(dict(pairs))

    def comprehension(self, node: ast.AST, frame: Frame, name: str, element: Callable[[Frame], Any]) -> list:
        code = self.nested_code(frame, name, node)
        inner = Frame(code, frame.globals)
        self.link_cells(inner, frame)
        out: list = []
        first = self.eval(node.generators[0].iter, frame)

        def loop(k: int, iterable: Any) -> None:
            gen = node.generators[k]
            for item in self.iterate(iterable, node.lineno):
                self.assign(gen.target, item, inner)
                if all(self.truth(self.eval(c, inner), node.lineno, "comprehension if") for c in gen.ifs):
                    if k + 1 == len(node.generators):
                        out.append(element(inner))
                    else:
                        loop(k + 1, self.eval(node.generators[k + 1].iter, inner))

        loop(0, first)
        return out

    def visit_Yield(self, node: ast.AST, frame: Frame) -> Any:
        raise ReferenceUnsupported("yield in interpreted code", node.lineno)

    visit_YieldFrom = visit_Await = visit_Yield

    # ---- truth and iteration ------------------------------------------------------------------------
    def truth(self, value: Any, line: int, where: str) -> bool:
        """bool(value); a tensor decides Python control flow only through a graph break."""
        if isinstance(value, torch.Tensor):
            self.rec.graph_break(f"data-dependent {where} on a tensor", line)
            return bool(value)
        if is_symbolic(value):
            self.rec.relation(relation("NotEq", value, 0, bool(value)), line)
        return bool(value)

    def iterate(self, value: Any, line: int) -> Any:
        sym = self.rec.sym_sizes(value) if isinstance(value, torch.Size) else None
        if sym is not None:
            return list(sym)
        self.rec.iterated(value)
        if isinstance(value, torch.Tensor):
            items = list(value)
            for i, t in enumerate(items):
                self.rec.op(operator.getitem, (value, i), {}, t, line)
            return items
        return value


def _first_column(code: types.CodeType) -> int:
    for _, _, col, _ in code.co_positions():
        if col:
            return col
    return 0


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _tensorish(*values: Any) -> bool:
    return any(isinstance(v, torch.Tensor) for v in values)


def _plain_deep(v: Any) -> Any:
    if type(v) is tuple:
        return tuple(_plain_deep(x) for x in v)
    return plain(v)


def _short(v: Any) -> str:
    if isinstance(v, torch.Tensor):
        return f"tensor{tuple(v.shape)}"
    text = repr(v) if not callable(v) else getattr(v, "__qualname__", type(v).__name__)
    return text if len(text) < 40 else text[:37] + "..."

