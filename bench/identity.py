"""Does a bucket key name one fault? Ground truth from Dynamo mutants, each patching one torch function.

Every folder under bench/identity_programs/ is named for a mutant (`dynfuzz.mutants`) and holds programs of
different surfaces that diverge with that mutant alone and agree on unmodified torch. For each program a
fresh process with the mutant applied (DYNFUZZ_MUTANTS, as `trials.fails_under` runs a repro) judges it and
runs campaign triage's explanation (with `--minimize`, all of `dynfuzz.triage.explain.identify`: minimize,
explain; the programs are hand-minimal, and explanation decides the key), and with
`--localize N` localization on the first N programs of each mutant. Printed:

- ground truth: programs that diverge with their mutant, and that agree without it (all must);
- purity: mutants whose programs all got one key;
- separation: keys shared by mutants that patch different functions (`TARGETS`), which must be none;
- localization: Top-1 / Top-5 of the patched function among the suspects, by function and by file.

    python bench/identity.py [--mutants a,b] [--localize 1] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "identity_programs"
REAL = HERE / "identity_real"  # --real: surface variants of real torch faults, one folder a fault (no mutant)
PER_PROGRAM_BUDGET = 90.0  # triage's seconds backstop per program (a campaign's --minimize-budget is 60)

# The torch function each mutant patches (as localization names functions: `torch/<file>.py:<qualname>`).
TARGETS = {
    "global-int-store-dropped": "torch/_dynamo/side_effects.py:SideEffects.store_global",
    "attr-replay-reversed": "torch/_dynamo/side_effects.py:SideEffects.codegen_update_mutated",
    "subscript-write-unmarked": "torch/_dynamo/variables/lists.py:ListVariable.call_method",
    "inplace-arg-rebinds": "torch/_dynamo/variables/builtin.py:BuiltinVariable.call_function",
    "cell-by-contents": "torch/_dynamo/side_effects.py:SideEffects.track_cell_existing",
    "cell-by-name": "torch/_dynamo/variables/functions.py:UserFunctionVariable.bind_args",
    "sourceless-cell-snapshot": "torch/_dynamo/variables/functions.py:UserFunctionVariable.bind_args",
    "freevar-by-local-name": "torch/_dynamo/variables/functions.py:NestedUserFunctionVariable.bind_args",
    "bool-guard-dropped": "torch/_dynamo/guards.py:GuardBuilder.BOOL_MATCH",
    "int-equals-guard-dropped": "torch/_dynamo/guards.py:GuardBuilder.EQUALS_MATCH",
    "dict-keys-guard-dropped": "torch/_dynamo/guards.py:GuardBuilder.DICT_KEYS_MATCH",
    "layout-no-stride-guard": "torch/_dynamo/guards.py:GuardBuilder.TENSOR_MATCH",
    "layout-inner-stride-only": "torch/_dynamo/guards.py:GuardBuilder.TENSOR_MATCH",
    "deque-appendleft-appends": "torch/_dynamo/variables/lists.py:DequeVariable.call_method",
    "odict-popitem-ignores-last": "torch/_dynamo/variables/user_defined.py:OrderedDictVariable.call_method",
    "super-mutator-dropped-under-fullgraph": "torch/_dynamo/variables/misc.py:SuperVariable.call_method",
    "cond-closure-by-metadata": "torch/_dynamo/variables/higher_order_ops.py:_merge_graph_inputs",
    "wrap-body-dropped": "torch/_dynamo/variables/higher_order_ops.py:WrapHigherOrderVariable._call_function",
    "set-names-only": "torch/_dynamo/variables/tensor.py:TensorVariable.call_method",
    "out-resize-names-only": "torch/_dynamo/variables/torch.py:TorchInGraphFunctionVariable.call_function",
    "partial-keyword-precedence": "torch/_dynamo/variables/functions.py:FunctoolsPartialVariable.call_function",
    "inference-mode-keeps-grad": "torch/_dynamo/variables/ctx_manager.py:InferenceModeVariable.enter",
    "super-mro-of-typevar": "torch/_dynamo/variables/misc.py:SuperVariable._resolved_getattr_and_source",
    "tuplegetter-reads-first-field": "torch/_dynamo/variables/functions.py:TupleGetterVariable.tp_descr_get_impl",
}


def programs(mutant: str, root: Path = PROGRAMS) -> list[Path]:
    return sorted((root / mutant).glob("*.py"))


# ---- the worker: one process per mutant (or none), the mutant applied through the environment ----
def work(paths: list[str], localize_first: int, minimize: bool) -> None:
    """Judge each program; for one that diverges, print the key campaign triage files it under (and, for the
    first `localize_first`, localization's suspects), one JSON line per program."""
    from dynfuzz.run.compilers import CompileSpec, make_compiler
    from dynfuzz.run.judge import judge
    from dynfuzz.triage.explain import cheap_explanation
    from dynfuzz.triage.known import choose_finding
    from dynfuzz.triage.localize import localize, wants_localization
    from dynfuzz.triage.repro import read_program

    identify = _triage_code()

    for n, path in enumerate(paths):
        start = time.monotonic()
        saved = read_program(Path(path))
        meta = saved.meta
        spec = CompileSpec(meta.get("compiler", "torch"), meta.get("backend", "eager"), meta.get("device", "cpu"),
                           bool(meta.get("fullgraph", False)), meta.get("dynamic"))
        row: dict = {"program": path}
        try:
            findings = judge(saved.case, make_compiler(spec), spec).findings
            row["findings"] = [[f.oracle, f.kind] for f in findings]
            if findings and (os.environ.get("DYNFUZZ_MUTANTS") or os.environ.get("DYNFUZZ_BENCH_REAL")):
                finding = choose_finding(findings, {})
                triaged = identify(saved.case, finding, spec, PER_PROGRAM_BUDGET) if minimize else \
                    _explained(saved.case, finding, spec)
                e = triaged.explanation  # filed as a campaign files it: an unexplained one under its cheap key
                key = cheap_explanation(saved.case, finding).key if e.unexplained else e.key
                row.update(key=key, stable=triaged.stable, explained=e.key)
                if n < localize_first and wants_localization(triaged.explanation):
                    loc = localize(triaged.case, triaged.finding, spec)
                    row["suspects"] = [s["function"] for s in loc.suspects]
                    row["locus"] = loc.locus
        except Exception as e:  # noqa: BLE001 - a program dynfuzz cannot judge is reported, not fatal
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        row["seconds"] = round(time.monotonic() - start, 1)
        print(json.dumps(row), flush=True)


def _explained(case, finding, spec):
    """Triage without minimization: the programs are hand-minimal, and explanation decides the key."""
    from types import SimpleNamespace

    from dynfuzz.triage.explain import explain

    return SimpleNamespace(case=case, finding=finding, explanation=explain(case, finding, spec), stable=True)


def _triage_code():
    """Campaign triage's code: `explain.identify`; on a dynfuzz from before it existed (the "before" column of
    the figures: PYTHONPATH naming an older checkout), what `triage.queue.triage_one` ran then."""
    try:
        from dynfuzz.triage.explain import identify
        return identify
    except ImportError:
        import dataclasses
        from types import SimpleNamespace

        from dynfuzz.run.compilers import make_compiler
        from dynfuzz.triage.explain import explain
        from dynfuzz.triage.minimize import minimize

        def identify(case, finding, spec, budget):
            m = minimize(case, spec, budget, finding.signature, shrink_examples=0)
            e = explain(m.case, dataclasses.replace(m.finding, layer=finding.layer), spec, make_compiler(spec))
            return SimpleNamespace(case=m.case, finding=m.finding, explanation=e, stable=not m.timed_out)
        return identify


def run_worker(mutant: str | None, paths: list[Path], localize_first: int, minimize: bool = False,
               real: bool = False) -> list[dict]:
    env = {k: v for k, v in os.environ.items() if k not in ("DYNFUZZ_MUTANTS", "DYNFUZZ_BENCH_REAL")}
    if mutant:
        env["DYNFUZZ_MUTANTS"] = mutant
    if real:
        env["DYNFUZZ_BENCH_REAL"] = "1"
    done = subprocess.run([sys.executable, __file__, "--worker", str(localize_first), str(int(minimize)),
                           *map(str, paths)],
                          env=env, capture_output=True, text=True)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0:
        rows.append({"program": str(paths[0].parent), "error": done.stderr[-500:]})
    return rows


# ---- the figures ----
def _file(function: str) -> str:
    return function.split(":", 1)[0]


def figures(by_mutant: dict[str, list[dict]], clean: dict[str, list]) -> dict:
    """Ground truth, purity, separation and localization from the workers' rows."""
    diverging = {m: [r for r in rows if r.get("findings")] for m, rows in by_mutant.items()}
    keys = {m: sorted({r["key"] for r in rows if "key" in r}) for m, rows in diverging.items()}
    pure = [m for m, k in keys.items() if len(k) == 1 and len(diverging[m]) == len(by_mutant[m])]
    owners: dict[str, set[str]] = defaultdict(set)
    for m, ks in keys.items():
        for k in ks:
            owners[k].add(m)
    shared = {k: sorted(ms) for k, ms in owners.items() if len({TARGETS.get(m, m) for m in ms}) > 1}
    loc = [(m, r["suspects"]) for m, rows in by_mutant.items() for r in rows if "suspects" in r]
    top = {"function": [0, 0], "file": [0, 0]}
    for m, suspects in loc:
        target = TARGETS[m]
        files = [_file(s) for s in suspects]
        for level, want, names in (("function", target, suspects), ("file", _file(target), files)):
            top[level][0] += bool(names[:1] == [want])
            top[level][1] += want in names[:5]
    origins = _origins(keys)
    steps = _model_steps(keys)
    return {
        "steps": steps, "step_function": sum(steps.values()),
        "origins": origins,
        "origin_class": sum(o["class"] for o in origins.values()),
        "origin_file": sum(o["file"] for o in origins.values()),
        "programs": sum(len(v) for v in by_mutant.values()),
        "diverge_with_mutant": sum(len(v) for v in diverging.values()),
        "agree_without": sum(1 for rows in clean.values() for r in rows if not r) if clean else None,
        "errors": [r for rows in by_mutant.values() for r in rows if "error" in r],
        "mutants": len(by_mutant), "pure": len(pure), "keys": keys,
        "shared_across_functions": shared, "localized": len(loc),
        "top1_function": top["function"][0], "top5_function": top["function"][1],
        "top1_file": top["file"][0], "top5_file": top["file"][1],
    }


def _origins(keys: dict[str, list[str]]) -> dict[str, dict]:
    """For each mutant keyed by a value's origin (`... from Tracker.method`): whether that tracker class is the
    patched function's class, and whether it is defined in the patched function's file."""
    import re

    import torch._dynamo.variables  # noqa: F401 - every tracker class
    from torch._dynamo.variables.base import VariableTracker

    where, stack = {}, [VariableTracker]
    while stack:
        cls = stack.pop()
        where[cls.__name__] = "torch/" + cls.__module__.split("torch.", 1)[-1].replace(".", "/") + ".py"
        stack.extend(cls.__subclasses__())
    out = {}
    for m, ks in keys.items():
        named = [re.search(r" from (\w+)\.", k) for k in ks]
        if named and all(named) and m in TARGETS:
            tracker = named[0].group(1)
            target_file, _, target_function = TARGETS[m].partition(":")
            out[m] = {"origin": tracker, "class": target_function.split(".")[0] == tracker,
                      "file": where.get(tracker) == target_file}
    return out


def _model_steps(keys: dict[str, list[str]]) -> dict[str, bool]:
    """For each mutant keyed by a model step unlike Python's (`... in Tracker.method`, run/model_checks.py):
    whether that tracker method is the function the mutant patches."""
    import re

    out = {}
    for m, ks in keys.items():
        named = [re.search(r" in (\w+\.\w+)(?: under .*)? @", k) for k in ks if k.startswith("miscompile:")]
        if named and len(named) == len(ks) and all(named) and m in TARGETS:
            out[m] = all(n.group(1) == TARGETS[m].partition(":")[2] for n in named)
    return out


def table(fig: dict) -> str:
    def pct(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.0f}%)" if b else "-"

    n = fig["localized"]
    lines = [
        "| figure | value |", "|---|---|",
        f"| programs diverging with their mutant | {pct(fig['diverge_with_mutant'], fig['programs'])} |",
        f"| programs agreeing on unmodified torch | "
        f"{pct(fig['agree_without'], fig['programs']) if fig['agree_without'] is not None else '- (real faults)'} |",
        f"| purity: mutants keyed once | {pct(fig['pure'], fig['mutants'])} |",
        f"| separation: keys shared by mutants of different functions | {len(fig['shared_across_functions'])} |",
        f"| keyed by a value's origin: its tracker class is the patched function's | "
        f"{pct(fig['origin_class'], len(fig['origins']))} |",
        f"| keyed by a value's origin: its tracker's file is the patched function's | "
        f"{pct(fig['origin_file'], len(fig['origins']))} |",
        f"| keyed by a model step unlike Python's: the tracker method named is the patched function | "
        f"{pct(fig['step_function'], len(fig['steps']))} |",
        f"| localization Top-1 / Top-5, function | {pct(fig['top1_function'], n)} / {pct(fig['top5_function'], n)} |",
        f"| localization Top-1 / Top-5, file | {pct(fig['top1_file'], n)} / {pct(fig['top5_file'], n)} |",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", default="", help="comma-separated mutants (default: every folder)")
    parser.add_argument("--localize", type=int, default=0, help="localize the first N programs of each mutant")
    parser.add_argument("--minimize", action="store_true",
                        help="minimize each program first, as campaign triage does (slow: minutes a program)")
    parser.add_argument("--json", type=Path, help="write the rows and figures here")
    parser.add_argument("--real", action="store_true",
                        help="the surface variants of real torch faults (bench/identity_real/<fault>/) on the "
                             "running torch, no mutant: purity and separation by fault")
    args = parser.parse_args(argv)
    root = REAL if args.real else PROGRAMS
    chosen = [m for m in args.mutants.split(",") if m] or sorted(p.name for p in root.iterdir() if p.is_dir())
    unknown = [m for m in chosen if (m not in TARGETS and not args.real) or not programs(m, root)]
    if unknown:
        print(f"identity: no such mutant or fault with programs: {', '.join(unknown)}", file=sys.stderr)
        return 2
    start = time.monotonic()
    every = [p for m in chosen for p in programs(m, root)]
    baseline = {} if args.real else {r["program"]: r.get("findings", ["error"]) for r in run_worker(None, every, 0)}
    clean = {} if args.real else {m: [baseline.get(str(p), ["missing"]) for p in programs(m)] for m in chosen}
    by_mutant = {}
    for m in chosen:
        by_mutant[m] = run_worker(None if args.real else m, programs(m, root), args.localize, args.minimize,
                                  real=args.real)
        keys = sorted({r.get("key", r.get("error", "no divergence")) for r in by_mutant[m]})
        print(f"{m:40s} {len(by_mutant[m])} programs  {' | '.join(keys)}", flush=True)
    fig = figures(by_mutant, clean)
    print()
    print(table(fig))
    for k, ms in fig["shared_across_functions"].items():
        print(f"  shared: {k}: {', '.join(ms)}")
    for e in fig["errors"]:
        print(f"  error: {e['program']}: {e['error']}")
    print(f"\n{time.monotonic() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"figures": fig, "rows": by_mutant, "baseline": baseline}, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        from dynfuzz.mutants import apply_from_env

        apply_from_env()
        work(sys.argv[4:], int(sys.argv[2]), sys.argv[3] == "1")
        sys.exit(0)
    sys.exit(main())
