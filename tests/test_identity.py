"""A finding's identity: keys from what Dynamo did, and the paths by which a known issue hid a new bug.

Each `test_hiding_*` test is one way a new bug used to be filed as a known one (or under another bug's key);
each failed on the code before identity keys."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import torch
from dynfuzz.campaign.campaign import CampaignConfig
from dynfuzz.campaign.ledger import Ledger, identity
from dynfuzz.generators.case import Case
from dynfuzz.oracles.model import finding
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage import identity as ident
from dynfuzz.triage.explain import NO_CONSTRUCT, Explanation, cheap_explanation, explain
from dynfuzz.triage.known import KnownIssues, names_fault

REPO = Path(__file__).resolve().parents[1]
LOG_BESIDE = '''
import torch
LOG = []
def f(x):
    LOG.append(1)
    return x * 2
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
'''


def _finding(source: str, compiler: str):
    spec = CompileSpec(compiler)
    case = Case(source)
    (f,) = judge(case, make_compiler(spec), spec).findings
    return case, f, spec


def test_hiding_an_unneeded_construct_never_names_the_key():
    """Plain tensor code with a wrong output beside an unrelated `LOG.append(1)`: ablation finds the append not
    needed, so the key must not name it (it was `miscompile: list .append`, a known issue's key)."""
    case, f, spec = _finding(LOG_BESIDE, "perturb-output")
    e = explain(case, f, spec)
    assert "append" not in e.key and e.generic and e.unexplained
    assert KnownIssues.load(REPO / "corpus" / "known_issues.toml").match(e.key, torch.__version__) is None


def test_hiding_an_ablation_that_breaks_eager_is_no_evidence():
    """Taking `d.update(...)` out makes eager raise KeyError too, so the output divergence goes: that says nothing
    about the construct, which must not count as responsible."""
    source = '''
import torch
def f(x):
    d = {}
    d.update(a=2.0)
    return x * d["a"]
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
'''
    case, f, spec = _finding(source, "perturb-output")
    e = explain(case, f, spec)
    assert not any(".update" in name for name in e.responsible), e.responsible


def test_hiding_a_crash_keyed_by_a_generic_frame_matches_no_known_issue():
    """`crash: raising TorchRuntimeError in torch/_dynamo/utils.py:_get_fake_value_impl` names no construct and
    only the frame every fake-tensor error passes: it matched the `yield from` entry on 2.13."""
    known = KnownIssues.load(REPO / "corpus" / "known_issues.toml")
    generic = "crash: raising TorchRuntimeError in torch/_dynamo/utils.py:_get_fake_value_impl @dynamo"
    assert known.match(generic, "2.13.0") is None
    bare = Explanation("exceptions", "crash", NO_CONSTRUCT, error="TorchRuntimeError", layer="dynamo",
                       ablated=True, mechanism="TorchRuntimeError")
    assert bare.generic and known.match(bare.key, "2.13.0") is None


def test_a_crash_is_keyed_by_its_first_frames_outside_wrappers():
    """The `yield from` repro's key names the frames where the lost value was used, innermost first, not the
    fake-tensor wrapper every such crash passes through."""
    from dynfuzz.triage.repro import read_program

    saved = read_program(REPO / "corpus" / "yield_from_return_value_lost.py")
    spec = CompileSpec()
    findings = judge(saved.case, make_compiler(spec), spec).findings
    crash = next(f for f in findings if f.oracle == "exceptions")
    e = explain(saved.case, crash, spec)
    frames = e.mechanism.split(" in ", 1)[1].split(" < ")
    assert len(frames) == ident.FRAMES and not any(ident.generic_frame(fr) for fr in frames), e.key
    assert "_get_fake_value_impl" not in e.key and names_fault(e.key)


def test_crash_frames_follow_the_cause_and_skip_wrappers():
    def deepest():
        raise ValueError("inner")

    try:
        try:
            deepest()
        except ValueError as inner:
            raise RuntimeError("outer") from inner
    except RuntimeError as e:
        assert ident.crash_frames(e) == (), "no torch frame: nothing names it"
        recursion = RecursionError("deep")
        recursion.__traceback__ = e.__traceback__
        assert ident.crash_frames(recursion) == ()
    assert ident.generic_frame("torch/_dynamo/utils.py:_get_fake_value_impl")
    assert not ident.generic_frame("torch/_dynamo/variables/builtin.py:_handle_insert_op_in_graph")


def test_hiding_a_cheap_key_equal_to_a_known_alias_is_triaged_not_known(tmp_path):
    """A finding whose cheap (surface) key is a known entry's alias was counted as known without triage."""
    from tests.test_filing import FakeQueue

    case = Case(LOG_BESIDE)
    f = finding("outputs", "miscompile", "out[0] values differ", "out[0] values differ")
    cheap = cheap_explanation(case, f).key
    known = KnownIssues({}, [{"key": "miscompile: list .append", "aliases": [cheap]}])
    ledger = Ledger(CampaignConfig(budget=1, out=tmp_path, spec=CompileSpec(), known=known, progress=False))
    ledger.triage = FakeQueue()
    ledger.record(case, f)
    assert not ledger.known_hits and identity(f.signature, cheap) in ledger.unique
    assert ledger.triage.jobs, "handed to triage"
    ledger.triage = None  # without triage, still never known on its cheap key
    other = finding("outputs", "miscompile", "out[1] values differ", "out[1] values differ")
    ledger.record(case, other)
    assert not ledger.known_hits


def test_hiding_dynfuzz_explain_runs_campaign_triage(tmp_path, monkeypatch):
    """`dynfuzz explain FILE` runs the code campaign triage runs (`explain.identify`) and files an unexplained
    finding as the campaign does: under the original program's cheap key."""
    from dynfuzz.triage import explain as explain_mod
    from dynfuzz.triage import queue
    from dynfuzz.triage.explain_file import explain_file, spec_of

    calls = []
    real = explain_mod.identify

    def spy(*args, **kwargs):
        calls.append(args[0].source)
        return real(*args, **kwargs)

    monkeypatch.setattr(explain_mod, "identify", spy)
    program = tmp_path / "log_beside.py"
    program.write_text("DYNFUZZ = {'compiler': 'perturb-output'}\n" + LOG_BESIDE)
    result = explain_file(program, spec_of, backstop=120, localize_too=False)
    case, f, spec = _finding(LOG_BESIDE, "perturb-output")
    t = queue.triage_one(case, f, spec, 120)
    assert len(calls) == 2, "both ran explain.identify"
    campaign = explain_mod.filed(case, f, t.explanation).key
    assert result.key == campaign == cheap_explanation(case, f).key


def test_a_missing_guard_is_named_by_what_changed_between_calls():
    """Dynamo reusing code after a bool changed: the key says a guard on a bool is missing, whatever the surface
    (a global flag here; bench/identity.py has an argument and an attribute)."""
    source = '''
import torch
FLAG = True
def f(x):
    return x + 1 if FLAG else x - 1
def between(call):
    global FLAG
    FLAG = not FLAG
def inputs(device, call=0):
    return (torch.linspace(-1.0, 1.0, 4, device=device),)
'''
    spec = CompileSpec()
    observed = ident.observe_case(Case(source), make_compiler(spec), spec)
    assert ident.guard_mechanism(observed.obs, 1) == "missing guard on bool"


def test_a_side_effect_is_named_by_the_kind_of_object_written():
    spec = CompileSpec("drop-set-arg-mutation")
    source = '''
import torch
def f(x, s):
    s.add(3)
    return x + 1
def inputs(device, call=0):
    return (torch.zeros(2, device=device), {1})
'''
    observed = ident.observe_case(Case(source), make_compiler(spec), spec)
    assert ident.state_mechanism(observed.obs, 0) == "side effect on set contents"
    e = explain(*_finding(source, "drop-set-arg-mutation"))
    assert e.key.startswith("miscompile: side effect") and not e.generic
    assert dataclasses.replace(e, locus="torch/x.py:y").key == e.key, "localization never changes a key"


def _traced_origin(source: str, details: tuple[str, ...] = ()) -> str | None:
    from dynfuzz.run.value_provenance import recording

    namespace: dict = {}
    exec(compile(source, "<origin>", "exec"), namespace)
    torch._dynamo.reset()
    with recording() as provenance:
        torch.compile(namespace["f"], backend="eager")(*namespace["inputs"]("cpu"))
    return provenance.origin(details, ident.COMMON_TRACKERS)


def test_the_origin_of_a_value_is_the_uncommon_tracker_method_that_made_it_and_patches_are_undone():
    from torch._dynamo.symbolic_convert import InstructionTranslator
    from torch._dynamo.variables.functions import FunctoolsPartialVariable

    before = (FunctoolsPartialVariable.__dict__["call_function"], InstructionTranslator.__dict__["_return"],
              list(InstructionTranslator.dispatch_table))
    partial = '''
import functools, torch
def g(t, k=1):
    return t * k
def f(x):
    return x.sum(), functools.partial(g, k=3)(x)
def inputs(device, call=0):
    return (torch.ones(3),)
'''
    assert _traced_origin(partial, ("out[1]: values: expected",)) == "FunctoolsPartialVariable.call_function"
    assert _traced_origin(partial, ("out[0]: values: expected",)) is None, "the other output: plain tensor code"
    unpacked = '''
import functools, torch
def pair(t, k=1):
    return t + k, t - k
def f(x):
    a, b = functools.partial(pair, k=2)(x)
    return b * 3
def inputs(device, call=0):
    return (torch.ones(3),)
'''
    assert _traced_origin(unpacked) == "FunctoolsPartialVariable.call_function", "through `a, b = ...`"
    stored = '''
import torch
class Box:
    pass
def f(x):
    b = Box()
    b.t = x * 2
    return b.t + 1
def inputs(device, call=0):
    return (torch.ones(3),)
'''
    assert _traced_origin(stored) is None, "reading a stored attribute made nothing"
    scanned = '''
import torch
from torch._higher_order_ops.associative_scan import associative_scan
def first(a, b):
    return a
def f(x):
    return associative_scan(first, torch.tanh(x).reshape(-1, 3), dim=0, combine_mode="generic"), x + 1
def inputs(device, call=0):
    return (torch.ones(2, 3),)
'''
    assert _traced_origin(scanned, ("out[0]: view: expected",)) != "FunctoolsPartialVariable.call_function", \
        "a partial inside torch's own associative_scan is not the program's (a 2.5.1 campaign bucket said so)"
    after = (FunctoolsPartialVariable.__dict__["call_function"], InstructionTranslator.__dict__["_return"],
             list(InstructionTranslator.dispatch_table))
    assert after == before


def test_a_wrong_value_with_no_needed_behaviour_is_keyed_by_its_origin_across_surfaces(tmp_path):
    """The partial-keyword mutant (FunctoolsPartialVariable.call_function patched) seen through a global partial
    of a user function and a local partial of a torch op: one key naming the patched method (it was two cheap
    keys naming the surface)."""
    import json
    import os
    import subprocess
    import sys

    programs = [REPO / "bench" / "identity_programs" / "partial-keyword-precedence" / n
                for n in ("global_partial.py", "partial_of_torch_op.py")]
    script = '''
import json, sys
from pathlib import Path
from dynfuzz.run.compilers import CompileSpec, make_compiler
from dynfuzz.run.judge import judge
from dynfuzz.triage.explain import explain, filed
from dynfuzz.triage.repro import read_program
spec = CompileSpec()
for path in sys.argv[1:]:
    case = read_program(Path(path)).case
    (f,) = [x for x in judge(case, make_compiler(spec), spec).findings if x.oracle == "outputs"]
    print(json.dumps(filed(case, f, explain(case, f, spec)).key))
'''
    env = dict(os.environ, DYNFUZZ_MUTANTS="partial-keyword-precedence")
    done = subprocess.run([sys.executable, "-c", script, *map(str, programs)], capture_output=True, text=True,
                          env=env, timeout=600)
    keys = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('"')]
    assert done.returncode == 0 and len(keys) == 2, done.stderr[-2000:]
    assert keys[0] == keys[1] == "miscompile: wrong output value from FunctoolsPartialVariable.call_function @dynamo"
    assert names_fault(keys[0])


