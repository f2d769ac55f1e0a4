"""The checked-in JSON Schema equals the one generated from the dataclasses, and real
Reports validate against it."""

from __future__ import annotations

import json

import jsonschema
import pytest
import torch

import nstviz
from nstviz.errors import ReportFormatError
from nstviz.passes.assemble import build_report
from nstviz.report import Graph, Node, Region, Report, Run
from nstviz.report.model import SCHEMA_VERSION
from nstviz.schema import SCHEMA_PATH, generate_schema, load_schema, schema_text
from tests.capture.cases import corpus as c


def test_checked_in_schema_is_current():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "nstviz/schema/report.schema.json is stale: run `python -m nstviz.schema`"
    )
    jsonschema.Draft202012Validator.check_schema(load_schema())


@pytest.fixture(scope="module")
def real_report() -> Report:
    torch._dynamo.reset()
    return nstviz.compare(c.loop_fn, torch.ones(3), nonstrict=["loop_helper"])


def test_real_report_validates_against_schema(real_report):
    data = json.loads(real_report.to_json())
    jsonschema.validate(data, generate_schema())
    assert data["schema_version"] == SCHEMA_VERSION == 3 and set(data["runs"]) == {"baseline", "nonstrict"}
    for run in data["runs"].values():
        assert {"graphs", "breaks", "regions", "error"} <= set(run)
    assert set(data["diff"]) == {"resolved", "remaining", "introduced"}
    assert {"match", "max_abs_diff", "details"} <= set(data["outputs"])


def test_schema_rejects_unknown_fields_and_newer_versions(real_report):
    data = json.loads(real_report.to_json())
    data["runs"]["baseline"]["bogus"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, generate_schema())
    newer = json.loads(real_report.to_json())
    newer["schema_version"] = 99
    with pytest.raises(ReportFormatError, match="newer"):
        Report.from_dict(newer)


def test_user_exception_is_not_serialised(real_report):
    assert "user_exception" not in json.loads(real_report.to_json())


def test_summary_headline_and_runs(real_report):
    text = real_report.summary()
    lines = text.splitlines()
    # as many graphs, but the rest of loop_fn no longer runs as Python (Dynamo skipped that frame):
    # said, not counted as an improvement (explain counts the same graph)
    assert lines[0] == (
        "Dynamo skipped the frame loop_fn: a break inside a loop (GB7000), "
        "1 break → 0, 1 graph → 1, 1 fewer frame(s) run eagerly, but the same 1 graph: not an improvement, outputs match"
    )
    assert any(
        line.startswith("[baseline] 1 graph, 1 distinct break (2 graph breaks counted by Dynamo, reached 3×)")
        for line in lines
    )
    assert "    caused 2 graph breaks (loop_fn 0/0, loop_helper 1/0), reached 3×" in lines
    assert any(line.startswith("[nonstrict] 1 graph, 0 distinct breaks") and "6 regions" in line for line in lines)
    assert "outputs baseline vs nonstrict: match" in text


def test_validate_names_every_problem():
    bad = build_report(
        torch_version="x",
        runs={
            "baseline": Run(
                name="baseline",
                graphs=(
                    Graph(id="g", level="dynamo", frame_id=0, compile_id=0,
                          nodes=(Node(name="a", op="call_function", target="t", inputs=("zz",), region="r9"),)),
                    Graph(id="g", level="dynamo", frame_id=0, compile_id=1),
                ),
                regions=(Region(id="r0", function="f", nodes={"g": ("nope",), "h": ("a",)}),),
            )
        },
    )
    with pytest.raises(ReportFormatError) as info:
        bad.validate()
    msg = str(info.value)
    for needle in ("duplicate graph id 'g'", "input 'zz'", "unknown region 'r9'", "unknown node g/nope", "unknown graph 'h'"):
        assert needle in msg


def test_validate_accepts_real_report(real_report):
    real_report.validate()



def test_headline_keeps_graph_counts_when_other_functions_compiled(tmp_path):
    """The demo: get_magic_num fails fullgraph=True, but the module's frames compiled 6 graphs."""
    from nstviz.cli.main import main

    assert main(["demo", "-o", str(tmp_path / "demo.html"), "--json", str(tmp_path / "demo.json"), "--quiet"]) == 0
    report = Report.load_json(tmp_path / "demo.json")
    assert report.summary().splitlines()[0] == "2 breaks → 0, 6 graphs → 2, outputs match eager"
