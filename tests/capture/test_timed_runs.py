"""Run.timing from real captures: compare() times, trace_code times only with time=True.

Real torch.compile runs of small toys (eager / aot_eager backends). The figures are checked for
being measured (positive, ordered, the graph count equal to what Dynamo's explain counts), never
for a speed ratio: the machine's load decides those.
"""

from __future__ import annotations

import dataclasses
import html
import types

import torch

import nstviz
from nstviz.jupyter.static_summary import html_summary
from nstviz.report import Report, Run, RunTiming


def helper(x):
    torch._dynamo.graph_break()
    return x.cos() + 1


def toy(x):
    y = x.sin() * 2
    return helper(y) - 1


def _measured(timing: RunTiming | None) -> RunTiming:
    assert timing is not None
    assert timing.steady is not None and timing.eager is not None
    assert timing.first_call_s > 0
    assert timing.compile_s is None or timing.compile_s > 0
    for call in (timing.steady, timing.eager):
        assert 0 < call.min_s <= call.q1_s <= call.median_s <= call.q3_s <= call.max_s
        assert call.calls >= 3
    assert timing.text and timing.compile_text
    return timing


def test_compare_times_baseline_and_nonstrict_with_explains_graph_count():
    x = torch.ones(8)
    explained = torch._dynamo.explain(toy)(x).graph_count
    torch._dynamo.reset()
    report = nstviz.compare(toy, x, nonstrict=[helper])
    base = _measured(report.runs["baseline"].timing)
    nst = _measured(report.runs["nonstrict"].timing)
    assert base.graphs == explained == report.counts["baseline"].graphs == 3  # toy, helper, toy resumed
    assert nst.graphs == report.counts["nonstrict"].graphs == 1
    # the runs' own compiled code is timed (the record backend's), its compile figures the run's own
    assert base.backend == nst.backend == "record"
    assert base.reused and nst.reused and base.recompiles == nst.recompiles == 0
    assert base.first_call_s == report.runs["baseline"].wall_time_s
    assert "(captured run)" in base.text
    assert base.cost_s is not None and 0 < base.cost_s  # what the timing added to the capture is kept
    assert f"timing: {base.text}" in report.summary()
    assert f"<b>nonstrict</b> {html.escape(nst.text)}" in html_summary(report)  # the widget's static view
    again = Report.from_json(report.to_json())
    assert again.runs["baseline"].timing == base
    assert again.runs["nonstrict"].timing == nst


def test_compare_timing_compiles_nothing_again():
    """The timing calls what the runs compiled: as many backend compiles as without timing."""
    compiles: list[str] = []

    def counting(gm, example_inputs):
        compiles.append(gm.__class__.__name__)
        return gm.forward

    def graphs_compiled(time: bool) -> tuple[int, nstviz.Report]:
        compiles.clear()
        compiled = torch.compile(toy, backend=counting)
        report = nstviz.compare(compiled, torch.ones(8), nonstrict=[helper], backend="as_written", time=time)
        return len(compiles), report

    untimed, _ = graphs_compiled(False)
    timed, report = graphs_compiled(True)
    assert untimed == 3 + 1  # baseline: toy, helper, toy resumed; nonstrict: one graph
    assert timed == untimed
    base = _measured(report.runs["baseline"].timing)
    assert base.reused and base.graphs == 3 and base.recompiles == 0


def test_compare_time_false_does_not_time():
    report = nstviz.compare(toy, torch.ones(4), nonstrict=[helper], time=False)
    assert all(run.timing is None for run in report.runs.values())


CELL = """
note("cell")
@torch.compile(backend="eager")
def f(x):
    y = x * 2
    y = hook(y)
    return y + 1
out = f(torch.ones(4))
out = f(out)
"""


def _cell_namespace(events: list[str]) -> dict:
    def note(what):
        events.append(what)

    def hook(y):
        events.append("compiled")
        torch._dynamo.graph_break()
        return y.cos()

    return {"torch": torch, "note": note, "hook": hook}


