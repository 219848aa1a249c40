"""Exception parity: eager raises if and only if compiled raises, and the same kind of error.

Dynamo wraps user errors (`TorchRuntimeError` around a fake-tensor TypeError,
`Unsupported` caused by an `Observed...Error` under fullgraph) and refuses
some programs on purpose (`Unsupported`, `UncapturedHigherOrderOpError`).
Those are classified apart from crashes (`InternalTorchDynamoError`,
`BackendCompilerFailed`, a raw `AssertionError` from inside torch), which are
always bugs. See Note [Deliberate refusals are not findings] and Note [A refusal
is a documented graph break].
"""
from __future__ import annotations

import re

from .model import ExcInfo, Finding, Observations, finding, normalise
from .policy import EXPORTED
from .registry import oracle, renders

REFUSALS = {"Unsupported", "UncapturedHigherOrderOpError", "UserError", "ConstraintViolationError",
            "FailOnRecompileLimitHit", "RecompileError"}
CRASHES = {"InternalTorchDynamoError", "BackendCompilerFailed", "InductorError", "LoweringException"}
_INNER = re.compile(r"got (\w+)\((.*)\)\s*$", re.M)


def inner_error(err: ExcInfo) -> tuple[str, str] | None:
    """`(type, message)` of the error a `TorchRuntimeError` wraps ("...: got TypeError('...')"), if named."""
    m = _INNER.search(err.detail or err.message)
    return (m.group(1), m.group(2).strip("'\"")) if m else None


def key(err: ExcInfo) -> str:
    """What identifies one failure: its type, Dynamo's graph-break type, and the wrapped error's message."""
    inner = inner_error(err)
    return " ".join(part for part in (err.type, err.gb_type or "", f"{inner[0]}: {inner[1]}" if inner else err.message)
                    if part)


# Note [A refusal is a documented graph break]
# The refusal tier is a feature gap, never counted among bugs, so nothing lands there unless torch says it is a
# refusal: an `Unsupported` whose graph-break type the torch under test documents (its graph-break registry,
# `ExcInfo.graph_break`, stamped by harness/run/graph_break_registry.py; an explicit list on releases before the
# registry), or one of torch's user-facing refusals (`UserError`, `ConstraintViolationError`, a recompile limit,
# a higher-order op captured whole or not at all). Two things Dynamo also reports as `Unsupported` are not:
# - an exception raised inside the trace (`Observed exception`, gb0088/gb0089, or an `Unsupported` raised from an
#   `Observed...` exception): user code, run on the values Dynamo traced, raised where eager ran the same code
#   without raising (under export Dynamo makes a `logging.Logger` method return None, and `int()` of it raises
#   TypeError). That is a `trace-exception`, tier crash; where the wrong traced value raises nothing and flows
#   into the result instead, the outputs oracle sees a wrong value: a miscompile;
# - an `Unsupported` whose type torch does not document, or whose registry hint says it is "likely to be a Dynamo
#   bug" (gb0178 `constant fold exception`...): a crash.
TRACE_EXCEPTION_TYPES = frozenset({"Observed exception", "Observed exception (EXCEPT_HANDLER)"})
_TRACE_MESSAGE = re.compile(r"^'?(Observed exception|Unhandled exception|raised exception)\b")


def raised_in_trace(err: ExcInfo) -> bool:
    """Dynamo reports an exception the traced user code raised (an `Observed...` exception), not a construct
    it declines."""
    if err.type not in ("Unsupported", "UncapturedHigherOrderOpError"):
        return False
    if err.gb_type:
        return err.gb_type in TRACE_EXCEPTION_TYPES or (bool(err.causes) and err.causes[0].startswith("Observed"))
    return (bool(err.causes) and err.causes[0].startswith("Observed")) or bool(_TRACE_MESSAGE.match(err.message))


