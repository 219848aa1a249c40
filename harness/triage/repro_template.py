"""The one template every repro is rendered from: the program as plain code, the compile call, the check.

A repro is the program itself, verbatim at the top level of the file (so it is also a program `dynfuzz
check` reads, and torch finds its source on disk), then an `if __name__ == "__main__":` block that calls it
eagerly and compiled the way the finding was (backend, fullgraph, dynamic, one Dynamo config patch when the
program asks for one, the call plan up to the diverging call) and asserts the one aspect that diverged: the
lines the finding's own oracle renders (`oracles.registry.render_check`) over the names `out, args, ns`
(eager) and `c_out, c_args, c_ns` (compiled). When the harness loads the file as a program the block does
not run. Eager and compiled share the file's globals unless the program keeps state of its own
(`keeps_state`): then eager runs in a fresh copy of them (`eager_copy`), as each mode does in dynfuzz's workers.
The metadata is not in the script: `repro_meta` keeps it beside it.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from dynfuzz.run.torch_logs import torch_log_settings
from dynfuzz.triage.repro_twin import eager_twin, keeps_state

TEMPLATE = '''\
{header}
{program}


if __name__ == "__main__":
{driver}
'''

BACKWARD = ("def backward(out):  # as dynfuzz does: sum_k k * mean(out_k) over the output tensors that require grad\n"
            "    ts = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]\n"
            "    torch.autograd.backward([k * t.float().mean() for k, t in enumerate(ts, 1)"
            " if t.requires_grad and t.is_floating_point()])\n")

# Eager runs in a fresh copy of this file's program: its globals, from `runpy` (one line), or a module registered
# by name where eager itself goes through Dynamo (eager-mode torch.cond imports the program's module by name).
FRESH_GLOBALS = 'eager = runpy.run_path(__file__, run_name="eager_copy")'
FRESH_MODULE = '''\
import importlib.util
import sys
spec = importlib.util.spec_from_file_location("eager_copy", __file__)
eager = sys.modules["eager_copy"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(eager)
'''
_EAGER_DYNAMO = re.compile(r"torch\.cond|higher_order|while_loop|torch\.compile|torch\._dynamo|flex_attention|"
                           r"invoke_subgraph|\bscan\b")


def eager_copy(source: str, entry: str) -> tuple[list[str], str, str, str]:
    """How a stateful repro makes eager's fresh copy: its lines, and the expressions for the eager entry, eager's
    `inputs` and eager's live globals (`run_path` returns a copy of them, made before any call)."""
    if _EAGER_DYNAMO.search(source):
        return FRESH_MODULE.splitlines(), f"eager.{entry}", "eager.inputs", "vars(eager)"
    return ["import runpy", FRESH_GLOBALS], f'eager["{entry}"]', 'eager["inputs"]', f'eager["{entry}"].__globals__'


# A crash repro also compares the values once the compiled call returns: a crash that turned into a silent
# wrong value still fails.
CRASH_VALUES = [
    "tensors = lambda o: [t for t in torch.utils._pytree.tree_leaves(o) if isinstance(t, torch.Tensor)]",
    'torch.testing.assert_close(tensors(c_out), tensors(out), equal_nan=True, msg=lambda m: "eager vs compiled: "'
    " + m)"]

# The compiled run uses this file's globals: `c_ns['NAME']` is just `NAME`, unless the driver rebinds the name.
_C_NS = re.compile(r"""\bc_ns\[(['"])([A-Za-z_]\w*)\1\]""")
_DRIVER_NAMES = frozenset({"out", "args", "c_out", "c_args", "ns", "c_ns", "eager", "run", "backward", "tensors",
                           "counter", "fn", "frames", "call", "runpy", "spec", "sys", "importlib", "torch"})


TWIN_MARK = "# eager runs this plain-Python rendering of the program (dynfuzz's eager reference)"

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
    crash_values: bool = False  # the check also compares values when the compiled call returns


def _settings(config: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in config.items())


# torch._dynamo.export traces a copy of the call's arguments and runs its graph on them: where one call's
# arguments are all the repro needs, fresh `inputs(...)` stand in for the copy, and the export is one line.
_INLINE_EXPORTS = {"dynamo": "torch._dynamo.export({entry})",
                   "dynamo-aten": "torch._dynamo.export({entry}, aten_graph=True)"}


