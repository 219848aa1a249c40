"""The construct classifier: names the constructs of a program from its Python AST.

One classifier for every program, generated or hand-written, so a campaign finding and a corpus repro
of the same bug get the same names. A name says what kind of value a construct touches, where that
value comes from and what is done to it — `set-subclass argument .update`, `bytearray argument +=`,
`tensor local .t_`, `torch.cond closing over float argument` — never a variable name, a path or a
number from the program. Each construct also says how to take it out again (`Construct.ablate`), which
`dynfuzz.triage.explain` uses to decide which construct a divergence needs.

Roles: `construct` (a statement of the compiled code), `perturbation` (what the call plan changes
between calls: a statement of `between()`, or an argument `inputs()` varies by call) and `setting`
(`COMPILE_OPTIONS`, `DYNAMO_CONFIG`, `torch._dynamo.config` writes, `mark_dynamic`).
"""
from __future__ import annotations

import ast
import copy

from dynfuzz.triage.ablate import SETTING_NAMES, Construct, function, statements

CONTAINERS = {"set", "frozenset", "list", "dict", "tuple", "bytearray", "deque", "defaultdict", "OrderedDict",
              "Counter"}
# Settings that make Dynamo do the same thing carry one name in keys: torch.compile(dynamic=True) is
# assume_static_by_default=False (soak: one sum(out=) bug filed under both).
SAME_SETTING = {"config.assume_static_by_default=False": "dynamic=True"}
METADATA_INPLACE = {"t_", "transpose_", "resize_", "resize_as_", "squeeze_", "unsqueeze_", "as_strided_", "set_",
                    "swapdims_", "swapaxes_", "requires_grad_", "detach_"}
