"""The `conds` family: `torch.cond` nested up to three levels, and illegal-on-purpose conds.

Branches are inline closures, module-level functions or lambdas; they close
over outer tensors, sizes (`c = a.size(0)`), unbacked values (`.item()`) and
tensors built from unbacked sizes (seeds 000 and 002). Sizes cross the
predicate's boundary between calls under `dynamic=True` or with dim 0 marked by
`torch._dynamo.mark_dynamic`. Because eager-mode `torch.cond` itself runs Dynamo,
every program also gets an eager reference in which each `torch.cond(p, t, f, ops)`
is the plain `t(*ops) if bool(p) else f(*ops)`.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace

from .. import choose as draws
from .. import ir, tensor_ops
from ..builder import Builder, TensorVar
from ..fragments import fragment

COND = ir.dotted("torch.cond")
MAX_DEPTH = 3
THRESHOLDS = (0.0625, -0.3125, 0.4375)
ILLEGAL = {  # kind -> the exception Dynamo (and so eager-mode torch.cond) is documented to raise
    "mutate-cell": "UncapturedHigherOrderOpError",
    "mutate-list": "UncapturedHigherOrderOpError",
    "mutate-operand": "UncapturedHigherOrderOpError",
    "output-count": "UncapturedHigherOrderOpError",
    "output-dtype": "TorchRuntimeError",
}


OUTPUT_OPS = (  # (kind, name or scale, bound or shift): one draw picks how a branch makes an output
    ("call", "torch.sin", 1.0), ("call", "torch.tanh", 1.0), ("call", "torch.sigmoid", 1.0),
    ("method", "cos", 1.0), ("method", "sin", 1.0), ("call", "torch.relu", None), ("call", "torch.abs", None),
    ("method", "neg", None), ("affine", 2, 1), ("affine", -1.5, 0.5), ("affine", 3, -0.25), ("affine", 0.5, 2),
)
STYLES = ("lambda", "inline", "function")
STYLE_PAIRS = tuple((t, f) for t in STYLES for f in STYLES)
INLINE_PAIRS = tuple(pair for pair in STYLE_PAIRS if "function" not in pair)
_int = draws.integer  # cached strategies: generation cost is dominated by draws
choose = draws.choose


def flags(draw, n: int) -> list[bool]:
    """`n` (at most 4) independent optional features, each on about one time in four, in a single draw."""
    v = _int(draw, 0, 4 ** n - 1)
    return [(v >> 2 * i) & 3 == 3 for i in range(n)]


def chance(draw, n: int) -> bool:
    """True one time in `n`; shrinks toward False, so minimized programs lose optional features."""
    return _int(draw, 0, n - 1) == n - 1


@dataclass(frozen=True)
class Capture:
    """A value a branch may close over: how to use it, and a bound on its magnitude."""

    kind: str  # tensor | size | unbacked | unbacked-tensor
    expr: ir.Expr
    bound: float
    var: TensorVar | None = None  # a captured tensor, usable elementwise when shapes match


@dataclass
class Site:
    """What a cond being drawn can see: operands (the last may be a size-varying private one), captures."""

    operands: list[TensorVar]
    private: str | None
    private_max: int
    captures: list[Capture]
    unbacked_ok: bool  # `.item()` may be drawn inside a branch (the program compiles with fullgraph=True)
    max_depth: int = MAX_DEPTH
    tie: bool = False  # see Note [Outputs of a cond with a grad operand]


# ---- the eager reference ------------------------------------------------------------------------


def plain_if(node):
    """`node` with every `torch.cond(p, t, f, (ops...))` replaced by `t(*ops) if bool(p) else f(*ops)`."""
    if isinstance(node, tuple):
        new = tuple(plain_if(x) for x in node)
        return node if all(a is b for a, b in zip(new, node)) else new
    names = _FIELDS.get(type(node))
    if names is None:
        if not is_dataclass(node) or isinstance(node, (type, ir.Program)):
            return node
        names = _FIELDS[type(node)] = tuple(f.name for f in fields(node))
    if type(node) is ir.Call and node.func == COND and len(node.args) == 4:
        pred, true_fn, false_fn, ops = (plain_if(a) for a in node.args)
        args = ops.elts if isinstance(ops, ir.TupleExpr) else (ops,)
        return ir.IfExp(ir.call("bool", pred), ir.Call(true_fn, args), ir.Call(false_fn, args))
    changed = {}
    for name in names:
        value = getattr(node, name)
        if value is not None and not isinstance(value, (str, int, float)):
            new_value = plain_if(value)
            if new_value is not value:
                changed[name] = new_value
    return replace(node, **changed) if changed else node


_FIELDS: dict[type, tuple[str, ...]] = {}


def eager_reference(program: ir.Program) -> ir.Program:
    return replace(program, body=plain_if(program.body), eager_program=None)


def _start(b: Builder) -> None:
    b.eager_variant = eager_reference
    b.tag("cond")


# ---- branch bodies ------------------------------------------------------------------------------


def _output(draw, p: TensorVar, captures: list[Capture]) -> tuple[ir.Expr, float]:
    """A fresh tensor shaped like `p` (never `p` itself: returning an operand is aliasing)."""
    operand, bound = tensor_ops.squash(p)
    kind, what, extra = choose(draw, OUTPUT_OPS)
    if kind == "affine":
        expr: ir.Expr = ir.BinOp(ir.BinOp(operand, "*", ir.Const(what)), "+", ir.Const(extra))
        bound = bound * abs(what) + abs(extra)
    else:
        expr = ir.call(what, operand) if kind == "call" else ir.method(operand, what)
        bound = bound if extra is None else extra
    k = _int(draw, 0, 2 * len(captures)) if captures else 0
    if k == 0:
        return expr, bound
    cap = captures[(k - 1) % len(captures)]
    use: ir.Expr = cap.expr
    cap_bound = cap.bound
    if cap.var is not None and cap.var.shape == p.shape:
        use, cap_bound = tensor_ops.squash(cap.var)
    if k > len(captures) and cap_bound <= 8:
        return ir.BinOp(expr, "*", use), bound * max(cap_bound, 1.0)
    return ir.BinOp(expr, "+", use), bound + cap_bound


def _pred(draw, b: Builder, site: Site, params: list[TensorVar], private: str | None) -> ir.Expr:
    """A Python constant, a size comparison (symbolic under dynamic shapes) or a data-dependent tensor."""
    candidates: list[tuple[str, ir.Expr]] = [("const", ir.Const(False)), ("const", ir.Const(True))]
    if private:
        shape0 = ir.Sub(ir.Attr(ir.Name(private), "shape"), ir.Const(0))
        candidates.append(("size", ir.BinOp(shape0, ">", ir.Const(SIZE_CUT))))
    for p in params:
        if p.shape:
            size0 = ir.method(p.expr, "size", ir.Const(0))
            candidates += [("size", ir.BinOp(size0, ">", ir.Const(k))) for k in (p.shape[0] - 1, p.shape[0])]
        operand, _ = tensor_ops.squash(p)
        candidates += [("tensor", ir.BinOp(ir.method(operand, "mean"), ">", ir.Const(t))) for t in THRESHOLDS]
    kind, pred = choose(draw, candidates)
    b.tag(f"pred-{kind}")
    return pred


def _branch_locals(draw, b: Builder, site: Site, params: list[TensorVar], private: str | None,
                   stmts: list[ir.Stmt], want_size: bool, want_unbacked: bool) -> list[Capture]:
    """Optional values bound inside a `def` branch for inner branches to close over."""
    caps = []
    sized = [p for p in params if p.shape]
    if (sized or private) and want_size:
        c = b.fresh("c")
        # `chance` is drawn whenever there is a private operand, so that seeds keep their choices.
        if private and (chance(draw, 2) or not sized):
            stmts.append(ir.Assign(ir.Name(c), ir.method(ir.Name(private), "size", ir.Const(0))))
            caps.append(Capture("size", ir.Name(c), float(site.private_max)))
        else:
            p = choose(draw, sized)
            stmts.append(ir.Assign(ir.Name(c), ir.method(p.expr, "size", ir.Const(0))))
            caps.append(Capture("size", ir.Name(c), float(p.shape[0])))
        b.tag("capture-size")
    if site.unbacked_ok and want_unbacked:
        p = choose(draw, params)
        u = b.fresh("u")
        stmts.append(ir.Assign(ir.Name(u), ir.method(ir.method(ir.BinOp(p.expr, ">", ir.Const(0)), "sum"), "item")))
        caps.append(Capture("unbacked", ir.Name(u), float(max(p.numel, 1))))
        b.tag("unbacked-in-branch")
    return caps


# Note [Outputs of a cond with a grad operand]
# torch.cond makes every output require grad when any operand (or lifted closure) does; a plain `if`
# only when the taken branch used one. So that the eager reference agrees, when the program has a
# grad leaf every branch output adds `0.0 * (...)` over all tensor operands and captured tensors, and
# module-level branches (which cannot see captured tensors) are not drawn beside captured tensors.


def _tied(params: list[TensorVar], captures: list[Capture], outs):
    terms = [ir.method(p.expr, "mean") for p in params] + [c.expr for c in captures if c.kind == "tensor"]
    total = terms[0]
    for term in terms[1:]:
        total = ir.BinOp(total, "+", term)
    return [(ir.BinOp(e, "+", ir.BinOp(ir.Const(0.0), "*", total)), bd) for e, bd in outs]


def _branch(draw, b: Builder, site: Site, stmts: list[ir.Stmt], depth: int, n_out: int,
            style: str) -> tuple[ir.Expr, list[float]]:
    """One branch function (emitted into `stmts` or the module); returns how to name it and output bounds."""
    names = [b.fresh("a") for _ in site.operands]
    private = b.fresh("s") if site.private else None
    params = [TensorVar(n, op.shape, op.bound) for n, op in zip(names, site.operands)]
    all_names = names + ([private] if private else [])
    captures = site.captures if style != "function" else []
    b.tag(f"branch-{style}")
    if style == "lambda":
        if private:  # no draw here, so that shrinking the private operand away keeps later choices aligned
            captures = captures + [Capture("size", ir.method(ir.Name(private), "size", ir.Const(0)),
                                           float(site.private_max))]
        outs = [_output(draw, params[k % len(params)], captures) for k in range(n_out)]
        if site.tie:
            outs = _tied(params, captures, outs)
        body = outs[0][0] if n_out == 1 else ir.TupleExpr(tuple(e for e, _ in outs))
        return ir.Lambda(tuple(all_names), body), [bd for _, bd in outs]
    body: list[ir.Stmt] = []
    want_size, want_unbacked, nest = flags(draw, 3)
    local = captures + _branch_locals(draw, b, site, params, private, body, want_size, want_unbacked)
    if depth < site.max_depth and nest:
        inner = Site(params, private, site.private_max, local, site.unbacked_ok, site.max_depth, site.tie)
        results = emit_cond(draw, b, inner, body, depth + 1, n_out)
        outs = []
        for k, (rname, bound) in enumerate(results):
            if chance(draw, 2):
                var = TensorVar(rname, site.operands[k % len(params)].shape, bound)
                outs.append(_output(draw, var, local))
            else:
                outs.append((ir.Name(rname), bound))
    else:
        outs = [_output(draw, params[k % len(params)], local) for k in range(n_out)]
    if site.tie:
        outs = _tied(params, local, outs)
    ret = outs[0][0] if n_out == 1 else ir.TupleExpr(tuple(e for e, _ in outs))
    body.append(ir.Return(ret))
    fname = b.fresh("branch" if style == "function" else "br")
    fdef = ir.Def(fname, tuple(ir.Param(n) for n in all_names), tuple(body))
    if style == "function":
        b.add_helper(fdef)
    else:
        stmts.append(fdef)
    return ir.Name(fname), [bd for _, bd in outs]


def emit_cond(draw, b: Builder, site: Site, stmts: list[ir.Stmt], depth: int,
              n_out: int) -> list[tuple[str, float]]:
    """Append branch defs and `r = torch.cond(...)` to `stmts`; return the result names and bounds."""
    b.tag(f"cond-depth-{depth}")
    params_view = site.operands
    pred = _pred(draw, b, site, params_view, site.private)
    pairs = STYLE_PAIRS
    if site.tie and any(c.kind == "tensor" for c in site.captures):
        pairs = INLINE_PAIRS
    true_style, false_style = choose(draw, pairs)
    true_fn, tb = _branch(draw, b, site, stmts, depth, n_out, true_style)
    false_fn, fb = _branch(draw, b, site, stmts, depth, n_out, false_style)
    ops = [op.expr for op in site.operands] + ([ir.Name(site.private)] if site.private else [])
    call = ir.call(COND, pred, true_fn, false_fn, ir.TupleExpr(tuple(ops)))
    results = [b.fresh("r") for _ in range(n_out)]
    target = ir.Name(results[0]) if n_out == 1 else ir.TupleExpr(tuple(ir.Name(r) for r in results))
    stmts.append(ir.Assign(target, call))
    return [(r, max(x, y)) for r, x, y in zip(results, tb, fb)]


# ---- top-level captures and inputs --------------------------------------------------------------

SIZE_CUT = 4
SIZE_PLANS = ((3, 5, 4), (5, 3, 6), (4, 6, 2))  # private operand lengths per call: both sides of SIZE_CUT


def _top_captures(draw, b: Builder, pool: list[TensorVar], want: list[bool]) -> list[Capture]:
    caps: list[Capture] = []
    if want[0]:
        w = choose(draw, pool)
        expr, bound = tensor_ops.squash(w)
        caps.append(Capture("tensor", ir.method(expr, "mean"), bound, w))
        b.tag("capture-tensor")
    sized = [t for t in pool if t.shape]
    if sized and want[1]:
        t = choose(draw, sized)
        c = b.fresh("n")
        b.emit(ir.Assign(ir.Name(c), ir.method(t.expr, "size", ir.Const(0))))
        caps.append(Capture("size", ir.Name(c), float(t.shape[0])))
        b.tag("capture-size")
    if want[2]:
        t = choose(draw, pool)
        operand, bound = tensor_ops.squash(t)
        u = b.fresh("u")
        kind = "float" if chance(draw, 3) else "count"
        if kind == "float":
            b.emit(ir.Assign(ir.Name(u), ir.method(ir.method(ir.call("torch.tanh", operand), "amax"), "item")))
            caps.append(Capture("unbacked", ir.Name(u), 1.0))
            b.tag("unbacked-float")
        else:
            b.emit(ir.Assign(ir.Name(u), ir.method(ir.method(ir.BinOp(operand, ">", ir.Const(0)), "sum"), "item")))
            caps.append(Capture("unbacked", ir.Name(u), float(max(t.numel, 1))))
        b.tag("capture-unbacked")
        if kind != "float" and chance(draw, 2):
            r = b.fresh("k")
            b.emit(ir.Assign(ir.Name(r), ir.method(t.expr, "new_ones", ir.Name(u))))
            caps.append(Capture("unbacked-tensor", ir.method(ir.Name(r), "sum"), float(max(t.numel, 1))))
            b.tag("capture-unbacked-tensor")
    return caps


def _private_input(b: Builder, mark_from: int | None = None) -> str:
    """A 1-D input only conds read, whose length crosses SIZE_CUT between calls.

    With `mark_from`, `inputs()` passes it through `torch._dynamo.mark_dynamic(t, 0)` from that call on
    (from call 1: the first graph is static and the re-call recompiles with a dynamic dim 0).
    """
    name = b.fresh("s")
    # No draw of its own: turning the feature off while shrinking leaves later choices aligned.
    plan = SIZE_PLANS[len(b.params) % len(SIZE_PLANS)]
    b.add_input(name, (plan[0],))
    b.root.tensors.pop()
    param = b.params[-1]
    for call, n in enumerate(plan[1:], start=1):
        param.per_call[call] = ir.call("torch.linspace", ir.Const(-1.0), ir.Const(1.0), ir.Const(n),
                                       device=ir.Name("device"))
    b.calls = max(b.calls, len(plan))
    b.tag("size-varying-calls")
    if mark_from is not None:
        b.add_helper(_MARK_HELPER)
        if mark_from == 0:
            param.make = ir.call(MARK, param.make)
        for call, expr in param.per_call.items():
            param.per_call[call] = ir.call(MARK, expr)
        b.tag("mark-dynamic" if mark_from == 0 else "mark-dynamic-late")
    return name


# `mark_dynamic` returns None, and `inputs()` is one return of a tuple: the mark goes in a helper.
MARK = "mark_dim0_dynamic"
_MARK_HELPER = ir.Def(MARK, (ir.Param("t"),), (
    ir.ExprStmt(ir.call("torch._dynamo.mark_dynamic", ir.Name("t"), ir.Const(0))), ir.Return(ir.Name("t"))))


@fragment("conds", "cond", weight=3, nestable=False)
def cond(draw, b):
    """A `torch.cond` (nested up to 3 levels) whose results become ordinary visible tensors."""
    first = "cond" not in b.tags
    _start(b)
    pool = list(b.scope.visible_tensors())
    # Later conds in a program are plain single-level ones: generation cost grows with every feature.
    grad, varying, dynamic, unbacked_ok = flags(draw, 4) if first else (False,) * 4
    cap_tensor, cap_size, cap_unbacked, two_out = flags(draw, 4) if first else (False,) * 4
    if grad:
        base = choose(draw, pool)
        leaf = b.add_input(b.fresh("w"), base.shape if base.shape else (4,), offset=0.25, requires_grad=True)
        pool.append(leaf)
        b.tag("requires-grad")
    n_ops = _int(draw, 1, 2)
    operands = []
    for _ in range(n_ops):
        op = choose(draw, pool)
        if op not in operands:
            operands.append(op)
    if len(operands) > 1:
        b.tag("multi-operand")
    # Sizes cross SIZE_CUT between calls either under `dynamic=True` or with dim 0 marked dynamic.
    mark_from = choose(draw, (None, 0, 1)) if varying and not dynamic else None
    private = _private_input(b, mark_from) if varying else None
    if dynamic:
        b.compile_options["dynamic"] = True
        b.tag("dynamic")
    captures = _top_captures(draw, b, pool, [cap_tensor, cap_size, cap_unbacked])
    if unbacked_ok or (any(c.kind.startswith("unbacked") for c in captures) and chance(draw, 2)):
        # A Python branch on an unbacked int breaks the graph by design; under fullgraph that is a refusal.
        unbacked_ok = unbacked_ok and "unbacked-py-branch" not in b.tags
        if "unbacked-py-branch" not in b.tags:
            b.compile_options["fullgraph"] = True
            b.tag("fullgraph")
    n_out = 2 if two_out else 1
    if n_out > 1:
        b.tag("multi-output")
    tie = any(p.tensor is not None and p.tensor.requires_grad for p in b.params)
    site = Site(operands, private, 6, captures, unbacked_ok, MAX_DEPTH if first else 1, tie)
    if n_out == 1 and private is None and not any(t.requires_grad for t in operands) \
            and operands[0].shape and operands[0].shape[0] > 1 and chance(draw, 6):
        _shape_mismatch(draw, b, site)
        return
    results = emit_cond(draw, b, site, b.scope.stmts, 1, n_out)
    for k, (rname, bound) in enumerate(results):
        var = TensorVar(rname, operands[k % len(operands)].shape, bound)
        b.scope.tensors.append(var)
        if any(t.requires_grad for t in pool):
            b.returns.append(var.expr)


def _shape_mismatch(draw, b: Builder, site: Site) -> None:
    """Branches whose outputs differ in shape: supported by torch 2.13; the result is returned, not reused."""
    op = site.operands[0]
    a = b.fresh("a")
    stop = _int(draw, 1, op.shape[0] - 1)
    sliced = ir.BinOp(ir.Sub(ir.Name(a), ir.Slice(None, ir.Const(stop))), "*", ir.Const(2))
    pred = _pred(draw, b, site, site.operands, None)
    call = ir.call(COND, pred, ir.Lambda((a,), sliced), ir.Lambda((a,), ir.call("torch.sin", ir.Name(a))),
                   ir.TupleExpr((op.expr,)))
    r = b.fresh("r")
    b.emit(ir.Assign(ir.Name(r), call))
    b.returns.append(ir.Name(r))
    b.tag("branch-shape-mismatch", "branch-lambda")


# The family's other constructs register their fragments on import (they use the helpers above).
from . import illegal, closures, unbacked, unbacked_branches  # noqa: E402,F401  isort: skip