def inline_export(plan: Plan) -> bool:
    """Whether the repro exports in one line, with no `exported` helper pasted."""
    return plan.options.get("export") in _INLINE_EXPORTS and _simple(plan)


def compile_call(entry: str, backend: str, plan: Plan, device: str) -> str:
    """`torch.compile(f, ...)` as the finding compiled it (or the export wrapper), over the entry's name: the
    callable the driver calls on the compiled run's arguments."""
    if inline_export(plan):  # traced at one set of arguments, its graph run on the call's
        return _INLINE_EXPORTS[plan.options["export"]].format(entry=entry) + f'(*inputs("{device}")).graph_module'
    if "export" in plan.options:  # harness/run/export_runner.py: exported, not compiled, at each call's arguments
        return f"exported({entry})"
    kwargs = [f'backend="{backend}"' if not plan.frames else "backend=counter"]
    kwargs += [f"{k}={v!r}" for k, v in plan.options.items() if k != "logs"]
    return f"torch.compile({entry}, {', '.join(kwargs)})"


def _run_helper(plan: Plan, device: str, stateful: bool) -> list[str]:
    """`run(fn[, ns])`: the call plan, an exception kept as the call's result, `(out, args)` returned."""
    inputs = 'ns["inputs"]' if stateful else "inputs"
    body: list[str] = ["torch.manual_seed(0)"] if plan.seed else []
    many = plan.calls > 1
    pad = "    " if many else ""
    if many:
        body.append(f"for call in range({plan.calls}):")
        if plan.between:
            body += [f"{pad}if call:", f'{pad}    {"ns" if stateful else "globals()"}["between"](call)']
    body.append(f'{pad}args = {inputs}("{device}"{", call" if many else ""})')
    if plan.perturb and many:
        body += [f"{pad}if call:  # the change the finding made before the second call",
                 *(f"{pad}    {p}" for p in plan.perturb)]
    call = ["out = fn(*args)"] + (["backward(out)"] if plan.backward else [])
    if plan.catch and not many:  # one call: its result or its exception, returned with its arguments
        call = ["return fn(*args), args"] if not plan.backward else [*call, "return out, args"]
        return [f"def run(fn{', ns' if stateful else ''}):", *("    " + b for b in body),
                "    try:", *(f"        {c}" for c in call),
                "    except Exception as e:  # an exception is the call's result", "        return e, args"]
    if plan.catch:
        body += [f"{pad}try:", *(f"{pad}    {c}" for c in call),
                 f"{pad}except Exception as e:  # an exception is the call's result",
                 f"{pad}    out = e"]
    else:
        body += [f"{pad}{c}" for c in call]
    body.append("return out, args")
    return [f"def run(fn{', ns' if stateful else ''}):", *("    " + b for b in body)]


def _simple(plan: Plan) -> bool:
    """One call with nothing around it but, maybe, the backward pass: no `run` helper needed."""
    return plan.calls == 1 and not (plan.catch or plan.seed or plan.between or plan.perturb)


def _frames_driver(plan: Plan, device: str, compiled: str, backend: str) -> list[str]:
    """Compiled only: call the plan, counting compiled frames after each call (recompile checks)."""
    lines = [f'counter = torch._dynamo.testing.CompileCounterWithBackend("{backend}")',
             f"fn = {compiled}", "frames = []"]
    if any("ns[" in p for p in plan.perturb):
        lines.append("ns = globals()")
    lines.append(f"for call in range({plan.calls}):")
    if plan.between:
        lines += ["    if call:", "        between(call)"]
    lines.append(f'    args = inputs("{device}", call)')
    if plan.perturb:
        lines += ["    if call:  # the change the finding made before the second call",
                  *(f"        {p}" for p in plan.perturb)]
    if plan.catch:
        lines += ["    try:", "        fn(*args)", "    except Exception:", "        pass"]
    else:
        lines.append("    fn(*args)")
    lines.append("    frames.append(counter.frame_count)")
    return lines


