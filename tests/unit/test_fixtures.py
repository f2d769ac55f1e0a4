"""The passes, the headline and the CLI printer on recorded Reports (no torch.compile).

The fixtures are real captures recorded by ``tests/fixtures/make_fixtures.py`` (its header says
how each was made). Expected values are written down here, read off the recorded runs.
"""

from __future__ import annotations

import dataclasses
import html
import json
import pathlib

import pytest

from nstviz.cli.terminal import summary_table
from nstviz.jupyter.static_summary import html_summary, text_summary
from nstviz.passes.assemble import output_verdict, summarize_runs
from nstviz.passes.break_diff import diff_breaks
from nstviz.passes.counts import run_counts
from nstviz.passes.marks import failed_nonstrict
from nstviz.passes.notes import run_notes
from nstviz.report import Report, RunCounts

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
NAMES = ["seed", "module_block_break", "training_step", "fullgraph_data_dependent", "caught_fullgraph", "advisor", "recompile_limit"]


def load(name: str) -> Report:
    return Report.load_json(FIXTURES / f"{name}.report.json")


HEADLINES = {
    "seed": [
        ("breaks", "1 break → 0", "good"),
        ("graphs", "fullgraph failed → 1 graph", "good"),
        ("outputs", "outputs match eager", "good"),
    ],
    "module_block_break": [
        ("breaks", "1 break → 0", "good"),
        ("graphs", "5 graphs → 1", "good"),
        ("outputs", "outputs match", "good"),
    ],
    "training_step": [
        ("breaks", "2 breaks → 1", "good"),
        ("graphs", "4 graphs → 1", "good"),
        ("outputs", "outputs match", "good"),
    ],
    "fullgraph_data_dependent": [
        ("breaks", "0 breaks → 0", "neutral"),
        ("graphs", "1 graph → 0", "neutral"),
        ("failure", "nonstrict raised InternalTorchDynamoError", "bad"),
        ("outputs", "outputs not checked (the nonstrict run raised, so its outputs cannot be compared)", "neutral"),
    ],
    "caught_fullgraph": [  # caught or not, the fullgraph failure is a fatal break; eager is the reference
        ("breaks", "1 break → 0", "good"),
        ("graphs", "fullgraph failed → 1 graph", "good"),
        ("outputs", "outputs match eager", "good"),
    ],
    "advisor": [
        ("breaks", "1 break → 0", "good"),
        ("graphs", "3 graphs → 1", "good"),
        ("outputs", "outputs match", "good"),
    ],
    "recompile_limit": [
        ("note", "recompile limit hit: step (<fixture:recompile_limit>:10) runs eagerly", "bad"),
        ("breaks", "1 break → 0", "good"),
        ("graphs", "5 graphs → 2", "good"),
        ("outputs", "outputs match", "good"),
    ],
}


@pytest.mark.parametrize("name", NAMES)
def test_fixture_is_small_valid_and_current(name):
    path = FIXTURES / f"{name}.report.json"
    assert path.stat().st_size < 150_000
    report = load(name)
    report.validate()
    assert report.schema_version == 3
    assert report.to_dict() == json.loads(path.read_text(encoding="utf-8"))  # exact round trip


@pytest.mark.parametrize("name", NAMES)
def test_headline_of_each_fixture(name):
    report = load(name)
    assert [(c.kind, c.text, c.tone) for c in report.headline.chips] == HEADLINES[name]
    assert report.headline.text == ", ".join(text for _, text, _ in HEADLINES[name])
    # recomputed from the runs by the passes, it is the same: one truth
    diff, counts, headline = summarize_runs(report.runs, report.outputs)
    assert (diff, counts, headline) == (report.diff, report.counts, report.headline)


def test_counts_are_dynamo_graphs_and_ops():
    module = load("module_block_break")
    assert module.counts["baseline"] == RunCounts(
        graphs=5, breaks=1, break_hits=4, ops=11, aten_ops=16, regions=0, inlined_nodes=0, full_graph=False,
        graph_breaks=4,
    )
    assert module.counts["nonstrict"] == RunCounts(
        graphs=1, breaks=0, break_hits=0, ops=15, aten_ops=33, regions=3, inlined_nodes=18, full_graph=True,
        graph_breaks=0,
    )
    # ATen graphs are not counted as graphs, and their ops only in aten_ops
    base = module.runs["baseline"]
    assert len(base.graphs) > 5 and run_counts(base).graphs == 5
    training = load("training_step")
    assert {g.level for g in training.runs["baseline"].graphs} >= {"dynamo", "aten_forward", "aten_backward"}


