"""Which graph breaks the torch under test documents: the one place dynfuzz reads torch's graph-break registry.

A finding is a refusal (a feature gap, never counted among bugs) only when what the compiled run raised is a
graph break torch documents (Note [A refusal is a documented graph break] in oracles/exceptions.py). Where the
release ships `torch/_dynamo/graph_break_registry.json` (2.13 has 517 ids, 2.14.1 561: `GB0000`..., later ones
numbered apart, such as `GB9648`), a graph break is documented when its `gb_type` is one of the registry's types,
current or historical, and it is named by that id. The file is private to torch, so only this module opens it,
and a release without it degrades to:
- a release whose `Unsupported` carries a `gb_type` (2.7 on) but ships no registry: the type is documented by
  Dynamo's own call to `unimplemented`, and names itself;
- a release before graph-break types (2.5, 2.6): a graph break Dynamo raised through `exc.unimplemented` (its
  one way to decline a construct; what it raises otherwise, such as `Observed exception`, is not a refusal),
  named by `UNTYPED_GRAPH_BREAKS`, an explicit list of torch 2.5.1's message heads, or else by the message's
  own first words (up to eight, and to the first value it quotes).

A graph break torch itself calls a bug is no refusal: its registry hints (or, without a registry, its message)
say "This is likely to be a Dynamo bug" (`DYNAMO_BUG_HINT`, 40 types in 2.13: `constant fold exception`, `Missing
FakeTensor example value`...), and it stays undocumented here, a crash. So is one that asks for a method the
builtin class it names does not have (`type_lost`): "does not know how to trace method `pick` of class `dict`"
for a dict subclass built by `fromkeys` in the frame means Dynamo lost the value's type, a known Dynamo bug
that a 2.14.1 fullgraph campaign had filed as the refusal gb0156.

`documented(gb_type, message)` is what execute.py stamps into each `ExcInfo` it makes (`graph_break`): the
label a refusal's bucket key carries, e.g. `gb0291: logging.Logger method not supported for non-export cases`,
or None. The catch-all types name what they decline in their explanation, and the label carries it (`target`):
`gb0156: Unsupported method call (Holder.get_submodule)`, `gb0007: Attempted to call function marked as skipped
(_heapq.heapify)`, so two refusals of different methods under one type never share a bucket (the digits
dynfuzz's generators append to class names are dropped).
"""
from __future__ import annotations

import builtins
import json
import re
from functools import lru_cache
from pathlib import Path

REGISTRY_FILE = "graph_break_registry.json"
DYNAMO_BUG_HINT = "This is likely to be a Dynamo bug"

# torch 2.5.1's `unimplemented(...)` messages, by their static head: (regular expression matched at the start
# of the message, the name a refusal's key carries). Generic heads (`call_method`, `builtin:`) are Dynamo
# declining a construct it has no rule for; the construct classifier tells those refusals apart in the key.
UNTYPED_GRAPH_BREAKS: tuple[tuple[str, str], ...] = (
    (r"call_method ", "call_method"),
    (r"call_function ", "call_function"),
    (r"builtin: ", "builtin"),
    (r"inline in skipfiles: ", "inline in skipfiles"),
    (r"skip function ", "skip function"),
    (r"call torch\._dynamo\.disable\(\) wrapped function", "torch._dynamo.disable"),
    (r"missing: ", "missing bytecode"),
    (r"generic_jump ", "generic_jump"),
    (r"Tensor\.item", "Tensor.item"),
    (r"Tensor\.tolist", "Tensor.tolist"),
    (r"Tensor\.backward", "Tensor.backward"),
    (r"data dependent operator", "data dependent operator"),
    (r"dynamic shape operator", "dynamic shape operator"),
    (r"torch\.\* op returned non-Tensor", "torch.* op returned non-Tensor"),
    (r"out variants with resizing on graph inputs", "out variants with resizing"),
    (r"non-function or method super", "super"),
    (r"unsupported (method|function) ", "unsupported call"),
    (r"Unsupported ", "unsupported"),
    (r"(store|delete)_attr|setattr|delattr|hasattr", "attribute"),
    (r"id\(\) with unsupported args", "id"),
    (r"comparison ", "comparison"),
    (r"Dynamic slicing", "dynamic slicing"),
    (r"UserDefined(Class|Object)Variable", "user-defined object"),
    (r"Workaround for issues with nn_parameter construction", "nn.Parameter"),
    (r"Logger not supported for non-export cases", "logging.Logger"),
    (r"call_function (UserDefined|DelayGraphBreak)", "call_function"),
    (r"HigherOrderOperator", "higher-order op"),
    (r"side effect", "side effect"),
    (r"reconstruct", "reconstruct"),
)


def _registry_path() -> Path | None:
    try:
        import torch._dynamo
    except ImportError:
        return None
    path = Path(torch._dynamo.__file__).resolve().parent / REGISTRY_FILE
    return path if path.is_file() else None