PLAN_FUNCTIONS = ("inputs", "between")
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCALARS = ("tensor", "float", "int", "bool", "scalar-from-item")


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class Classifier:
    """Reads one module: its classes, globals, the entry's argument kinds, then names every construct."""

    def __init__(self, source: str, entry: str = "f") -> None:
        self.tree = ast.parse(source)
        self.entry = entry
        self.modules = {a.asname or a.name for n in ast.walk(self.tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                        for a in n.names if isinstance(n, ast.Import)} | {"torch", "math", "collections"}
        self.classes: dict[str, str] = {}
        for n in self.tree.body:
            if isinstance(n, ast.ClassDef):
                self.classes[n.name] = self._class_kind(n)
        self.globals: dict[str, str | None] = {}
        for n in self.tree.body:
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    for name in _names(t):
                        self.globals[name] = self.kind(n.value, {}) if isinstance(t, ast.Name) else None
            elif isinstance(n, ast.FunctionDef):
                self.globals.setdefault(n.name, "function")
        self.slot = {id(body[i]): k for k, (body, i) in enumerate(statements(self.tree))}
        self.args, self.varying = self._entry_args()

    # ---- kinds of values ----
    def _class_kind(self, node: ast.ClassDef) -> str:
        if any(k.arg == "metaclass" for k in node.keywords):
            return "metaclass-object"  # its instances are made by the metaclass's __call__: a model of its own
        for base in node.bases:
            name = (_dotted(base) or "").rsplit(".", 1)[-1]
            if self.classes.get(name) == "metaclass-object":
                return "metaclass-object"
            if name in CONTAINERS:
                return f"{name.lower()}-subclass"
            if name == "Function":
                return "autograd-function"
            if name == "Module":
                return "module"
        return "object"

    def kind(self, node: ast.expr | None, scope: dict[str, tuple[str, str | None]]) -> str | None:
        """The kind of value an expression makes: `set-subclass`, `deque-maxlen`, `tensor`, `float`..."""
        if isinstance(node, ast.Constant):
            return {bool: "bool", int: "int", float: "float", str: "str", bytes: "bytes"}.get(type(node.value))
        if isinstance(node, ast.UnaryOp):
            return self.kind(node.operand, scope)
        if isinstance(node, ast.IfExp):
            return self.kind(node.body, scope) or self.kind(node.orelse, scope)
        if isinstance(node, (ast.Set, ast.SetComp)):
            return "set"
        if isinstance(node, (ast.List, ast.ListComp)):
            return "list"
        if isinstance(node, (ast.Dict, ast.DictComp)):
            return "dict"
        if isinstance(node, ast.Tuple):
            return "tuple"
        if isinstance(node, ast.Lambda):
            return "function"
        if isinstance(node, ast.Name):
            return self.resolve(node.id, scope)[1]
        if isinstance(node, ast.BinOp):
            left, right = self.kind(node.left, scope), self.kind(node.right, scope)
            return "tensor" if "tensor" in (left, right) else left or right
        if isinstance(node, ast.Call):
            return self._call_kind(node, scope)
        return None

    def _call_kind(self, node: ast.Call, scope) -> str | None:
        name = _dotted(node.func) or ""
        short = name.rsplit(".", 1)[-1]
        if name in self.classes:
            return self.classes[name]
        if short == "deque":
            maxlen = len(node.args) > 1 or any(k.arg == "maxlen" for k in node.keywords)
            return "deque-maxlen" if maxlen else "deque"
        if name in CONTAINERS or short in ("defaultdict", "OrderedDict", "Counter"):
            return short.lower() if short != "OrderedDict" else "ordereddict"
        if name.startswith("torch.") or name == "torch":
            return "tensor"
        if short == "getLogger":
            return "logger"  # Dynamo models a logging.Logger apart (LoggingLoggerVariable), export differently
        if isinstance(node.func, ast.Attribute):
            if node.func.attr in ("item", "tolist"):
                return "scalar-from-item"
            if node.func.attr == "register_hook":
                return "hook-handle"
            if self.kind(node.func.value, scope) == "tensor":
                return "tensor"
        if name in ("float", "int", "bool", "str"):
            return name
        return None

    def resolve(self, name: str, scope: dict[str, tuple[str, str | None]]) -> tuple[str, str | None]:
        """(origin, kind) of a name: argument, local, cell (from an enclosing function), global."""
        if name in scope:
            return scope[name]
        if name in self.globals:
            return "global", self.globals[name]
        return "unknown", None

    # ---- the entry's arguments, from inputs() ----
    def _entry_args(self) -> tuple[dict[str, tuple[str, str | None]], dict[str, str | None]]:
        fn, inputs = function(self.tree, self.entry), function(self.tree, "inputs")
        args: dict[str, tuple[str, str | None]] = {}
        varying: dict[str, str | None] = {}
        if fn is None:
            return args, varying
        params = [a.arg for a in fn.args.args]
        elements: list[ast.expr | None] = [None] * len(params)
        local: dict[str, ast.expr] = {}
        by_call: set[str] = set()
        if inputs is not None:
            for node in ast.walk(inputs):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    local.setdefault(node.targets[0].id, node.value)
                if isinstance(node, ast.If) and _mentions(node.test, "call"):
                    by_call |= {n for s in node.body + node.orelse for t in ast.walk(s) if isinstance(t, ast.Assign)
                                for n in _names(t.targets[0])}
                if isinstance(node, ast.Assign) and _mentions(node.value, "call"):
                    by_call |= set(_names(node.targets[0]))
            ret = next((n for n in ast.walk(inputs) if isinstance(n, ast.Return)), None)
            if ret is not None and isinstance(ret.value, ast.Tuple):
                elements = list(ret.value.elts) + [None] * max(0, len(params) - len(ret.value.elts))
        for p, element in zip(params, elements):
            value = local.get(element.id) if isinstance(element, ast.Name) else element
            kind = self.kind(value, {}) if value is not None else None
            args[p] = ("argument", kind or ("tensor" if element is not None and value is None else kind))
            name = element.id if isinstance(element, ast.Name) else None
            if (name in by_call) or (element is not None and _mentions(element, "call")) \
                    or (value is not None and _mentions(value, "call")):
                varying[p] = args[p][1]
        return args, varying

    # ---- constructs ----
    def constructs(self) -> list[Construct]:
        """Every construct of the program, deduplicated by name (their statements merged)."""
        found: dict[str, Construct] = {}

        def add(c: Construct) -> None:
            old = found.get(c.name)
            found[c.name] = c if old is None else Construct(c.name, min(c.rank, old.rank), c.role,
                                                            tuple(sorted(set(old.stmts) | set(c.stmts))),
                                                            c.revert_inputs or old.revert_inputs, c.setting)
        for node in self.tree.body:
            if isinstance(node, ast.FunctionDef) and node.name not in PLAN_FUNCTIONS:
                scope = dict(self.args) if node.name == self.entry else {a.arg: ("parameter", None)
                                                                          for a in node.args.args}
                self._function_body(node, scope, add, "construct")
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        self._function_body(item, {a.arg: ("parameter", None) for a in item.args.args}, add,
                                            "construct")
        between = function(self.tree, "between")
        if between is not None:
            self._function_body(between, {}, add, "perturbation")
        for kind in self.varying.values():
            add(Construct(f"{kind or 'value'} argument changes", 20, "perturbation", revert_inputs=True))
        self._settings(add)
        return sorted(found.values(), key=lambda c: (c.rank, c.name))

    def _settings(self, add) -> None:
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id in SETTING_NAMES and isinstance(node.value, ast.Dict):
                prefix = "config." if node.targets[0].id == "DYNAMO_CONFIG" else ""
                for k, v in zip(node.value.keys, node.value.values):
                    if isinstance(k, ast.Constant):
                        name = f"{prefix}{k.value}={ast.unparse(v)}"
                        add(Construct(SAME_SETTING.get(name, name), 30, "setting", setting=k.value))
            elif isinstance(node, ast.Assign) and (_dotted(node.targets[0]) or "").startswith("torch._dynamo.config."):
                name = _dotted(node.targets[0]).rsplit(".", 1)[-1]
                add(Construct(f"config.{name}={ast.unparse(node.value)}", 30, "setting", (self.slot[id(node)],)))
        inputs = function(self.tree, "inputs")
        for node in ast.walk(inputs) if inputs is not None else ():
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and (_dotted(node.value.func) or "").endswith("mark_dynamic"):
                add(Construct("mark_dynamic", 30, "setting", (self.slot[id(node)],)))

    def _function_body(self, fn, scope: dict[str, tuple[str, str | None]], add, role: str) -> None:
        scope = dict(scope)
        declared_global = {n for s in ast.walk(fn) if isinstance(s, ast.Global) for n in s.names}
        declared_nonlocal = {n for s in ast.walk(fn) if isinstance(s, ast.Nonlocal) for n in s.names}
        for name in declared_nonlocal:
            scope[name] = ("cell", scope.get(name, ("cell", None))[1])
        for name in declared_global:
            scope.pop(name, None)
        for stmt in _own_statements(fn):
            slot = (self.slot[id(stmt)],) if id(stmt) in self.slot else ()
            for name, rank in self._statement(stmt, scope, declared_global, declared_nonlocal):
                add(Construct(name, rank + (10 if role == "perturbation" else 0), role, slot))
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                if name not in declared_global and name not in declared_nonlocal:
                    scope[name] = ("local", self.kind(stmt.value, scope))
            if isinstance(stmt, ast.FunctionDef):
                inner = {k: (("cell" if o in ("local", "argument", "parameter", "cell") else o), kd)
                         for k, (o, kd) in scope.items()}
                inner.update({a.arg: ("parameter", None) for a in stmt.args.args})
                self._function_body(stmt, inner, add, role)
                scope[stmt.name] = ("local", "function")

    def _statement(self, stmt: ast.stmt, scope, globals_: set[str], nonlocals: set[str]):
        """(name, rank) of every construct one statement holds."""
        if isinstance(stmt, ast.AugAssign):
            op = _OPS.get(type(stmt.op), "op")
            yield from self._write(stmt.target, scope, f"{op}=")
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                pairs = [(target, stmt.value)]
                if isinstance(target, ast.Tuple):
                    values = stmt.value.elts if isinstance(stmt.value, ast.Tuple) and \
                        len(stmt.value.elts) == len(target.elts) else [None] * len(target.elts)
                    pairs = list(zip(target.elts, values))
                for t, value in pairs:
                    if isinstance(t, ast.Name) and t.id in globals_:
                        yield f"global rebind to {self.kind(value, scope) or 'value'}", 4
                    elif isinstance(t, ast.Name) and t.id in nonlocals:
                        yield f"cell write of {self.kind(value, scope) or 'value'}", 4
                    elif not isinstance(t, ast.Name):
                        yield from self._write(t, scope, "=", value)
        elif isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                yield from self._write(t, scope, "del")
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            for v in (stmt.value.elts if isinstance(stmt.value, ast.Tuple) else [stmt.value]):
                kind = self.kind(v, scope)
                if isinstance(v, ast.Name) and kind and kind not in SCALARS:
                    yield f"{kind} {self.resolve(v.id, scope)[0]} returned", 7  # nearly always needed: last
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            return
        for node in _expressions(stmt):
            if isinstance(node, ast.Call):
                yield from self._call(node, scope)
            elif isinstance(node, _COMPREHENSIONS) and any(isinstance(n, ast.NamedExpr) for n in ast.walk(node)):
                yield "walrus in a comprehension", 7  # binds a cell of the enclosing frame; named only as a last resort

    def _write(self, target: ast.expr, scope, op: str, value: ast.expr | None = None):
        if isinstance(target, ast.Name):
            origin, kind = self.resolve(target.id, scope)
            kind = kind or "value"
            rank = 5 if kind == "tensor" else 4 if kind in ("int", "float", "value") else 0
            yield f"{kind} {origin} {op}", rank
        elif isinstance(target, ast.Subscript):
            origin, kind = self._receiver(target.value, scope)
            yield f"{kind} {origin} [] {op}", 5 if kind == "tensor" else 1
        elif isinstance(target, ast.Attribute):
            origin, kind = self._receiver(target.value, scope)
            what = "method" if value is not None and isinstance(value, (ast.Lambda, ast.Attribute)) else "attribute"
            yield f"{kind} {origin} {what} {op}", 1

    def _receiver(self, node: ast.expr, scope) -> tuple[str, str]:
        if isinstance(node, ast.Name):
            if node.id in self.classes:
                return "class", self.classes[node.id].replace("object", "plain")
            origin, kind = self.resolve(node.id, scope)
            return origin, kind or "value"
        if isinstance(node, ast.Call) and _dotted(node.func) in self.classes:
            return "new", self.classes[_dotted(node.func)]
        kind = self.kind(node, scope)
        return "local", kind or "value"  # a temporary made in the frame is a local to Dynamo: one bucket

    def _call(self, node: ast.Call, scope):
        name = _dotted(node.func) or ""
        root = name.split(".", 1)[0]
        if root in self.modules and root not in scope:
            yield from self._module_call(node, name, scope)
            return
        if not isinstance(node.func, ast.Attribute):
            return
        meth = node.func.attr
        origin, kind = self._receiver(node.func.value, scope)
        if kind in ("tensor", "value") and meth.endswith("_") and not meth.endswith("__"):
            yield f"tensor {origin} .{meth}", 2 if meth in METADATA_INPLACE else 5
        elif kind in ("tensor", "value") and meth == "register_hook":
            yield f"tensor {origin} .register_hook", 1
        elif kind in ("tensor", "value") and meth in ("item", "tolist"):
            yield f"tensor .{meth}", 6
        elif kind not in ("tensor", "value", "function", "float", "int", "str", "bool"):
            special = kind.endswith("-subclass") or kind in SPECIAL_KINDS
            yield f"{kind} {origin} .{meth}", 0 if special else 1

    def _module_call(self, node: ast.Call, name: str, scope):
        if name.endswith(".cond") and name.startswith("torch"):
            yield "torch.cond" + self._cond_capture(node, scope), 3
            return
        if name.endswith("graph_break"):
            yield "graph_break", 1
            return
        out = next((k.value for k in node.keywords if k.arg == "out"), None)
        if out is not None:
            yield f"{name} out= {self._receiver(out, scope)[0]}", 2
            return
        if not name.startswith("torch"):
            kinds = [self._receiver(a, scope) for a in node.args if not isinstance(a, ast.Constant)]
            kinds = [(o, k) for o, k in kinds if k not in ("tensor", "value")]
            if kinds:
                yield f"{name} on {kinds[0][1]} {kinds[0][0]}", 6

    def _cond_capture(self, node: ast.Call, scope) -> str:
        """What a cond's branches close over, most specific first: a scalar argument, an .item() value..."""
        captured = []
        for branch in node.args[1:3]:
            fn = branch
            if isinstance(branch, ast.Name) and branch.id in scope and scope[branch.id][1] == "function":
                fn = next((n for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef) and n.name == branch.id),
                          None)
            if not isinstance(fn, (ast.Lambda, ast.FunctionDef)):
                continue
            params = {a.arg for a in fn.args.args}
            for n in ast.walk(fn.body if isinstance(fn, ast.Lambda) else fn):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in params and n.id in scope:
                    captured.append(scope[n.id])
                if isinstance(n, ast.Call) and (_dotted(n.func) or "").endswith(".cond") and n is not node:
                    captured.append(("nested", "cond"))
        order = ["float", "int", "scalar-from-item", "bool", "cond"]
        for want in order:
            for origin, kind in captured:
                if kind == want:
                    return " nested" if kind == "cond" else f" closing over {kind} {origin}"
        return ""


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
        ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.Pow: "**",
        ast.MatMult: "@"}


