"""The torch API surface Dynamo answers one handler at a time: global-state queries (`torch.is_grad_enabled`,
`torch.overrides.has_torch_function`, `torch.nn.modules.utils._pair`...), tensor attributes read as Python
values (`layout`, `is_leaf`, `grad_fn`, `get_device()`, `type()`), tensor dunders called by name or through
`operator` (`x.__neg__()`, `abs(x)`, `x.__rsub__(1)`, `1.5 in x`), in-place methods on fresh copies
(`addcmul_`, `addcdiv_`, `requires_grad_`, `detach_`), `new_*` constructors, NumPy interop through
`Tensor.numpy()` and `torch.from_numpy`, and Python int operators on sizes that turn symbolic on re-calls.

Each of these has its own entry in `variables/torch.py`, `variables/tensor.py` or `variables/misc.py`
(`TorchInGraphFunctionVariable` handlers, `TensorVariable.method_*`, `NumpyVariable`, `SymNodeVariable`),
so each walks code that ordinary tensor arithmetic never reaches, and a wrong constant folded from it or a
wrong in-place model changes the outputs. Every form is deterministic, shape-preserving where it returns a
tensor, and equal in eager and compiled runs by the documented semantics (no `is_compiling()`, no version
counters, no data pointers).
"""
from __future__ import annotations

from .. import ir
from ..builder import Builder
from ..choose import choose
from ..fragments import fragment
from .common import FAMILY, Ctx, Snip, area, bind_output, tensor_operand


def _global_state(c: Ctx) -> Snip:
    (r,) = c.names("gs")
    form = c.choose((
        "int(torch.is_grad_enabled()) + 2 * int(torch.is_inference_mode_enabled()) + "
        "4 * int(torch.are_deterministic_algorithms_enabled())",
        "int(torch._C._is_torch_function_enabled()) + 2 * int(torch._C._is_torch_function_mode_enabled()) + "
        "4 * int(torch._C._is_torch_function_all_disabled())",
        "int(torch.jit.is_scripting()) + 2 * int(torch.jit.is_tracing()) + "
        "4 * int(torch.get_default_dtype() == torch.float32)",
        "int(torch.get_default_device().type == 'cpu') + int(torch.is_autocast_enabled('cpu')) * 3",
    ))
    return Snip([f"{r} = {form}"], r, 8)


def _overrides(c: Ctx) -> Snip:
    (r,) = c.names("ov")
    t = c.tensor.name
    form = c.choose((
        f"int(torch.overrides.has_torch_function(({t},))) + 2 * int(torch.overrides.is_tensor_like({t}))",
        f"int(torch.overrides.has_torch_function_unary({t})) + 2 * int(torch.overrides.is_tensor_like(3))",
        f"int(torch.overrides.has_torch_function_variadic({t}, {t})) + 2 * int(torch.is_tensor({t}.shape))",
    ))
    return Snip([f"{r} = {form}"], r, 4)


def _ntuple_math(c: Ctx) -> Snip:
    (r,) = c.names("nt")
    d = c.dim()
    c.use_import("math")
    form = c.choose((
        f"sum(torch.nn.modules.utils._pair({d})) + len(torch.nn.modules.utils._triple(({d}, 1, 2)))",
        f"torch.nn.modules.utils._single({d})[0] + torch.nn.modules.utils._ntuple(2)({d})[1]",
        f"round(math.radians({d} * 30), 3) + round(math.degrees(0.5), 3)",
        f"math.ceil(math.log2({d} + 1)) + math.isqrt({d} * 4) + math.gcd({d}, 6)",
        f"int(math.isclose({d} * 0.1, {d} / 10)) + math.copysign({d}, -1) + math.fabs(-{d})",
    ))
    return Snip([f"{r} = {form}"], r, 12 * 4 + 20)


def _dtype_queries(c: Ctx) -> Snip:
    (r,) = c.names("dq")
    t = c.tensor.name
    form = c.choose((
        f"int(torch.result_type({t}, 1) == {t}.dtype) + 2 * int(torch.promote_types({t}.dtype, torch.float64) "
        f"== torch.float64) + 4 * int(torch.can_cast({t}.dtype, torch.int32))",
        f"torch.finfo({t}.dtype).bits // 16 + int(torch.finfo({t}.dtype).eps < 1e-3) + "
        f"torch.iinfo(torch.int16).bits // 8",
        f"int({t}.dtype.is_signed) + 2 * int({t}.dtype.is_complex) + {t}.itemsize + {t}.nbytes % 7",
        f"int({t}.type() in ('torch.FloatTensor', 'torch.cuda.FloatTensor')) + 2 * int({t}.is_nested) + "
        f"4 * int({t}.is_sparse) + int({t}.is_quantized) + int({t}.is_meta)",
    ))
    return Snip([f"{r} = {form}"], r, 20)


def _attributes(c: Ctx) -> Snip:
    (r,) = c.names("at")
    t = c.tensor.name
    form = c.choose((
        f"int({t}.layout == torch.strided) + 2 * int({t}.grad_fn is None) + 4 * int({t}.grad is None)",
        f"({t}.get_device() + 1) + 2 * int({t}.is_cpu) + 4 * int({t}.storage_offset() == 0)",
        f"int({t}.data.shape == {t}.shape) + 2 * int({t}.detach().is_leaf) + 4 * int({t}.data.requires_grad)",
        f"int(hasattr({t}, 'grad')) + 2 * int(hasattr({t}, 'no_such_attribute')) + int(callable({t}.add))",
    ))
    return Snip([f"{r} = {form}"], r, 8)


