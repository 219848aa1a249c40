"""Benchmark triage: do variants of one known bug land in one bucket, and how many buckets per cause?

Figure 1 (issue 12): for every known bug in `corpus/known_issues.toml`, five programs that contain it —
names renamed, unrelated fragments added, other tensor shapes, the divergence first showing on a later
call, all three at once — are judged and explained on real torch (backend eager). Each must land in its
bug's bucket (the entry's key), and no two bugs may share a bucket.

Figure 2: a campaign (default 500 cases, minimization on) and its buckets, each labelled with the known
issue it matched or as new; buckets per root cause = buckets / distinct labels, where an unmatched
bucket counts as its own cause (so a reader can check the labels in the printed table).

Figure 3, does triage keep up: a campaign run as a user runs it (`dynfuzz fuzz --budget M --workers N`, a
fresh process), then, with `--then-triage`, `dynfuzz triage` on its folder; after each, the bug buckets by
status (the share `ok` is the target), the triage jobs still queued, the job times (median, 90th percentile)
and where a job's time goes by phase.

    python3 bench/triage.py --variants --campaign 500 --json bench-triage.json
    python3 bench/triage.py --keeps-up 30 --workers 2 --seed 11 --then-triage 10 --known /tmp/empty.toml
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dynfuzz.run.compilers import CompileSpec, make_compiler, quiet_torch_logs  # noqa: E402
from dynfuzz.run.judge import judge  # noqa: E402
from dynfuzz.triage.explain import explain  # noqa: E402
from dynfuzz.triage.known import KnownIssues, repros_of  # noqa: E402
from dynfuzz.triage.repro import read_program, torch_version  # noqa: E402

KEEP = {"f", "inputs", "between", "torch", "math", "collections", "device", "call", "CALLS", "COMPILE_OPTIONS",
        "DYNAMO_CONFIG", "self", "super", "len", "sum", "list", "set", "dict", "range", "print"}


class _Rename(ast.NodeTransformer):
    """Every name the program binds gets another spelling (attributes and method names stay)."""

    def __init__(self, bound: set[str]) -> None:
        self.map = {n: f"{n}_v2" for n in bound if n not in KEEP and not n.startswith("__")}

    def visit_Name(self, node):
        node.id = self.map.get(node.id, node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.map.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node):
        node.name = self.map.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node):
        node.name = self.map.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_Global(self, node):
        node.names = [self.map.get(n, n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global


def renamed(source: str) -> str:
    tree = ast.parse(source)
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    methods = {id(m) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for m in c.body}
    bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and id(n) not in methods}
    bound -= {m.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for m in c.body
              if isinstance(m, ast.FunctionDef)}
    return ast.unparse(_Rename(bound).visit(tree)) + "\n"


def _entry(tree: ast.Module) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")


def _after_declarations(fn: ast.FunctionDef) -> int:
    return next((i for i, s in enumerate(fn.body) if not isinstance(s, (ast.Global, ast.Nonlocal, ast.Expr))
                 or (isinstance(s, ast.Expr) and not isinstance(s.value, ast.Constant))), 0)


def with_fragments(source: str) -> str:
    """Unrelated code: a local list grown, a global dict read, an extra tensor computation."""
    tree = ast.parse(source)
    fn = _entry(tree)
    first_arg = fn.args.args[0].arg if fn.args.args else None
    extra = "pad_items = [0]\npad_items.append(len(pad_items))\npad_scale = PAD_TABLE['k'] + pad_items[-1]\n"
    if first_arg:
        extra += "pad_t = torch.ones(2) * pad_scale\n"
    i = _after_declarations(fn)
    fn.body[i:i] = ast.parse(extra).body
    tree.body.insert(1, ast.parse("PAD_TABLE = {'k': 2}").body[0])
    return ast.unparse(tree) + "\n"


def other_shapes(source: str) -> str:
    """Tensor sizes in `inputs()` grown by 2 (zeros/ones/empty sizes, linspace/arange counts)."""
    tree = ast.parse(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "inputs"), None)
    reshaped = {id(n.func.value) for n in ast.walk(fn) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Attribute) and n.func.attr in ("reshape", "view")} if fn else set()
    for node in ast.walk(fn) if fn else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and id(node) not in reshaped:
            name = node.func.attr
            sizes = node.args if name in ("zeros", "ones", "empty", "rand", "randn") else \
                node.args[2:3] if name == "linspace" else []
            for arg in sizes:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, int) and arg.value > 0:
                    arg.value += 2
    return ast.unparse(tree) + "\n"


def later_call(source: str) -> str:
    """The buggy code is skipped on the first call (a flag `between` sets), so it first shows later."""
    tree = ast.parse(source)
    fn = _entry(tree)
    fn.body.insert(_after_declarations(fn), ast.parse("if not ARMED_FLAG:\n    return None").body[0])
    tree.body.insert(1, ast.parse("ARMED_FLAG = False").body[0])
    between = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "between"), None)
    arm = ast.parse("global ARMED_FLAG\nARMED_FLAG = True").body
    if between is None:
        tree.body.append(ast.parse("def between(call):\n    pass").body[0])
        between = tree.body[-1]
    between.body[0:0] = arm
    inputs = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "inputs"), None)
    for node in ast.walk(inputs) if inputs else ():  # inputs that vary by call do so one call later
        if isinstance(node, ast.Name) and node.id == "call":
            node.id = "max(call - 1, 0)"
    calls = next((n for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
                  and n.targets[0].id == "CALLS"), None)
    count = ast.literal_eval(calls.value) if calls else 2
    tree.body = [n for n in tree.body if n is not calls] + [ast.parse(f"CALLS = {count + 1}").body[0]]
    return ast.unparse(tree) + "\n"


VARIANTS = {
    "renamed": renamed,
    "fragments": with_fragments,
    "shapes": other_shapes,
    "later-call": later_call,
    "all": lambda s: renamed(other_shapes(with_fragments(s))),
}


def _spec(meta: dict) -> CompileSpec:
    return CompileSpec(meta.get("compiler", "torch"), meta.get("backend", "eager"), meta.get("device", "cpu"),
                       bool(meta.get("fullgraph", False)), meta.get("dynamic"))


def variant_figure(known: KnownIssues) -> dict:
    """Figure 1: every known bug's variants and the bucket each lands in."""
    rows, by_key = [], {}
    for item in known.issues:
        corpus, key = next(iter(repros_of(item)), None), item.get("key")
        if not corpus or not key or key in by_key:  # aliases share a repro and a key
            continue
        by_key[key] = corpus
        saved = read_program(known.entry_path(corpus))
        spec = _spec(saved.meta)
        compiler = make_compiler(spec)
        oracle = key.split("/", 1)[0]
        for name, make in VARIANTS.items():
            start = time.monotonic()
            try:
                case = replace(saved.case, source=make(saved.case.source), choices=())
                if case.eager_source is not None:
                    case = replace(case, eager_source=make(case.eager_source))
                found = [f for f in judge(case, compiler, spec).findings if f.oracle == oracle]
                got = explain(case, found[0], spec, compiler).key if found else "(no divergence)"
            except Exception as e:  # a variant the transformation broke: reported, counted as a miss
                got = f"(error: {type(e).__name__}: {e})"
            rows.append({"bug": corpus, "variant": name, "expected": key, "got": got, "ok": got == key,
                         "diverges": not got.startswith("("),
                         "seconds": round(time.monotonic() - start, 2)})
            print(f"{'ok  ' if got == key else 'MISS'} {Path(corpus).stem:45} {name:11} {got}", flush=True)
    hit = sum(r["ok"] for r in rows)
    diverging = sum(r["diverges"] for r in rows)
    shared = len(by_key) != len(set(by_key.values()))
    return {"bugs": len(by_key), "variants": len(rows), "diverging": diverging, "in_their_bucket": hit,
            "fraction": round(hit / max(len(rows), 1), 3), "fraction_of_diverging": round(hit / max(diverging, 1), 3),
            "bugs_sharing_a_bucket": shared, "rows": rows}


