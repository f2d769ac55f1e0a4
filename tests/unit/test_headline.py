"""The headline, computed once in Python (nstviz/analysis/headline.py), on hand-made runs."""

from __future__ import annotations

import json

from nstviz.passes.headline import build_headline, format_number
from nstviz.report import (
    Break,
    Chip,
    Compile,
    Location,
    OutputCheck,
    OutputComparison,
    OutputDetail,
    Report,
    Run,
    RunCounts,
)

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
        ("1 break → 0", "neutral"),  # the nonstrict run raised: not an improvement
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


PAIR_MATCH = OutputComparison(left="baseline", right="nonstrict", match=True, max_abs_diff=0.0)


def test_compiled_differs_from_eager_even_when_baseline_and_nonstrict_agree():
    eager_differs = OutputComparison(left="eager", right="baseline", match=False, max_abs_diff=2.6512)
    outputs = OutputCheck(match=True, max_abs_diff=0.0, comparisons=(PAIR_MATCH, eager_differs))
    got = chips(Run(name="baseline"), Run(name="nonstrict"), {"baseline": counts(3, 2), "nonstrict": counts(3, 2)}, outputs)
    assert got == [
        ("2 breaks → 2", "neutral"),
        ("3 graphs → 3", "neutral"),
        ("outputs match", "good"),
        ("compiled differs from eager (max |Δ| 2.65)", "bad"),
    ]
    flaky = OutputCheck(match=True, comparisons=(PAIR_MATCH, eager_differs), nondeterministic=True)
    got = chips(Run(name="baseline"), Run(name="nonstrict"), {"baseline": counts(1, 0), "nonstrict": counts(1, 0)}, flaky)
    assert got == [("0 breaks → 0", "neutral"), ("1 graph → 1", "neutral"), ("outputs match", "good")]


def test_outputs_differ_says_what_differs_never_max_diff_zero():
    none_side = OutputDetail(path="out", match=False, note="None vs tensor f32[3]")
    same = OutputDetail(path="y", match=True, max_abs_diff=0.0)
    pair = OutputComparison(left="baseline", right="nonstrict", match=False, max_abs_diff=0.0, details=(none_side, same))
    outputs = OutputCheck(match=False, max_abs_diff=0.0, details=pair.details, comparisons=(pair,))
    got = chips(Run(name="baseline"), Run(name="nonstrict"), {"baseline": counts(1, 0), "nonstrict": counts(1, 0)}, outputs)
    assert got[-1] == ("outputs DIFFER: out: None vs tensor f32[3] (baseline vs nonstrict)", "bad")
    dtype = OutputDetail(path="logits", match=False, max_abs_diff=0.0, dtype="f32/f64", note="dtype f32 vs f64")
    pair = OutputComparison(left="baseline", right="nonstrict", match=False, max_abs_diff=0.0, details=(dtype,))
    outputs = OutputCheck(match=False, max_abs_diff=0.0, details=(dtype,), comparisons=(pair,))
    got = chips(Run(name="baseline"), Run(name="nonstrict"), {"baseline": counts(1, 0), "nonstrict": counts(1, 0)}, outputs)
    assert got[-1] == ("outputs DIFFER: logits: dtype f32 vs f64 (baseline vs nonstrict)", "bad")
    eager_none = OutputComparison(left="eager", right="baseline", match=False, details=(none_side,))
    outputs = OutputCheck(match=True, comparisons=(PAIR_MATCH, eager_none))
    got = chips(Run(name="baseline"), Run(name="nonstrict"), {"baseline": counts(1, 0), "nonstrict": counts(1, 0)}, outputs)
    assert got[-1] == ("compiled differs from eager: out: None vs tensor f32[3] (eager vs baseline)", "bad")
    missing = OutputDetail(path="k", match=False, note="missing in nonstrict (present in baseline)")
    pair = OutputComparison(left="baseline", right="nonstrict", match=False, details=(missing,))
    outputs = OutputCheck(match=False, details=(missing,), comparisons=(pair,))
    got = chips(Run(name="baseline"), Run(name="nonstrict"), {"baseline": counts(1, 0), "nonstrict": counts(1, 0)}, outputs)
    assert got[-1] == ("outputs DIFFER: k: missing in nonstrict (present in baseline)", "bad")


