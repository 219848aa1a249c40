"""Known issues by bucket key: matching per torch release, keys computed from repros, --check, add."""
from __future__ import annotations

from pathlib import Path

import pytest
from dynfuzz.cli import main
from dynfuzz.triage import known as known_mod
from dynfuzz.triage.known import KnownIssues

KEY = "miscompile: side effect on set contents"  # the explained key of PROGRAM under drop-set-arg-mutation
CHEAP = "effects/lost-effect: set argument .add"
PROGRAM = '''import torch
def f(x, s):
    s.add(3)
    return x + 1
def inputs(device, call=0):
    return (torch.zeros(2, device=device), {1})
'''


def _repro(tmp_path: Path) -> Path:
    """A hand-written program that diverges under the drop-set-arg-mutation double."""
    path = tmp_path / "set_arg_add.py"
    path.write_text(PROGRAM.replace("import torch\n", "import torch\nDYNFUZZ = {'compiler': "
                                    "'drop-set-arg-mutation', 'backend': 'eager', 'device': 'cpu'}\n", 1))
    return path


def test_match_by_key_on_listed_releases_only():
    crash = "crash: KeyError in torch/_dynamo/side_effects.py:load_attr"
    known = KnownIssues(issues=[{"key": KEY, "torch": ["2.13.0"]}, {"key": crash, "torch": "2.5.1"}])
    assert known.match(KEY, "2.13.0+cpu") is not None
    assert known.match(KEY, "2.12.0") is None, "a key may change between releases: match only where listed"
    assert known.match(KEY + " @dynamo", "2.13.0") is None
    assert known.match(crash, "2.5.1") is not None
    layered = KnownIssues(issues=[{"key": KEY + " @dynamo", "torch": ["2.13.0"]}])
    assert layered.match(KEY, "2.13.0") is not None, "a key without a layer matches whatever the layer"
    assert layered.match(KEY + " @aot_eager", "2.13.0") is None


def test_aliases_match_like_the_key_and_a_locus_never_hides_an_entry():
    known = KnownIssues(issues=[{"key": KEY, "aliases": [CHEAP, "miscompile: set .update"], "torch": ["2.13.0"]}])
    assert known.match(CHEAP, "2.13.0") is None, "a cheap key names the surface: never known before triage"
    assert known.match("miscompile: set .update", "2.13.0") is not None, "an explained alias matches"
    assert known.match(KEY + " near torch/_dynamo/side_effects.py:SideEffects.codegen", "2.13.0") is not None
    assert known.match("miscompile: set .discard", "2.13.0") is None


def test_a_known_fault_that_needed_another_setting_to_surface_is_known():
    """A 2.13 run filed four known faults as new buckets only because the drawn program needed fullgraph, dynamic
    shapes or a config to show them: the settings are how a fault surfaced. With them taken off both sides the key
    must still match, on a listed release only; a key left naming no fault (a bare exception type) never does."""
    deque = "miscompile: side effect DequeVariable.value.existing @dynamo"
    crash = ("crash: InternalTorchDynamoError in torch/_tensor.py:_typed_storage < torch/_tensor.py:__reduce_ex__"
             " @dynamo")
    bare = "crash: AttributeError @dynamo"
    known = KnownIssues(issues=[{"key": deque, "torch": ["2.13.0"]}, {"key": crash, "torch": ["2.13.0"]},
                                {"key": bare, "torch": ["2.13.0"]},
                                {"key": "miscompile: missing guard on float under dynamic=True @dynamo",
                                 "torch": ["2.13.0"]}])
    under = deque.replace(" @dynamo", " under fullgraph=True @dynamo")
    assert known.match(under, "2.13.0") is not None
    assert known.match(crash.replace(" @", " under config.use_graph_deduplication=True @"), "2.13.0") is not None
    assert known.match("miscompile: missing guard on float @dynamo", "2.13.0") is not None, "settings on the entry"
    assert known.match(under, "2.12.0") is None, "an unlisted release matches only a verified exact key"
    assert known.match("crash: AttributeError under fullgraph=True @dynamo", "2.13.0") is None
    assert known.match("miscompile: side effect SetVariable.value.existing under fullgraph=True @dynamo",
                       "2.13.0") is None


