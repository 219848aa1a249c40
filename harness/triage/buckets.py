"""Root-cause buckets: the closed list of divergence classes, the bucket key, its id and slug.

A bucket key reads `<oracle>/<class>: <construct>[ after <perturbation>][ raising <error>][ @<layer>]`,
for example `effects/lost-effect: set-subclass argument .update`. The class comes from `CLASSES`
(closed: a finding whose oracle and kind map to nothing here is `internal-error`); the construct and
the perturbation come from `dynfuzz.triage.explain`; for exceptions the error is the user-visible
exception type and the innermost torch frame, never message text. The key never holds where the
symptom showed (output slot, state path, call index) or any name from the program, so the same bug
reached through different programs, processes or machines lands in the same bucket.
"""
from __future__ import annotations

import hashlib
import re

from dynfuzz.oracles import Finding
from dynfuzz.run.torch_frames import WRAPPER_FRAMES

CLASSES: dict[str, str] = {
    "wrong-value": "an output's values differ from eager",
    "stale-metadata": "an output's shape, stride, contiguity, dtype or requires_grad differs from eager",
    "wrong-aliasing": "which outputs share storage or identity with each other or the inputs differs",
    "lost-effect": "a write the eager call makes to program state is missing after the compiled call",
    "wrong-effect": "program state after the compiled call differs from eager's (written, but wrongly)",
    "crash": "the compiler raised an internal error where eager ran or refused cleanly",
    "spurious-exception": "the compiled call raised an ordinary error that eager did not",
    "missing-exception": "eager raised, the compiled call returned normally",
    "exception-mismatch": "both raised, with different kinds of error",
    "trace-exception": "user code raised inside the trace (Dynamo's `Observed exception`) where eager raised nothing",
    "refused": "a whole-frame capture (fullgraph=True, export) refused a construct with a graph break torch "
               "documents",
    "backward-crash": "backward raised in one mode only",
    "wrong-grad": "gradients differ from eager",
    "missing-recompile": "a change that violates a guard reused stale compiled code",
    "extra-recompile": "a call that changed nothing a guard depends on recompiled",
    "accepted-illegal": "an illegal program compiled (and ran) instead of being refused",
    "process-crash": "the process running the case died (segfault, abort, out of memory)",
    "hang": "the case ran past its timeout",
    "reference-disagreement": "dynfuzz's reference tracer disagrees with eager (a dynfuzz bug, not torch's)",
    "internal-error": "dynfuzz itself failed on the case (never a torch bug)",
}

INTERNAL_CLASSES = frozenset({"internal-error"})
NOTE_CLASSES = frozenset({"reference-disagreement"})

# Note [Tiers: what counts as a bug]
# PyTorch triages a silent wrong result above a crash, and a crash far above a graph break. So every class has
# one tier, and only the first two are bugs (`bugs` in summary.json, what fails the gate): a miscompile (the
# program silently computes, writes or guards the wrong thing; an illegal program accepted, or an error eager
# raises swallowed, is one too), a crash (an internal error, a process crash or hang, an exception eager does
# not raise or another one, among them an exception raised inside the trace: `Observed exception`, user code
# failing on a value Dynamo produced). A refusal is a feature gap, and an extra recompile is a performance issue:
# both listed, never counted among bugs, so the refusal tier holds only what torch itself documents as one (Note
# [A refusal is a documented graph break] in oracles/exceptions.py): a graph break whose type the torch under test
# registers, under fullgraph=True or export, or a clean export refusal; an undocumented `Unsupported` is a crash.
# dynfuzz's own classes have the tier `dynfuzz`.
TIERS: dict[str, str] = {
    "wrong-value": "miscompile",
    "stale-metadata": "miscompile",
    "wrong-aliasing": "miscompile",
    "lost-effect": "miscompile",
    "wrong-effect": "miscompile",
    "wrong-grad": "miscompile",
    "missing-recompile": "miscompile",
    "missing-exception": "miscompile",
    "accepted-illegal": "miscompile",
    "crash": "crash",
    "spurious-exception": "crash",
    "trace-exception": "crash",
    "exception-mismatch": "crash",
    "backward-crash": "crash",
    "process-crash": "crash",
    "hang": "crash",
    "refused": "refusal",
    "extra-recompile": "performance",
    "reference-disagreement": "dynfuzz",
    "internal-error": "dynfuzz",
}
TIER_ORDER = ("miscompile", "crash", "refusal", "performance", "dynfuzz")
BUG_TIERS = frozenset({"miscompile", "crash"})


def tier_of(cls: str) -> str:
    """The tier of a divergence class (see Note [Tiers: what counts as a bug])."""
    return TIERS.get(cls, "dynfuzz")