CAUGHT = Compile(
    frame_id=0,
    compile_id=0,
    function="f",
    fail_reason="Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator `print`\n  Hint: x",
)


def test_compile_failure_from_dynamo_events_even_when_the_user_caught_it():
    base = Run(name="baseline", compiles=(CAUGHT,))
    got = chips(base, Run(name="nonstrict", compiles=(CAUGHT,)), {"baseline": counts(0, 0), "nonstrict": counts(0, 0)},
                OutputCheck(match=True, comparisons=(PAIR_MATCH,)))
    assert got == [
        ("compile failed in f: Dynamo does not know how to trace builtin operator `print`", "bad"),
        ("0 breaks → 0", "neutral"),
        ("0 graphs → 0", "neutral"),
        ("outputs match", "good"),
    ]
    # a graph break logged for that compile (a break at the very start of a frame): not a failure
    at_start = Break(gb_id="GB0059", reason="r", count=1, fatal=False, location=Location(file="f.py", line=1, function="f"),
                     compile_ids=("0/0",))
    assert chips(Run(name="baseline", compiles=(CAUGHT,), breaks=(at_start,)), Run(name="nonstrict"),
                 {"baseline": counts(0, 1), "nonstrict": counts(0, 1)}, OutputCheck(match=True, comparisons=(PAIR_MATCH,)))[0] == (
        "1 break → 1", "neutral")
    # the same frame recompiled with a graph: not a failure
    ok = Compile(frame_id=0, compile_id=0, attempt=1, function="f", graph_ids=("0/0:dynamo",))
    assert chips(Run(name="baseline", compiles=(CAUGHT, ok)), Run(name="nonstrict"),
                 {"baseline": counts(1, 0), "nonstrict": counts(1, 0)}, OutputCheck(match=True, comparisons=(PAIR_MATCH,)))[0] == (
        "0 breaks → 0", "neutral")


def test_hard_compile_error_reads_compile_failed_with_the_real_cause():
    base = Run(
        name="baseline",
        error="RuntimeError when making fake tensor call\n... got RuntimeError('shape mismatch: [2] vs [3]')",
        error_type="TorchRuntimeError",
    )
    got = chips(base, Run(name="nonstrict"), {"baseline": counts(0, 0), "nonstrict": counts(1, 0)}, EAGER_MATCH)
    assert got == [
        ("compile failed: RuntimeError('shape mismatch: [2] vs [3]')", "bad"),
        ("0 breaks → 0", "neutral"),
        ("compile failed → 1 graph", "good"),
        ("outputs match eager", "good"),
    ]
    user_error = Run(name="baseline", error="bad input", error_type="ValueError")
    got = chips(user_error, Run(name="nonstrict"), {"baseline": counts(0, 0), "nonstrict": counts(1, 0)}, EAGER_MATCH)
    assert got[1] == ("baseline raised → 1 graph", "good")


LIMIT = Compile(
    frame_id=2,
    compile_id=8,
    fail_reason="Dynamo recompile limit exceeded\n  Explanation: Dynamo attempted to recompile the code object too many "
    "times, exceeding the recompile_limit cache size limit (currently set to 8).",
)


def test_recompile_limit_is_said_as_such_never_compile_failed():
    resume = Compile(frame_id=2, compile_id=0, function="torch_dynamo_resume_in_scale_at_4", graph_ids=("2/0:dynamo",))
    base = Run(name="baseline", compiles=(resume, LIMIT))
    got = chips(base, Run(name="nonstrict"), {"baseline": counts(10, 1), "nonstrict": counts(8, 0)},
                OutputCheck(match=True, comparisons=(PAIR_MATCH,)))
    assert got == [
        ("recompile limit hit: scale runs eagerly", "bad"),
        ("1 break → 0", "good"),
        ("10 graphs → 8", "good"),
        ("outputs match", "good"),
    ]
    # only the nonstrict run hit it: said for that run
    entry = Compile(frame_id=2, compile_id=0, function="f", graph_ids=("2/0:dynamo",))
    got = chips(Run(name="baseline"), Run(name="nonstrict", compiles=(entry, LIMIT)),
                {"baseline": counts(1, 0), "nonstrict": counts(1, 0)}, OutputCheck(match=True, comparisons=(PAIR_MATCH,)))
    assert got[2] == ("nonstrict recompile limit hit: f runs eagerly", "bad")
