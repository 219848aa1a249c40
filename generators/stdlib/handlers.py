"""Python values from the corners of the torch and library surface that Dynamo answers with one handler
each: `typing` subscripts, a named tuple class made in the frame, method descriptors called on their
class (`str.upper(s)`, `int.__add__(n, 1)`), a module-level logger, dispatch-key sets, `torch.numel`,
`torch.jit.annotate`, `aten.sym_size`, `inference_mode` as a block, `torch._check_with`, storage sizes,
`tree_map_with_path`, and the in-place and unary dunders of a user object.

Each value is computed eagerly the same way by the documented semantics, so a handler that folds the
wrong constant or forgets a guard shows in the output the value is folded into.
"""
from __future__ import annotations

from ..builder import Builder
from ..fragments import fragment
from .common import DIM_BOUND, FAMILY, LIST_BOUND, LIST_SUM, Ctx, Snip, area


def _typing(c: Ctx) -> Snip:
    (r,) = c.names("ty")
    c.use_import("typing")
    form = c.choose((
        "int(typing.List[int] == typing.List[int]) + 2 * int(typing.Optional[torch.Tensor] is not None)",
        "len(typing.Tuple[int, str].__args__) + int(typing.Dict[str, int] != typing.Dict[str, float])",
        "int(typing.Union[int, str] == typing.Union[str, int]) + int(typing.Any is typing.Any)",
    ))
    return Snip([f"{r} = {form} + {c.dim()}"], r, 4 + DIM_BOUND)


def _namedtuple_in_frame(c: Ctx) -> Snip:
    cls, p, r = c.names("Pair", "nt", "ntv")
    c.use_import("collections")
    return Snip([f"{cls} = collections.namedtuple({cls!r}, ['a', 'b'])", f"{p} = {cls}({c.dim()}, b=2)",
                 f"{r} = {p}.a * {p}.b + len({p}._fields) + {p}._replace(a=1).a"], r, 2 * DIM_BOUND + 3)


def _descriptors(c: Ctx) -> Snip:
    (r,) = c.names("md")
    L, d = c.ints(), c.dim()
    form = c.choose((
        f"len(str.upper('ab')) + list.__len__(list({L})) + dict.get({{'a': 1}}, 'a') + int.__add__({d}, 1)",
        f"str.count('abcab', 'ab') + tuple.index(tuple({L}), {L}[0]) + int.__mul__({d}, 2) + "
        f"list.count(list({L}), {L}[-1])",
        # not float's descriptors: `float.__add__(0.5, 1.0)` crashes Dynamo (corpus/method_descriptor_float_add.py)
        f"int(str.startswith('torch', 't')) + dict.__len__({{'k': {d}}}) + set.__len__(set({L})) + "
        f"str.__len__('abc')",
    ))
    return Snip([f"{r} = {form}"], r, LIST_BOUND + 3 * DIM_BOUND + 8)


def _logger(c: Ctx) -> Snip:
    (r,) = c.names("lg")
    c.use_import("logging")
    log = "LOG_" + c.name("program").upper()
    c.helper(f"{log} = logging.getLogger('dynfuzz.program')")
    d = c.dim()
    call = c.choose(("debug", "info"))
    return Snip([f"{log}.{call}('value %s', {d})", f"{r} = {d} + int({log}.isEnabledFor(logging.CRITICAL))"],
                r, DIM_BOUND + 1)


def _torch_queries(c: Ctx) -> Snip:
    (r,) = c.names("tq")
    t = c.tensor.name
    form = c.choose((
        f"torch.numel({t}) % 7 + torch.jit.annotate(int, {c.dim()})",
        f"torch.ops.aten.sym_size({t}.reshape(-1), 0) % 7 + torch.ops.aten.sym_stride({t}.reshape(-1), 0)",
        f"int(torch._C._dispatch_keys({t}).has(torch._C.DispatchKey.AutogradCPU)) + "
        f"2 * int(torch._C._dispatch_keys({t}).has(torch._C.DispatchKey.Python))",
        f"torch.zeros({c.dim()} + 1).untyped_storage().nbytes() // 4 + {t}.new_tensor([1.0, 2.0]).numel()",
    ))
    return Snip([f"{r} = {form}"], r, 16)


