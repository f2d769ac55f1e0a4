"""Compile ids as values: parsed once from torch's text, written back the same; old Reports upgraded."""

from __future__ import annotations

import json
import pathlib

import pytest
from torch._guards import CompileId as TorchCompileId
from torch._guards import TraceId

from nstviz.report import Break, BreakSplit, Chip, CompileId, GuardFailure, Location, Report
from nstviz.report._codec import _encode
from nstviz.tracing.breaks import BreakHit, link_breaks

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("0/0", (0, 0, 0, None)),
        ("3/12", (3, 12, 0, None)),
        ("1/0_1", (1, 0, 1, None)),
        ("!2/0/1", (0, 1, 0, 2)),
        ("!2/0/1_3", (0, 1, 3, 2)),
        ("!0", (None, None, 0, 0)),
    ],
)
def test_parse_and_text_round_trip(text, fields):
    cid = CompileId.parse(text)
    assert (cid.frame_id, cid.frame_compile_id, cid.attempt, cid.compiled_autograd_id) == fields
    assert cid.text == str(cid) == text
    assert cid.bracketed == f"[{text}]"
    assert CompileId.parse(cid.bracketed) == cid  # tlparse's and Dynamo's log prefix form


@pytest.mark.parametrize("ca", [None, 4])
@pytest.mark.parametrize("attempt", [0, 2])
def test_text_is_what_torch_prints(ca, attempt):
    torch_id = TorchCompileId(frame_id=5, frame_compile_id=1, compiled_autograd_id=ca)
    printed = str(TraceId(torch_id, attempt))  # how torch's structured log and messages write it
    cid = CompileId.parse(printed)
    assert (cid.frame_id, cid.frame_compile_id, cid.attempt, cid.compiled_autograd_id) == (5, 1, attempt, ca)
    assert cid.text == printed
    assert CompileId.parse(str(TorchCompileId(frame_id=None, frame_compile_id=None, compiled_autograd_id=7))).text == "!7"


@pytest.mark.parametrize("text", ["", "0", "0/", "a/b", "0/0/0", "0/0_", "!", "[0/0", "0/0]", "[]", "1/0_x", "-1/0"])
def test_text_that_names_no_compile_is_refused(text):
    with pytest.raises(ValueError, match="not a compile id"):
        CompileId.parse(text)


def test_equal_to_its_text_and_hashed_as_it():
    cid = CompileId(frame_id=1, frame_compile_id=0, attempt=1)
    assert cid == "1/0_1" and cid != "1/0" and cid != CompileId(frame_id=1, frame_compile_id=0)
    assert {cid: 1}["1/0_1"] == 1 and "1/0_1" in {cid}
    assert cid.frame_compile == (1, 0)


def test_model_values_written_with_text_hold_ids():
    loc = Location(file="f.py", line=1, function="f")
    brk = Break(gb_id=None, reason="r", count=1, fatal=False, location=loc, compile_ids=("0/0", "1/0_1"),
                splits=(BreakSplit(compile_id="1/0", function="g"),))
    assert all(isinstance(c, CompileId) for c in brk.compile_ids) and isinstance(brk.splits[0].compile_id, CompileId)
    assert brk.tally.splits_text == "g 1/0"
    assert Chip(kind="note", text="t", compile_id="0/2").compile_id == CompileId(frame_id=0, frame_compile_id=2)
    assert GuardFailure(compile_id="", guard="n == 1").compile_id is None
    with pytest.raises(ValueError):
        Break(gb_id=None, reason="r", count=1, fatal=False, location=loc, compile_ids=("nonsense",))


