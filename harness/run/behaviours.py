"""Dynamo's behaviours: what it did in a case, as names that compare across cases, campaigns and releases.

A behaviour is `category:name`:

| category | name | from |
|---|---|---|
| `graph-break` | the graph-break type | Dynamo's `graph_break` counter |
| `unsupported` | an Unsupported that was no graph break (fullgraph, speculation) | `unimplemented` counter |
| `recompile` | a recompile reason, normalised | `guard_failures` |
| `guard` | a leaf-guard class in a guard tree | the cache entries' guard managers |
| `accessor` | a guard-accessor class (how a guarded value is reached) | the same trees |
| `hop` | a higher-order op in a graph handed to the backend | the backend wrapper |
| `tracker` | a VariableTracker class built | an observer (run/torch_observers.py) |
| `side-effect` | a kind of mutation replayed after a graph | an observer |

Messages are normalised (`normalise`): the first line only, where torch >= 2.7 puts the registry's
graph-break type; numbers, quoted names, addresses and guarded sources (`L['x']`) replaced, so a message
names the same behaviour in every program and release (torch 2.5.1 has free-text messages and no registry:
its graph breaks are normalised the same way and are not matched against a registry).

The universe a behaviour comes from (`universe()`) is what the running torch defines: the registry's
graph-break types (reached as a graph break or an Unsupported), the tracker subclasses, the leaf-guard and
accessor classes, the higher-order ops; minus `OUT_OF_REACH`, what a single-process CPU fuzzer of the
front end cannot reach by design. Recompile reasons and side-effect kinds are open categories: counted
when reached, never listed as missing.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

CLOSED = ("graph-break", "tracker", "guard", "accessor", "hop")  # categories with a universe
CATEGORIES = ("graph-break", "unsupported", "recompile", "guard", "accessor", "hop", "tracker", "side-effect")

# Out of reach by design, per universe category: (pattern, reason). A pattern is a regular expression
# searched in the name: case-insensitive in graph-break types (prose), case-sensitive in class and op names.
# What a campaign reached is never listed here (NumPy, TorchScript and opaque objects are: the stdlib family
# draws them).
OUT_OF_REACH: dict[str, tuple[tuple[str, str], ...]] = {
    "graph-break": (
        (r"distributed|fsdp|dtensor|process ?group|collective|device ?mesh|placement|rpc", "distributed"),
        (r"stream|\bevent\b|cuda|accelerator", "CUDA / accelerator streams and events"),
        (r"triton|inline_asm", "Triton kernels"),
        (r"nested ?tensor", "nested tensors"),
        (r"compiled autograd|compiled_autograd", "compiled autograd of hooks and module hooks"),
        (r"precompile|aot_compile|package", "precompile and packaging"),
        (r"python 3\.1[2-9]|3\.1[2-9]\+|sys\.monitoring", "other Python versions' bytecode"),
    ),
    "tracker": (
        (r"^(Base\w*|\w*Base|VariableTracker|ContextWrappingVariable|UserDefinedVariable|IteratorVariable|"
         r"CommonListMethodsVariable|DictViewVariable|DictViewIterator|GenericDeviceVariable|"
         r"TorchHigherOrderOperatorVariable)$", "abstract base classes (only their subclasses are built)"),
        (r"ProcessGroup|DeviceMesh|Placement|WorldMetaClass|DTensor|FSDP|Distributed|Collective|LocalMap",
         "distributed"),
        (r"Stream|Event", "CUDA / accelerator streams and events"),
        (r"Triton|TMADescriptor|InlineAsm", "Triton kernels"),
        (r"SDPAParams|CUDA|Cuda|XPU", "CUDA- or XPU-only"),
        (r"CompiledAutograd|Backward(Hook|State)Variable", "compiled autograd (module backward hooks need it)"),
        (r"Executorch|RunWithRNGState|FlexAttentionBackward|WhileLoopStackOutput|AutoFunctionalize",
         "higher-order ops made after Dynamo or by other runtimes"),
    ),
    "guard": (
        (r"^RelationalGuard$", "an abstract base class"),
    ),
    "accessor": (),
    "hop": (
        (r"triton|inline_asm|aoti|executorch|inductor_compiled|run_const_graph|foreach_map|flex_gemm|"
         r"rng_state|dtensor|local_map|torchbind|invoke_quant", "backend, export-runtime and distributed ops"),
        (r"auto_functionalized|with_effects|flex_attention_backward|while_loop_stack_output",
         "made by AOTAutograd after Dynamo (not in Dynamo's graphs)"),
    ),
}

_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_ADDRESS = re.compile(r"<[^<>\n]* at 0x[0-9a-f]+>|0x[0-9a-f]+", re.I)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?")
_BRACKETS = re.compile(r"\[[^\[\]]*\]|\{[^{}]*\}")
_COMPILE_ID = re.compile(r"^\s*\[?[\d/!]+\]?:\s*")
_PATH = re.compile(r"(?:/[\w.+-]+)+")  # a file path: kept from torch/ on, else its name
_SOURCE = re.compile(r"\b[LG]\[(?:'[^'\n]*'|\"[^\"\n]*\")\]")  # a frame local or global as a guard names it
_EXPRESSION = re.compile(r"==|!=|\b___\w+\(|^not |\bis (?:not )?None\b|\b(?:len|isinstance|hasattr|id|type)\(")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
# Words a guard expression keeps: Dynamo's guard helpers (`___check_obj_id`), dunders (`__closure__`), and
# these; every other name is the program's own (a local, a global, an attribute) and becomes `S`.
_GUARD_WORDS = {"len", "not", "and", "or", "is", "in", "None", "True", "False", "type", "id", "isinstance",
                "hasattr", "cell_contents", "dict", "tuple", "list", "class"}
MAX_NAME = 160


def normalise(message: str, types: frozenset[str] | set[str] | None = None) -> str:
    """The behaviour name of a Dynamo message: its registry type when its first line is one, else the first
    line with program-specific parts replaced."""
    text = message.strip()
    line = text.splitlines()[0].strip() if text else ""
    if types and line in types:
        return line
    line = _COMPILE_ID.sub("", line)
    if len(line) > 1 and line[0] == line[-1] and line[0] in "'\"":  # torch 2.5.1 quotes some whole messages
        line = line[1:-1]
    return _generic(line)


def _generic(line: str) -> str:
    line = _PATH.sub(_short_path, line)
    line = _ADDRESS.sub("<…>", line)
    line = _QUOTED.sub("'…'", line)
    for _ in range(3):  # innermost first: argument lists of free-text messages (torch 2.5.1)
        line = _BRACKETS.sub(lambda m: m.group(0)[0] + "…" + m.group(0)[-1], line)
    line = _NUMBER.sub("#", line)
    return re.sub(r"\s+", " ", line).strip()[:MAX_NAME]


def _short_path(m: re.Match) -> str:
    path = m.group(0)
    return "torch/" + path.rsplit("/torch/", 1)[1] if "/torch/" in path else "…/" + path.rsplit("/", 1)[1]


def normalise_recompile(reason: str) -> str:
    """A recompile reason as the kind of guard that failed: `len(S) == #`, `S.__closure__[…].cell_contents
    == #`, `tensor '…' size mismatch at index #. expected #, actual #`. The code line and hint Dynamo
    appends after `#`, and the names of the program's variables, are dropped."""
    line = _COMPILE_ID.sub("", reason.strip().splitlines()[0] if reason.strip() else "")
    line = _SOURCE.sub("S", line.split(" #", 1)[0].split("  ", 1)[0])
    if not _EXPRESSION.search(line):  # prose (`tensor 'x' size mismatch ...`): keep its words
        return _generic(line)
    line = _QUOTED.sub("'…'", line)
    line = _NAME.sub(lambda m: m.group(0) if _kept(m.group(0)) else "S", _generic(line))
    return re.sub(r"\bS(?:\.S\b|\[…\])+", "S", line)


