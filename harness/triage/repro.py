"""Repros people paste: the program, the compile call, and a check of exactly the aspect that diverged.

`render_repro` fills the one template (`repro_template.py`) with the check the finding's own
oracle renders (`oracles.registry.render_check`), so the campaign, a saved repro and a corpus
entry judge alike. `python repro.py` exits 1 while the bug is present and 0 once it is fixed; an
illegal program's documented refusal exits 0. The rendered text carries its metadata as a last line
that `write_repro` moves to a sidecar file (`repro_meta`). `verify_repro` runs a written repro once to
confirm it; a broken-compiler double's bug cannot show in a torch-only script, so its repro is verified
through `dynfuzz check --compiler NAME`. `read_program` reads any of these files back, old ones included.
"""
from __future__ import annotations

import ast
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dynfuzz.errors import UsageError
from dynfuzz.generators.case import Case
from dynfuzz.oracles import Finding
from dynfuzz.oracles.checks import Unrenderable, agreement_check
from dynfuzz.oracles.registry import render_check
from dynfuzz.run.compilers import CompileSpec
from dynfuzz.run.export_runner import EXPORT_CALLS
from dynfuzz.run.provenance import provenance
from dynfuzz.triage.issue import render_report  # noqa: F401 (re-exported: the pt2 issue form)
from dynfuzz.triage.repro_meta import attach, meta_of, script_of, torch_version, write_repro
from dynfuzz.triage.repro_template import TWIN_MARK, UNRENDERABLE, Plan, fill
from dynfuzz.triage.repro_twin import program_literal

if TYPE_CHECKING:
    from dynfuzz.triage.minimize import Minimized

VERDICTS = ("reproduces", "flaky", "error")
# Oracles whose divergence may involve a call that raised: the repro keeps an exception as the call's result.
_CATCHING = ("exceptions", "illegal", "effects", "grads")
# Exception kinds where compiled raised and eager returned: their check also compares values once compiled returns.
_RAISED = ("crash", "spurious-exception", "unsupported", "trace-exception")
_GRAD_WORDS = ("requires_grad", "Parameter", "register_hook", "torch.nn")


def metadata_for(case: Case, finding: Finding, spec: CompileSpec, **extra: Any) -> dict[str, Any]:
    """A repro's metadata (its sidecar file): what `dynfuzz replay`, `check` and the pytest plugin read back."""
    meta = {
        "oracle": finding.oracle,
        "kind": finding.kind,
        "signature": finding.signature,
        "title": finding.title,
        "tags": sorted(case.tags),
        "torch": torch_version(),
        "python": platform.python_version(),
        **provenance(),  # hypothesis, dynfuzz_commit, torch_patches
        "backend": spec.backend,
        "device": spec.device,
        "fullgraph": spec.fullgraph,
        "dynamic": spec.dynamic,
        "compiler": spec.compiler,
        "entry": case.entry,
        "seed": case.seed,
        "families": list(case.families),
        "status": "open",
        "upstream": None,
    }
    if case.intended_error:
        meta["intended_error"] = case.intended_error
    if finding.layer:
        meta["layer"] = finding.layer
    meta.update(extra)
    return meta


def _defines(source: str, name: str) -> bool:
    return f"def {name}(" in source


def dynamo_config(case: Case) -> dict[str, Any]:
    """The `torch._dynamo.config` overrides the compiled calls run under (the case's, else its program's)."""
    config = getattr(case, "dynamo_config", None)
    return dict(config) if config else dict(program_literal(case.source, "DYNAMO_CONFIG") or {})


