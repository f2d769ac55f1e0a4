"""Per break: graph breaks caused (Dynamo's ``counters["graph_break"]``) and times reached.

Real torch.compile runs. ``Break.caused`` is measured from Dynamo's counter at each graph-break
artifact; over a run it sums to ``Run.dynamo_graph_breaks`` exactly. Offline logs apply the
reason rule (``counts_as_graph_break``): both must agree, on every artifact.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

import nstviz
from nstviz.capture import _torch_compat
from nstviz.capture.trace_log import collecting
from nstviz.offline.ingest import ingest_log
from nstviz.report import Report
from nstviz.report.facts import rank_breaks, splits_text
from nstviz.tracing.breaks import caused_per_event, counts_as_graph_break
from tests.capture.cases import counting

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "tests" / "fixtures" / "tracelogs" / "counting_job.py"
JOB_LOG = ROOT / "tests" / "fixtures" / "tracelogs" / "counting" / "dedicated_log_torch_trace.log.gz"
CASES = os.path.basename(counting.__file__)


def _sum_is_dynamos(run) -> None:
    assert run.dynamo_graph_breaks is not None
    assert sum(b.caused for b in run.breaks) == run.dynamo_graph_breaks


def _counts(run) -> list[tuple[str, int, int, int, tuple[str, ...]]]:
    return [(b.location.function, b.location.line, b.count, b.caused, b.compile_ids) for b in rank_breaks(run.breaks)]


def test_demo_helper_called_by_3_blocks_causes_4_graph_breaks_in_4_frame_compiles(tmp_path):
    from nstviz.cli.main import main

    assert main(["demo", "-o", str(tmp_path / "d.html"), "--json", str(tmp_path / "d.json"), "--quiet"]) == 0
    base = Report.load_json(tmp_path / "d.json").runs["baseline"]
    rms, magic = rank_breaks(base.breaks)
    assert (rms.location.function, rms.count, rms.caused, rms.compile_ids) == ("rms_scale", 4, 4, ("0/0", "1/0", "2/0", "1/1"))
    assert splits_text(rms) == "TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0"
    # the fullgraph error stops func's compile: Dynamo counts no graph break for it
    assert (magic.location.function, magic.fatal, magic.count, magic.caused, magic.splits) == ("get_magic_num", True, 1, 0, ())
    assert base.dynamo_graph_breaks == 4
    _sum_is_dynamos(base)
    # stacks start at the compiled entry point, not at the demo script's module-level call
    assert [(f.function, f.line) for f in rms.stack] == [("forward", 36), ("rms_scale", 24)]
    assert [(f.function, f.line) for f in magic.stack] == [("func", 59), ("get_magic_num", 53)]


def test_reached_and_caused_differ_and_each_run_sums_to_dynamos_counter():
    job = nstviz.trace_code(JOB.read_text(), {"__name__": "__main__"}, filename=str(JOB), check=False)
    base = job.runs["baseline"]
    assert _counts(base) == [
        ("rms_scale", 15, 4, 4, ("0/0", "1/0", "2/0", "1/1")),
        # logged in in_try's frame (6/0, not counted: Dynamo cannot resume in a try block and runs
        # in_try eagerly), then counted once in helper's own frame (7/0)
        ("helper", 38, 2, 1, ("6/0", "7/0")),
        ("branch", 54, 1, 0, ("9/0",)),  # data-dependent branching: logged, never counted
    ]
    assert [splits_text(b) for b in rank_breaks(base.breaks)] == [
        "TinyNet.forward 0/0, Block.forward 1/0 1/1, rms_scale 2/0",
        "helper 7/0",
        "",
    ]
    assert base.dynamo_graph_breaks == 5 and job.counts["baseline"].graph_breaks == 5
    _sum_is_dynamos(base)


def test_offline_log_of_the_same_job_gives_the_same_counts():
    live = nstviz.trace_code(JOB.read_text(), {"__name__": "__main__"}, filename=str(JOB), check=False)
    offline = ingest_log(JOB_LOG)
    got = [(b.location.line, b.count, b.caused, b.compile_ids, [s.compile_id for s in b.splits]) for b in offline.runs["baseline"].breaks]
    want = [(b.location.line, b.count, b.caused, b.compile_ids, [s.compile_id for s in b.splits]) for b in live.runs["baseline"].breaks]
    assert got == want == [
        (15, 4, 4, ("0/0", "1/0", "2/0", "1/1"), ["0/0", "1/0", "2/0", "1/1"]),
        (38, 2, 1, ("6/0", "7/0"), ["7/0"]),
        (54, 1, 0, ("9/0",), []),
    ]
    assert not any(b.fatal for b in offline.runs["baseline"].breaks)  # in_try fell back to eager: not fatal
    assert offline.counts["baseline"].graph_breaks == 5  # no counter offline: the sum of caused


@pytest.mark.parametrize(
    ("fn", "want"),
    [
        (counting.entry, [(6, 2, 2)]),  # split entry (0/0), then helper in its own frame (1/0)
        (counting.in_try, [(6, 2, 1)]),
        (counting.branch, [(24, 1, 0)]),
        (counting.loop, [(32, 1, 0)]),
    ],
)
def test_compare_counts_and_entry_stack(fn, want):
    report = nstviz.compare(fn, torch.ones(3), check=False)
    base = report.runs["baseline"]
    assert [(b.location.line, b.count, b.caused) for b in base.breaks] == want
    _sum_is_dynamos(base)
    for b in base.breaks:
        # the stack starts at the function compare() compiled: not at this test, nor nstviz
        assert b.stack[0].function == fn.__name__ and os.path.basename(b.stack[0].file) == CASES, b.stack
        assert b.location == b.stack[-1]


def test_the_reason_rule_agrees_with_dynamos_counter_on_every_artifact():
    """What offline logs rely on, checked live: artifact by artifact."""
    seen = []
    for fn in (counting.entry, counting.in_try, counting.branch, counting.loop):
        torch._dynamo.reset()
        start = _torch_compat.graph_break_total()
        with collecting() as col:
            torch.compile(fn, backend="eager")(torch.ones(3))
        end = _torch_compat.graph_break_total()
        events = col.of_kind("dynamo_graph_break_reason")
        measured = caused_per_event([e.metadata["counter"] for e in events], start, end)
        ruled = [int(counts_as_graph_break(e.payload or "")) for e in events]
        assert measured == ruled, fn.__name__
        seen.append(measured)
    torch._dynamo.reset()
    assert seen == [[1, 1], [0, 1], [0], [0]]


def test_caused_per_event_sums_to_the_counter_increase():
    assert caused_per_event([3, 4, 4, 6], 3, 7) == [1, 0, 2, 1]
    assert caused_per_event([5], 3, 6) == [3]  # an increase before the first artifact goes to it
    assert caused_per_event([], 0, 0) == []