def _kept(word: str) -> bool:
    return word in _GUARD_WORDS or word.startswith("___") or (word.startswith("__") and word.endswith("__"))


_types: frozenset[str] | None = None


def _registry() -> frozenset[str]:
    global _types
    if _types is None:
        from dynfuzz.run.torch_observers import registry_types

        _types = frozenset(registry_types() or ())
    return _types


def collect() -> tuple[str, ...]:
    """The behaviours of the case Dynamo just ran (since the last reset), sorted."""
    from dynfuzz.run import torch_observers as obs

    if not obs.recording():
        return ()
    types = _registry()
    found: set[str] = set()

    def counters() -> None:
        for category, messages in obs.counter_messages().items():
            found.update(f"{category}:{normalise(m, types)}" for m in messages)
        found.update(f"recompile:{normalise_recompile(r)}" for r in obs.recompile_reasons())

    def guards() -> None:
        leaves, accessors = obs.guard_kinds()
        found.update(f"guard:{n}" for n in leaves)
        found.update(f"accessor:{n}" for n in accessors)

    for read in (counters, guards):
        try:
            read()
        except Exception as e:  # a reader that breaks costs its behaviours, never the case
            from dynfuzz.run.torch_compat import note

            note(f"recording behaviours ({read.__name__}: {type(e).__name__})", "the internals it reads")
    for category, names in obs.observed().items():
        found.update(f"{category}:{n}" for n in names)
    return tuple(sorted(found))


def out_of_reach(category: str, name: str) -> str | None:
    """Why a universe member is out of reach by design, or None."""
    flags = re.I if category == "graph-break" else 0
    for pattern, reason in OUT_OF_REACH.get(category, ()):
        if re.search(pattern, name, flags):
            return reason
    return None


def full_universe() -> dict[str, set[str]]:
    """Every name each closed category of the running torch defines (out-of-reach ones included)."""
    from dynfuzz.run import torch_observers as obs

    leaves, accessors = obs.guard_classes()
    return {"graph-break": set(obs.registry_types() or ()), "tracker": obs.tracker_classes(), "guard": leaves,
            "accessor": accessors, "hop": obs.hop_names()}


def universe(full: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """The reachable universe: `full_universe()` minus `OUT_OF_REACH`."""
    full = full_universe() if full is None else full
    return {c: {n for n in names if out_of_reach(c, n) is None} for c, names in full.items()}


def universe_key(behaviour: str) -> tuple[str, str]:
    """The (category, name) of the universe a behaviour counts for: an Unsupported of a registry type
    reaches that graph-break type."""
    category, _, name = behaviour.partition(":")
    return ("graph-break" if category == "unsupported" else category), name


def by_category(behaviours: Iterable[str]) -> dict[str, int]:
    out = {c: 0 for c in CATEGORIES}
    for b in behaviours:
        category = b.partition(":")[0]
        out[category] = out.get(category, 0) + 1
    return out