def campaign_figure(cases: int, seed: int, budget: float, minimize_budget: float) -> dict:
    """Figure 2: a campaign's buckets, labelled by the known issue they match, or as new."""
    from dynfuzz.campaign.campaign import Campaign, CampaignConfig

    known = KnownIssues.load()
    out = Path(tempfile.mkdtemp(prefix="bench-triage-"))
    summary = Campaign(CampaignConfig(budget=budget, out=out, seed=seed, workers=1, max_cases=cases, known=known,
                                      progress=False, minimize_budget=minimize_budget)).run()
    labels: dict[str, str] = {}
    for key in summary["known_signatures"]:
        entry = known.match(key, torch_version()) or known.entries.get(key) or {}
        labels[key] = f"known: {entry.get('corpus', key)}"
    for b in summary["buckets"]:
        labels[b["key"]] = f"new ({b['status']}): {b['key']}"
    causes = set(labels.values())
    ratio = len(labels) / max(len(causes), 1)
    print(f"\ncampaign: {summary['cases']} cases, {summary['findings']} findings, {summary['unique']} signatures, "
          f"{len(labels)} buckets (known ones included), {len(causes)} causes -> {ratio:.2f} buckets per cause")
    for key, label in sorted(labels.items(), key=lambda kv: kv[1]):
        print(f"  {label:70.70}  <- {key}")
    return {"cases": summary["cases"], "findings": summary["findings"], "signatures": summary["unique"],
            "buckets": len(labels), "causes": len(causes), "buckets_per_cause": round(ratio, 3),
            "labels": labels, "out": str(out)}