def test_refresh_merges_entries_that_name_one_fault(tmp_path):
    first, second = _repro(tmp_path), tmp_path / "second.py"
    second.write_text(first.read_text().replace("s.add(3)", "s.add(4)\n    s.add(5)"))
    known = KnownIssues(issues=[{"title": "a", "upstream": "", "corpus": str(first), "note": "one"},
                                {"title": "b", "upstream": "https://example.invalid/2", "corpus": str(second)}],
                        path=tmp_path / "k.toml")
    assert known_mod.refresh(known, "2.13.0", out=lambda s: None) == 0
    (item,) = known.issues
    assert item["corpus"] == [str(first), str(second)] and item["upstream"] == "https://example.invalid/2"
    assert item["key"] == KEY and known_mod.check(known, "2.13.0", out=lambda s: None) == 0


def test_save_and_load_round_trip(tmp_path):
    path = tmp_path / "known.toml"
    item = {"key": KEY, "signature": "0123456789ab", "title": 'a "quoted" title', "upstream": "",
            "corpus": "corpus/x.py", "torch": ["2.13.0", "2.14.0"]}
    KnownIssues(issues=[item], path=path).save()
    loaded = KnownIssues.load(path)
    assert loaded.issues == [item] and "0123456789ab" in loaded
    assert loaded.match(KEY, "2.14.0") is item or loaded.match(KEY, "2.14.0") == item


def test_refresh_computes_keys_and_check_catches_drift(tmp_path):
    repro = _repro(tmp_path)
    known = KnownIssues(issues=[{"title": "t", "upstream": "", "corpus": str(repro)}], path=tmp_path / "k.toml")
    assert known_mod.refresh(known, "2.13.0+cpu", out=lambda s: None) == 0
    (item,) = known.issues
    assert item["key"] == KEY and item["torch"] == ["2.13.0"] and item["aliases"] == [CHEAP]
    assert known_mod.check(known, "2.13.0", out=lambda s: None) == 0
    item["key"], item["aliases"] = "miscompile: something else", []
    lines: list[str] = []
    assert known_mod.check(known, "2.13.0", out=lines.append) == 1 and lines[0].startswith("DRIFT")
    assert known_mod.check(known, "2.14.0", out=lines.append) == 0, "entries for other releases are skipped"


def test_known_cli_add_check_and_usage_errors(tmp_path, capsys):
    toml = tmp_path / "known.toml"
    toml.write_text("")
    bucket = tmp_path / "findings" / f"lost-effect-set-argument-add-{'a' * 12}"
    bucket.mkdir(parents=True)
    (bucket / "repro.py").write_text(_repro(tmp_path).read_text())
    (bucket / "report.md").write_text("# [dynamo] lost set.add on an argument\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    item = known_mod.add(KnownIssues.load(toml), bucket, "2.13.0", "https://example.invalid/1", corpus_dir=corpus)
    assert item["key"] == KEY and item["upstream"] == "https://example.invalid/1"
    assert (corpus / "lost_effect_set_argument_add.py").is_file()
    assert item["title"] == "[dynamo] lost set.add on an argument"
    assert main(["known", "add", str(tmp_path / "nope"), "--known", str(toml)]) == 2
    assert main(["known", "add", "--known", str(toml)]) == 2
    assert main(["known", "--known", str(toml)]) == 0


@pytest.mark.slow
def test_repository_known_issues_have_no_drift():
    """Every corpus repro still produces the key its known_issues.toml entry records (on listed releases)."""
    from dynfuzz.triage.repro import torch_version

    lines: list[str] = []
    assert known_mod.check(KnownIssues.load(), torch_version(), out=lines.append) == 0, "\n".join(lines)
