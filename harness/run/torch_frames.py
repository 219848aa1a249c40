"""The frames inside torch of a live exception, read in one place: a finding's innermost torch frame, the frame
a crash's surface key names, and the frames a crash's identity is made of (`crash_frames`).

The identity frames are computed where the live exception is, in the worker (`run/execute.exc_info`), so a crash
carries its identity from the case that found it: a campaign joins a crash to a bucket triage already explained
under the same frames without triaging it again (campaign/ledger.py, Note [A crash's identity is cheap]).
"""
from __future__ import annotations

import os
import traceback

# Frames of torch that only pass an error on (raise a Dynamo exception for it, or wrap one raised deeper): a
# crash key names the innermost torch frame that is not one of these, after following `__cause__` past Dynamo's
# wrapper exceptions (harness/run/execute.py `key_frame`). Signatures still use the innermost frame as it is.
WRAPPER_FRAMES = frozenset({
    "torch/_dynamo/exc.py:unimplemented",
    "torch/_dynamo/exc.py:unimplemented_v2",
    "torch/_dynamo/exc.py:unimplemented_with_warning",
    "torch/_dynamo/exc.py:raise_observed_exception",
    "torch/_dynamo/eval_frame.py:compile_wrapper",
    "torch/_dynamo/eval_frame.py:_fn",
    "torch/_dynamo/utils.py:run_node",
    "torch/_dynamo/utils.py:get_fake_value",
    "torch/_dynamo/utils.py:wrap_fake_exception",
    "torch/_dynamo/utils.py:<lambda>",
    "torch/_dynamo/utils.py:_wrap_graph_break_with_torch_runtime_err",
    "torch/_dynamo/variables/script_object.py:graph_break_as_hard_error",
    "torch/_dynamo/output_graph.py:call_user_compiler",
    "torch/_dynamo/output_graph.py:_call_user_compiler",
    "torch/_dynamo/convert_frame.py:_compile",
    "torch/_dynamo/convert_frame.py:compile_inner",
    "torch/_dynamo/convert_frame.py:_compile_inner",
    "torch/_dynamo/convert_frame.py:__call__",
    "torch/_dynamo/convert_frame.py:_convert_frame_assert",
    "torch/_dynamo/convert_frame.py:_fn",
    "torch/_dynamo/symbolic_convert.py:run",
    "torch/_dynamo/symbolic_convert.py:step",
    "torch/_dynamo/symbolic_convert.py:wrapper",
    "torch/_dynamo/symbolic_convert.py:inline_call",
    "torch/_dynamo/symbolic_convert.py:inline_call_",
    "torch/_dynamo/symbolic_convert.py:call_function",
    "torch/__init__.py:_check_with",
    "torch/__init__.py:_check",
})

FRAMES = 3
GENERIC_FRAMES = frozenset({
    "torch/_dynamo/utils.py:_get_fake_value_impl",
    "torch/_dynamo/utils.py:wrap_fx_proxy",
    "torch/_dynamo/variables/builder.py:wrap_fx_proxy",
    "torch/_dynamo/variables/builder.py:wrap_fx_proxy_cls",
    "torch/_dynamo/variables/builder.py:_wrap_fx_proxy",
    "torch/_dynamo/symbolic_convert.py:impl",
    "torch/_dynamo/symbolic_convert.py:inner",
    "torch/_dynamo/symbolic_convert.py:_call",
    "torch/_dynamo/convert_frame.py:compile_frame",
    "torch/_dynamo/convert_frame.py:transform",
    "torch/_dynamo/convert_frame.py:trace_frame",
    "torch/_dynamo/convert_frame.py:run_tracer",
    "torch/_dynamo/bytecode_transformation.py:transform_code_object",
    "torch/_utils_internal.py:wrapper_function",
    "torch/_dynamo/eval_frame.py:inner",  # torch._dynamo.export's entry point: how a crash surfaced, not where
    "torch/_ops.py:__call__",
    "torch/_ops.py:_op_dk",
    "torch/_subclasses/fake_tensor.py:__torch_dispatch__",
    "torch/_subclasses/fake_tensor.py:dispatch",
    "torch/_subclasses/fake_tensor.py:_cached_dispatch_impl",
    "torch/_subclasses/fake_tensor.py:_dispatch_impl",
    "torch/utils/_stats.py:wrapper",
    "torch/fx/experimental/proxy_tensor.py:__torch_dispatch__",
})
_GENERIC_NAMES = frozenset({"<lambda>", "wrapper", "_fn", "__call__"})

def torch_frames(e: BaseException) -> list[str]:
    """`torch/<file>.py:<function>` of the frames of `e`'s traceback inside torch, outermost first (torch may
    itself be installed under a folder named torch: the last `/torch/` of a path counts)."""
    out = []
    for frame in traceback.extract_tb(e.__traceback__):
        norm = frame.filename.replace(os.sep, "/")
        if "/torch/" in norm:
            out.append(f"torch/{norm.rsplit('/torch/', 1)[1]}:{frame.name}")
    return out


def key_frame(e: BaseException) -> str | None:
    """The frame a crash's bucket key names: the innermost torch frame that is not a wrapper
    (`WRAPPER_FRAMES`), looked for in the deepest `__cause__` first (Dynamo re-raises what
    broke as InternalTorchDynamoError, TorchRuntimeError or Unsupported `from` it)."""
    chain, seen, cur = [], set(), e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        chain.append(cur)
        cur = cur.__cause__
    for exc in reversed(chain):
        inner = [f for f in torch_frames(exc) if f not in WRAPPER_FRAMES]
        if inner:
            return inner[-1]
    frames = torch_frames(e)
    return frames[-1] if frames else None


def generic_frame(frame: str) -> bool:
    return frame in WRAPPER_FRAMES or frame in GENERIC_FRAMES or frame.rsplit(":", 1)[-1] in _GENERIC_NAMES


def crash_frames(e: BaseException, n: int = FRAMES) -> tuple[str, ...]:
    """The innermost `n` distinct torch frames of `e` outside generic wrappers, innermost first, from the deepest
    exception along `__cause__` that has any (Dynamo re-raises what broke `from` it). Empty for a RecursionError,
    whose depth differs between processes."""
    chain, seen, cur = [], set(), e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        chain.append(cur)
        cur = cur.__cause__
    if any(isinstance(x, RecursionError) for x in chain):
        return ()
    for exc in reversed(chain):
        frames: list[str] = []
        for frame in reversed(torch_frames(exc)):
            if not generic_frame(frame) and frame not in frames:
                frames.append(frame)
            if len(frames) == n:
                break
        if frames:
            return tuple(frames)
    return ()


def raised_outside_torch(e: BaseException) -> bool:
    """`e` was raised by code outside torch (the program, or Python running it: a builtin's error has no frame of
    its own) while the only torch frames above it pass calls on (`WRAPPER_FRAMES`: the compiled frame's `_fn`), and
    it wraps nothing: the program failed on a value the compiled frame handed it."""
    if e.__cause__ is not None:
        return False
    tb = traceback.extract_tb(e.__traceback__)
    if not tb or "/torch/" in tb[-1].filename.replace(os.sep, "/"):
        return False
    return all(frame in WRAPPER_FRAMES for frame in torch_frames(e))
