"""assemble() on recorded runs: the passes rebuild what the capture produced (no torch.compile).

Each fixture's runs are taken back to what the capture hands over (no regions, no region tags,
no baseline graphs, marks not yet judged, no diff, counts or headline), with the non-strict
calls and marks as plain values; :func:`assemble` must give the recorded Report back.
"""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

from nstviz.capture.plan import RunPlan
from nstviz.passes.assemble import CapturedRun, CapturedRuns, ReportMeta, assemble
from nstviz.passes.marks import CapturedCall, CapturedMark
from nstviz.passes.provenance import CallSite
from nstviz.report import Report, Run

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _raw(run: Run) -> CapturedRun:
    """The run as the capture hands it over, and its calls and marks as plain values."""
    graphs = tuple(
        dataclasses.replace(
            g, nodes=tuple(dataclasses.replace(n, region=None, baseline_graph=None) for n in g.nodes)
        )
        for g in run.graphs
    )
    calls = tuple(
        CapturedCall(
            site=CallSite(
                graph_id=r.call_graph, node=r.call_node, qualname=r.function, file=r.file,
                line_start=r.line_start, line_end=r.line_end, reads=r.reads,
            ),
            key=f"{r.file}:{r.line_start}:{r.function}",
        )
        for r in run.regions
    )
    marks = tuple(
        CapturedMark(
            record=dataclasses.replace(m, applied=True, warning=None),
            key=f"{m.file}:{m.line_start}:{m.qualname}",
            name=m.qualname.rsplit(".", 1)[-1],
        )
        for m in run.marked
        if m.origin != "in_source"
    )
    return CapturedRun(run=dataclasses.replace(run, graphs=graphs, regions=(), marked=()), calls=calls, marks=marks)


@pytest.mark.parametrize("name", ["seed", "module_block_break", "training_step", "fullgraph_data_dependent"])
def test_assemble_rebuilds_the_recorded_report(name):
    recorded = Report.load_json(FIXTURES / f"{name}.report.json")
    assert all(r.call_graph and r.call_node for run in recorded.runs.values() for r in run.regions)
    captured = CapturedRuns(
        meta=ReportMeta(
            torch_version=recorded.torch_version, nstviz_version=recorded.nstviz_version,
            python_version=recorded.python_version, created=recorded.created, title=recorded.title,
            entry=recorded.entry, backend=recorded.backend, nonstrict=recorded.nonstrict,
            baseline_mode=recorded.baseline_mode, elapsed_s=recorded.elapsed_s,
        ),
        runs={n: _raw(run) for n, run in recorded.runs.items()},
        stacks=recorded.stacks,
        comparisons=recorded.outputs.comparisons,
        nondeterministic=recorded.outputs.nondeterministic,
        sources=recorded.sources,
    )
    assert assemble(captured) == recorded


def test_marks_pass_says_why_a_mark_did_not_apply():
    recorded = Report.load_json(FIXTURES / "fullgraph_data_dependent.report.json")
    (mark,) = recorded.runs["nonstrict"].marked
    assert mark.applied is False
    assert mark.warning == (
        "scale_of was marked but no call went through nonstrict_trace: it was not called inside "
        "compiled code, or it is an nn.Module forward called as module(...)"
    )


def test_run_plan_totals():
    assert RunPlan(eager_first=True).runs_total() == 3  # compare: eager pair, baseline, nonstrict
    assert RunPlan().runs_total() == 2  # trace_code
    plan = RunPlan(eager_if_baseline_raises=True, advisor_attempts=8)
    assert plan.auto and plan.runs_total() == 10
    assert plan.runs_total(baseline_raised=True, attempts_done=2) == 5
    assert RunPlan(check=False).runs_total(baseline_raised=True) == 2
