"""The reference interpreter: runs a program's functions from their AST, with real torch ops underneath.

Like `torch.fx.Interpreter`, it only executes: one `visit_<Kind>` method per AST node kind (statements in
`statements.py`, expressions and comprehensions in `expressions.py`, names, cells and functions in
`scopes.py`), state in a few explicit objects (the `Frame` stack of fast locals and real cells, the
`Program`), and no recording. Everything a trace is made of (reads from outside the call, ops, relations,
mutations, graph breaks) is reported to an `Observer`, whose default records nothing; `tracer.Tracer`
runs on top with a `Recorder` as observer, the way fx's `Transformer` subclasses its `Interpreter`.
Functions the program defines become real Python functions built from their genuine code objects and
real cells, so native code (sort keys, hooks, autograd) can call them; when the interpreter itself calls
one, it interprets the body.
"""
from __future__ import annotations

import ast
import functools
import inspect
import operator
import types
from typing import Any

import torch

from .control import Return
from .expressions import Expressions
from .frames import CodeMap, Frame
from .observer import Observer
from .scopes import Scopes
from .statements import Statements
from .symbolic import is_symbolic, plain, relation

_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class Program:
    """A program's source, its AST and the map from its code objects back to AST nodes."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self.codes = CodeMap(self.tree, source)

    def node_for(self, fn: Any) -> ast.AST | None:
        code = getattr(fn, "__code__", None)
        return self.codes.node_for(code) if isinstance(code, types.CodeType) else None


class Interpreter(Statements, Expressions, Scopes):
    """Runs calls of a program's functions (`call(fn, args, kwargs, line)`), reporting to `observer`."""

    def __init__(self, program: Program, observer: Observer | None = None) -> None:
        self.program = program
        self.observer = observer or Observer()
        self.depth = 0

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
            self.observer.fresh(obj)
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
        except Return as r:
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
            self.observer.graph_break(f"call to {fn.__name__}", line)
        if fn is range:
            self.observer.loop_count(raw_args, line)
        if fn is len and len(args) == 1 and isinstance(args[0], torch.Tensor):  # len(t.shape) is t.ndim
            sym = self.observer.sym_sizes(args[0])
            if sym:
                return sym[0]
        result = fn(*args, **kwargs)
        self.observer.op(fn, args, kwargs, result, line)
        return result

    def cond(self, args: tuple, kwargs: dict, line: int) -> Any:
        """torch.cond(pred, true_fn, false_fn, operands) traced as a plain Python if on bool(pred)."""
        params = ("pred", "true_fn", "false_fn", "operands")
        bound = dict(zip(params, args), **kwargs)
        pred = self.truth(bound["pred"], line, "torch.cond predicate")
        branch = bound["true_fn"] if pred else bound["false_fn"]
        return self.call(branch, tuple(bound.get("operands", ())), {}, line)


    def truth(self, value: Any, line: int, where: str) -> bool:
        """bool(value); a tensor decides Python control flow only through a graph break."""
        if isinstance(value, torch.Tensor):
            self.observer.graph_break(f"data-dependent {where} on a tensor", line)
            return bool(value)
        if is_symbolic(value):
            self.observer.relation(relation("NotEq", value, 0, bool(value)), line)
        return bool(value)

    def iterate(self, value: Any, line: int) -> Any:
        sym = self.observer.sym_sizes(value) if isinstance(value, torch.Size) else None
        if sym is not None:
            return list(sym)
        self.observer.iterated(value)
        if isinstance(value, torch.Tensor):
            items = list(value)
            for i, t in enumerate(items):
                self.observer.op(operator.getitem, (value, i), {}, t, line)
            return items
        return value


