"""Very large graphs: the capture stays interruptible, and a graph over the cap is truncated
with a clear note instead of crashing.

The full >= 50,000-node capture takes minutes of torch's own tracing on 2 cores, so its
figures (time, JSON/HTML size, memory) come from ``benchmarks/bench_large_graph.py``; here the
50,000-node cell is only started and interrupted, and truncation is checked with a lowered cap.
"""

from __future__ import annotations

import _thread
from pathlib import Path

import pytest
import torch

import nstviz
from nstviz.capture import convert
from nstviz.report import Report
from tests.helpers.interrupts import InterruptAt, landed_in_capture
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


def test_fifty_thousand_node_capture_stays_interruptible(
    before: ProcessState, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in the middle of Dynamo tracing the 50,000-node helper stops the capture there.

    The interrupt is fired at the 20,000th fake-tensor operation (inside the nonstrict trace of the
    helper's 16,700-iteration loop, about 50,000 operations, long before the graph is complete):
    no graph may reach nstviz's recorder afterwards, i.e. the capture stopped during that trace,
    not at its end.
    """
    from torch._subclasses.fake_tensor import FakeTensorMode

    from nstviz.capture import recorder

    trap = InterruptAt(FakeTensorMode, "__torch_dispatch__", 20_000, _thread.interrupt_main)
    converted: list[str] = []
    real_convert = recorder.convert_graph

    def counting_convert(*args, **kwargs):
        if trap.fired.is_set():
            converted.append("after the interrupt")
        return real_convert(*args, **kwargs)

    monkeypatch.setattr(FakeTensorMode, "__torch_dispatch__", trap.wrapper())
    monkeypatch.setattr(recorder, "convert_graph", counting_convert)
    with pytest.raises(KeyboardInterrupt) as info:
        nstviz.trace_code(CELL.format(n=16_700), {"torch": torch}, nonstrict=["helper"])
    monkeypatch.undo()
    assert trap.fired.is_set() and trap.error is None
    assert landed_in_capture(info.value), str(info.value)
    assert converted == []
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
