"""A graph of >= 50,000 ATen nodes: captured whole, interruptible, and the Report still works.

The nonstrict run traces a marked helper with a 16,700-iteration loop (3 ops each): Dynamo sees
one opaque call, AOTAutograd inlines 50,100 ATen nodes. (The baseline breaks inside the loop,
so Dynamo skips the helper's frame and runs it eagerly: cheap.) Almost all of the time is
torch's own tracing (AOT stage 1); nstviz's conversion is a few percent (see docs/reliability.md).
"""

from __future__ import annotations

import _thread
import resource
import threading
import time
from pathlib import Path

import pytest
import torch

import nstviz
from nstviz.report import Report
from tests.helpers.snapshot import ProcessState, assert_restored

N = 16_700

BIG_CELL = f"""
def helper(x):
    for i in range({N}):
        x = x.sin() * 1.01 + 0.5
        if i == 0:
            torch._dynamo.graph_break()
    return x

@torch.compile
def f(x):
    return helper(x) + 1

y = f(torch.ones(4))
"""


@pytest.mark.slow
def test_fifty_thousand_aten_nodes(tmp_path: Path, before: ProcessState) -> None:
    # 1. The kernel stays interruptible in the middle of the big trace.
    timer = threading.Timer(4.0, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        nstviz.trace_code(BIG_CELL, {"torch": torch}, nonstrict=["helper"])
    stopped_after = time.monotonic() - started - 4.0
    timer.join()
    assert stopped_after < 5.0, f"Ctrl-C took {stopped_after:.1f} s to stop the capture"
    assert_restored(before)

    # 2. The whole capture: nothing crashes, the Report holds every node, and can be saved.
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    report = nstviz.trace_code(BIG_CELL, {"torch": torch}, nonstrict=["helper"])
    capture_s = time.monotonic() - t0
    aten = [g for g in report.runs["nonstrict"].graphs if g.level.startswith("aten")]
    nodes = sum(len(g.nodes) for g in aten)
    assert nodes >= 50_000, nodes
    truncated = [g.id for g in aten if g.truncated]
    assert not truncated or any("only the first" in n for n in report.notes), "truncation must be said"
    assert report.counts["nonstrict"].inlined_nodes == 3 * N
    t0 = time.monotonic()
    text = report.to_json()
    json_s = time.monotonic() - t0
    t0 = time.monotonic()
    assert Report.from_json(text) == report
    load_s = time.monotonic() - t0
    t0 = time.monotonic()
    page = report.save_html(tmp_path / "big.html")
    html_s = time.monotonic() - t0
    peak_growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    print(
        f"\n{nodes} ATen nodes: capture {capture_s:.1f} s, to_json {json_s:.1f} s ({len(text) / 1e6:.1f} MB), "
        f"from_json {load_s:.1f} s, save_html {html_s:.1f} s ({Path(page).stat().st_size / 1e6:.1f} MB), "
        f"peak RSS growth {peak_growth_mb:.0f} MB"
    )
    del report, text
    assert_restored(before)
