"""The facts every renderer reads from the Report: per-break counts and texts, rank order, error kind.

They are computed once in Python (``Break.tally``, ``Run.break_order`` when the value is made;
``Run.error_kind`` and ``Headline.nothing_marked`` by the capture and the headline pass) and
written to the JSON the viewer reads. No torch.compile here.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

from nstviz.cli.terminal import status_code
from nstviz.passes.checks import check_failures
from nstviz.report import Break, BreakSplit, Location, Report, Run
from nstviz.report.facts import count_of, counts_text, error_kind, rank_breaks, ranked_breaks, short_counts
from nstviz.schema import load_schema

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _b(name: str, count: int, caused: int | None, *, fatal: bool = False, **kw) -> Break:
    return Break(
        gb_id="GB0025", reason=name, count=count, caused=caused, fatal=fatal,
        location=Location(file="/w/demo.py", line=len(name), function=name), **kw,
    )


def test_tally_exact_estimated_and_fatal():
    rms = _b("rms", 4, 4, splits=(BreakSplit(compile_id="0/0", function="TinyNet.forward"), BreakSplit(compile_id="1/0", function="Block.forward", count=3)))
    assert rms.tally.caused_text == "caused 4 graph breaks"
    assert rms.tally.splits_text == "TinyNet.forward 0/0, Block.forward 1/0×3"
    assert counts_text(rms) == "caused 4 graph breaks (TinyNet.forward 0/0, Block.forward 1/0×3), reached 4×"
    assert short_counts(rms) == "caused 4 graph breaks, reached 4×"
    old = _b("old", 6, None, compile_ids=("0/0", "0/0_1", "1/0", "1/0_1", "2/0", "2/1"))  # made before `caused`
    assert (count_of(old).caused, count_of(old).exact) == (3, False)
    assert old.tally.caused_text == "caused ~3 graph breaks"
    assert counts_text(old) == "caused 3 graph breaks (estimated), reached 6×"
    fatal = _b("fatal", 1, None, fatal=True)
    assert (fatal.tally.caused_text, short_counts(fatal)) == ("stopped the compile", "fatal, reached 1×")
    assert counts_text(fatal) == "stopped the compile (fullgraph), reached 1×"
    # derived from the other fields whenever a Break is made, so never stale
    assert dataclasses.replace(old, caused=1).tally.caused_text == "caused 1 graph break"


def test_rank_order_caused_then_reached_then_fatal_then_first_seen():
    breaks = (_b("a", 5, 1), _b("b", 2, 2), _b("c", 5, 1, fatal=True), _b("d", 5, 1), _b("e", 9, 0))
    run = Run(name="baseline", breaks=breaks)
    assert [breaks[i].reason for i in run.break_order] == ["b", "c", "a", "d", "e"]
    assert [b.reason for b in ranked_breaks(run)] == [b.reason for b in rank_breaks(breaks)] == ["b", "c", "a", "d", "e"]
    assert dataclasses.replace(run, breaks=breaks[:2]).break_order == (1, 0)


def test_derived_fields_are_written_for_the_viewer_and_recomputed_on_reading():
    text = (FIXTURES / "training_step.report.json").read_text(encoding="utf-8")
    report = Report.from_json(text)
    data = report.to_dict()
    run = data["runs"]["baseline"]
    assert run["break_order"] == list(report.runs["baseline"].break_order)
    assert run["breaks"][0]["tally"]["short_text"] == short_counts(report.runs["baseline"].breaks[0])
    run["breaks"][0]["tally"] = {"reached": 99, "caused": 99, "caused_text": "tampered"}
    run["break_order"] = [5, 5]
    again = Report.from_dict(data)
    assert again == report  # what the JSON says about derived fields is never read back
    for cut in (run, *run["breaks"]):  # a Report written before the fields existed still loads
        cut.pop("break_order", None)
        cut.pop("tally", None)
    assert Report.from_dict(data) == report
    schema = load_schema()["$defs"]
    assert "tally" in schema["Break"]["properties"] and "tally" not in schema["Break"]["required"]
    assert "break_order" in schema["Run"]["properties"] and "break_order" not in schema["Run"].get("required", [])


def test_error_kind_is_decided_once_and_read_by_the_cli():
    names = {"Unsupported", "UserError"}
    assert error_kind(None, None, names) is None
    assert error_kind("Unsupported", "Unsupported: x", names) == "dynamo"
    assert error_kind("ValueError", "ValueError: x", names) == "user"
    assert error_kind("SystemExit", "SystemExit: 0", names) == "clean_exit"
    assert error_kind("SystemExit", "SystemExit: 2", names) == "user"
    report = Report.load_json(FIXTURES / "seed.report.json")
    base = report.runs["baseline"]

    def with_baseline(**fields) -> Report:
        run = dataclasses.replace(base, breaks=(), **fields)
        return dataclasses.replace(report, runs={**report.runs, "baseline": run})

    # the CLI reads the kind the capture stored (here one no name rule would give)...
    assert status_code(with_baseline(error="ValueError: x", error_type="ValueError", error_kind="dynamo")) == 0
    assert status_code(with_baseline(error="Unsupported: x", error_type="Unsupported", error_kind="user")) == 3
    # ...and, for a Report saved before it was stored, torch 2.13/2.14's names (no torch import)
    assert status_code(with_baseline(error="Unsupported: x", error_type="Unsupported", error_kind=None)) == 0
    assert status_code(with_baseline(error="ValueError: x", error_type="ValueError", error_kind=None)) == 3


def test_nothing_marked_is_a_headline_field_and_old_reports_keep_it():
    from nstviz.passes.assemble import summarize_runs
    from nstviz.report import OutputCheck

    report = Report.load_json(FIXTURES / "seed.report.json")
    runs = {"baseline": report.runs["baseline"]}
    _, counts, headline = summarize_runs(runs, OutputCheck(match=None), nothing_marked=True)
    assert headline.nothing_marked and headline.chips[0].text.startswith("nothing was marked")
    alone = dataclasses.replace(report, runs=runs, counts=counts, headline=headline, diff=report.diff)
    assert check_failures(alone) == ["nothing was marked (the advisor recommended nothing), so there is no nonstrict run"]
    data = json.loads(alone.to_json())
    del data["headline"]["nothing_marked"]  # saved before the field existed: the chip said it
    assert Report.from_dict(data).headline.nothing_marked
    _, counts, other = summarize_runs(runs, OutputCheck(match=None))
    assert not other.nothing_marked
    assert check_failures(dataclasses.replace(alone, headline=other)) == ["there is no nonstrict run (see the notes above)"]
