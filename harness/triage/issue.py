"""A bucket's `report.md`: a PyTorch issue body whose first ```python block is the plain repro.

Under the title, one line each says what PyTorch's triage rubric asks of a report: the tier, the component
(`component`: from the layer the bucket's ablation found and, where one was recorded, a `dynamic=False`
re-run), the labels it suggests, the graph-break id of a refusal where torch named one, and the releases it
fails on ("not checked" until `dynfuzz releases check` fills it in). `dynfuzz report DIR --bucket ID --issue`
prints this body ready to paste.
"""
from __future__ import annotations

import platform
import re
from typing import Any

from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.run.export_runner import EXPORT_CALLS
from dynfuzz.triage.repro_meta import script_of, torch_version
from dynfuzz.triage.repro_twin import program_literal

RELEASES_LINE = "- **Fails on releases:** "
# A bucket report's "Torch releases" section (releases/campaign_folder.py writes it) lies between these.
RELEASES_START = "<!-- dynfuzz releases check -->"
RELEASES_END = "<!-- /dynfuzz releases check -->"
LAYER_LABELS = {"dynamo": "module: dynamo", "aot_eager": "module: pt2-dispatcher", "inductor": "module: inductor"}
_GB_ID = re.compile(r"\b[Gg][Bb](\d{4})\b")
_GB_TYPE = re.compile(r"gb_type: (.+)")


def graph_break_id(finding: Finding) -> str | None:
    """The graph break of a refusal: torch's id (`GB0123`) where it printed one, else its `gb_type`."""
    texts = (finding.message, *finding.details)
    for text in texts:
        m = _GB_ID.search(text or "")
        if m:
            return f"GB{m[1]}"
    for text in texts:
        m = _GB_TYPE.search(text or "")
        if m:
            return f"gb_type `{m[1].strip()}` (this torch printed no id)"
    return None


def component(tier: str, layer: str | None, static_rerun: str | None = None,
              graph_break: bool = False) -> tuple[str, list[str]]:
    """The component by the triage rubric, and the labels it suggests. `static_rerun` is the outcome of a
    `dynamic=False` re-run where one was recorded (`agrees`: dynamic=False removes the failure)."""
    labels = ["oncall: pt2"]
    if static_rerun == "agrees":
        name = "module: dynamic shapes"
    elif graph_break or tier == "refusal":
        name = "module: graph breaks"
    else:
        name = LAYER_LABELS.get((layer or "").split("/")[0], "module: dynamo")
    labels.append(name)
    if tier == "miscompile":
        labels += ["module: correctness (silent)", "high priority"]
    return name, labels


def releases_text(releases: dict[str, Any] | None, verdict: str = "") -> str:
    """The releases a bucket fails on, from `releases check`'s cells, or "not checked"."""
    if not releases:
        return "not checked"
    failing = [r for r, c in releases.items() if (c or {}).get("outcome") in ("reproduces", "differs")]
    passing = [r for r, c in releases.items() if (c or {}).get("outcome") == "passes"]
    text = ", ".join(failing) or "none of those checked"
    if passing:
        text += f" (passes on {', '.join(passing)})"
    return text + (f"; {verdict}" if verdict else "")


def with_releases(report: str, releases: dict[str, Any] | None, verdict: str = "") -> str:
    """`report` with its releases line filled in from a `releases check`."""
    line = RELEASES_LINE + releases_text(releases, verdict)
    return re.sub("^" + re.escape(RELEASES_LINE) + ".*$", lambda _m: line, report, count=1, flags=re.M)


def with_section(text: str, block: str) -> str:
    """`text` with its releases section replaced by `block` (appended when it has none)."""
    if RELEASES_START in text and RELEASES_END in text:
        head, rest = text.split(RELEASES_START, 1)
        return head + block + rest.split(RELEASES_END, 1)[1]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def summary_lines(finding: Finding, tier: str, layer: str | None, meta: dict[str, Any],
                  releases: dict[str, Any] | None = None, verdict: str = "") -> list[str]:
    """The one-line facts under the title (module docstring)."""
    gb = graph_break_id(finding)
    name, labels = component(tier, layer, meta.get("static_rerun"), graph_break=tier == "refusal")
    why = f"first diverging layer: {layer}" if layer else "no layer ablation recorded"
    static = meta.get("static_rerun")
    if static:
        why += "; with dynamic=False it " + ("goes away" if static == "agrees" else "stays" if static == "reproduces"
                                             else static)
    lines = [f"- **Tier:** {tier}", f"- **Component:** `{name}` ({why})",
             "- **Suggested labels:** " + ", ".join(f"`{label}`" for label in labels)]
    if tier == "refusal":
        lines.append(f"- **Graph break:** {gb or 'not reported by this torch'}")
    lines.append(RELEASES_LINE + releases_text(releases, verdict))
    return lines


def finding_tier(finding: Finding) -> str:
    """A finding's tier where no bucket gave one: refusals, crashes and recompiles by kind, else miscompile."""
    if finding.kind == "unsupported":
        return "refusal"
    if "crash" in finding.kind or finding.kind in ("exception-mismatch", "spurious-exception", "hang"):
        return "crash"
    if finding.oracle == "recompiles" or finding.kind == "over-guard":
        return "performance"
    return "miscompile"


def compiled_by(case: Case, spec: CompileSpec) -> str:
    """How the finding's compiled side ran, for a report's first sentence: the export call an export program
    goes through, else `torch.compile` and its settings."""
    mode = (program_literal(case.source, "COMPILE_OPTIONS") or {}).get("export")
    if mode in EXPORT_CALLS:
        return f"`{EXPORT_CALLS[mode]}` (device={spec.device})"
    return f"`torch.compile` ({spec.describe()})"


def render_report(case: Case, finding: Finding, spec: CompileSpec, meta: dict, repro_text: str,
                  tier: str | None = None, layer: str | None = None) -> str:
    """A bug report in the form of PyTorch's pt2 issue template: title, the facts, repro, expected vs actual,
    versions."""
    tier = tier or finding_tier(finding)
    layer = layer or meta.get("layer") or finding.layer
    details = "\n".join(finding.details[:8]) or finding.message
    facts = "\n".join(summary_lines(finding, tier, layer, meta))
    return (f"# [dynamo] {finding.title}\n\n{facts}\n\n"
            f"### 🐛 Describe the bug\n\n"
            f"{compiled_by(case, spec)} diverges from eager ({finding.oracle} oracle, "
            f"kind `{finding.kind}`): {finding.message}.\n\n"
            f"Repro (exits 1 while the bug is present, 0 once fixed):\n\n"
            f"```python\n{script_of(repro_text).rstrip()}\n```\n\n"
            f"### Expected vs actual\n\nExpected: what eager does. Actual: what the compiled function does.\n\n"
            f"```\n{details}\n```\n\n"
            f"### Versions\n\n- torch {meta.get('torch', torch_version())}\n"
            f"- python {meta.get('python', platform.python_version())}\n"
            f"- platform {platform.platform()}\n\n"
            f"Found by dynfuzz (seed {case.seed}; the drawn program's tags: {', '.join(sorted(case.tags)) or 'none'}"
            ").\n")
