"""The one template every repro is rendered from: the program, the compile call, the check.

A repro runs the program twice, each time from a fresh namespace (the program may change its
own globals): eagerly, and compiled the way the finding was (backend, fullgraph, dynamic,
Dynamo config, call plan up to the diverging call). Then the lines the finding's own oracle
rendered (`oracles.registry.render_check`) assert the one aspect that diverged. The script
imports only torch; `DYNFUZZ`, `PROGRAM` and `EAGER_PROGRAM` are literals `dynfuzz replay` reads.
"""
from __future__ import annotations

import ast
import pprint
from dataclasses import dataclass, field
from typing import Any

TEMPLATE = '''\
"""{title}

{about}"""
DYNFUZZ = {meta}

import torch

PROGRAM = {program}
{eager_program}{helpers}

def run(source, compiled):
{seed}{namespace}    exec(compile(source, linecache.cache.setdefault(ns["__name__"], (len(source), None, source.splitlines(True), ns["__name__"]))[3], "exec"), ns)
    fn = {compiled_fn} if compiled else ns["{entry}"]
{calls}    return out, args, ns


out, args, ns = run({eager_name}, compiled=False)
c_out, c_args, c_ns = run(PROGRAM, compiled=True)
{check}
'''  # noqa: E501 (the generated exec line)

BACKWARD = '''

def backward(out):  # as dynfuzz does: sum_k k * mean(out_k) over the output tensors that require grad
    leaves = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
    loss = [k * t.float().mean() for k, t in enumerate(leaves, 1) if t.requires_grad and t.is_floating_point()]
    sum(loss).backward() if loss else None
'''

# The program runs as an importable module, as in dynfuzz's workers: Dynamo imports a frame's module by its
# `__name__` (for torch.cond's branches on 2.13; for any global on 2.5, which otherwise fails with
# "No module named 'repro'" before reaching the bug). `run` also registers the source in linecache under the
# module's name, as the workers do: torch 2.5 compiles a function whose source file it cannot find through a
# wrapper frame (`external_utils.wrap_inline`), so the entry was inlined instead of being the root frame, and a
# bug of the root frame's cells (found by the workers) did not reproduce in the script.
NAMESPACE_MODULE = '''\
    ns = vars(sys.modules.setdefault(f"repro_{compiled}", types.ModuleType(f"repro_{compiled}")))
'''

UNRENDERABLE = '''\
print("dynfuzz cannot express this divergence as a torch-only check ({why});")
print("run `dynfuzz check THIS_FILE.py` to see it")
raise SystemExit(2)'''


@dataclass
class Plan:
    """How the repro calls the program: calls to make, and what each call needs around it."""

    calls: int = 1
    between: bool = False
    catch: bool = True
    backward: bool = False
    frames: bool = False
    seed: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    perturb: list[str] = field(default_factory=list)  # lines run before the second call (guard perturbations)


def literal(text: str | None) -> str:
    """A Python literal for program text, as a raw triple-quoted block when that is exact."""
    if text is None:
        return "None"
    body = text.strip("\n") + "\n"
    if "'''" not in body and not body.endswith("\\\n") and "\\'''" not in body:
        return "r'''\n" + body + "'''"
    return repr(text)


def compile_call(entry: str, backend: str, plan: Plan, config: dict[str, Any]) -> str:
    """`torch.compile(ns["f"], ...)` as the finding compiled it, under its Dynamo config patch if any: the
    patch is on while `torch.compile` runs and while the compiled function is called."""
    if "export" in plan.options:  # harness/run/export_runner.py: exported, not compiled, at each call's arguments
        exported = f'exported(ns["{entry}"], {plan.options["export"]!r})'
        return f"torch._dynamo.config.patch({_settings(config)})({exported})" if config else exported
    kwargs = [f'backend="{backend}"' if not plan.frames else "backend=counter"]
    kwargs += [f"{k}={v!r}" for k, v in plan.options.items() if k != "logs"]
    if not config:
        return f'torch.compile(ns["{entry}"], {", ".join(kwargs)})'
    patch = f"torch._dynamo.config.patch({_settings(config)})"
    # compiled under the patch (some settings are read by torch.compile itself) and called under it
    return f'{patch}({patch}(torch.compile)(ns["{entry}"], {", ".join(kwargs)}))'


def _settings(config: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in config.items())


def calls_block(plan: Plan, device: str) -> str:
    """The loop over the call plan: `between`, fresh inputs, the call, the backward pass, frame counts."""
    single = plan.calls == 1
    pad = "    " if single else "        "
    lines = [] if single else [f"    for call in range({plan.calls}):"]
    index = "0" if single else "call"
    if plan.between and not single:
        lines.append(f"{pad}if call:\n{pad}    ns[\"between\"](call)")
    lines.append(f'{pad}args = ns["inputs"]("{device}", {index})')
    if plan.perturb and not single:
        lines.append(f"{pad}if call:  # the change the finding made before the second call")
        lines += [f"{pad}    {p}" for p in plan.perturb]
    body = ["out = fn(*args)"] + (["backward(out)"] if plan.backward else [])
    if plan.catch:
        lines.append(f"{pad}try:")
        lines += [f"{pad}    {b}" for b in body]
        lines += [f"{pad}except Exception as e:", f"{pad}    out = e"]
    else:
        lines += [f"{pad}{b}" for b in body]
    if plan.frames:
        lines.append(f"{pad}if compiled:\n{pad}    frames.append(counter.frame_count)")
    return "\n".join(lines) + "\n"


def fill(*, title: str, about: str, meta: dict[str, Any], source: str, eager_source: str | None, entry: str,
         backend: str, device: str, plan: Plan, config: dict[str, Any], check: list[str]) -> str:
    """The whole repro script; it must parse (checked here, so a rendering bug never reaches disk)."""
    helpers = BACKWARD if plan.backward else ""
    imports = "import linecache\nimport sys\nimport types\n"
    if "export" in plan.options:
        from dynfuzz.run.export_runner import EXPORT_HELPER

        helpers += EXPORT_HELPER
        imports += "import copy\n"
    if plan.options.get("logs"):
        from dynfuzz.run.torch_logs import torch_log_settings

        settings = ", ".join(f"{k}={v!r}" for k, v in torch_log_settings().items())
        helpers += f"\n\ntorch._logging.set_logs({settings})  # compiled, as the finding was, with torch's logs on\n"
    if plan.frames:
        helpers += f'\n\ncounter = torch._dynamo.testing.CompileCounterWithBackend("{backend}")\nframes = []\n'
    text = TEMPLATE.format(
        title=title.replace('"""', "'''").replace("\\", "/"), about=about.replace('"""', "'''").replace("\\", "/"),
        meta=pprint.pformat(meta, width=110, sort_dicts=False), program=literal(source),
        eager_program=f"EAGER_PROGRAM = {literal(eager_source)}  # the plain-Python rendering eager runs\n"
        if eager_source else "", helpers=helpers, seed="    torch.manual_seed(0)\n" if plan.seed else "",
        compiled_fn=compile_call(entry, backend, plan, config), entry=entry, calls=calls_block(plan, device),
        namespace=NAMESPACE_MODULE,
        eager_name="EAGER_PROGRAM" if eager_source else "PROGRAM", check="\n".join(check))
    if plan.frames:
        text = text.replace("import torch\n", "import torch\nimport torch._dynamo.testing\n", 1)
    text = text.replace("import torch\n", "".join(sorted(imports.splitlines(True))) + "\nimport torch\n", 1)
    ast.parse(text)
    return text