def category(err: ExcInfo) -> str:
    """`refusal` (documented: Note [A refusal is a documented graph break]), `trace` (an exception raised inside
    the trace), `crash`, `wrapped` (TorchRuntimeError) or `python` (an ordinary exception)."""
    if err.type in CRASHES:
        return "crash"
    if raised_in_trace(err):
        return "trace"
    if err.type == "Unsupported":
        return "refusal" if err.graph_break else "crash"
    if err.type in REFUSALS:
        return "refusal"
    if err.type == "TorchRuntimeError":
        return "wrapped"
    if err.outside_torch:  # Note [An error the program raised is not torch's]
        return "python"
    if err.type in ("AssertionError", "KeyError", "AttributeError", "IndexError") and err.torch_frame \
            and "/_dynamo/" in err.torch_frame:
        return "crash"
    return "python"


# Note [An error the program raised is not torch's]
# The compiled frame hands the program a wrong object (a generator rebuilt as a `tuple_iterator`, an int where a
# tensor was) and the program's own next line fails on it: `'tuple_iterator' object has no attribute 'close'`,
# raised in the program with only the compiled frame's wrapper (`eval_frame.py:_fn`) above it. That is a spurious
# exception, not an internal error of Dynamo, and no torch frame names it: what the message says of the wrong
# object does. So its identity is its type and the shape of its message (`raised_outside`), with what is the
# program's own taken out (the attribute asked for, a key, a class or function the program defines, numbers):
# on torch 2.5.1 one fault surfaced as `.device`, `.size` and `.reshape` of an `int`, and the 20-minute runs
# filed such faults as 9 unminimized buckets named after whatever construct the program happened to hold, and,
# explained, under one key `crash: AttributeError` that held a generator rebuilt as a tuple iterator beside an int
# where a tensor belonged.
_NO_ATTRIBUTE = re.compile(r"^'(?P<type>[\w.]+)' object has no attribute\b")
_PYTHON_TYPE = re.compile(r"^[a-z_]+$|^(NoneType|Tensor|Parameter|OrderedDict|Counter|ChainMap)$")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_CALLED = re.compile(r"\b[\w.]+\(\)")


def raised_outside(err: ExcInfo) -> str:
    """`Type: shape` of an exception raised outside torch (Note [An error the program raised is not torch's]):
    `AttributeError: 'int' object has no attribute`, `IndexError: pop from empty bytearray`, `KeyError`."""
    m = _NO_ATTRIBUTE.match(err.message)
    if m:
        what = m.group("type") if _PYTHON_TYPE.match(m.group("type")) else "?"
        return f"{err.type}: '{what}' object has no attribute"
    shape = _CALLED.sub("?()", _QUOTED.sub("?", normalise(err.message)))[:80].strip()
    return f"{err.type}: {shape}" if re.search(r"[a-z]{3}", shape) else err.type


def user_type(err: ExcInfo) -> str:
    """The Python exception type the user would see, with Dynamo's wrappers taken off."""
    if err.type == "TorchRuntimeError":
        inner = inner_error(err)
        return inner[0] if inner else "RuntimeError"
    for cause in err.causes:
        if cause.startswith("Observed") and cause.endswith("Error") and cause != "ObservedException":
            inner = cause[len("Observed"):]
            return inner[: -len("Error")] if inner.endswith("ErrorError") else inner
    return err.type


# Note [An untyped observed exception raised where eager raised]
# Before Dynamo kept the exception's type (torch 2.5), a program that raises under fullgraph or export (`raise
# ValueError` in its own code, or in torch's Python it inlines: flex_attention's input check) fails compiled with
# `Unsupported: Observed exception` whose only cause is a bare `ObservedException`: the trace stopped at the raise
# that eager also reached. Judged by type alone, "eager raised ValueError, compiled raised Unsupported" was filed as
# a crash. When the raise site the compiled error names (the innermost frame of its "from user code") is a frame
# of eager's own traceback (line and function: the program's file name differs between the two runs), it is that
# one failure; a trace that raised somewhere eager never went is still a mismatch.
_FRAME = re.compile(r'File "[^"]*", line (\d+), in (\S+)')


def _raised_where_eager_raised(eager: ExcInfo, compiled: ExcInfo) -> bool:
    """An untyped observed exception whose raise site is on eager's traceback (Note [An untyped observed
    exception raised where eager raised])."""
    _, marker, user_code = compiled.detail.partition("from user code:")
    if not marker or not raised_in_trace(compiled) or user_type(compiled) != compiled.type:
        return False
    sites = _FRAME.findall(user_code)
    return bool(sites) and sites[-1] in set(_FRAME.findall(eager.traceback))


