"""The Report model: exact JSON round trip, compact nodes, clear errors on bad input."""

from __future__ import annotations

import json
import math

import pytest

from nstviz.errors import ReportFormatError
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
    return Report(torch_version="2.13.0", runs={"baseline": Run(name="baseline"), "nonstrict": run},
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
    report = _report(user_exception=exc)
    with pytest.raises(ValueError, match="boom"):
        report.raise_user_error()
    back = Report.from_json(report.to_json())
    assert back.user_exception is None
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
    assert text.splitlines()[0] == "0 breaks -> 1, 0 graphs -> 0, outputs not compared"
    assert "break GB0007 x2 at <cell>:3 (f): r" in text
    assert "region r0 g: 1 inlined nodes" in text
