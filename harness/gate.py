"""`dynfuzz gate`: the PR gate. Corpus replay, then a deterministic generated run, within a budget.

The generated run draws case i from `case_seed(seed, i)`, so every machine
runs the same programs. Its findings are filed by root-cause bucket and
minimized in the campaign's triage worker; a bucket whose key is in
`known_issues.toml` (for this torch release) is expected. Exit codes: 1 when a
new bug appeared (a miscompile or a crash; with --strict a new refusal too; its repro
is printed inline) or a corpus entry regressed;
else 3 when dynfuzz itself failed (an internal error, never reported as a torch
divergence); else 0. Known issues that pass are reported loudly as FIXED
without failing the gate. The gate never crashes: an exception inside dynfuzz
is an internal error (exit 3).
"""
from __future__ import annotations

import hashlib
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.errors import UsageError
from dynfuzz.generators.case import case_seed, draw_case
from dynfuzz.releases.known_verifier import verifying
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.buckets import INTERNAL_CLASSES, row_is_bug, tier_of
from dynfuzz.triage.corpus_replay import Outcome, discover, format_table, replay
from dynfuzz.triage.known import KnownIssues

MINIMIZE_SECONDS = 60.0
INTERNAL_EXIT = 3


@dataclass
class GateConfig:
    budget: float = 300.0
    cases: int = 200
    seed: int = 0
    spec: CompileSpec = field(default_factory=CompileSpec)
    families: tuple[str, ...] = ()
    corpus: list[Path] = field(default_factory=list)
    out: Path = Path("dynfuzz-gate")
    junit: Path | None = None
    summary: Path | None = None
    workers: int = 1
    known: str | None = None
    minimize_budget: float | None = MINIMIZE_SECONDS  # None: no triage worker (buckets stay unminimized)
    strict: bool = False  # --strict: a new refusal (a clean graph break under fullgraph) fails the gate too
    pristine: bool = True  # torch as shipped, without dynfuzz's speed-ups (--no-pristine-torch turns them on)