def _same_failure(eager: ExcInfo, compiled: ExcInfo, fullgraph: bool, exported: bool = False) -> bool:
    if compiled.type == eager.type:
        return True
    if (fullgraph or exported) and _raised_where_eager_raised(eager, compiled):
        return True
    if user_type(compiled) == eager.type:
        return category(compiled) == "wrapped" or fullgraph
    # A failing torch op is a RuntimeError in eager and sometimes a TorchRuntimeError (a subclass) compiled.
    return eager.type == "RuntimeError" and category(compiled) == "wrapped"


# Note [Deliberate refusals are not findings]
# Some programs break the graph on purpose: `torch._dynamo.graph_break()`, `print`, an `out=` op that
# resizes its target, data-dependent control flow, an in-place view op such as `t_()` on a graph input
# (gb0148: "Getting an inplace view on a graph input is not supported"); under fullgraph=True Dynamo must
# refuse them, with `Unsupported` naming that construct. A torch.cond branch with a side effect or a graph break is
# refused with or without fullgraph (a higher-order op is captured whole or not at all), and a
# dimension marked dynamic that the program specialises raises ConstraintViolationError by design.
# Those refusals are correct behaviour: the case is recorded as skipped with the reason, not judged.
# Any other refusal (of a construct that should trace) stays an `unsupported` or `crash` finding.
FULLGRAPH_REFUSALS = (  # (gb_type, word the message must contain, reason)
    ("Call to `torch._dynamo.graph_break()`", "", "graph_break() under fullgraph"),
    ("Failed to trace builtin operator", "`print`", "print() under fullgraph"),
    ("Shape mismatch with out= tensor variant", "", "out= op resizing its target under fullgraph"),
    ("Data-dependent branching", "", "data-dependent branching under fullgraph"),
    ("Unsupported Tensor.item() call with capture_scalar_outputs=False", "",
     "Tensor.item() without capture_scalar_outputs under fullgraph"),
    ("Unsupported function call (delayed)", "inplace view on a graph input",
     "an in-place view op (t_, transpose_...) on a graph input under fullgraph"),
    ("Attempted to inline function marked as skipped", "intentionally", "a function Dynamo deliberately skips, "
     "under fullgraph"),
    ("Attempted to call function marked as skipped", "intentionally", "a function Dynamo deliberately skips, "
     "under fullgraph"),
    ("Skip calling `torch.compiler.disable()`d function", "", "a torch.compiler.disable'd function under fullgraph"),
    ("Skip inlining `torch.compiler.disable()`d function", "", "a torch.compiler.disable'd function under fullgraph"),
    ("Attempted to use `torch.nn.Parameter()` constructor with Dynamo", "", "an nn.Parameter constructed in the "
     "frame under fullgraph"),
    ("Invalid call to __build_class__", "class definition", "a class statement in the frame under fullgraph"),
    ("logging.Logger method not supported for non-export cases", "", "a logger call under fullgraph"),
    ("Encountered torch.is_inference_mode_enabled during tracing", "", "torch.is_inference_mode_enabled() "
     "under fullgraph (a documented fundamental graph break)"),
    ("Data-dependent assertion failed (cannot compile partial graph)", "", "an assert that fails while tracing "
     "under fullgraph (a documented fundamental graph break)"),
    ("Unsupported Tensor.backward() call", "trace_autograd_ops", "Tensor.backward() without trace_autograd_ops "
     "under fullgraph"),
    ("using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`", "",
     "torch.autograd.grad without trace_autograd_ops under fullgraph"),
)
# Export takes a frame whole, as fullgraph=True does, so the deliberate graph breaks above are its refusals too;
# beside them, what export documents it cannot take: (exception type, graph-break type or None, a regular
# expression the message must match, reason). Any other `Unsupported` or `UserError` of an exported program is
# an `exceptions/unsupported` finding (a refusal of a construct that should trace: tier refusal, not a bug).
EXPORT_REFUSALS = (
    ("UserError", None, r"It looks like one of the (inputs|outputs) with type .* is not supported or "
                        r"pytree-flattenable", "a non-pytree input or output"),
    ("UserError", None, r"Cannot export model which references tensors that are neither buffers/parameters/constants",
     "a tensor that is neither an input nor a parameter, buffer or constant"),
    ("UserError", None, r"Could not guard on data-dependent expression|Dynamic control flow is not supported",
     "data-dependent control flow"),
    ("Unsupported", "rewrite_signature: cannot trace optional function input", "", "an optional parameter"),
    ("Unsupported", "Attempted to use `torch.nn.Parameter()` with export", "", "an nn.Parameter constructed in the "
     "frame"),
    ("Unsupported", None, r"nn parameter construction not supported with export", "an nn.Parameter constructed in "
     "the frame"),  # torch 2.5.1's words, before graph-break types
    ("Unsupported", "HOP: Unsafe side effect", "", "a side effect inside a torch.cond branch"),
)
# Releases before graph-break types (torch < 2.7) name the construct in the message alone: (the whole
# message as a regular expression, reason); the messages are torch 2.5.1's.
UNTYPED_FULLGRAPH_REFUSALS = (
    (r"Tensor\.item", "Tensor.item() without capture_scalar_outputs under fullgraph"),
    (r"skip function graph_break in file .*", "graph_break() under fullgraph"),
    (r"call torch\._dynamo\.disable\(\) wrapped function .*", "a torch.compiler.disable'd function under fullgraph"),
    (r"out variants with resizing on graph inputs", "out= op resizing its target under fullgraph"),
    (r"builtin: print \[.*\] (True|False)", "print() under fullgraph"),
    # an in-place view op's graph break, delayed to its call (2.5.1 delays a disabled compiled module's the same way)
    (r"call_function DelayGraphBreakVariable\(\) \[\] \{\}",
     "an in-place view op (t_, transpose_...) on a graph input under fullgraph"),
    (r"inline in skipfiles: .* \| _fn .*/torch/_dynamo/eval_frame\.py, skipped according trace_rules\.lookup "
     r"SKIP_DIRS", "a torch.compiler.disable'd function under fullgraph"),
    (r"Workaround for issues with nn_parameter construction",
     "an nn.Parameter constructed in the frame under fullgraph"),
    (r"Logger not supported for non-export cases", "a logger call under fullgraph"),
    (r"torch\.\* op returned non-Tensor bool call_function <built-in function is_inference_mode_enabled>",
     "torch.is_inference_mode_enabled() under fullgraph (a documented fundamental graph break)"),
)
# What torch refuses on purpose in its own words whatever the settings: (exception type, message as a regular
# expression, reason). Compiled autograd raises this one from C++ (torch 2.5.1 to 2.14.1): it takes no
# higher-order gradients, and a 20-minute 2.5.1 run filed it as a crash.
DOCUMENTED_LIMITS = (
    ("RuntimeError", r"compiled_autograd does not support create_graph",
     "autograd with create_graph=True under compiled autograd (documented: it takes no higher-order gradients)"),
)
# torch.compile(...).aot_compile refuses a graph break with a RuntimeError of its own, and a guard it cannot write
# into the package (a dict's version, an object's id) with PackageError: both are its documented limits.
AOT_GRAPH_BREAK = "Graph breaks are not supported with aot compile"
HOP_REFUSAL_WORDS = ("Unsafe side effect", "Mutating a variable", "input mutation", "aliasing",
                     "Failed to trace builtin operator", "graph_break()",
                     "Forced graph break")  # config.debug_force_graph_break_on_leaf_return inside a branch