def _names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _own_statements(fn) -> list[ast.stmt]:
    """The function's statements, nested blocks flattened, nested functions' bodies excluded."""
    out, todo = [], list(fn.body)
    while todo:
        stmt = todo.pop(0)
        out.append(stmt)
        if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            for name in ("body", "orelse", "finalbody"):
                todo.extend(getattr(stmt, name, []) or [])
            for h in getattr(stmt, "handlers", []) or []:
                todo.extend(h.body)
    return out


def _expressions(stmt: ast.stmt):
    """Expression nodes of one statement, not descending into nested blocks (they are own statements)."""
    todo = [v for name, v in ast.iter_fields(stmt) if name not in ("body", "orelse", "finalbody", "handlers")]
    while todo:
        v = todo.pop(0)
        if isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, ast.AST):
            yield v
            todo.extend(child for child in ast.iter_child_nodes(v))


def classify(source: str, entry: str = "f") -> list[Construct]:
    """The program's constructs, most specific first (see `Construct.rank`)."""
    return Classifier(copy.copy(source), entry).constructs()


ORIGINS = ("argument", "local", "cell", "global", "parameter", "class", "new", "unknown")
# Kinds whose every use is one fault family: a value Dynamo models apart from the builtin it derives from (a
# container subclass, a bounded deque, a hook handle), whatever is done to it (a mutation lost, its contents read
# back wrong, the value returned) and wherever it comes from. A builtin container keeps its method: Dynamo
# handles each method of `list` or `set` on its own, so two methods are two places a fault can be.
SPECIAL_KINDS = frozenset({"deque-maxlen", "hook-handle", "bytearray", "logger"})