def _sym_ops(c: Ctx) -> Snip:
    """Python int operators on a size that becomes a SymInt from the first recompile on."""
    n, r = c.names("n", "so")
    c.use_import("operator")
    form = c.choose((
        f"operator.or_({n}, 1) + ({n} & 3) + ({n} ^ 2) + ({n} | 4)",
        f"operator.lshift({n}, 1) + ({n} << 1) + ({n} >> 1) + {n} // 2 + {n} % 3",
        f"int(float({n}) * 1.5) + int(bool({n})) + operator.index({n})",
        f"abs(-{n}) + (-{n}) % 5 + divmod({n} + 3, 2)[1] + pow({n}, 2)",
        f"max({n}, 2) + min({n}, 1) + int({n} != 3) + round({n} / 3)",
    ))
    return Snip([f"{n} = {c.dim()}", f"{r} = {form}"], r, 64)


QUERIES = (_global_state, _overrides, _ntuple_math, _dtype_queries, _attributes, _sym_ops)


@fragment(FAMILY, FAMILY, "stdlib-torch-api", weight=9)
def stdlib_torch_api(draw, b: Builder) -> None:
    """Global-state, override, dtype and attribute queries and int operators on sizes, folded into outputs."""
    area(draw, b, QUERIES)


def _dunder_forms(a: str, t: str) -> list[tuple[str, float]]:
    """(tensor expression shaped like `a`, bound factor over a's bound) for operand `a` of tensor `t`."""
    return [
        (f"{a}.__neg__() + {a}.__pos__()", 2), (f"abs({a}) - {a}.__abs__() * 0.5", 2),
        (f"operator.neg({a}) + operator.pos({a}) * 2", 3), (f"{a}.__rsub__(1) + {a}.__radd__(0.5)", 3),
        (f"{a}.__mul__(0.5).__truediv__(2).__rtruediv__(4) * 0 + {a}", 1),
        (f"{a}.__pow__(2) + {a}.__rmul__(3)", 4), (f"operator.truediv({a}, 2) + operator.floordiv({a}, 1) * 0", 1),
        (f"{a}.clone().addcmul_({a}, {a}, value=0.5)", 3), (f"{a}.clone().addcdiv_({a}, {a}.abs() + 1, value=2)", 3),
        (f"{a}.clone().requires_grad_(False).detach_() + {a}", 2),
        (f"{a}.detach().clone().resize_as_({a}).fill_(1) * {a}", 1),
        (f"{a}.new_ones({a}.shape) * {a} + {a}.new_zeros({a}.shape)", 1),
        (f"{a}.new_full({a}.shape, 0.25) + {a}.new_tensor(0.5)", 1),
        (f"{a}.type({t}.dtype) + {a}.type(torch.float64).type({t}.dtype) * 0", 1),
        (f"{a}.to({t}) + {a}.to(dtype=torch.float64).to({t}.dtype)", 2),
        (f"{a} * float(1.5 in {a}) + {a} * int({a}.__contains__(0.25))", 2),
        (f"{a} + (float({a}.sum()) if {a}.numel() == 1 else 0.0) * 0", 1),
        (f"torch.where(torch.ones_like({a}, dtype=torch.bool), {a}.__neg__(), {a}).__neg__()", 1),
    ]


def _numpy_forms(a: str, ndim: int) -> list[tuple[str, float]]:
    """(NumPy expression on the array `a` of the same shape, bound factor): traced through torch._numpy."""
    forms = [
        (f"np.clip({a}, -1, 1) * 2", 2), (f"np.sin({a}) + np.cos({a})", 2), (f"np.maximum({a}, 0) - {a} * 0.5", 2),
        (f"np.abs({a}) + np.negative({a})", 2), (f"np.tanh({a}) * np.float32(3)", 3),
        (f"({a} + 1).astype(np.float32) * 0.5", 1), (f"np.where({a} > 0, {a}, np.zeros_like({a}))", 1),
        (f"np.square(np.tanh({a})) + np.exp(np.zeros_like({a}))", 2),
    ]
    if ndim:
        forms += [(f"np.cumsum(np.tanh({a}), axis=0) / {a}.shape[0]", 1), (f"np.flip({a}, axis=0).copy()", 1),
                  (f"{a} - np.mean({a}, axis=0, keepdims=True)", 2), (f"np.sort({a}, axis=-1)", 1)]
    return forms


@fragment(FAMILY, FAMILY, "stdlib-tensor-dunders", weight=9)
def stdlib_tensor_dunders(draw, b: Builder) -> None:
    """Tensor dunders by name and through `operator`, in-place methods on copies, `new_*`, `type()`, `in`."""
    b.add_import(ir.Import("operator"))
    var, a, bound = tensor_operand(draw, b)
    text, factor = choose(draw, _dunder_forms(a, var.name))
    bind_output(b, "du", text, var.shape, max(bound, 1.0) * (factor + 1) + 4)


@fragment(FAMILY, FAMILY, "stdlib-numpy", weight=7)
def stdlib_numpy(draw, b: Builder) -> None:
    """A tensor round-tripped through NumPy: `x.numpy()`, NumPy functions Dynamo traces as torch ops, and
    `torch.from_numpy` back onto the tensor's device."""
    b.add_import(ir.Import("numpy", "np"))
    var, src, bound = tensor_operand(draw, b)
    arr = b.fresh("arr")
    b.emit(ir.Code(f"{arr} = ({src}).detach().cpu().numpy()"))
    text, factor = choose(draw, _numpy_forms(arr, len(var.shape)))
    bind_output(b, "np", f"torch.from_numpy(np.asarray({text})).to({var.name}.device)", var.shape,
                max(bound, 1.0) * (factor + 1) + 2)