def driver(*, entry: str, eager_entry: str, backend: str, device: str, plan: Plan, config: dict[str, Any],
           check: list[str], stateful: bool, source: str = "") -> list[str]:
    """The lines under `if __name__ == "__main__":` (unindented)."""
    lines: list[str] = []
    if plan.backward:
        lines += BACKWARD.splitlines()
    if plan.options.get("logs"):
        lines.append(f"torch._logging.set_logs({_settings(torch_log_settings())})  # as the finding was compiled")
    compiled = compile_call(entry, backend, plan, device)
    patch = [f"with torch._dynamo.config.patch({_settings(config)}):"] if config else []
    pad = "    " if config else ""
    if plan.frames:
        body = _frames_driver(plan, device, compiled, backend)
        return lines + patch + [pad + b for b in body] + check
    if stateful:
        copy_lines, e_fn, e_inputs, eager_ns = eager_copy(source, eager_entry)
        lines += copy_lines
    else:
        e_fn, e_inputs, eager_ns = eager_entry, "inputs", ""
    e_back, c_back = (["backward(out)"], [f"{pad}backward(c_out)"]) if plan.backward else ([], [])
    if _simple(plan):  # the arguments inline, unless the check reads them
        named = any(re.search(r"\b(c_)?args\b", c) for c in check)
        e_args, c_args = ("args", "c_args") if named else (f'{e_inputs}("{device}")', f'inputs("{device}")')
        lines += [f'args = {e_inputs}("{device}")'] if named else []
        lines += [f"out = {e_fn}(*{e_args})", *e_back, *patch]
        lines += [f'{pad}c_args = inputs("{device}")'] if named else []
        lines += [f"{pad}c_out = {compiled}(*{c_args})", *c_back]
    else:
        lines += _run_helper(plan, device, stateful)
        extra = f", {eager_ns}" if stateful else ""
        lines += [f"out, args = run({e_fn}{extra})", *patch,
                  f"{pad}c_out, c_args = run({compiled}{', globals()' if stateful else ''})"]
    if any(re.search(r"\bns\b", c) for c in check):
        lines.append(f"ns = {eager_ns or 'globals()'}")
    check = [_C_NS.sub(lambda m: m.group(2) if m.group(2) not in _DRIVER_NAMES else m.group(0), c) for c in check]
    if any("c_ns" in c for c in check):
        lines.append("c_ns = globals()")
    return lines + check + (CRASH_VALUES if plan.crash_values else [])


def _program_text(source: str, eager_extra: str, needs: list[str]) -> str:
    """The program verbatim, with the imports the driver needs and the eager twin's definitions appended."""
    body = source.strip("\n")
    present = {line.strip() for line in body.splitlines()}
    missing = [f"import {n}" for n in needs if f"import {n}" not in present]
    if missing:
        body = "\n".join(missing) + "\n" + body
    if eager_extra:
        body += "\n\n\n" + TWIN_MARK + "\n" + eager_extra
    return body


def fill(*, header: list[str], source: str, eager_source: str | None, entry: str, backend: str, device: str,
         plan: Plan, config: dict[str, Any], check: list[str]) -> str:
    """The whole repro script; it must parse (checked here, so a rendering bug never reaches disk)."""
    twin_text, eager_entry = eager_twin(source, eager_source, entry) if eager_source else ("", entry)
    stateful = keeps_state(source, check + plan.perturb, plan.between) and not plan.frames
    helper = "export" in plan.options and not inline_export(plan)
    needs = ["torch"] + (["copy"] if helper else []) + (["torch._dynamo.testing"] if plan.frames else [])
    program = _program_text(source, twin_text, needs)
    if helper:
        from dynfuzz.run.export_runner import export_helper

        program += "\n\n\n" + export_helper(plan.options["export"]).rstrip()
    lines = driver(entry=entry, eager_entry=eager_entry, backend=backend, device=device, plan=plan, config=config,
                   check=check, stateful=stateful, source=source)
    text = TEMPLATE.format(header="\n".join("# " + h if h else "#" for h in header), program=program,
                           driver="\n".join("    " + line if line else "" for line in lines))
    ast.parse(text)
    return text