def test_the_json_holds_objects():
    report = Report.load_json(FIXTURES / "module_block_break.report.json")
    data = json.loads(report.to_json())
    brk = data["runs"]["baseline"]["breaks"][0]
    assert brk["compile_ids"][:2] == [{"frame_id": 0, "frame_compile_id": 0}, {"frame_id": 1, "frame_compile_id": 0}]
    assert brk["splits"][0]["compile_id"] == {"frame_id": 0, "frame_compile_id": 0}
    assert Report.from_json(report.to_json()) == report
    full = CompileId(frame_id=1, frame_compile_id=0, attempt=2, compiled_autograd_id=3)
    assert _encode(full) == {"frame_id": 1, "frame_compile_id": 0, "attempt": 2, "compiled_autograd_id": 3}


@pytest.mark.parametrize("name", ["module_block_break", "recompile_limit"])
def test_a_schema_2_report_is_read_and_upgraded(name):
    old_text = (FIXTURES / "schema2" / f"{name}.report.json").read_text(encoding="utf-8")
    old = json.loads(old_text)
    assert old["schema_version"] == 2
    report = Report.from_json(old_text)
    assert report.schema_version == 3
    assert report == Report.load_json(FIXTURES / f"{name}.report.json")  # the same content, ids typed
    for run_name, run in report.runs.items():
        for brk, before in zip(run.breaks, old["runs"][run_name]["breaks"], strict=True):
            assert [c.text for c in brk.compile_ids] == before["compile_ids"]
            assert [s.compile_id.text for s in brk.splits] == [s["compile_id"] for s in before["splits"]]
        for c, before in zip(run.compiles, old["runs"][run_name]["compiles"], strict=True):
            for g, was in zip(c.guard_failures, before.get("guard_failures", []), strict=True):
                assert (g.compile_id.text if g.compile_id else "") == was["compile_id"]
    chips = [c for c in report.headline.chips if c.compile_id is not None]
    assert [c.compile_id.text for c in chips] == [c["compile_id"] for c in old["headline"]["chips"] if "compile_id" in c]
    assert json.loads(report.to_json())["schema_version"] == 3


def test_a_schema_2_id_that_names_no_compile_is_dropped():
    old = json.loads((FIXTURES / "schema2" / "module_block_break.report.json").read_text(encoding="utf-8"))
    old["runs"]["baseline"]["breaks"][0]["compile_ids"].append("None/None")
    report = Report.from_dict(old)
    assert [c.text for c in report.runs["baseline"].breaks[0].compile_ids] == ["0/0", "1/0", "2/0", "1/1"]


def _hit(line: int, cid: str | None, caused: int | None, *, fatal: bool = False, cause: str | None = None) -> BreakHit:
    loc = Location(file="m.py", line=line, function="f")
    return BreakHit(id=f"m.py:{line}:f:GB0025", gb_id="GB0025", reason="graph_break()", fatal=fatal, location=loc,
                    gb_type="graph_break()", detail="d", explanation=None, hints=(), link=None, stack=(loc,),
                    compile_id=CompileId.parse(cid) if cid else None, caused=caused, root_cause=cause)


def test_link_breaks_builds_each_break_once_from_its_hits(monkeypatch):
    made = []
    post_init = Break.__post_init__
    monkeypatch.setattr(Break, "__post_init__", lambda self: (made.append(self.id), post_init(self)))
    hits = [_hit(3, "0/0", 1), _hit(9, "0/0", 0, cause="E: x"), _hit(3, "1/0", 1), _hit(3, "1/0", 1), _hit(3, "0/0_1", 0),
            _hit(9, None, 0, fatal=True)]
    breaks = link_breaks(hits, (), ())
    assert made == ["m.py:3:f:GB0025", "m.py:9:f:GB0025"]  # one Break each, in first-seen order
    first, second = breaks
    assert (first.count, first.caused, first.fatal) == (4, 3, False)
    assert first.compile_ids == ("0/0", "1/0", "0/0_1")
    assert [(s.compile_id.text, s.count) for s in first.splits] == [("0/0", 1), ("1/0", 2)]
    assert first.tally.caused_text == "caused 3 graph breaks"
    assert (second.count, second.caused, second.fatal, second.root_cause, second.compile_ids) == (2, 0, True, "E: x", ("0/0",))
