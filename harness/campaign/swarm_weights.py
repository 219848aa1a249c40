"""A swarm campaign (`fuzz --swarm`): its cases drawn from a subset of the grammar per window of seeds (Note
[Swarm windows] in generators/swarm.py), and fragments whose constructs a minimized bucket already explains
drawn less for the rest of the campaign.

Note [Explained constructs are down-weighted]
A torch with many faults is found to have the same few again and again: the constructs that reach them are
drawn as often after the fault is explained as before. Once a bucket is `ok` (minimized, explained, its repro
reproduces), its explanation names the constructs the divergence needs (`responsible`, by ablation). The
fragments that drew one of its programs (the swarm picker's record of that seed) and whose own programs show
one of those constructs' fault families (`constructs.family`, over a few programs drawn from the fragment alone)
are down-weighted: from the next window on, their picks count DOWN times their weight. Never switched off: a
construct reaches other faults in other combinations, and the down-weight only shifts the mix toward what has
not been explained yet. The down-weights a window runs with are frozen when its first case is drawn and logged
in `OUT/swarm/windows.jsonl`, so each case stays a pure function of its seed and that line (and re-draws from its
choices alone); summary.json's `swarm` block holds the current ones, which `--resume` takes over.
"""
from __future__ import annotations

import json
from collections import Counter, OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any

from dynfuzz.generators.case import Case, case_from_program
from dynfuzz.generators.choose import choose
from dynfuzz.generators.compose import programs
from dynfuzz.generators.families import load_families
from dynfuzz.generators.fragments import REGISTRY, Fragment
from dynfuzz.generators.hypothesis_compat import data_from_seed
from dynfuzz.generators.render import render
from dynfuzz.generators.swarm import SwarmConfig, option_name
from dynfuzz.triage.constructs import classify, family

DOWN = 0.25  # weight factor of a fragment whose constructs an `ok` bucket explains
PROFILE_SAMPLES = 4  # programs drawn from a fragment alone to learn which construct families it writes
USED_KEPT = 20_000  # seeds whose picked fragments are remembered (for learning from the buckets they land in)


def fragment_families(frag: Fragment, samples: int = PROFILE_SAMPLES) -> frozenset[str]:
    """The fault families (`constructs.family`) of the constructs that programs drawn from `frag` alone show in
    at least half of `samples` draws (seeds 0..samples-1: the same answer every time)."""
    def only(draw, options):
        return frag if frag in options else choose(draw, options)

    seen: Counter[str] = Counter()
    for seed in range(samples):
        try:
            program = data_from_seed(seed).draw(programs((frag.family,), max_fragments=1, picker=only))
            seen.update({family(c.name) for c in classify(render(program), program.entry)})
        except Exception:  # noqa: BLE001  a draw the fragment rejects alone teaches nothing
            continue
    return frozenset(name for name, n in seen.items() if 2 * n >= samples)


class Swarm:
    """Draws a swarm campaign's cases and learns which fragments are explained (see the Notes)."""

    def __init__(self, families: tuple[str, ...], out: Path, base: SwarmConfig | None = None,
                 saved: dict[str, Any] | None = None) -> None:
        load_families()
        self.families, self.base = families, base or SwarmConfig()
        saved = saved or {}
        self.down: dict[str, float] = {k: float(v) for k, v in (saved.get("down") or {}).items()}
        self.explained_by: dict[str, str] = dict(saved.get("explained_by") or {})
        self.learned: set[str] = set(saved.get("learned") or ())
        self.used: OrderedDict[int, tuple[str, ...]] = OrderedDict()  # seed -> fragments its picker chose
        self.profiles: dict[str, frozenset[str]] = {}
        self.windows: dict[int, SwarmConfig] = {}
        self.log = out / "swarm" / "windows.jsonl"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        if not saved:
            self.log.write_text("")

    def config_for(self, seed: int) -> SwarmConfig:
        """The settings of `seed`'s window: the down-weights as they are when its first case is drawn."""
        window = self.base.window(seed)
        config = self.windows.get(window)
        if config is None:
            config = replace(self.base, down=dict(self.down))
            self.windows = {window: config}  # windows are drawn in stream order: only the current one is kept
            with self.log.open("a") as fh:
                fh.write(json.dumps({"window": window, "first_seed": seed, **config.as_dict()}) + "\n")
        return config

    def next_case(self, seed: int) -> Case:
        """The case of `seed`: what `draw_case(seed, families, self.config_for(seed))` draws, and the fragments
        its picker chose are remembered."""
        config = self.config_for(seed)
        picker = config.picker(seed)
        data = data_from_seed(seed)
        program = data.draw(programs(self.families, picker=picker))
        case = case_from_program(program, seed=seed, families=self.families, choices=tuple(data.choices))
        self.used[seed] = tuple(dict.fromkeys(picker.used))
        while len(self.used) > USED_KEPT:
            self.used.popitem(last=False)
        return case

    def learn(self, buckets: Any) -> list[str]:
        """Down-weight the fragments that `ok` buckets explain (Note [Explained constructs are down-weighted]);
        returns the fragment names newly down-weighted."""
        fragments = {option_name(f): f for frags in REGISTRY.values() for f in frags}
        newly = []
        for bucket in list(buckets):
            if bucket.status != "ok" or bucket.key in self.learned:
                continue
            self.learned.add(bucket.key)
            explanation = bucket.explained or bucket.explanation
            names = explanation.responsible or (explanation.construct,)
            named = {family(n) for n in names if n and n != "tensor ops"}
            candidates = {name for u in bucket.members for name in self.used.get(u.seed, ())}
            for name in sorted(candidates):
                frag = fragments.get(name)
                if frag is None or name in self.down:
                    continue
                if name not in self.profiles:
                    self.profiles[name] = fragment_families(frag)
                if named & self.profiles[name]:
                    self.down[name] = DOWN
                    self.explained_by[name] = bucket.key
                    newly.append(name)
        return newly

    def summary(self) -> dict[str, Any]:
        """summary.json's `swarm` block (read back by `--resume`)."""
        return {"period": self.base.period, "keep": self.base.keep, "down_factor": DOWN,
                "down": dict(sorted(self.down.items())), "explained_by": dict(sorted(self.explained_by.items())),
                "learned": sorted(self.learned), "windows_log": str(self.log)}