def test_trace_code_times_only_with_time_true_and_reruns_only_the_compiled_calls():
    events: list[str] = []
    ns = _cell_namespace(events)
    report = nstviz.trace_code(CELL, ns, nonstrict=["hook"])
    assert all(run.timing is None for run in report.runs.values())
    assert events.count("cell") == 2  # baseline and nonstrict

    events.clear()
    ns = _cell_namespace(events)
    report = nstviz.trace_code(CELL, ns, nonstrict=["hook"], time=True)
    assert events.count("cell") == 2  # the cell's own side effects are not repeated by timing
    assert events.count("compiled") > 2 * 2  # its compiled calls are (two per run, then timed)
    base = _measured(report.runs["baseline"].timing)
    nst = _measured(report.runs["nonstrict"].timing)
    assert base.graphs == report.counts["baseline"].graphs
    assert nst.graphs == report.counts["nonstrict"].graphs
    assert base.graphs > nst.graphs  # the mark was applied while timing the nonstrict run
    assert Report.from_json(report.to_json()).runs["nonstrict"].timing == nst


def test_trace_code_time_must_be_a_bool():
    import pytest

    from nstviz.errors import UsageError

    with pytest.raises(UsageError, match="time="):
        nstviz.trace_code("x = 1", {}, time="yes")  # type: ignore[arg-type]


def test_a_run_that_raised_is_not_timed_and_a_note_says_so():
    events: list[str] = []
    ns = _cell_namespace(events)
    src = CELL + "raise RuntimeError('after the compiled calls')\n"
    report = nstviz.trace_code(src, ns, time=True)
    assert report.runs["baseline"].timing is None
    assert any("baseline: not timed: the run raised" in n for n in report.notes), report.notes


def test_compare_auto_times_the_baseline_and_the_recommendation_not_each_attempt():
    report = nstviz.compare(toy, torch.ones(8), auto=True)
    assert report.recommendation is not None and "helper" in report.recommendation.functions[0]
    attempts = {n: r for n, r in report.runs.items() if n.startswith("attempt-")}
    assert attempts
    # one attempt lowered the graph count: nothing to choose between by time, so none is timed
    assert all(run.timing is None for run in attempts.values())
    assert _measured(report.runs["baseline"].timing).eager is not None
    nst = _measured(report.runs["nonstrict"].timing)
    assert nst.graphs == report.recommendation.graphs_after


class _TimingTrials:
    """What the advisor's tie-break asks of the trials: time one attempt now."""

    def __init__(self):
        self.asked: list[tuple[tuple, dict, str]] = []

    def time_attempt(self, marks, flags, run_name):
        self.asked.append((marks, flags, run_name))
        return dataclasses.replace(Run(name=run_name), timing=RunTiming(graphs=1, first_call_s=0.1))


def test_the_advisor_times_an_attempt_only_when_asked_to_break_a_tie():
    from nstviz.advisor.config_trials import timed as _timed

    trials = _TimingTrials()
    untimed = Run(name="attempt-2")
    timed = _timed(trials, [], untimed, ["capture_scalar_outputs"])
    assert timed.timing is not None and trials.asked == [((), {"capture_scalar_outputs": True}, "attempt-2")]
    already = dataclasses.replace(untimed, timing=RunTiming(graphs=1, first_call_s=0.1))
    assert _timed(trials, [], already, []) is already  # measured once: not again
    assert _timed(trials, [], Run(name="baseline"), []).timing is None  # only attempts are timed late
    assert _timed(types.SimpleNamespace(time_attempt=None), [], untimed, []) is untimed  # trials that cannot time: as it was
    assert len(trials.asked) == 1


def bump(x, w):
    x.add_(1)  # in place, every call: timing calls it dozens of times
    helper(x)
    return x * w


def test_what_the_timed_calls_change_in_place_is_put_back():
    x, w = torch.zeros(3), torch.nn.Parameter(torch.ones(3))
    report = nstviz.compare(bump, x, w, nonstrict=[helper])
    assert report.runs["nonstrict"].timing is not None
    assert x.tolist() == [1.0, 1.0, 1.0]  # as after the last run, not after the timed calls
    events: list[str] = []
    ns = {**_cell_namespace(events), "state": torch.zeros(2)}
    src = "@torch.compile(backend='eager')\ndef step(s):\n    s.add_(1)\n    return hook(s)\nstep(state)\n"
    report = nstviz.trace_code(src, ns, nonstrict=["hook"], time=True)
    assert report.runs["nonstrict"].timing is not None
    assert ns["state"].tolist() == [1.0, 1.0]
