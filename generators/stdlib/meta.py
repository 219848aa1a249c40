"""torch.Size and tensor metadata as Python values: x.shape[i], len(x.shape), x.shape + (1,), Size
comparisons and unpacking, x.size(d), x.dim(), x.ndim, x.numel(), dtype and device comparisons,
is_floating_point, torch.is_tensor, x.tolist() and x.stride().

Dynamo answers these from its fake tensor (as constants or symbolic ints, `SizeVariable`,
`TorchInGraphFunctionVariable`) and guards on them; a wrong answer or a missing guard changes the value
folded here. `tolist()` graph-breaks by design (the programs never use fullgraph). Strides are read only
from tensors whose layout every call plan keeps: a fresh `contiguous()` copy.
"""
from __future__ import annotations

from ..builder import Builder
from ..fragments import fragment
from .common import FAMILY, Ctx, Snip, area


def _size_ops(c: Ctx) -> Snip:
    s, r = c.names("sz", "sh")
    t = c.tensor.name
    form = c.choose((f"len({s} + (1,)) + ({s} + (2,))[-1] + sum({s}[1:]) + int({s} == {t}.size())",
                     f"int({s} == torch.Size(list({s}))) + int({s} != (0,)) + int(isinstance({s}, tuple)) + "
                     f"max({s}, default=0) + {s}.count(1)",
                     f"sum(list({s})) + int(tuple({s}) >= (2,)) + len({s}[::-1]) + "
                     f"({s}.index({s}[0]) if {s} else 0)",
                     f"{t}.new_zeros({s}).dim() + {s}.numel() % 7 + int(torch.Size([1, 2]) == (1, 2))"))
    return Snip([f"{s} = {t}.shape", f"{r} = {form}"], r, 60)


def _unpack(c: Ctx) -> Snip:
    t = c.tensor
    r = c.name("up")
    if not t.shape:
        return Snip([f"{r} = {t.name}.dim() + {t.name}.numel()"], r, 2)
    names = c.names(*(["d"] * len(t.shape)))
    first, *rest = names
    lines = [f"{', '.join(names)}{',' if len(names) == 1 else ''} = {t.name}.shape"]
    if len(names) > 1 and c.flag():
        lines.append(f"{first}, *{c.name('rest')} = {t.name}.size()")
    lines.append(f"{r} = {first} * 2 + {' + '.join(rest) or '0'} + {t.name}.size({c.integer(0, len(t.shape) - 1)})")
    return Snip(lines, r, 40)


def _counts(c: Ctx) -> Snip:
    (r,) = c.names("nm")
    t = c.tensor.name
    form = c.choose((f"{t}.numel() % 5 + {t}.dim() + {t}.ndim + len({t})" if c.tensor.shape
                     else f"{t}.numel() + {t}.dim() + {t}.ndim",
                     f"{t}.nelement() % 5 + {t}.element_size() + int({t}.is_contiguous())",
                     f"int({t}.numel() > {t}.dim()) + {t}[None].dim() + torch.numel({t}) % 3"))
    return Snip([f"{r} = {form}"], r, 20)


def _dtype_device(c: Ctx) -> Snip:
    (r,) = c.names("dt")
    t = c.tensor.name
    form = c.choose((f"int({t}.dtype == torch.float32) + 2 * int({t}.dtype is torch.float64) + "
                     f"4 * int({t}.is_floating_point())",
                     f"int({t}.device == {t}.clone().device) + int({t}.device.type in ('cpu', 'cuda')) + "
                     f"int({t}.is_cuda == ({t}.device.type == 'cuda')) * 2",
                     f"int(torch.is_tensor({t})) + int(torch.is_floating_point({t})) + "
                     f"int({t}.dtype.is_floating_point) + "
                     f"{t}.dtype.itemsize + int({t}.is_complex())",
                     f"int({t}.requires_grad) + int({t}.is_leaf) + int({t}.layout == torch.strided) + "
                     f"int(torch.is_tensor(3)) + int(isinstance({t}.dtype, torch.dtype))",
                     f"{{torch.float32: 1, torch.float64: 2}}.get({t}.dtype, 3) + "
                     f"int({t}.dtype in (torch.half, torch.float))"))
    return Snip([f"{r} = {form}"], r, 20)


def _tolist(c: Ctx) -> Snip:
    (r,) = c.names("tl")
    t = c.tensor.name
    form = c.choose((f"sum(torch.tanh({t}).detach().reshape(-1)[:3].tolist())",
                     f"len({t}.tolist()) if {t}.dim() else torch.tanh({t}).tolist()",
                     f"round(torch.tanh({t}).detach().mean().item(), 2)",
                     f"torch.tanh({t}).detach().flatten()[0].tolist()"))
    return Snip([f"{r} = {form}"], r, 5)


def _stride(c: Ctx) -> Snip:
    k, r = c.names("ct", "sd")
    t = c.tensor.name
    lines = [f"{k} = {t}.contiguous().clone()"]
    form = c.choose((f"sum({k}.stride()) + {k}.stride(-1) if {k}.dim() else 0",
                     f"{k}.stride()[0] if {k}.dim() else {k}.storage_offset()",
                     f"len({k}.stride()) + {k}.storage_offset() + int({k}.is_contiguous())"))
    return Snip(lines + [f"{r} = {form}"], r, 40)


def _attributes(c: Ctx) -> Snip:
    (r,) = c.names("ta")
    t = c.tensor
    n = t.name
    forms = [f"{n}.itemsize + {n}.nbytes % 7 + int({n}.is_sparse) + int({n}.is_quantized) + int({n}.is_meta)",
             f"int({n}.grad is None) + int({n}.grad_fn is None) + int({n}.is_inference()) + len({n}.dim_order())",
             f"{n}.unsqueeze(0).shape[0] + {n}.view(-1).shape[0] % 5 + {n}.new_empty(3).shape[0] + "
             f"torch.empty_like({n}).dim() + {n}.shape.numel() % 3",
             f"sum({n}.expand(2, *{n}.shape).stride()) % 9 + {n}.reshape(1, -1).T.shape[0] % 5",
             f"int({n}.get_device() == {n}.clone().get_device()) + int(torch.get_default_dtype() is torch.float32) + "
             f"int({n}.storage_offset() == 0)"]
    if len(t.shape) >= 2:
        forms.append(f"{n}.mT.shape[-1] + {n}.transpose(0, 1).stride()[0] + int({n}.mT.is_contiguous())")
    return Snip([f"{r} = {c.choose(forms)}"], r, 40)


POOL = (_attributes, _size_ops, _unpack, _counts, _dtype_device, _tolist, _stride)


@fragment(FAMILY, FAMILY, "stdlib-meta", weight=8)
def stdlib_meta(draw, b: Builder) -> None:
    """torch.Size and tensor metadata folded into an output."""
    area(draw, b, POOL)
