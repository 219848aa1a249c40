"""`dynfuzz gate`: the PR gate. Corpus replay, then a deterministic generated run, within a budget.

The generated run draws case i from `case_seed(seed, i)`, so every machine
runs the same programs. Exit 0 when nothing new diverged, 1 when a new
finding appeared (its minimized repro is printed and saved) or a corpus entry
regressed. Known issues count as expected failures; one that passes is
reported loudly as FIXED without failing the gate.
"""
from __future__ import annotations

import hashlib
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import case_seed, draw_case
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.triage.known import KnownIssues
from dynfuzz.triage.replay import SELF_KINDS, Outcome, discover, format_table, replay

MIN_MINIMIZE_SECONDS = 5.0
VERIFY_SECONDS = 10.0


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


@dataclass
class GateResult:
    outcomes: list[Outcome]
    campaign: dict[str, Any]
    new: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    repros: dict[str, Path]
    seconds: float

    @property
    def failed(self) -> bool:
        return bool(self.new) or any(o.bad for o in self.outcomes)


def gate_programs(seed: int, cases: int, families: tuple[str, ...] = ()) -> list[str]:
    """The sources the generated run judges, in order: identical for the same seed on every machine."""
    return [draw_case(case_seed(seed, i), families).source for i in range(cases)]


def programs_digest(seed: int, cases: int, families: tuple[str, ...] = ()) -> str:
    digest = hashlib.sha256()
    for source in gate_programs(seed, cases, families):
        digest.update(source.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _known_with_corpus(config: GateConfig, outcomes: list[Outcome]) -> KnownIssues:
    """Known upstream issues plus signatures the corpus already records as known or open."""
    known = KnownIssues.load(Path(config.known) if config.known else None)
    entries = dict(known.entries)
    for o in outcomes:
        if o.signature and o.expected in ("known", "open"):
            entries.setdefault(o.signature, {"signature": o.signature, "corpus": o.path})
    return KnownIssues(entries)


def run_gate(config: GateConfig) -> int:
    """Run the gate, print the outcome, write JUnit and Markdown if asked; 0 clean, 1 new divergence."""
    from dynfuzz.run.campaign import Campaign, CampaignConfig

    start = time.monotonic()
    files = discover([str(p) for p in config.corpus] or None)
    outcomes = replay(files, min(config.workers, 2), config.known) if files else []
    print(format_table(outcomes) if outcomes else "corpus: no entries")
    remaining = max(config.budget - (time.monotonic() - start), 1.0)
    summary: dict[str, Any] = {"cases": 0, "unique_findings": []}
    if config.cases:
        campaign = Campaign(CampaignConfig(budget=remaining, out=config.out / "campaign", seed=config.seed,
                                           spec=config.spec, families=config.families, workers=config.workers,
                                           max_cases=config.cases, known=_known_with_corpus(config, outcomes),
                                           progress=False))
        summary = campaign.run()
    found = summary["unique_findings"]
    new = [u for u in found if u["kind"] not in SELF_KINDS]
    notes = [u for u in found if u["kind"] in SELF_KINDS]
    repros = _minimize_first(config, new, start)
    result = GateResult(outcomes, summary, new, notes, repros, time.monotonic() - start)
    _print_result(config, result)
    if config.junit:
        write_junit(result, config, config.junit)
    if config.summary:
        config.summary.parent.mkdir(parents=True, exist_ok=True)
        config.summary.write_text(markdown_summary(result, config))
    return 1 if result.failed else 0


def _minimize_first(config: GateConfig, new: list[dict[str, Any]], start: float) -> dict[str, Path]:
    """Minimize the most severe new finding with the time left (its saved repro is kept regardless)."""
    from dynfuzz.errors import UsageError
    from dynfuzz.triage.minimize import minimize_file
    from dynfuzz.triage.repro import read_program

    repros: dict[str, Path] = {u["signature"]: Path(u["file"]) for u in new if u.get("file")}
    left = config.budget - (time.monotonic() - start) - VERIFY_SECONDS  # room to run the repro once
    if not new or not new[0].get("file") or left < MIN_MINIMIZE_SECONDS:
        return repros
    first = new[0]
    out = config.out / "new" / f"{first['signature']}.min.py"
    try:
        _, path = minimize_file(read_program(Path(first["file"])), config.spec, left, out, first["signature"])
    except UsageError:  # did not reproduce in-process (e.g. a worker crash): keep the saved repro
        return repros
    repros[first["signature"]] = path
    return repros


def _print_result(config: GateConfig, result: GateResult) -> None:
    camp = result.campaign
    print(f"generated: {camp.get('cases', 0)} cases (seed {config.seed}), {len(result.new)} new finding(s)")
    for u in result.new:
        print(f"NEW {u['signature']} [{u['oracle']}/{u['kind']}] {u['message']}")
    for u in result.new[:1]:
        path = result.repros.get(u["signature"])
        if path and path.exists():
            text = path.read_text()
            head = text.split("\n# ---- checker", 1)[0]
            print(f"---- repro {path} (run it: exit 1 while the divergence is present) ----")
            print(head.rstrip() + ("\n# ... checker omitted here; it is in the file" if head != text else ""))
    for o in result.outcomes:
        if o.verdict == "FIXED":
            print(f"FIXED: known issue {o.signature} ({o.name}) no longer diverges: update corpus and known_issues")
    print(f"gate: {'FAIL' if result.failed else 'pass'} in {result.seconds:.1f} s")


def write_junit(result: GateResult, config: GateConfig, path: Path) -> None:
    """JUnit XML: one testcase per corpus entry and per new finding, plus one for the generated run."""
    suite = ET.Element("testsuite", name="dynfuzz-gate", time=f"{result.seconds:.3f}")
    counts = {"tests": 0, "failures": 0, "skipped": 0}
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
    camp = result.campaign
    gen = ET.SubElement(suite, "testcase", classname="dynfuzz.generated",
                        name=f"seed={config.seed} cases={camp.get('cases', 0)}", time=f"{camp.get('seconds', 0)}")
    counts["tests"] += 1
    if result.new:
        counts["failures"] += 1
        ET.SubElement(gen, "failure", message=f"{len(result.new)} new finding(s)", type="NEW").text = "\n".join(
            f"{u['signature']} [{u['oracle']}/{u['kind']}] {u['message']} -> "
            f"{result.repros.get(u['signature'], u.get('file'))}" for u in result.new)
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("errors", "0")
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def markdown_summary(result: GateResult, config: GateConfig) -> str:
    """A short Markdown report for a PR comment."""
    camp = result.campaign
    status = "failed: new divergence" if result.failed else "passed"
    lines = [f"### dynfuzz gate {status}", "",
             f"torch {camp.get('torch', '?')}, {config.spec.describe()}, seed {config.seed}, "
             f"{camp.get('cases', 0)} generated cases, {len(result.outcomes)} corpus entries, "
             f"{result.seconds:.0f} s", ""]
    if result.new:
        lines += ["| signature | oracle | kind | message | repro |", "|---|---|---|---|---|"]
        lines += [f"| `{u['signature']}` | {u['oracle']} | {u['kind']} | {u['message']} | "
                  f"`{result.repros.get(u['signature'], u.get('file'))}` |" for u in result.new]
        lines.append("")
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
    if result.notes:
        lines.append(f"Notes: {len(result.notes)} disagreement(s) of dynfuzz's own reference tracer (not torch).")
    return "\n".join(lines) + "\n"
