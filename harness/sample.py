"""`dynfuzz sample`: look at generated programs, or measure their coverage and validity."""
from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from dataclasses import replace

from dynfuzz.generators import case_seed, draw_case
from dynfuzz.run.execute import observe


def intended(case, obs) -> bool:
    """Eager ran cleanly, or raised exactly the error an illegal-on-purpose program was built to raise."""
    errors = [c.error for c in obs.calls if c.error is not None]
    if obs.setup_error is not None:
        return False
    if not errors:
        if case.intended_error is not None and case.eager_source:
            # The plain-Python reference ran cleanly; the program itself (eager torch.cond runs Dynamo) must raise.
            import torch

            torch._dynamo.reset()  # eager torch.cond's compiled branches of earlier programs
            return intended(replace(case, eager_source=None), observe(case.source, case.entry, "cpu", None, "eager"))
        return case.intended_error is None
    return case.intended_error is not None and all(e.type == case.intended_error for e in errors)


def sample(n: int, seed: int, families: tuple[str, ...], stats: bool, as_json: bool) -> int:
    if not stats:
        cases = [draw_case(case_seed(seed, i), families) for i in range(n)]
        if as_json:
            print(json.dumps([{"seed": c.seed, "tags": sorted(c.tags), "source": c.source} for c in cases], indent=1))
        else:
            for c in cases:
                print(f"# ---- seed {c.seed}  tags: {', '.join(sorted(c.tags))}")
                print(c.source)
        return 0
    tags: Counter[str] = Counter()
    gen_ms, valid, invalid_examples = [], 0, []
    for i in range(n):
        t = time.perf_counter()
        case = draw_case(case_seed(seed, i), families)
        gen_ms.append((time.perf_counter() - t) * 1000)
        tags.update(case.tags)
        obs = observe(case.eager_source or case.source, case.entry, "cpu", None, "eager")
        if intended(case, obs):
            valid += 1
        elif len(invalid_examples) < 3:
            err = obs.setup_error or next((c.error for c in obs.calls if c.error), None)
            text = f"{err.type}: {err.message}" if err else f"did not raise {case.intended_error}"
            invalid_examples.append({"seed": case.seed, "error": text})
    result = {
        "n": n,
        "valid_fraction": round(valid / n, 4) if n else 1.0,
        "tags": {t: round(c / n, 4) for t, c in sorted(tags.items())} if n else {},
        "median_generation_ms": round(statistics.median(gen_ms), 3) if gen_ms else 0.0,
        "families": list(families),
        "invalid_examples": invalid_examples,
    }
    if as_json:
        print(json.dumps(result))
    else:
        print(f"{n} cases, valid {result['valid_fraction']:.2%}, median generation {result['median_generation_ms']} ms")
        for t, frac in result["tags"].items():
            print(f"  {t:32s} {frac:6.1%}")
        for ex in invalid_examples:
            print(f"  invalid: seed {ex['seed']}: {ex['error']}")
    return 0