@lru_cache(maxsize=1)
def _entries() -> tuple[dict[str, str], frozenset[str]] | None:
    path = _registry_path()
    if path is None:
        return None
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    by_type: dict[str, str] = {}
    bugs: set[str] = set()
    for gb_id, versions in sorted(entries.items()):
        for version in versions if isinstance(versions, list) else ():
            if isinstance(version, dict) and isinstance(version.get("Gb_type"), str):
                by_type.setdefault(version["Gb_type"], gb_id)
                if any(DYNAMO_BUG_HINT in str(hint) for hint in version.get("Hints") or ()):
                    bugs.add(version["Gb_type"])
    return by_type, frozenset(bugs)


def registry() -> dict[str, str] | None:
    """`gb_type` -> registry id (`GB0291`) for the torch this process imports; None when it ships no registry.
    Historical types listed under an id map to it too (torch's own look-up does the same)."""
    entries = _entries()
    return dict(entries[0]) if entries is not None else None


def called_a_bug(gb_type: str) -> bool:
    """The registry's hints for this graph-break type say it is likely a Dynamo bug."""
    entries = _entries()
    return entries is not None and gb_type in entries[1]


_HEAD = re.compile(r"[A-Za-z_][\w.*`' -]*")


# Graph breaks the registry explains as the user's own error ("Your code may result in an error when running in
# eager"), for code Python itself rejects: when eager ran the same code without raising, Dynamo misread it (a
# walrus in a comprehension bound the cell it then calls uninitialized), a crash. Not every type with that hint:
# a higher-order op's contract (differing `torch.cond` branch outputs) is one eager does not check.
EAGER_WOULD_RAISE = frozenset({
    "Read uninitialized cell", "Attempted to read a deleted variable", "Attempted to read undefined local variable",
    "Attempted to read undefined local variable (implicit)", "LOAD_FAST_CHECK on uninitialized variable",
    "key not found in dict", "Failed to unpack object for UNPACK_SEQUENCE", "Failed to unpack object for UNPACK_EX",
    "Failed to unpack object for BUILD_LIST_UNPACK", "failed to bind arguments when attempting to inline",
    "TypeError from user code", "could not find name in object's mro",
})

_METHOD_OF = re.compile(r"trace method `(?P<method>\w+)` of class `(?P<cls>\w+)`")


def type_lost(message: str) -> bool:
    """The graph break asks for a method of a builtin class that the class does not have: Dynamo holds the value
    as that class, not as what it is (a subclass's method looked up on its base). Not `type`: Dynamo names
    `type` for an unbound method of a class object (`list.__len__(xs)` is "method `__len__` of class `type`"),
    a construct it declines."""
    m = _METHOD_OF.search(message)
    cls = getattr(builtins, m["cls"], None) if m else None
    return isinstance(cls, type) and cls is not type and not hasattr(cls, m["method"])


_TARGETS = (re.compile(r"trace the (?:function|builtin) `(?P<name>[^`]+?)\.?`"), _METHOD_OF)
_SPELLED = ((re.compile(r"<class '(?:[\w.]*\.)?(\w+)'>"), r"\1"), (re.compile(r"<unknown module>\."), ""),
            (re.compile(r"(?<=[A-Za-z_])\d+\b"), ""))


def target(message: str) -> str | None:
    """What a graph break's explanation says Dynamo declined: `Class.method`, or a function's dotted name."""
    for pattern in _TARGETS:
        m = pattern.search(message)
        if m:
            name = m["name"] if "name" in m.groupdict() else f"{m['cls']}.{m['method']}"
            for spelled, plain in _SPELLED:  # a class by its name, no placeholder module, no generator digits
                name = spelled.sub(plain, name)
            return name
    return None


def documented(gb_type: str | None, message: str, via_unimplemented: bool = False) -> str | None:
    """The label of a documented graph break (`gb0291: <gb_type>`, a pre-registry `gb_type`, an
    `UNTYPED_GRAPH_BREAKS` name or the message's head), or None when torch documents no such graph break
    (`message`: the exception's whole text, where the explanation and hints are).
    `via_unimplemented`: Dynamo raised it through `exc.unimplemented` (what tells a graph break on an untyped
    release)."""
    table = registry()
    if DYNAMO_BUG_HINT in message or (gb_type and called_a_bug(gb_type)) or type_lost(message) \
            or gb_type in EAGER_WOULD_RAISE:
        return None
    if gb_type:
        if table is None:
            return gb_type
        gb_id = table.get(gb_type)
        named = target(message)
        return f"{gb_id.lower()}: {gb_type}" + (f" ({named})" if named else "") if gb_id else None
    if table is not None or not via_unimplemented:
        return None  # every graph break of a release with a registry has a type
    text = message.strip().strip("'\"")
    for pattern, name in UNTYPED_GRAPH_BREAKS:
        if re.match(pattern, text):
            return name
    head = _HEAD.match(text)
    return " ".join(head.group(0).split()[:8]) if head else None
