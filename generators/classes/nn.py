"""torch.nn: module-level `nn.Module` subclasses built from Linear, LayerNorm, activations, Sequential,
ModuleList, ModuleDict, ParameterList, buffers and bare Parameters; forward (pre-)hooks; `training`
toggled between calls (a branch on it, and BatchNorm updating its running statistics); a counter
attribute mutated in forward; iteration over parameters, children and modules; torch.nn.functional.

Parameters are set deterministically (from `torch.linspace`, under `no_grad`) right after construction,
so no random initialisation reaches the outputs. Modules live in a global, an entry argument (built in
`inputs()`) or are made in the compiled frame; their parameters require grad, so the harness's backward
pass compares their `.grad` too.
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import boolean, choose, integer
from ..fragments import fragment
from .common import FAMILY, emit, helper, operand, place, result, where

NN = "torch.nn"
INIT = """
        with torch.no_grad():
            for i, p in enumerate(self.parameters()):
                p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.25 * i))"""

# layer -> (__init__ lines, forward lines), with `n` the feature size and `x` the running value
LAYERS = {
    "linear": (["self.lin = torch.nn.Linear(n, n)"], ["x = torch.tanh(self.lin(x))"]),
    "layernorm": (["self.norm = torch.nn.LayerNorm(n)"], ["x = self.norm(x) * 0.5"]),
    "activation": (["self.act = torch.nn.GELU()", "self.act2 = torch.nn.ReLU()"], ["x = self.act2(self.act(x))"]),
    "sequential": (["self.seq = torch.nn.Sequential(torch.nn.Linear(n, n), torch.nn.Tanh(), torch.nn.Identity())"],
                   ["x = self.seq(x)"]),
    "modulelist": (["self.layers = torch.nn.ModuleList([torch.nn.Linear(n, n) for _ in range(2)])"],
                   ["for layer in self.layers:", "    x = torch.tanh(layer(x))"]),
    "moduledict": (["self.heads = torch.nn.ModuleDict({'a': torch.nn.Linear(n, n), 'b': torch.nn.Tanh()})"],
                   ["for key, head in self.heads.items():", "    x = torch.tanh(head(x))"]),
    "paramlist": (["self.ps = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(n)) for _ in range(2)])"],
                  ["for p in self.ps:", "    x = torch.tanh(x * p)"]),
    "buffer": (["self.register_buffer('shift', torch.linspace(0.0, 1.0, n))"], ["x = torch.tanh(x + self.shift)"]),
    "parameter": (["self.scale = torch.nn.Parameter(torch.tensor(0.5))"], ["x = x * self.scale"]),
}


def module_class(draw, b: Builder, extra_init: tuple[str, ...] = (), extra_fwd: tuple[str, ...] = ()) -> str:
    """A module-level `nn.Module` subclass over feature size `n`: 1-3 layers, parameters set from linspace."""
    cls = b.fresh("Net")
    kinds = []
    for _ in range(integer(draw, 1, 3)):
        kind = choose(draw, tuple(LAYERS))
        if kind not in kinds:
            kinds.append(kind)
    init = [line for k in kinds for line in LAYERS[k][0]] + list(extra_init)
    fwd = [line for k in kinds for line in LAYERS[k][1]] + list(extra_fwd)
    pad = "\n" + " " * 8
    text = (f"class {cls}({NN}.Module):\n    def __init__(self, n):\n        super().__init__()"
            f"{pad}{pad.join(init)}{INIT}\n\n    def forward(self, x):{pad}{pad.join(fwd)}\n        return x")
    b.add_helper(ir.Code(text))
    return cls


def module_object(draw, b: Builder, cls: str, n: int, prefix: str = "net") -> str:
    """An instance of `cls(n)`: a global, an argument built in `inputs()` (on its device), or made here."""
    kind = where(draw, b)
    make = f"{cls}({n}).to(device)" if kind == "arg" else f"{cls}({n})"
    return place(b, kind, make, prefix)


@fragment(FAMILY, "classes", "nn-module", weight=5)
def nn_module(draw, b: Builder) -> None:
    """A small nn.Module stack called on a visible tensor (its last dimension is the feature size)."""
    t, var, _ = operand(draw, b, vector=True)
    cls = module_class(draw, b)
    m = module_object(draw, b, cls, var.shape[-1])
    result(b, f"torch.tanh({m}(torch.tanh({t})))", var.shape, 1.0, grad=True)


@fragment(FAMILY, "classes", "nn-hook", weight=5)
def nn_hook(draw, b: Builder) -> None:
    """A forward pre-hook (rewriting the input) and/or a forward hook (rewriting the output, counting
    calls on the module), registered when the global module is built, outside the compiled frame.

    Hook dicts are keyed by a process-wide handle counter, different in the eager and the compiled run of
    the same program; the builder renumbers them from 0 so that the state snapshots agree."""
    t, var, _ = operand(draw, b, vector=True)
    cls = module_class(draw, b, extra_init=("self.seen = 0",))
    pre, post = b.fresh("pre_hook"), b.fresh("post_hook")
    helper(b, """
        def $P(mod, args):
            return (args[0] * 0.5,)
        """, P=pre)
    helper(b, """
        def $Q(mod, args, out):
            mod.seen = mod.seen + 1
            return out + 0.25
        """, Q=post)
    which = choose(draw, ("pre", "post", "both"))
    maker = b.fresh("make_hooked")
    regs = []
    if which in ("pre", "both"):
        regs.append(f"    m.register_forward_pre_hook({pre})")
    if which in ("post", "both"):
        regs.append(f"    m.register_forward_hook({post})")
    renumber = ("    for hooks in (m._forward_pre_hooks, m._forward_hooks):\n"
                "        kept = list(hooks.values())\n        hooks.clear()\n        hooks.update(enumerate(kept))\n")
    b.add_helper(ir.Code(f"def {maker}(n):\n    m = {cls}(n)\n" + "\n".join(regs) + "\n" + renumber + "    return m"))
    m = place(b, "global", f"{maker}({var.shape[-1]})", "hooked")
    result(b, f"{m}({t}) + {m}.seen % 3", var.shape, 6.0, grad=True)


@fragment(FAMILY, "classes", "nn-train-eval", weight=5, nestable=False)
def nn_train_eval(draw, b: Builder) -> None:
    """`training` toggled between calls on a global module: forward branches on `self.training`, or a
    BatchNorm1d uses batch statistics (updating its running buffers) in training and the buffers in eval."""
    t, var, _ = operand(draw, b, vector=True)
    bn = boolean(draw)
    cls = b.fresh("Mode")
    if bn:
        helper(b, f"""
            class $C({NN}.Module):
                def __init__(self, n):
                    super().__init__()
                    self.bn = {NN}.BatchNorm1d(n)

                def forward(self, x):
                    return self.bn(x)
            """, C=cls)
        n, arg = var.numel, f"torch.stack([torch.tanh({t}).flatten(), torch.sin({t}).flatten() * 0.5])"
        shape: tuple[int, ...] = (2, var.numel)
    else:
        helper(b, f"""
            class $C({NN}.Module):
                def __init__(self, n):
                    super().__init__()
                    self.w = {NN}.Parameter(torch.linspace(-1.0, 1.0, n))

                def forward(self, x):
                    if self.training:
                        return torch.tanh(x * self.w)
                    return torch.sin(x) + self.w
            """, C=cls)
        n, arg, shape = var.shape[-1], f"torch.tanh({t})", var.shape
    m = b.fresh("MODE_")
    b.add_global(m, ir.CodeExpr(f"{cls}({n})"))
    b.between.append(ir.Code(f"{m}.train(call % 2 == 0)"))
    result(b, f"{m}({arg}) * (2.0 if {m}.training else 1.0)", shape, 60.0, grad=True)


@fragment(FAMILY, "classes", "nn-counter", weight=5)
def nn_counter(draw, b: Builder) -> None:
    """A module whose forward mutates its own attributes: an int counter, and a list of seen sums."""
    t, var, _ = operand(draw, b, vector=True)
    cls = module_class(draw, b, extra_init=("self.steps = 0", "self.history = []"),
                       extra_fwd=("self.steps = self.steps + 1", "self.history.append(self.steps)",
                                  "x = x * (self.steps % 3 + 1)"))
    m = module_object(draw, b, cls, var.shape[-1], "cnt")
    result(b, f"torch.tanh({m}(torch.tanh({t}))) + len({m}.history) % 4", var.shape, 5.0, grad=True)


@fragment(FAMILY, "classes", "nn-iterate", weight=5)
def nn_iterate(draw, b: Builder) -> None:
    """Iteration over `named_parameters()`, `parameters()`, `children()`, `modules()` or `named_buffers()`
    of a module, folding what it visits into a tensor."""
    t, var, _ = operand(draw, b, vector=True)
    cls = module_class(draw, b, extra_init=("self.register_buffer('count', torch.ones(1))",))
    m = module_object(draw, b, cls, var.shape[-1], "walk")
    acc, name, p = b.fresh("acc"), b.fresh("name"), b.fresh("p")
    b.emit(ir.Assign(ir.Name(acc), ir.CodeExpr(f"torch.tanh({t})")))
    loop = choose(draw, (
        f"for {name}, {p} in {m}.named_parameters():\n    if {name}.endswith('weight'):\n"
        f"        {acc} = {acc} + torch.tanh({p}.sum())",
        f"for {p} in {m}.parameters():\n    {acc} = {acc} + {p}.mean()",
        f"for {p} in {m}.children():\n    {acc} = {acc} + len(list({p}.parameters()))",
        f"for {p} in {m}.modules():\n    {acc} = {acc} + isinstance({p}, torch.nn.Linear)",
        f"for {name}, {p} in {m}.named_buffers():\n    {acc} = {acc} + {p}.sum()",
    ))
    emit(b, loop)
    result(b, f"torch.tanh({acc})", var.shape, 1.0, grad=True)


CONTAINERS = """
class $C(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.seq = torch.nn.Sequential(torch.nn.Linear(n, n), torch.nn.Tanh())
        self.layers = torch.nn.ModuleList([torch.nn.Linear(n, n) for _ in range(2)])
        self.heads = torch.nn.ModuleDict({'a': torch.nn.Linear(n, n), 'b': torch.nn.Tanh()})
        self.register_buffer('shift', torch.linspace(0.0, 1.0, n))""" + INIT + """

    def forward(self, x):
        x = self.seq(x)
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x + self.shift
"""

# Reaching into a module's containers from the compiled frame: `$M` the module, `$T` a tensor of width n.
CONTAINER_USES = (
    "$M($T)", "$M.seq[0]($T) + $M.seq[-1]($T)", "$M.seq[:1]($T)", "$T * len($M.layers) + $M.layers[1]($T)",
    "$M.heads['a']($T) * int('b' in $M.heads)", "$T * len([k for k in $M.heads.keys()])",
    "$M.get_submodule('seq.0')($T) + $M.get_parameter('seq.0.bias').sum()",
    "$T * sum(1 for _ in $M.named_children())", "getattr($M, 'shift') * $T + $M.layers[0].weight.shape[0]",
    "next(iter($M.layers))($T) * int($M.training) + list($M.heads.values())[0]($T)",
    "$T * int(bool($M.layers)) + sum(p.sum() for p in $M.seq.parameters())",
    "$T * int(isinstance($M.seq, torch.nn.Sequential)) + $M.heads.b($T)",
)


@fragment(FAMILY, "classes", "nn-containers", weight=5)
def nn_containers(draw, b: Builder) -> None:
    """Sequential, ModuleList and ModuleDict reached into from the compiled frame (indexing, slicing, `in`,
    `len`, `get_submodule`, iteration), at times with `inline_inbuilt_nn_modules=False` when the program has
    no other Dynamo setting yet. On torch releases that still have the old nn.Module path (`NNModuleVariable`,
    2.5 for one) that pairing walks it over modules that hold containers; torch 2.13 ignores the flag (it
    warns that inlining is always on), so there the construct exercises the inlined containers only."""
    t, var, _ = operand(draw, b, vector=True)
    cls = b.fresh("Holder")
    helper(b, CONTAINERS, C=cls)
    m = module_object(draw, b, cls, var.shape[-1], "holder")
    if not b.dynamo_config and "dynamic" not in b.compile_options and boolean(draw):
        b.dynamo_config["inline_inbuilt_nn_modules"] = False
        b.tag("config-no-inline-nn-modules")
    uses = [choose(draw, CONTAINER_USES) for _ in range(integer(draw, 1, 2))]
    text = " + ".join(f"torch.tanh({u})" for u in uses).replace("$M", m).replace("$T", f"torch.tanh({t})")
    result(b, text, var.shape, 2.0, grad=True)


FUNCTIONAL = (
    ("F.relu($x)", "relu"), ("F.softmax($x, dim=-1)", "softmax"), ("F.log_softmax($x, dim=0)", "log-softmax"),
    ("F.gelu($x)", "gelu"), ("F.gelu($x, approximate='tanh')", "gelu"), ("F.silu($x)", "silu"),
    ("F.layer_norm($x, ($n,)) * 0.5", "layer-norm"), ("F.dropout($x, p=0.5, training=False)", "dropout"),
    ("F.normalize($x, dim=-1)", "normalize"), ("F.leaky_relu($x, 0.1)", "leaky-relu"), ("F.elu($x)", "elu"),
    ("F.hardtanh($x, -0.5, 0.5)", "hardtanh"),
    ("F.linear($x, torch.linspace(-0.5, 0.5, $n * $n, device=$x.device).reshape($n, $n))", "linear"),
)


@fragment(FAMILY, "classes", "nn-functional", weight=5)
def nn_functional(draw, b: Builder) -> None:
    """A chain of 1-3 torch.nn.functional calls (tanh between them keeps values moderate), plus at times
    a cross-entropy loss over the rows against class 0."""
    b.add_import(ir.Import("torch.nn.functional", "F"))
    t, var, _ = operand(draw, b, vector=True)
    expr = f"torch.tanh({t})"
    for _ in range(integer(draw, 1, 3)):
        text, _ = choose(draw, FUNCTIONAL)
        expr = "torch.tanh(" + text.replace("$x", f"({expr})").replace("$n", str(var.shape[-1])) + ")"
    if var.shape[-1] and boolean(draw):  # rows of a tensor with no columns: no class to aim at
        rows = f"torch.tanh({t}).reshape(-1, {var.shape[-1]})"
        target = f"torch.zeros({var.numel // var.shape[-1]}, dtype=torch.long, device={t}.device)"
        expr = f"{expr} + F.cross_entropy({rows}, {target}) * 0.25"
    result(b, expr, var.shape, 10.0)