def test_break_diff_matches_on_ids():
    training = load("training_step")
    diff = diff_breaks(training.runs["baseline"], training.runs["nonstrict"])
    assert [b.id for b in diff.resolved] == ["<fixture:training_step>:5:helper:GB0025"]
    assert [b.id for b in diff.remaining] == ["<fixture:training_step>:24:step:GB0123"]
    assert diff.introduced == ()
    # a break moved to another line is another break
    moved = dataclasses.replace(
        training.runs["nonstrict"],
        breaks=tuple(
            dataclasses.replace(b, id="", location=dataclasses.replace(b.location, line=99))
            for b in training.runs["nonstrict"].breaks
        ),
    )
    moved_diff = diff_breaks(training.runs["baseline"], moved)
    assert [b.id for b in moved_diff.introduced] == ["<fixture:training_step>:99:step:GB0123"]
    assert len(moved_diff.resolved) == 2 and moved_diff.remaining == ()


def test_output_verdict_pass():
    seed = load("seed")
    assert output_verdict(seed.runs, seed.outputs.comparisons) == seed.outputs
    failed = load("fullgraph_data_dependent")
    assert output_verdict(failed.runs, ()) == dataclasses.replace(
        failed.outputs, skipped_reason="the nonstrict run raised, so its outputs cannot be compared"
    )
    assert output_verdict(seed.runs, None).skipped_reason == "the output check was turned off (check=False)"


def test_notes_and_marks_passes():
    failed = load("fullgraph_data_dependent")
    nonstrict = failed.runs["nonstrict"]
    assert run_notes(("x", "x"), nonstrict) == ("x", *failed.notes)
    assert [(m.qualname, m.applied) for m in nonstrict.marked] == [("scale_of", False)]
    assert failed_nonstrict(load("seed").runs["baseline"], "get_magic_num") is None
    assert run_notes((), None) == ()


def test_advisor_fixture_keeps_its_candidates():
    report = load("advisor")
    assert list(report.runs) == ["baseline", "nonstrict", "attempt-1"]
    assert [(c.function, c.status, c.breaks_before, c.breaks_after) for c in report.candidates] == [
        ("helper", "improved", 1, 0)
    ]
    assert report.recommendation is not None and report.recommendation.functions == ("helper",)


def test_cli_printer_on_a_fixture():
    text = summary_table(load("module_block_break"))
    lines = text.splitlines()
    assert lines[0] == "1 break → 0, 5 graphs → 1, outputs match"
    assert lines[1].split() == ["baseline", "nonstrict"]
    assert lines[2].split() == ["graphs", "5", "1"]
    assert lines[3].split() == ["distinct", "breaks", "1", "0"]
    assert lines[4].split() == ["graph", "breaks", "4", "0"]  # Dynamo's counter
    assert lines[5].split() == ["breaks", "reached", "4", "0"]
    assert lines[6].split() == ["ops", "(Dynamo)", "11", "15"]
    assert lines[7].split() == ["ops", "(ATen)", "16", "33"]
    assert "breaks: 1 resolved, 0 remaining, 0 introduced" in text
    assert "resolved   GB0025  <fixture:module_block_break>:5 rms_scale" in text
    assert "(caused 4 graph breaks, reached 4×)" in text


def test_every_text_renderer_shows_the_same_headline():
    for name in NAMES:
        report = load(name)
        text = report.headline.text
        assert report.summary().splitlines()[0] == text
        assert summary_table(report).splitlines()[0] == text
        assert text_summary(report).splitlines()[0] == text
        assert f"&mdash; {html.escape(text)}</p>" in html_summary(report)  # as is, escaped


def test_version_1_fixture_reads_the_same():
    current = json.loads((FIXTURES / "advisor.report.json").read_text(encoding="utf-8"))
    v1 = {k: v for k, v in current.items() if k != "headline"}
    v1["schema_version"] = 1
    for run in v1["runs"].values():
        for b in run["breaks"]:
            del b["id"]
    for items in v1["diff"].values():
        for b in items:
            del b["id"]
    assert Report.from_dict(v1) == load("advisor")