def is_bug(cls: str, status: str = "ok", fixed: bool = False) -> bool:
    """The one predicate for "this bucket is a torch bug": filing, `merge`, the gate and the report all ask it.
    A miscompile or a crash whose repro is not flaky, and (`fixed`) not passing on the newest release tried
    (`dynfuzz releases check`): such a bucket is listed apart, for users of older releases."""
    return tier_of(cls) in BUG_TIERS and status != "flaky" and not fixed


def row_is_bug(row: dict) -> bool:
    """`is_bug` of a `summary.json` bucket row."""
    return is_bug(row.get("class", "internal-error"), row.get("status", "ok"), bool(row.get("fixed_in")))


def tier_rank(cls: str) -> int:
    """Sort key: miscompiles first, then crashes, refusals, performance, dynfuzz's own."""
    return TIER_ORDER.index(tier_of(cls))

_BY_KIND = {
    ("effects", "effect-lost"): "lost-effect",
    ("effects", "effect-mismatch"): "wrong-effect",
    ("exceptions", "crash"): "crash",
    ("exceptions", "spurious-exception"): "spurious-exception",
    ("exceptions", "missing-exception"): "missing-exception",
    ("exceptions", "exception-mismatch"): "exception-mismatch",
    ("exceptions", "unsupported"): "refused",
    ("exceptions", "trace-exception"): "trace-exception",
    ("grads", "backward-crash"): "backward-crash",
    ("grads", "grad-mismatch"): "wrong-grad",
    ("guards", "guard-unsound"): "missing-recompile",
    ("guards", "over-guard"): "extra-recompile",
    ("recompiles", "over-guard"): "extra-recompile",
    ("illegal", "crash"): "crash",
    ("illegal", "miscompile"): "accepted-illegal",
    ("harness", "crash"): "process-crash",
    ("harness", "hang"): "hang",
    ("reference", "reference-bug"): "reference-disagreement",
}
METADATA_ASPECTS = frozenset({"shape", "stride", "contiguous", "is_contiguous", "dtype", "device", "layout",
                              "requires_grad", "storage_offset", "ndim", "dim", "is_leaf"})
ALIAS_ASPECTS = frozenset({"identity", "storage", "alias", "aliases"})
_DETAIL = re.compile(r"^[^:]*: (?P<aspect>[\w.]+): expected ")
_ERROR = re.compile(r"^(?:compiled|eager)(?: backward)?: (?P<type>[\w.]+)")
_GRAPH_BREAK = re.compile(r"^graph break: (?P<label>.+)$")


def aspects(f: Finding) -> set[str]:
    """The aspects (`values`, `stride`, `members`...) a value-comparing finding's evidence names."""
    found = set()
    for line in f.details:
        m = _DETAIL.match(line)
        if m:
            found.add(m.group("aspect"))
    return found


def divergence_class(f: Finding) -> str:
    """The finding's class from `CLASSES`: by oracle and kind, outputs split by the aspects that differ."""
    if (f.oracle, f.kind) == ("outputs", "miscompile"):
        seen = aspects(f)
        if seen & METADATA_ASPECTS:
            return "stale-metadata"
        if seen and seen <= ALIAS_ASPECTS:
            return "wrong-aliasing"
        return "wrong-value"
    return _BY_KIND.get((f.oracle, f.kind), "internal-error")


def error_of(f: Finding) -> str | None:
    """For an exception-class finding: `Type in torch/<file>.py:<function>` (type and innermost frame); for a
    refusal, what torch calls it: `Unsupported gb0291: <graph-break type>` (Note [Refusals are keyed by what
    torch calls them])."""
    cls = divergence_class(f)
    if cls not in ("crash", "spurious-exception", "exception-mismatch", "backward-crash", "refused",
                   "missing-exception", "trace-exception"):
        return None
    if cls == "refused":
        return refusal_of(f)
    for line in f.details:
        m = _ERROR.match(line)
        if m:
            name = m.group("type").rsplit(".", 1)[-1]
            if any("RecursionError" in d for d in f.details):
                return f"{name} (RecursionError)"  # where the stack ran out depends on the process's depth
            frame = getattr(f, "key_frame", None) or getattr(f, "torch_frame", None)
            gb_type = next((d[len("gb_type: "):] for d in f.details if d.startswith("gb_type: ")), None)
            if gb_type and cls in ("crash", "trace-exception"):
                # a graph break that is no refusal: named by its type; Dynamo shortens its traceback, so a frame
                # is often only the wrapper that re-raised it, which names nothing
                name = f"{name} ({gb_type})"
                frame = None if frame in WRAPPER_FRAMES else frame
            return f"{name} in {frame}" if frame else name
    return None