@dataclass
class GateResult:
    outcomes: list[Outcome]
    campaign: dict[str, Any]
    new: list[dict[str, Any]]  # summary.json bucket rows that are new bugs
    notes: list[dict[str, Any]]  # buckets that are dynfuzz's own (reference disagreements) or flaky
    seconds: float
    internal: list[str] = field(default_factory=list)  # dynfuzz's own errors, one line each

    @property
    def failed(self) -> bool:
        return bool(self.new) or any(o.bad and o.verdict != "ERROR" for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else INTERNAL_EXIT if self.internal else 0


def gate_programs(seed: int, cases: int, families: tuple[str, ...] = ()) -> list[str]:
    """The sources the generated run judges, in order: identical for the same seed on every machine."""
    return [draw_case(case_seed(seed, i), families).source for i in range(cases)]


def programs_digest(seed: int, cases: int, families: tuple[str, ...] = ()) -> str:
    digest = hashlib.sha256()
    for source in gate_programs(seed, cases, families):
        digest.update(source.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def run_gate(config: GateConfig) -> int:
    """Run the gate, print the outcome, write JUnit and Markdown if asked; 0 clean, 1 new bucket, 3 internal."""
    from dynfuzz.run.torch_compat import pristine_tree

    start = time.monotonic()
    try:
        with pristine_tree(config.pristine):
            result = _run(config, start)
    except UsageError:
        raise  # bad input (a missing corpus path...): the CLI's one line and exit 2
    except Exception as e:  # never a crash, never a torch divergence: dynfuzz's own failure
        import traceback

        detail = traceback.format_exc(limit=-4)
        result = GateResult([], {}, [], [], time.monotonic() - start,
                            [f"dynfuzz internal error: {type(e).__name__}: {e}", detail])
    try:
        _print_result(config, result)
        if config.junit:
            write_junit(result, config, config.junit)
        if config.summary:
            config.summary.parent.mkdir(parents=True, exist_ok=True)
            config.summary.write_text(markdown_summary(result, config))
    except Exception as e:
        print(f"dynfuzz internal error while reporting the gate: {type(e).__name__}: {e}")
        return 1 if result.failed else INTERNAL_EXIT
    return result.exit_code


def _run(config: GateConfig, start: float) -> GateResult:
    from dynfuzz.campaign.campaign import Campaign, CampaignConfig

    files = discover([str(p) for p in config.corpus] or None)
    outcomes = replay(files, min(config.workers, 2), config.known) if files else []
    print(format_table(outcomes) if outcomes else "corpus: no entries")
    remaining = max(config.budget - (time.monotonic() - start), 1.0)
    summary: dict[str, Any] = {"cases": 0, "buckets": []}
    if config.cases:
        from dynfuzz.campaign.out_folder import claim

        lock = claim(config.out / "campaign", overwrite=True, verb="gate")  # noqa: F841  (the gate owns its folder)
        campaign = Campaign(CampaignConfig(budget=remaining, out=config.out / "campaign", seed=config.seed,
                                           spec=config.spec, families=config.families, workers=config.workers,
                                           max_cases=config.cases,
                                           known=verifying(KnownIssues.load(Path(config.known) if config.known
                                                                            else None)),
                                           progress=False, minimize_budget=config.minimize_budget,
                                           triage_grace=max(60.0, config.budget - (time.monotonic() - start))))
        summary = campaign.run()
        for b in summary.get("buckets", []):  # summary.json's paths are relative to the campaign folder
            b.update({k: str(config.out / "campaign" / b[k]) for k in ("repro", "folder") if b.get(k)})
    buckets = summary.get("buckets", [])
    new = [b for b in buckets if row_is_bug(b)
           or config.strict and tier_of(b["class"]) == "refusal" and b["status"] != "flaky"]
    notes = [b for b in buckets if b not in new and b["class"] not in INTERNAL_CLASSES]
    internal = [f"{b['count']} internal error(s): {b['key']} ({b['folder']})" for b in buckets
                if b["class"] in INTERNAL_CLASSES]
    internal += [f"{n} harness error(s) of kind {kind} (see {config.out / 'campaign' / 'harness-errors'})"
                 for kind, n in summary.get("harness_errors", {}).items() if n]
    internal += [f"corpus entry {o.name}: {o.detail}" for o in outcomes if o.verdict == "ERROR"]
    return GateResult(outcomes, summary, new, notes, time.monotonic() - start, internal)


def _print_result(config: GateConfig, result: GateResult) -> None:
    camp = result.campaign
    print(f"generated: {camp.get('cases', 0)} cases (seed {config.seed}), {camp.get('known', 0)} known finding(s), "
          f"{len(result.new)} new bucket(s)")
    for b in result.new:
        print(f"NEW {b['id']} {b['key']}  [{b['status']}, {b['count']} finding(s)]\n    {b['cause']}\n    "
              f"repro: {b['repro']}")
    for b in result.notes:
        why = b.get("note") or {"refusal": "a refusal: a feature gap, listed, not a bug (fails the gate with --strict)",
                                "performance": "an extra recompile: listed, not a bug"}.get(
            tier_of(b.get("class", "")), "flaky" if b.get("status") == "flaky" else "not a torch bug")
        print(f"note {b['id']} {b['key']} [{b['status']}]: not counted ({why})")
    first = _first_repro(result)
    if first is not None:
        path, text = first
        print(f"---- repro {path} (run it: exit 1 while the bug is present, 0 once fixed) ----")
        print(text.rstrip())
    for o in result.outcomes:
        if o.verdict == "FIXED":
            print(f"FIXED: known issue {o.signature} ({o.name}) no longer diverges: update corpus and known_issues")
    for line in result.internal:
        print(f"INTERNAL {line}")
    verdict = "FAIL" if result.failed else "INTERNAL ERROR" if result.internal else "pass"
    print(f"gate: {verdict} in {result.seconds:.1f} s (exit {result.exit_code})")


def _first_repro(result: GateResult) -> tuple[str, str] | None:
    for b in result.new:
        if b.get("repro") and Path(b["repro"]).is_file():
            return b["repro"], Path(b["repro"]).read_text()
    return None


def write_junit(result: GateResult, config: GateConfig, path: Path) -> None:
    """JUnit XML: one testcase per corpus entry and per bucket, plus one for dynfuzz's internal errors."""
    suite = ET.Element("testsuite", name="dynfuzz-gate", time=f"{result.seconds:.3f}")
    counts = {"tests": 0, "failures": 0, "skipped": 0, "errors": 0}
    for o in result.outcomes:
        case = ET.SubElement(suite, "testcase", classname="dynfuzz.corpus", name=o.name, time=f"{o.seconds:.3f}")
        counts["tests"] += 1
        if o.bad:
            counts["failures"] += 1
            ET.SubElement(case, "failure", message=f"{o.verdict}: expected {o.expected}, observed {o.observed}",
                          type=o.verdict).text = o.detail
        elif o.verdict == "still failing":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=f"known issue {o.signature} still diverges")
        elif o.verdict == "FIXED":
            ET.SubElement(case, "system-out").text = f"FIXED: known issue {o.signature} no longer diverges"
    for b in result.campaign.get("buckets", []):
        case = ET.SubElement(suite, "testcase", classname=f"dynfuzz.bucket.{b['oracle']}", name=b["key"])
        counts["tests"] += 1
        if b in result.new:
            counts["failures"] += 1
            repro = Path(b["repro"]).read_text() if b.get("repro") and Path(b["repro"]).is_file() else ""
            ET.SubElement(case, "failure", message=f"new bucket {b['id']}: {b['cause']}",
                          type="NEW").text = f"{b['count']} finding(s); repro {b['repro']}\n\n{repro}"
        else:
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=f"{b['status']}: {b['note'] or 'not a torch bug'}")
    if result.internal:
        case = ET.SubElement(suite, "testcase", classname="dynfuzz.internal", name="dynfuzz internal errors")
        counts["tests"] += 1
        counts["errors"] += 1
        ET.SubElement(case, "error", message=result.internal[0][:200], type="INTERNAL").text = \
            "\n".join(result.internal)
    camp = result.campaign
    gen = ET.SubElement(suite, "testcase", classname="dynfuzz.generated",
                        name=f"seed={config.seed} cases={camp.get('cases', 0)}", time=f"{camp.get('seconds', 0)}")
    counts["tests"] += 1
    if result.new:
        counts["failures"] += 1
        ET.SubElement(gen, "failure", message=f"{len(result.new)} new bucket(s)", type="NEW").text = "\n".join(
            f"{b['id']} {b['key']} -> {b['repro']}" for b in result.new)
    for key, value in counts.items():
        suite.set(key, str(value))
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def markdown_summary(result: GateResult, config: GateConfig) -> str:
    """A short Markdown report for a PR comment: verdict, the bucket table, the first new repro inline."""
    camp = result.campaign
    status = "failed: new bug" if result.failed else "internal error" if result.internal else "passed"
    lines = [f"### dynfuzz gate {status}", "",
             f"torch {camp.get('torch', '?')}, {config.spec.describe()}, seed {config.seed}, "
             f"{camp.get('cases', 0)} generated cases, {len(result.outcomes)} corpus entries, "
             f"{camp.get('known', 0)} known finding(s), {result.seconds:.0f} s", ""]
    buckets = camp.get("buckets", [])
    if buckets:
        lines += ["| bucket | id | count | status | repro |", "|---|---|---|---|---|"]
        lines += [f"| {'**NEW** ' if b in result.new else ''}`{b['key']}` | `{b['id']}` | {b['count']} | "
                  f"{b['status']} | `{b['repro']}` |" for b in buckets]
        lines.append("")
    first = _first_repro(result)
    if first is not None:
        lines += [f"First new bug, repro `{first[0]}` (exit 1 while the bug is present):", "",
                  "```python", first[1].rstrip(), "```", ""]
    bad = [o for o in result.outcomes if o.bad or o.verdict == "FIXED"]
    if bad:
        lines += ["| corpus entry | expected | observed | verdict |", "|---|---|---|---|"]
        lines += [f"| {o.name} | {o.expected} | {o.observed} | **{o.verdict}** |" for o in bad]
        lines.append("")
    counts: dict[str, int] = {}
    for o in result.outcomes:
        counts[o.verdict] = counts.get(o.verdict, 0) + 1
    if counts:
        lines.append("Corpus: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    if result.internal:
        lines += ["", "Internal dynfuzz errors (not torch bugs):", ""]
        lines += [f"- {x.splitlines()[0]}" for x in result.internal]
    return "\n".join(lines) + "\n"
