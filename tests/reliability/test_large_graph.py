"""Very large graphs: the capture stays interruptible, and a graph over the cap is truncated
with a clear note instead of crashing.

The full >= 50,000-node capture takes minutes of torch's own tracing on 2 cores, so its
figures (time, JSON/HTML size, memory) come from ``benchmarks/bench_large_graph.py``; here the
50,000-node cell is only started and interrupted, and truncation is checked with a lowered cap.
"""

from __future__ import annotations

import _thread
import threading
import time
from pathlib import Path

import pytest
import torch

import nstviz
from nstviz.capture import convert
from nstviz.report import Report
from tests.helpers.snapshot import ProcessState, assert_restored

CELL = """
def helper(x):
    for i in range({n}):
        x = x.sin() * 1.01 + 0.5
        if i == 0:
            torch._dynamo.graph_break()
    return x

@torch.compile
def f(x):
    return helper(x) + 1

y = f(torch.ones(4))
"""


def test_fifty_thousand_node_capture_stays_interruptible(before: ProcessState) -> None:
    timer = threading.Timer(3.0, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        nstviz.trace_code(CELL.format(n=16_700), {"torch": torch}, nonstrict=["helper"])
    stopped_after = time.monotonic() - started - 3.0
    timer.join()
    assert stopped_after < 5.0, f"Ctrl-C took {stopped_after:.1f} s to stop the capture"
    assert_restored(before)


def test_graph_over_the_cap_is_truncated_with_a_note(
    tmp_path: Path, before: ProcessState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(convert, "MAX_NODES_PER_GRAPH", 1_000)
    report = nstviz.trace_code(CELL.format(n=500), {"torch": torch}, nonstrict=["helper"])
    aten = [g for g in report.runs["nonstrict"].graphs if g.level.startswith("aten")]
    truncated = [g for g in aten if g.truncated]
    assert truncated, [(g.id, len(g.nodes)) for g in aten]
    for graph in truncated:
        assert len(graph.nodes) == 1_000
        assert graph.op_count >= 1_500  # counted before truncation
        assert any(graph.id in note and "only the first 1000 nodes" in note for note in report.notes), report.notes
    report.validate()
    assert Report.from_json(report.to_json()) == report
    page = Path(report.save_html(tmp_path / "truncated.html"))
    assert page.stat().st_size > 0
    del report
    assert_restored(before)
