"""Expressions and comprehensions: one `visit_<Kind>` method per expression node kind.

A mixin of `Interpreter`. Values are computed with real Python and torch; every read from outside the
call, op, relation and mutation is reported to the observer, which decides what (if anything) to record.
"""
from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

import torch

from .control import BINOPS, COMPARE, INPLACE, UNARY, dotted, tensorish
from .frames import Frame
from .symbolic import combine, is_symbolic, negate, plain, relation
from .trace import ReferenceUnsupported


class Expressions:
    """`eval(expr, frame)` dispatches to `visit_<Kind>`; an unknown kind is `ReferenceUnsupported`."""

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
        return self.observer.fresh(list(self.elements(node.elts, frame)))

    def visit_Set(self, node: ast.Set, frame: Frame) -> Any:
        return self.observer.fresh({plain(x) for x in self.elements(node.elts, frame)})

    def visit_Dict(self, node: ast.Dict, frame: Frame) -> Any:
        out: dict = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.eval(v, frame))
            else:
                key = plain(self.eval(k, frame))
                out[key] = self.eval(v, frame)
        return self.observer.fresh(out)

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
            self.observer.mutation(left, "list", "+=", line)
        result = fn(left, right) if not tensorish(left, right) else fn(plain(left), plain(right))
        if isinstance(left, torch.Tensor) and fn in INPLACE.values():
            self.observer.mutation(left, "tensor-data", f"{fn.__name__}", line)
        self.observer.op(fn, (left, right), {}, result, line)
        return combine(name, left, right, result)

    def visit_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Any:
        value = self.eval(node.operand, frame)
        if isinstance(node.op, ast.Not):
            return not self.truth(value, node.lineno, "not")
        if isinstance(node.op, ast.USub) and is_symbolic(value):
            return negate(value)
        result = UNARY[type(node.op)](value)
        self.observer.op(UNARY[type(node.op)], (value,), {}, result, node.lineno)
        return result

    def visit_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Any:
        *tested, last = node.values
        for operand in tested:  # as Python: the last operand is returned untested (it may be a tensor)
            value = self.eval(operand, frame)
            truth = self.truth(value, node.lineno, "and/or")
            if isinstance(node.op, ast.And) and not truth or isinstance(node.op, ast.Or) and truth:
                return value
        return self.eval(last, frame)

    def visit_Compare(self, node: ast.Compare, frame: Frame) -> Any:
        left = self.eval(node.left, frame)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, frame)
            fn = COMPARE[type(op)]
            result = fn(plain(left), plain(right)) if tensorish(left, right) else fn(left, right)
            if isinstance(result, bool):
                self.observer.relation(relation(type(op).__name__, left, right, result), node.lineno)
            else:
                self.observer.op(fn, (left, right), {}, result, node.lineno)
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
                return self.observer.shape_of(obj, value)
            if attr == "ndim":
                return value
            self.observer.op(getattr, (obj, attr), {}, value, line)
            return value
        return self.observer.attribute(obj, attr, value)

    def visit_Subscript(self, node: ast.Subscript, frame: Frame) -> Any:
        return self.get_item(self.eval(node.value, frame), self.eval(node.slice, frame), node.lineno)

    def get_item(self, obj: Any, key: Any, line: int) -> Any:
        sym = self.observer.sym_sizes(obj) if isinstance(obj, torch.Size) else None
        if sym is not None and isinstance(key, int):
            return sym[key]
        value = obj[plain(key)]
        if isinstance(obj, torch.Tensor):
            self.observer.op(operator.getitem, (obj, plain(key)), {}, value, line)
            return value
        return self.observer.item(obj, key, value)

    def visit_Starred(self, node: ast.Starred, frame: Frame) -> Any:
        raise ReferenceUnsupported("starred expression outside a call or display", node.lineno)

    def visit_Call(self, node: ast.Call, frame: Frame) -> Any:
        name = dotted(node.func)
        if name and name.endswith("_dynamo.graph_break"):
            self.observer.graph_break("torch._dynamo.graph_break()", node.lineno)
            return None
        if isinstance(node.func, ast.Attribute):
            obj = self.eval(node.func.value, frame)
            fn = self.get_attr(obj, node.func.attr, node.lineno)
            self.observer.method_effect(obj, node.func.attr, node.lineno)
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
        if (fn is locals or fn is vars) and not args and not kwargs:
            return self.observer.fresh(self.frame_locals(frame))
        if "out" in kwargs and isinstance(kwargs["out"], torch.Tensor):
            self.observer.mutation(kwargs["out"], "tensor-data", "out=", node.lineno)
        if isinstance(obj, torch.Tensor):
            return self.tensor_method(obj, node.func.attr, fn, tuple(args), kwargs, node.lineno)
        return self.call(fn, tuple(args), kwargs, node.lineno)

    def tensor_method(self, obj: torch.Tensor, name: str, fn: Any, args: tuple, kwargs: dict, line: int) -> Any:
        if name in ("item", "tolist", "numpy", "nonzero", "unique", "data_ptr", "__bool__"):
            self.observer.graph_break(f"Tensor.{name}()", line)
        if name in ("size", "dim", "numel", "stride") and not kwargs:
            sym = self.observer.tensor_query(obj, name, tuple(plain(a) for a in args))
            if sym is not None:
                return sym
        return self.call(fn, args, kwargs, line)

    @staticmethod
    def frame_locals(frame: Frame) -> dict[str, Any]:
        """What `locals()` (or `vars()`) returns in `frame`: its bound fast locals, then its bound cells."""
        out = dict(frame.locals)
        for name, cell in frame.cells.items():
            try:
                out.setdefault(name, cell.cell_contents)
            except ValueError:  # an empty cell is not a bound name
                pass
        return out

    def super_args(self, frame: Frame, line: int) -> list:
        cell = frame.cells.get("__class__")
        if cell is None or not frame.code.co_argcount:
            raise RuntimeError("super(): no arguments")
        first = frame.code.co_varnames[0]
        self_value = frame.cells[first].cell_contents if first in frame.cells else frame.locals[first]
        return [cell.cell_contents, self_value]

    def visit_ListComp(self, node: ast.ListComp, frame: Frame) -> Any:
        elements = self.comprehension(node, frame, "<listcomp>", lambda f: self.eval(node.elt, f))
        return self.observer.fresh(list(elements))

    def visit_SetComp(self, node: ast.SetComp, frame: Frame) -> Any:
        return self.observer.fresh(set(plain(x) for x in self.comprehension(node, frame, "<setcomp>",
                                                                        lambda f: self.eval(node.elt, f))))

    def visit_GeneratorExp(self, node: ast.GeneratorExp, frame: Frame) -> Any:
        return iter(list(self.comprehension(node, frame, "<genexpr>", lambda f: self.eval(node.elt, f))))

    def visit_DictComp(self, node: ast.DictComp, frame: Frame) -> Any:
        pairs = self.comprehension(node, frame, "<dictcomp>",
                                   lambda f: (plain(self.eval(node.key, f)), self.eval(node.value, f)))
        return self.observer.fresh(dict(pairs))

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