def status_figure(out: Path) -> dict:
    """Bug buckets by status, the queue left and the triage job times of a campaign folder."""
    import statistics

    s = json.loads((out / "summary.json").read_text())
    bugs = [b for b in s["buckets"] if b.get("tier") in ("miscompile", "crash")]
    statuses: dict[str, int] = {}
    for b in bugs:
        statuses[b["status"]] = statuses.get(b["status"], 0) + 1
    phases: dict[str, list[float]] = {}
    for b in s["buckets"]:
        for name, secs in (b.get("phases") or {}).get("seconds_by_phase", {}).items():
            phases.setdefault(name, []).append(secs)
    ok = statuses.get("ok", 0) + statuses.get("unexplained", 0) + statuses.get("unverified", 0)
    return {"cases": s["cases"], "buckets": len(s["buckets"]), "bug_buckets": len(bugs), "by_status": statuses,
            "ok_fraction": round(statuses.get("ok", 0) / max(len(bugs), 1), 3),
            "triaged_fraction": round(ok / max(len(bugs), 1), 3), "queued": s.get("queued"),
            "refusals": s.get("refusals"), "triage": s.get("triage"),
            "phase_seconds_median": {k: round(statistics.median(v), 2) for k, v in phases.items()}}


def keeps_up_figure(minutes: float, workers: int, seed: int, then_triage: float, known: str | None,
                    extra: list[str]) -> dict:
    """Figure 3: a real campaign through the CLI, then `dynfuzz triage` on its folder."""
    import subprocess

    out = Path(tempfile.mkdtemp(prefix="bench-keeps-up-")) / "out"
    cmd = [sys.executable, "-m", "dynfuzz", "fuzz", "--budget", f"{minutes}m", "--workers", str(workers),
           "--seed", str(seed), "--no-db", "--no-progress", "--out", str(out), *extra]
    if known:
        cmd += ["--known", known]
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"the campaign failed (exit {done.returncode}): {done.stderr[-2000:]}")
    result = {"command": " ".join(cmd[2:]), "wall_seconds": round(time.monotonic() - start, 1),
              "at_end": status_figure(out), "out": str(out)}
    print(f"\nfigure 3, at the campaign's end: {json.dumps(result['at_end'])}", flush=True)
    if then_triage:
        start = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "dynfuzz", "triage", str(out), "--budget", f"{then_triage}m",
                               "--workers", str(workers)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"dynfuzz triage failed (exit {done.returncode}): {done.stderr[-2000:]}")
        result["after_triage"] = {**status_figure(out), "wall_seconds": round(time.monotonic() - start, 1)}
        print(f"figure 3, after dynfuzz triage --budget {then_triage}m: {json.dumps(result['after_triage'])}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", action="store_true", help="figure 1: variants of every known bug")
    parser.add_argument("--campaign", type=int, default=0, metavar="CASES", help="figure 2: a campaign this long")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=3600.0, help="campaign wall-clock budget (s)")
    parser.add_argument("--minimize-budget", type=float, default=60.0)
    parser.add_argument("--keeps-up", type=float, default=0.0, metavar="MINUTES",
                        help="figure 3: a campaign of this many minutes through the CLI")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--then-triage", type=float, default=0.0, metavar="MINUTES",
                        help="figure 3: then `dynfuzz triage` on its folder for this many minutes")
    parser.add_argument("--known", default=None, help="figure 3: the known-issues file (default the corpus's)")
    parser.add_argument("--fuzz-arg", action="append", default=[], help="figure 3: one more `dynfuzz fuzz` flag")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    quiet_torch_logs()
    result: dict = {"torch": torch_version()}
    if args.variants:
        fig = variant_figure(KnownIssues.load())
        result["variants"] = fig
        print(f"\nfigure 1: {fig['in_their_bucket']}/{fig['variants']} variants of {fig['bugs']} known bugs landed "
              f"in their bug's bucket ({fig['fraction']:.0%}); {fig['diverging']} variants still diverge, "
              f"{fig['fraction_of_diverging']:.0%} of those in their bucket; bugs sharing a bucket: "
              f"{fig['bugs_sharing_a_bucket']}")
    if args.campaign:
        result["campaign"] = campaign_figure(args.campaign, args.seed, args.budget, args.minimize_budget)
    if args.keeps_up:
        result["keeps_up"] = keeps_up_figure(args.keeps_up, args.workers, args.seed, args.then_triage, args.known,
                                             args.fuzz_arg)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