def plan_for(case: Case, finding: Finding | None, spec: CompileSpec, eager_ok: bool | None = None) -> Plan:
    """The call plan up to the diverging call, compiled with the finding's settings (spec, then the
    program's COMPILE_OPTIONS, as `TorchCompiler.compile` merges them). With `eager_ok` (minimization saw eager
    raise in no call) only an exception that eager raised too and an illegal program (whose compiled call may
    rightly raise) are caught: anywhere else a call that raises is the bug, and a compiled call that crashes
    ends the script with torch's own traceback (exit 1), which is what PyTorch's triage compares."""
    calls = int(program_literal(case.source, "CALLS") or 2)
    if finding is not None and finding.call is not None:
        calls = min(calls, finding.call + 1) if finding.oracle != "recompiles" else finding.call + 1
    oracle = finding.oracle if finding is not None else "exceptions"
    options: dict[str, Any] = {}
    if spec.fullgraph:
        options["fullgraph"] = True
    if spec.dynamic is not None:
        options["dynamic"] = spec.dynamic
    compile_options = program_literal(case.source, "COMPILE_OPTIONS") or {}
    options.update({k: v for k, v in compile_options.items() if k in ("dynamic", "fullgraph", "export", "logs")})
    if options.get("fullgraph") is False:
        del options["fullgraph"]
    text = case.source + (case.eager_source or "")
    if oracle == "guards":  # the harness's perturbation run: call, change the state, call again
        from dynfuzz.oracles.guards import render_perturbation

        return Plan(calls=2, catch=True, frames=finding.kind == "over-guard", seed="rand" in text, options=options,
                    perturb=render_perturbation(finding, case))
    # An earlier call that raised in both modes is skipped by every oracle, so the repro must survive it too.
    raised = finding is not None and finding.oracle == "exceptions" and finding.kind in _RAISED
    catch = (oracle in ("exceptions", "illegal") and not raised) if eager_ok else oracle in _CATCHING or calls > 1
    return Plan(calls=calls, between=calls > 1 and _defines(case.source, "between"), catch=catch,
                backward=oracle in ("grads", "effects", "illegal") and any(w in text for w in _GRAD_WORDS),
                frames=oracle == "recompiles", seed="rand" in text, options=options, crash_values=raised)


def _check_lines(case: Case, finding: Finding | None) -> tuple[list[str], bool]:
    """The oracle's check, or a pointer to `dynfuzz check` when no torch-only check expresses it."""
    if finding is None:  # a seed scenario: compiled must agree with eager on the outputs
        return agreement_check(), True
    try:
        return render_check(finding, case), True
    except Unrenderable as e:
        return UNRENDERABLE.format(why=str(e).replace('"', "'")).splitlines(), False


def _header(title: str, spec: CompileSpec, plan: Plan, meta: dict[str, Any], note: str = "") -> list[str]:
    """The comment lines above the program: the title, any note, the torch version and the compile call."""
    compile_kwargs = (f"{k}={v!r}" for k, v in plan.options.items() if k != "logs")
    kwargs = ", ".join([f'backend="{spec.backend}"', *compile_kwargs])
    doubled = f" (found with the test double {spec.compiler!r})" if spec.compiler != "torch" else ""
    how = f"torch.compile({kwargs})"
    if "export" in plan.options:
        how = EXPORT_CALLS[plan.options["export"]] + " at the call's arguments, the exported graph run on them"
    if plan.options.get("logs"):
        how += " with torch's logs on (torch._logging.set_logs)"
    lines = [title.replace("\n", " ")]
    lines += [line.rstrip() for line in note.strip().splitlines()] if note.strip() else []
    lines.append(f"torch {meta.get('torch')}, {how}{doubled}: exits 1 while the bug is present, 0 once fixed.")
    return lines


def render_repro(case: Case, finding: Finding | None, spec: CompileSpec, meta: dict, note: str = "",
                 eager_ok: bool | None = None) -> str:
    """The pasteable repro for `finding` (None: a seed scenario, checked on its outputs), its metadata as
    the text's last line (`repro_meta.attach`; `write_repro` moves it beside the script). `eager_ok`: see
    `plan_for`."""
    check, renderable = _check_lines(case, finding)
    try:
        plan = plan_for(case, finding, spec, eager_ok)
    except Unrenderable as e:
        check, renderable = UNRENDERABLE.format(why=str(e).replace('"', "'")).splitlines(), False
        plan = plan_for(case, None, spec)
    meta = dict(meta)
    if not renderable:
        meta["check"] = "dynfuzz"
    if case.eager_source:
        meta["eager_program"] = case.eager_source
    if plan.crash_values and not plan.catch:  # the crash itself fails the script; once fixed, the values decide
        check = []
    config = dynamo_config(case)
    if config:  # the case's own config, which its program may not spell out (a minimized one dropped it)
        meta["dynamo_config"] = config
    title = str(meta.get("title") or (finding.title if finding is not None else "dynfuzz repro"))
    script = fill(header=_header(title, spec, plan, meta, note), source=case.source, eager_source=case.eager_source,
                  entry=case.entry, backend=spec.backend, device=spec.device, plan=plan, config=config, check=check)
    return attach(script, meta)


