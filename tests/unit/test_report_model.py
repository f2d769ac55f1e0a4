"""The Report model: exact JSON round trip, compact nodes, clear errors on bad input."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from nstviz.errors import ReportFormatError
from nstviz.passes.assemble import build_report
from nstviz.report import (
    SCHEMA_VERSION,
    Break,
    Graph,
    Location,
    Node,
    OutputCheck,
    Region,
    Report,
    Run,
    TensorInfo,
)
from nstviz.report.document import attach_user_exception as attach


def _report(**kw) -> Report:
    loc = Location(file="<cell>", line=3, function="f", code="x = g(y)")
    node = Node(name="mul", op="call_function", target="aten.mul.Tensor", inputs=("x",), region="r0",
                tensors=(TensorInfo(shape=(2, "s0"), dtype="f32", device="cpu"),), stack=0)
    run = Run(
        name="nonstrict",
        graphs=(Graph(id="0/0:aten_forward", level="aten_forward", frame_id=0, compile_id=0,
                      nodes=(Node(name="x", op="placeholder", target="x"), node)),),
        breaks=(Break(gb_id="GB0007", reason="r", count=2, fatal=False, location=loc),),
        regions=(Region(id="r0", function="g", nodes={"0/0:aten_forward": ("mul",)}),),
    )
    return build_report(torch_version="2.13.0", runs={"baseline": Run(name="baseline"), "nonstrict": run},
                        stacks=((loc,),), **kw)


def test_round_trip_is_exact_including_non_finite_floats():
    report = _report(outputs=OutputCheck(match=False, max_abs_diff=math.inf, max_rel_diff=math.nan))
    text = report.to_json()
    data = json.loads(text)
    assert data["outputs"]["max_abs_diff"] == "Infinity" and data["outputs"]["max_rel_diff"] == "NaN"
    back = Report.from_json(text)
    assert back.outputs.max_abs_diff == math.inf and math.isnan(back.outputs.max_rel_diff)
    assert back.runs == report.runs and back.stacks == report.stacks
    back.validate()


def test_nodes_are_compact():
    data = json.loads(_report().to_json())
    node = data["runs"]["nonstrict"]["graphs"][0]["nodes"][0]
    assert node == {"name": "x", "op": "placeholder", "target": "x", "inputs": [], "region": None}


def test_user_exception_is_live_only():
    exc = ValueError("boom")
    report = attach(_report(), exc)
    assert report.user_exception is exc
    assert "user_exception" not in {f.name for f in dataclasses.fields(Report)}  # not part of the data
    with pytest.raises(ValueError, match="boom"):
        report.raise_user_error()
    back = Report.from_json(report.to_json())
    assert back.user_exception is None
    assert dataclasses.replace(report).user_exception is None  # a copy carries no live object
    back.raise_user_error()  # nothing to raise


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not valid JSON"),
        ("[]", "must be a JSON object"),
        ("{}", "no integer 'schema_version'"),
        (json.dumps({"schema_version": SCHEMA_VERSION + 1}), "newer than this nstviz"),
        (json.dumps({"schema_version": SCHEMA_VERSION, "runs": {}}), "missing required field 'torch_version'"),
    ],
)
def test_bad_json_gets_a_clear_error(text, message):
    with pytest.raises(ReportFormatError, match=message):
        Report.from_json(text)


def test_summary_of_a_loaded_report():
    text = Report.from_json(_report().to_json()).summary()
    assert text.splitlines()[0] == "0 breaks → 1, 0 graphs → 0, outputs not checked"
    assert "break GB0007 at <cell>:3 (f): r\n    caused 1 graph break (estimated), reached 2×" in text
    assert "region r0 g: 1 inlined nodes" in text


def test_version_1_is_read_and_upgraded():
    current = json.loads(_report().to_json())
    v1 = {k: v for k, v in current.items() if k not in ("headline", "counts")}
    v1["schema_version"] = 1
    for run in v1["runs"].values():
        for b in run["breaks"]:
            del b["id"]
    for items in v1["diff"].values():
        for b in items:
            del b["id"]
    back = Report.from_json(json.dumps(v1))
    assert back.schema_version == 3
    assert back.runs["nonstrict"].breaks[0].id == "<cell>:3:f:GB0007"
    assert back.diff.introduced[0].id == "<cell>:3:f:GB0007"
    assert back.counts["nonstrict"].breaks == 1 and back.counts["nonstrict"].break_hits == 2
    assert back.headline.text == "0 breaks → 1, 0 graphs → 0, outputs not checked"
    back.validate()


def test_break_id_is_assigned_once():
    loc = Location(file="a.py", line=4, function="g")
    b = Break(gb_id=None, reason="some reason", count=1, fatal=False, location=loc)
    assert b.id.startswith("a.py:4:g:r") and len(b.id) == len("a.py:4:g:r") + 10
    moved = dataclasses.replace(b, count=3)
    assert moved.id == b.id
    other = Break(gb_id=None, reason="another reason", count=1, fatal=False, location=loc)
    assert other.id != b.id
    data = json.loads(_report().to_json())
    data["runs"]["nonstrict"]["breaks"][0].pop("id")
    with pytest.raises(ReportFormatError, match="missing required field 'id' of Break"):
        Report.from_dict(data)


def test_counts_are_required_for_every_run():
    data = json.loads(_report().to_json())
    del data["counts"]["nonstrict"]
    with pytest.raises(ReportFormatError, match=r"\$\.counts: no counts for run\(s\) 'nonstrict'"):
        Report.from_dict(data)
    del data["counts"]
    with pytest.raises(ReportFormatError, match="missing required field 'counts' of Report"):
        Report.from_dict(data)


def test_run_origin_and_finding_kind_are_closed_vocabularies():
    data = json.loads(_report().to_json())
    data["runs"]["baseline"]["origin"] = "torch_trace"
    data["findings"] = [{"kind": "rank_missing", "message": "after has no run of rank 1", "ranks": [1]}]
    report = Report.from_dict(data)
    assert (report.runs["baseline"].origin, report.findings[0].kind) == ("torch_trace", "rank_missing")
    data["runs"]["baseline"]["origin"] = "elsewhere"
    with pytest.raises(ReportFormatError, match=r"\$\.runs\.baseline\.origin: 'elsewhere' is not one of \('record', 'torch_trace'\)"):
        Report.from_dict(data)
    data["runs"]["baseline"]["origin"] = "record"
    data["findings"][0]["kind"] = "ranks_vanished"
    with pytest.raises(ReportFormatError, match=r"\$\.findings\[0\]\.kind: 'ranks_vanished' is not one of"):
        Report.from_dict(data)