def test_a_lost_write_is_keyed_by_the_one_mutation_kind_dynamo_replayed_whatever_holds_the_object():
    """A real torch 2.13 fault (a set subclass's write lost) through an argument and through an attribute of
    an argument: ablation gave no evidence for the attribute (its program keeps the replay when a statement
    goes), which left it the state's surface key `side effect on set-subclass contents`; Dynamo replayed one
    kind of mutation in both, and that names both."""
    import pytest

    folder = REPO / "bench" / "identity_real" / "set-subclass-write-lost"
    keys = []
    for name in ("argument_update.py", "attribute_discard.py"):
        from dynfuzz.triage.repro import read_program

        case = read_program(folder / name).case
        spec = CompileSpec()
        found = [f for f in judge(case, make_compiler(spec), spec).findings if f.oracle == "effects"]
        if not found:
            pytest.skip(f"torch {torch.__version__} keeps the write ({name})")
        keys.append(explain(case, found[0], spec).key)
    assert keys[0] == keys[1] == "miscompile: side effect UserDefinedSetVariable.value.existing @dynamo"


def test_a_graph_break_crash_is_keyed_by_its_type_whatever_entry_point_made_it_fatal():
    """Note [A graph break's type is its identity]: one walrus-in-a-comprehension fault, fatal under fullgraph,
    torch._dynamo.export, strict export and aot_compile, got five keys (the entry point's frames, the setting),
    none of them matching its known issue (a crash key had to name a torch frame); now one key, the known one."""
    from dynfuzz.triage.explain import _mechanism

    seen = set()
    for setting, error in [
            ("fullgraph=True", "Unsupported (Read uninitialized cell)"),
            ("export='dynamo'", "Unsupported (Read uninitialized cell) in torch/_dynamo/eval_frame.py:inner"),
            ("export='aot'", "Unsupported (Read uninitialized cell) in torch/_dynamo/convert_frame.py:"
                             "_fullgraph_capture_frame < torch/_dynamo/aot_compile.py:aot_compile_fullgraph"),
            ("config.nested_graph_breaks=True, fullgraph=True", "Unsupported (Read uninitialized cell)")]:
        mechanism = _mechanism(finding("exceptions", "crash", "c", "c"), "crash", None, None, [], error)
        e = Explanation("exceptions", "crash", f"walrus in a comprehension under {setting}", error=error,
                        layer="dynamo", ablated=True, mechanism=mechanism)
        assert not e.generic
        seen.add(e.key)
    assert seen == {"crash: Unsupported (Read uninitialized cell) @dynamo",
                    "crash: Unsupported (Read uninitialized cell) under config.nested_graph_breaks=True @dynamo"}
    assert names_fault("crash: Unsupported (Read uninitialized cell) @dynamo")
    known = KnownIssues.load(REPO / "corpus" / "known_issues.toml")
    assert known.match("crash: Unsupported (Read uninitialized cell) @dynamo", "2.13.0")["corpus"] == \
        "walrus_comprehension_uninitialized_cell.py"
    parens = "Unsupported (Unsupported python_type() call) in torch/_dynamo/eval_frame.py:inner"
    assert _mechanism(finding("exceptions", "crash", "c", "c"), "crash", None, None, [], parens) == \
        "Unsupported (Unsupported python_type() call)"
    observed = "TypeError (Observed exception)"  # the user code's exception in the trace: any program's, no identity
    assert _mechanism(finding("exceptions", "crash", "c", "c"), "crash", None, None, [], observed) == observed
    e = Explanation("exceptions", "crash", "logger under export='strict'", error=observed, layer="dynamo",
                    ablated=True, mechanism=observed)
    assert e.key == "crash: TypeError (Observed exception) under export='strict' @dynamo" and not names_fault(e.key)