def documented_limit(err: ExcInfo) -> str | None:
    """The limit torch documents that `err` is (`DOCUMENTED_LIMITS`), also when Dynamo's fake-tensor run re-raised
    it as a TorchRuntimeError (`torch.func.grad` under compiled autograd asks for `create_graph=True` there)."""
    text = f"{err.detail or err.message}\n{err.traceback}"
    for kind, pattern, reason in DOCUMENTED_LIMITS:
        if err.type in (kind, "TorchRuntimeError") and re.search(pattern, text):
            return reason
    return None


def deliberate_refusal(err: ExcInfo, fullgraph: bool, exported: str | None = None) -> str | None:
    """Why `err` is Dynamo correctly refusing a construct the program uses on purpose, or None. Exported
    (`exported`: the export mode), what export documents it cannot take: a deliberate graph break (as under
    fullgraph), a non-pytree input or output, an optional parameter, data-dependent control flow
    (`EXPORT_REFUSALS`)."""
    text = err.detail or err.message
    if exported and err.type in ("Unsupported", "UserError"):
        for kind, gb_type, pattern, reason in EXPORT_REFUSALS:
            if err.type == kind and err.gb_type == gb_type and re.search(pattern, text):
                return f"refused by export ({exported}): {reason}"
        graph_break = deliberate_refusal(err, True)
        return f"refused by export ({exported}): {graph_break}" if graph_break else None
    if exported and err.type == "SkipTest" and "on export" in text:  # debug_force_graph_break_on_leaf_return
        return f"refused by export ({exported}): a forced graph break"
    if exported == "aot" and (err.type == "PackageError" or AOT_GRAPH_BREAK in text):
        what = "a guard it cannot serialize" if err.type == "PackageError" else "a graph break"
        return f"refused by aot_compile: {what}"
    if exported == "aot" and err.type == "NotImplementedError" and "aot_compile is absent" in text:
        return "torch.compile(...).aot_compile is absent from this torch"
    limit = documented_limit(err)
    if limit:
        return limit
    if err.type == "ConstraintViolationError":
        return "a dimension marked dynamic is specialised (ConstraintViolationError, by design)"
    if err.type == "UncapturedHigherOrderOpError" and any(w in text for w in HOP_REFUSAL_WORDS):
        return "side effect or graph break inside a torch.cond branch"
    if fullgraph and err.type == "Unsupported":
        for gb_type, word, reason in FULLGRAPH_REFUSALS:
            if err.gb_type == gb_type and word in text:
                return reason
        if not err.gb_type:
            for pattern, reason in UNTYPED_FULLGRAPH_REFUSALS:
                if re.fullmatch(pattern, err.message.strip().strip("'\""), re.DOTALL):  # 2.5 quotes some
                    return reason
    return None


