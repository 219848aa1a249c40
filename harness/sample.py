"""`dynfuzz sample`: look at generated programs, or measure their coverage and validity."""
from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from dataclasses import replace

from dynfuzz.generators import case_seed, draw_case
from dynfuzz.generators.swarm import SwarmConfig
from dynfuzz.run.execute import observe
from hypothesis.errors import StopTest


def intended(case, obs) -> bool:
    """Eager ran cleanly, or raised exactly the error an illegal-on-purpose program was built to raise."""
    errors = [c.error for c in obs.calls if c.error is not None]
    if obs.setup_error is not None:
        return False
    if not errors:
        if case.intended_error is not None and case.eager_source:
            # The plain-Python reference ran cleanly; the program itself (eager torch.cond runs Dynamo) must raise.
            from dynfuzz.run.torch_compat import reset_dynamo

            reset_dynamo()  # eager torch.cond's compiled branches of earlier programs
            return intended(replace(case, eager_source=None), observe(case.source, case.entry, "cpu", None, "eager"))
        return case.intended_error is None
    return case.intended_error is not None and all(e.type == case.intended_error for e in errors)


def _draw(seed: int, families: tuple[str, ...], swarm: SwarmConfig | None = None):
    return draw_case(seed, families) if swarm is None else draw_case(seed, families, swarm)


def draw_or_report(seed: int, families: tuple[str, ...], swarm: SwarmConfig | None = None):
    """`draw_case(seed)`, or None after printing the generator's traceback (a generator bug, reproduced)."""
    import sys
    import traceback

    try:
        return _draw(seed, families, swarm)
    except (Exception, StopTest) as e:
        print(f"# seed {seed}: drawing the program raised {type(e).__name__} (a dynfuzz generator bug)",
              file=sys.stderr)
        traceback.print_exception(e, file=sys.stderr)
        return None


def sample(n: int, seed: int, families: tuple[str, ...], stats: bool, as_json: bool,
           case_seeds: tuple[int, ...] = (), swarm: SwarmConfig | None = None) -> int:
    """Print `n` programs of the stream of `seed` (or exactly the cases `case_seeds`), or with `stats` their
    coverage and validity; with `swarm`, as a `--swarm` campaign draws them before it down-weights anything.
    Exit 3 when a `--case-seed` does not draw (its traceback is printed)."""
    if case_seeds:
        cases = [draw_or_report(s, families, swarm) for s in case_seeds]
        if any(c is None for c in cases):
            return 3
        _print_cases(cases, as_json)
        return 0
    if not stats:
        cases = [_draw(case_seed(seed, i), families, swarm) for i in range(n)]
        _print_cases(cases, as_json)
        return 0
    tags: Counter[str] = Counter()
    gen_ms, valid, invalid_examples = [], 0, []
    generator_errors = 0
    for i in range(n):
        t = time.perf_counter()
        try:
            case = _draw(case_seed(seed, i), families, swarm)
        except (Exception, StopTest) as e:  # counted (and shown) as invalid, never the end of the run
            generator_errors += 1
            _example(invalid_examples, case_seed(seed, i), f"generator raised {type(e).__name__}: {e}")
            continue
        gen_ms.append((time.perf_counter() - t) * 1000)
        tags.update(case.tags)
        try:
            obs = observe(case.eager_source or case.source, case.entry, "cpu", None, "eager")
            ok = intended(case, obs)
        except Exception as e:  # InvalidCase (inputs() raised), SnapshotError, ...
            _example(invalid_examples, case.seed, f"{type(e).__name__}: {e}")
            continue
        if ok:
            valid += 1
        else:
            err = obs.setup_error or next((c.error for c in obs.calls if c.error), None)
            text = f"{err.type}: {err.message}" if err else f"did not raise {case.intended_error}"
            _example(invalid_examples, case.seed, text)
    result = {
        "n": n,
        "valid_fraction": round(valid / n, 4) if n else 1.0,
        "tags": {t: round(c / n, 4) for t, c in sorted(tags.items())} if n else {},
        "median_generation_ms": round(statistics.median(gen_ms), 3) if gen_ms else 0.0,
        "generator_errors": generator_errors,
        "families": list(families),
        "swarm": swarm is not None,
        "invalid_examples": invalid_examples,
    }
    if as_json:
        print(json.dumps(result))
    else:
        print(f"{n} cases, valid {result['valid_fraction']:.2%}, median generation {result['median_generation_ms']} ms"
              + (f", {generator_errors} did not draw" if generator_errors else ""))
        for t, frac in result["tags"].items():
            print(f"  {t:32s} {frac:6.1%}")
        for ex in invalid_examples:
            print(f"  invalid: seed {ex['seed']}: {ex['error']}")
    return 0


def _example(examples: list[dict], seed: int | None, text: str) -> None:
    if len(examples) < 3:
        examples.append({"seed": seed, "error": text[:300], "redraw": f"dynfuzz sample --case-seed {seed}"})


def _print_cases(cases, as_json: bool) -> None:
    if as_json:
        print(json.dumps([{"seed": c.seed, "tags": sorted(c.tags), "source": c.source} for c in cases], indent=1))
        return
    for c in cases:
        print(f"# ---- seed {c.seed}  tags: {', '.join(sorted(c.tags))}")
        print(c.source)
