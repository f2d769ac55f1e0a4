"""The headline, computed once in Python (nstviz/analysis/headline.py), on hand-made runs."""

from __future__ import annotations

import json

from nstviz.analysis.headline import build_headline, format_number
from nstviz.report import Break, Chip, Location, OutputCheck, OutputComparison, Report, Run, RunCounts

FATAL = Break(gb_id="GB0001", reason="r", count=1, fatal=True, location=Location(file="f.py", line=1, function="f"))
EAGER_MATCH = OutputCheck(
    match=True, max_abs_diff=0.0, comparisons=(OutputComparison(left="eager", right="nonstrict", match=True, max_abs_diff=0.0),)
)


def counts(graphs: int, breaks: int) -> RunCounts:
    return RunCounts(
        graphs=graphs, breaks=breaks, break_hits=breaks, ops=1, aten_ops=1, regions=0, inlined_nodes=0,
        full_graph=graphs == 1 and not breaks,
    )


def chips(baseline: Run, nonstrict: Run, c: dict[str, RunCounts], outputs: OutputCheck) -> list[tuple[str, str]]:
    headline = build_headline({"baseline": baseline, "nonstrict": nonstrict}, c, outputs)
    assert headline.text == ", ".join(chip.text for chip in headline.chips)
    return [(chip.text, chip.tone) for chip in headline.chips]


def test_fullgraph_failure_then_nonstrict_compiled_is_green():
    got = chips(
        Run(name="baseline", breaks=(FATAL,), error="Unsupported: ...", error_type="Unsupported"),
        Run(name="nonstrict"),
        {"baseline": counts(0, 1), "nonstrict": counts(1, 0)},
        EAGER_MATCH,
    )
    assert got == [("1 break → 0", "good"), ("fullgraph failed → 1 graph", "good"), ("outputs match eager", "good")]


def test_red_only_for_real_regressions():
    pair = OutputCheck(match=True, comparisons=(OutputComparison(left="baseline", right="nonstrict", match=True),))
    more = chips(Run(name="baseline"), Run(name="nonstrict"), {"baseline": counts(2, 1), "nonstrict": counts(3, 2)}, pair)
    assert more == [("1 break → 2", "bad"), ("2 graphs → 3", "neutral"), ("outputs match", "good")]
    raised = chips(
        Run(name="baseline", breaks=(FATAL,)),
        Run(name="nonstrict", error="boom", error_type="ValueError"),
        {"baseline": counts(0, 1), "nonstrict": counts(0, 0)},
        OutputCheck(match=None, skipped_reason="the nonstrict run raised"),
    )
    assert raised == [
        ("1 break → 0", "good"),
        ("0 graphs → 0", "neutral"),
        ("nonstrict raised ValueError", "bad"),
        ("outputs not checked (the nonstrict run raised)", "neutral"),
    ]
    differ = OutputCheck(match=False, max_abs_diff=0.5, comparisons=EAGER_MATCH.comparisons)
    got = chips(Run(name="baseline"), Run(name="nonstrict"), {"baseline": counts(1, 0), "nonstrict": counts(1, 0)}, differ)
    assert got[-1] == ("outputs DIFFER from eager (max |Δ| 0.5)", "bad")


def test_fatal_break_while_other_functions_compiled_keeps_graph_counts():
    got = chips(
        Run(name="baseline", breaks=(FATAL,), error="Unsupported: ...", error_type="Unsupported"),
        Run(name="nonstrict"),
        {"baseline": counts(6, 2), "nonstrict": counts(2, 0)},
        EAGER_MATCH,
    )
    assert got[1] == ("6 graphs → 2", "good")


def test_baseline_only_and_no_runs():
    one = build_headline({"baseline": Run(name="baseline")}, {"baseline": counts(2, 3)}, OutputCheck(match=None))
    assert one.text == "3 breaks, 2 graphs, outputs not checked"
    assert build_headline({}, {}, OutputCheck(match=None)).chips == (Chip(kind="note", text="no baseline run"),)


def test_numbers_are_short():
    assert [format_number(x) for x in (0, 0.5, 1.23456, 100.0, 12345.0, 1.5e-4, 2.5e5, None)] == [
        "0", "0.5", "1.23", "100", "12300", "1.5e-4", "2.5e+5", "—",
    ]


def test_headline_is_in_the_json_and_read_back_as_is():
    base = Run(name="baseline", breaks=(FATAL,))
    headline = build_headline({"baseline": base}, {"baseline": counts(0, 1)}, OutputCheck(match=None))
    report = Report(torch_version="x", runs={"baseline": base}, counts={"baseline": counts(0, 1)}, headline=headline)
    data = json.loads(report.to_json())
    assert data["headline"]["chips"][0] == {"kind": "breaks", "text": "1 break", "tone": "neutral"}
    assert Report.from_json(report.to_json()).headline == headline