def write_finding(directory: Path, case: Case, finding: Finding, spec: CompileSpec, name: str | None = None,
                  **extra: Any) -> Path:
    """Write the repro for `finding` to `directory/<name>.py` (default: its signature) and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name or finding.signature}.py"
    return write_repro(path, render_repro(case, finding, spec, metadata_for(case, finding, spec, **extra)))


def _run_verdict(cmd: list[str], timeout: float, script: bool) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "error"
    if done.returncode == 0:
        return "flaky"
    if done.returncode != 1:
        return "error"
    if script and not script_failed(done.stderr):
        return "error"  # the script itself broke (not its check, not the compiled call): never a reproduction
    return "reproduces"


def _from_compiled_call(stderr: str) -> bool:
    """Whether a traceback starts at the script's compiled call (`c_out = ...`) and goes on into torch: a crash
    repro lets the compiled call's exception end it, torch's own traceback being what PyTorch's triage compares
    (a name the script itself lacks fails in its own frame: not a reproduction)."""
    lines = stderr.splitlines()
    call = next((i for i, line in enumerate(lines[:-1]) if line.startswith('  File "') and "<module>" in line
                 and lines[i + 1].strip().startswith(("c_out = ", "c_out, c_args = "))), None)
    return call is not None and any(line.startswith('  File "') and "/torch/" in line for line in lines[call + 1:])


def script_failed(stderr: str) -> bool:
    """Whether a repro script that exited 1 failed as a repro fails (its check, or its compiled call's crash),
    not because the script itself broke."""
    return _raised(stderr) == "AssertionError" or _from_compiled_call(stderr)


def _raised(stderr: str) -> str | None:
    """The type of the exception a Python traceback in `stderr` ends with (None without a traceback)."""
    lines = stderr.splitlines()
    frames = [i for i, line in enumerate(lines) if line.startswith('  File "')]
    if not frames:
        return None
    for line in lines[frames[-1] + 1:]:
        if line and not line.startswith(" "):
            return line.split(":", 1)[0].rsplit(".", 1)[-1]
    return None


def verify_repro(path: Path, spec: CompileSpec, timeout: float = 120) -> str:
    """Run a written repro once in a subprocess: `reproduces` (exit 1 from its check), `flaky` (exit 0:
    the bug did not show again) or `error`. Doubles, mutants and checks the script cannot express run
    the same program through `dynfuzz check`."""
    path = Path(path)
    try:
        meta = read_program(path).meta
    except UsageError:
        return "error"
    meta = meta or meta_of(path)
    if spec.compiler != "torch" or meta.get("check") == "dynfuzz" or os.environ.get("DYNFUZZ_MUTANTS"):
        cmd = [sys.executable, "-m", "dynfuzz", "check", str(path), "--compiler", spec.compiler,
               "--backend", spec.backend, "--device", spec.device]
        if spec.fullgraph:
            cmd.append("--fullgraph")
        if spec.guards or meta.get("oracle") == "guards":
            cmd.append("--guards")
        return _run_verdict(cmd, timeout, script=False)
    return _run_verdict([sys.executable, str(path)], timeout, script=True)


# ---- minimized findings and corpus entries ----

def render_minimized(m: Minimized, spec: CompileSpec, origin: dict[str, Any] | None = None) -> str:
    """The repro of a minimized finding, keeping the status and upstream link of the file it came from."""
    origin = origin or {}
    case = m.case if m.case.tags or not origin.get("tags") else _with_tags(m.case, origin["tags"])
    meta = metadata_for(case, m.finding, spec, status=origin.get("status", "open"), upstream=origin.get("upstream"))
    return render_repro(case, m.finding, spec, meta, note="Minimized by dynfuzz.", eager_ok=m.eager_ok)


def _with_tags(case: Case, tags) -> Case:
    from dataclasses import replace

    return replace(case, tags=frozenset(tags))


def render_entry(meta: dict[str, Any], source: str, eager_source: str | None = None, about: str = "",
                 finding: Finding | None = None) -> str:
    """A corpus entry: its script with `meta` as its metadata, checked on `finding` (None: a seed scenario)."""
    spec = CompileSpec(meta.get("compiler", "torch"), meta["backend"], meta["device"], bool(meta["fullgraph"]),
                       meta.get("dynamic"))
    case = Case(source=source, entry=meta.get("entry", "f"), tags=frozenset(meta.get("tags", ())),
                eager_source=eager_source, intended_error=meta.get("intended_error"))
    return render_repro(case, finding, spec, meta, note=about)


def write_minimized(m: Minimized, spec: CompileSpec, out: Path, origin: dict[str, Any] | None = None,
                    verify: bool = True) -> str:
    """Write the minimized repro to `out`; with `verify`, run it once and say so when it does not reproduce."""
    text = render_minimized(m, spec, origin)
    write_repro(out, text)
    if verify:
        verdict = verify_repro(out, spec)
        if verdict != "reproduces":
            print(f"note: {out} was written but does not reproduce on its own ({verdict})", file=sys.stderr)
    return text


# ---- reading programs back ----

@dataclass
class SavedProgram:
    """A program read from a file: a dynfuzz repro, or a hand-written script following the convention."""

    case: Case
    meta: dict[str, Any]
    path: Path


def plain_program(text: str) -> str:
    """The program of a plain repro: its text less the `if __name__ == "__main__":` block that ends it (and
    an eager twin appended for the check), less the metadata line; any other text is returned as it is."""
    text = script_of(text)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.If) and ast.unparse(last.test).replace("'", '"') == '__name__ == "__main__"':
        lines = text.splitlines(True)[:last.lineno - 1]
        while lines and lines[0].startswith("#"):  # the rendered header: a new rendering writes its own
            lines.pop(0)
        text = "".join(lines)
    return text.split("\n" + TWIN_MARK + "\n", 1)[0].strip("\n") + "\n"


def read_program(path: Path) -> SavedProgram:
    """Parse a saved repro or hand-written program; UsageError (exit 2) if it is not one."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not UTF-8 text (byte {e.start}): a program file must be UTF-8 Python") from None
    try:
        tree = ast.parse(text, str(path))
    except SyntaxError as e:
        raise UsageError(f"{path}:{e.lineno}: does not parse: {e.msg}") from None
    assigned: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in ("PROGRAM", "EAGER_PROGRAM", "ENTRY"):
            try:
                assigned[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                raise UsageError(f"{path}: {node.targets[0].id} must be a literal") from None
    meta = meta_of(Path(path), text)
    source = assigned.get("PROGRAM") or plain_program(text)
    entry = meta.get("entry") or assigned.get("ENTRY") or "f"
    try:
        program_tree = ast.parse(source)
    except SyntaxError as e:
        raise UsageError(f"{path}: PROGRAM does not parse: line {e.lineno}: {e.msg}") from None
    defined = {n.name for n in program_tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {name.id for n in program_tree.body if isinstance(n, ast.Assign) for t in n.targets
                for name in ast.walk(t) if isinstance(name, ast.Name)}
    for required in (entry, "inputs"):
        if required not in defined:
            raise UsageError(f"{path}: no `{required}` defined (a program needs an entry function "
                             f"and `inputs(device, call=0)`; see docs/programs.md)")
    case = Case(source=source, entry=entry, tags=frozenset(meta.get("tags", ())), seed=meta.get("seed"),
                families=tuple(meta.get("families", ())),
                eager_source=assigned.get("EAGER_PROGRAM") or meta.get("eager_program"),
                intended_error=meta.get("intended_error"),
                dynamo_config_items=tuple((program_literal(source, "DYNAMO_CONFIG") or meta.get("dynamo_config")
                                           or {}).items()))
    return SavedProgram(case, meta, Path(path))