def _inference_block(c: Ctx) -> Snip:
    (r,) = c.names("im")
    d = c.dim()
    # torch.is_inference_mode_enabled() itself is a deliberate graph break inside the block (gb0046)
    return Snip([f"with torch.inference_mode():\n    {r} = int(torch.is_grad_enabled()) * 2 + {d}",
                 f"{r} = {r} + int(torch.is_grad_enabled())"], r, DIM_BOUND + 3)


def _checks(c: Ctx) -> Snip:
    (r,) = c.names("ck")
    d = c.dim()
    kind = c.choose(("ValueError", "RuntimeError", "IndexError"))
    return Snip([f"torch._check_with({kind}, {d} >= 0, lambda: 'negative size')",
                 f"torch._check({d} < 100, lambda: 'large size')", f"{r} = {d} + 1"], r, DIM_BOUND + 1)


def _tree_with_path(c: Ctx) -> Snip:
    m, r = c.names("tp", "tpv")
    c.use_import("torch.utils._pytree")
    L, d = c.ints(), c.dim()
    tree = c.choose((f"{{'a': list({L}), 'b': ({d}, 1)}}", f"[{d}, ({d}, 2), {{'k': 3}}]",
                     f"({{'x': {d}}}, list({L}))"))
    fn = c.choose(("lambda p, v: v * len(p)", "lambda p, v: v + len(str(p[-1]))"))
    return Snip([f"{m} = torch.utils._pytree.tree_map_with_path({fn}, {tree})",
                 f"{r} = sum(torch.utils._pytree.tree_leaves({m}))"], r, 4 * (LIST_SUM + 2 * DIM_BOUND + 20))


_ACCUMULATOR = """class {C}:
    def __init__(self, v):
        self.v = v

    def __neg__(self):
        return {C}(-self.v)

    def __pos__(self):
        return {C}(self.v + 1)

    def __abs__(self):
        return {C}(abs(self.v))

    def __ior__(self, o):
        self.v = self.v | o
        return self

    def __ixor__(self, o):
        self.v = self.v ^ o
        return self

    def __isub__(self, o):
        self.v = self.v - o
        return self

    def __ifloordiv__(self, o):
        self.v = self.v // o
        return self

    def __ilshift__(self, o):
        self.v = self.v << o
        return self

    def __divmod__(self, o):
        return (self.v // o, self.v % o)"""


def _user_inplace(c: Ctx) -> Snip:
    cls, a, q, m, r = c.names("Acc", "acc", "q", "m", "ua")
    c.helper(_ACCUMULATOR.format(C=cls))
    ops = c.choose((("|= 1", "^= 2", "-= 1"), ("//= 2", "<<= 1", "|= 4"), ("-= 3", "^= 1", "//= 3")))
    return Snip([f"{a} = abs(-(+{cls}({c.dim()})))", *(f"{a} {op}" for op in ops),
                 f"{q}, {m} = divmod({a}, 3)", f"{r} = {a}.v + {q} * 2 + {m}"], r, 16 * (DIM_BOUND + 8))


POOL = (_typing, _namedtuple_in_frame, _descriptors, _logger, _torch_queries, _inference_block, _checks,
        _tree_with_path, _user_inplace)


@fragment(FAMILY, FAMILY, "stdlib-handlers", weight=8)
def stdlib_handlers(draw, b: Builder) -> None:
    """Values from typing, in-frame named tuples, method descriptors, a logger, torch queries and checks,
    inference mode, pytree paths and a user object's in-place dunders, folded into an output."""
    area(draw, b, POOL)