def graph_break_name(error: str | None) -> str | None:
    """`Unsupported (<graph-break type>)` at the head of an error name (`error_of`), its parentheses balanced (a
    type may hold some: `Unsupported python_type() call`, or the word ` in `); None for an untyped error and for
    `(RecursionError)`."""
    m = re.match(r"\w+ \(", error or "")
    if m is None or error.startswith(m.group(0) + "RecursionError)"):
        return None
    depth = 0
    for i in range(m.end() - 1, len(error)):
        depth += {"(": 1, ")": -1}.get(error[i], 0)
        if depth == 0:
            return error[:i + 1]
    return None


# Graph-break types that name no failure of Dynamo's: the user code's own exception, seen inside the trace.
GENERIC_GRAPH_BREAKS = ("(Observed exception)", "(TypeError from user code)")


def graph_break_identity(error: str | None) -> str | None:
    """`graph_break_name(error)` when that type names what Dynamo got wrong (not `GENERIC_GRAPH_BREAKS`), else
    None: such a crash is keyed by its type alone (Note [A graph break's type is its identity] in explain.py)."""
    name = graph_break_name(error)
    return None if name is None or name.endswith(GENERIC_GRAPH_BREAKS) else name


# Note [Refusals are keyed by what torch calls them]
# A refusal's key carries the graph break torch documents it as (its registry id and type, `gb0291: logging.Logger
# method not supported for non-export cases`; a type or an explicit name on older releases), never the frame that
# raised it: every graph break is raised from the same few frames, so keyed by frame two refusals of different
# constructs shared a bucket. A refusal without a graph break (`UserError`, `ConstraintViolationError`) is keyed
# by its type.
def refusal_of(f: Finding) -> str | None:
    """`Unsupported gb0291: <type>` for a documented graph break; the exception type for another refusal."""
    error = None
    for line in f.details:
        m = _GRAPH_BREAK.match(line)
        if m:
            return f"Unsupported {m.group('label')}"
        m = _ERROR.match(line)
        if m and error is None:
            error = m.group("type").rsplit(".", 1)[-1]
    return error


def bucket_key(oracle: str, cls: str, construct: str, perturbation: str | None = None,
               error: str | None = None, layer: str | None = None) -> str:
    """`<oracle>/<class>: <construct>[ after <perturbation>][ raising <error>][ @<layer>]`."""
    if cls not in CLASSES:
        raise ValueError(f"unknown divergence class {cls!r}")
    key = f"{oracle}/{cls}: {construct}"
    if perturbation:
        key += f" after {perturbation}"
    if error:
        key += f" raising {error}"
    if layer:
        key += f" @{layer}"
    return key


# Note [Explained keys name the fault]
# A cheap key names what a program did where the divergence showed (`effects/lost-effect: set-subclass argument
# .update`): another receiver, method or way of observing gives another cheap key. Once a finding is minimized
# and explained, its key names the fault instead: the tier (never the oracle or class: one fault is often seen
# as a lost effect in one program and a wrong output in another), the construct's fault family
# (`constructs.family`: `set-subclass`, `tensor in-place metadata op`), the call-plan change a missing guard
# needs, for crashes the exception type and the innermost torch frame that is not a wrapper, the function of
# torch that localization ranks first when it leads by a clear margin, and the layer:
# `miscompile: set-subclass @dynamo`, `crash: tensor in-place metadata op raising IndexError in ... @dynamo`.
def fault_key(cls: str, family: str | None, perturbation: str | None = None, error: str | None = None,
              locus: str | None = None, layer: str | None = None) -> str:
    """`<tier>: <family>[ after <perturbation>][ raising <error>][ near <locus>][ @<layer>]`."""
    if cls not in CLASSES:
        raise ValueError(f"unknown divergence class {cls!r}")
    key = f"{tier_of(cls)}:" + (f" {family}" if family else "")
    if perturbation:
        key += f" after {perturbation}"
    if error:
        key += f" raising {error}"
    if locus:
        key += f" near {locus}"
    if layer:
        key += f" @{layer}"
    return key


def bucket_id(key: str) -> str:
    """The first 12 hex digits of the key's sha256."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def slug(key: str, limit: int = 48) -> str:
    """A short readable folder-name part: the key's class (or tier) and construct in lower-case words."""
    head = key.split(" raising ", 1)[0].split(" near ", 1)[0].split(" @", 1)[0]
    text = re.sub(r"[^a-z0-9]+", "-", head.split("/", 1)[-1].lower()).strip("-")
    return text[:limit].rstrip("-") or "bucket"


def folder_name(key: str) -> str:
    """`<slug>-<id>`: the bucket's folder under `OUT/findings/`."""
    return f"{slug(key)}-{bucket_id(key)}"