def family(name: str) -> str:
    """The fault family of a construct name: what the divergence is about, without the surface a program
    reached it through (where the value came from, which method of a container, how it was observed).

    `set-subclass argument .update`, `set-subclass global .add` and `set-subclass local returned` are one family,
    `set-subclass`; `tensor local .t_` and `tensor argument .unsqueeze_` are `tensor in-place metadata op`;
    `set argument .add` and `set global .add` are `set .add`; `torch.cond closing over float argument` is
    `torch.cond closing over float`. Names with no origin word (`walrus in a comprehension`, `global rebind to
    list`) are their own family."""
    base, under = (name.split(" under ", 1) + [""])[:2]
    words = base.split()
    tail = f" under {under}" if under else ""
    if not words:
        return name
    kind = words[0]
    rest = [w for w in words[1:] if w not in ORIGINS]
    method = next((w[1:] for w in rest if w.startswith(".")), None)
    if kind in ("tensor", "value") and method is not None and method.endswith("_") and not method.endswith("__"):
        return ("tensor in-place metadata op" if method in METADATA_INPLACE else "tensor in-place op") + tail
    if kind.endswith("-subclass") or kind in SPECIAL_KINDS:
        return kind + tail
    if kind in ("object", "metaclass-object") and rest:
        what = "attribute write" if "attribute" in rest else "returned" if rest[-1] == "returned" else \
            "method call" if method else " ".join(rest)
        return f"{kind} {what}{tail}"
    if len(words) > 1 and words[1] in ORIGINS and rest:  # `<kind> <origin> <op>`: the op names the family
        return f"{kind} {' '.join(rest)}{tail}"
    return " ".join([kind, *rest]) + tail