def skip_reason(case, obs: Observations) -> tuple[int, str] | None:
    """`(call, reason)` when the compiled run was deliberately refused where eager ran: the case is skipped."""
    if getattr(case, "intended_error", None) or obs.eager.setup_error or obs.compiled.setup_error:
        return None
    for e_call, c_call in zip(obs.eager.calls, obs.compiled.calls):
        if e_call.error is None and c_call.error is not None:
            reason = deliberate_refusal(c_call.error, obs.fullgraph, obs.extra.get(EXPORTED))
            return (e_call.index, reason) if reason else None
        if (e_call.error is None) != (c_call.error is None):
            return None
    return None


@oracle("exceptions")
def exceptions(case, obs: Observations, trace=None) -> list[Finding]:
    found: list[Finding] = []
    if obs.compiled.setup_error or obs.eager.setup_error or getattr(case, "intended_error", None):
        return found  # illegal-on-purpose programs are judged by the `illegal` oracle
    exported = obs.extra.get(EXPORTED)
    for e_call, c_call in zip(obs.eager.calls, obs.compiled.calls):
        e, c = e_call.error, c_call.error
        i = e_call.index
        if e is None and c is None:
            continue
        refused = deliberate_refusal(c, obs.fullgraph, exported) if c is not None else None
        if e is not None and c is None:
            found.append(finding("exceptions", "missing-exception",
                                 f"call {i}: eager raised {e.type}, compiled returned normally",
                                 f"missing {e.type}", call=i, details=(f"eager: {e.type}: {e.message}",)))
        elif refused is None and (e is None or not _same_failure(e, c, obs.fullgraph, bool(exported))):
            # compiled only, or a refusal before eager's error (on 2.5.1 `dict.popitem` refused under fullgraph was
            # filed as a crash): a refusal is judged as one whether or not eager raised later; a deliberate one (the
            # absent `aot_compile` beside flex_attention's ValueError was a "mismatch") is no finding at all
            if e is None or (category(c) == "refusal" and (obs.fullgraph or exported)):
                found.append(_compiled_only(c, i, obs.fullgraph, exported))
            else:
                found.append(finding("exceptions", "exception-mismatch",
                                     f"call {i}: eager raised {e.type}, compiled raised {c.type}",
                                     f"{e.type} vs {key(c)}", severity="medium", call=i,
                                     details=(f"eager: {e.type}: {e.message}", f"compiled: {c.type}: {c.message}"),
                                     torch_frame=c.torch_frame, key_frame=c.key_frame,
                                     crash_frames=c.crash_frames))
        if (e is None) != (c is None):
            break  # later calls start from different states; other oracles already report them
    return found


def _compiled_only(c: ExcInfo, i: int, fullgraph: bool, exported: str | None = None) -> Finding:
    cat = category(c)
    inner = inner_error(c)
    detail = (f"compiled: {c.qualified}: {c.message}",) + ((f"gb_type: {c.gb_type}",) if c.gb_type else ()) \
        + ((f"wrapped error: {inner[0]}: {inner[1]}",) if inner else ()) \
        + ((f"graph break: {c.graph_break}",) if c.graph_break else ())
    if cat == "trace":
        return _raised_in_trace(c, i, detail)
    if cat == "refusal" and (fullgraph or exported):  # a whole-frame capture refused a construct that should trace
        what = f"export ({exported})" if exported else "fullgraph compile"
        return finding("exceptions", "unsupported", f"call {i}: {what} refused: {c.graph_break or c.gb_type or c.type}",
                       f"{c.type} {c.gb_type or c.message}", severity="info", call=i, details=detail)
    if cat in ("crash", "refusal"):
        return finding("exceptions", "crash", f"call {i}: compiler crashed with {c.type}",
                       key(c), call=i, details=detail, torch_frame=c.torch_frame, key_frame=c.key_frame,
                       crash_frames=c.crash_frames)
    return finding("exceptions", "spurious-exception", f"call {i}: compiled raised {c.type}, eager did not",
                   key(c), call=i, details=detail, torch_frame=c.torch_frame, key_frame=c.key_frame,
                   crash_frames=c.crash_frames, raised=raised_outside(c) if c.outside_torch else None)


_DEBUG_CONTEXT = re.compile(r"Developer debug context: (.*)")
_RAISED = re.compile(r"raised exception (\w+)\(")


def trace_error_type(err: ExcInfo) -> str:
    """The Python exception the traced user code raised (`TypeError`), as Dynamo names it."""
    named = user_type(err)
    if named != err.type:
        return named
    m = _RAISED.search(err.detail)
    return m.group(1) if m else "Exception"


def _raised_in_trace(c: ExcInfo, i: int, detail: tuple[str, ...]) -> Finding:
    raised = trace_error_type(c)
    context = _DEBUG_CONTEXT.search(c.detail)
    first = f"compiled: {raised} raised inside the trace" + (f": {context.group(1)}" if context else "")
    return finding("exceptions", "trace-exception", f"call {i}: {raised} raised inside the trace, eager raised "
                   "nothing", f"trace {raised} {c.gb_type or c.type}", call=i, details=(first, *detail),
                   torch_frame=c.torch_frame, key_frame=c.key_frame, crash_frames=c.crash_frames)


@renders("exceptions")
def render_exceptions_check(f: Finding, case=None) -> list[str]:
    """Exception parity on the diverging call: raised on both sides, or on neither, and the same type."""
    parity = "assert isinstance(c_out, Exception) == isinstance(out, Exception), "
    if f.kind == "missing-exception":
        return [parity + 'f"eager raised {out!r}, compiled returned {c_out!r}"']
    if f.kind == "exception-mismatch":
        return ['assert isinstance(c_out, type(out)) or f"got {type(out).__name__}(" in str(c_out), '
                'f"eager raised {out!r}, compiled raised {c_out!r}"']
    return [parity + 'f"compiled raised {c_out!r}; eager returned {out!r}"']
