"""A graph of >= 50,000 ATen nodes through nstviz: capture, JSON, HTML, memory.

The nonstrict run traces a marked helper with a 16,700-iteration loop (3 ops each): Dynamo sees
one opaque call, AOTAutograd inlines 50,100 ATen nodes. Almost all of the capture time is
torch's own tracing (AOT stage 1). Prints one line of figures.

    python benchmarks/bench_large_graph.py [--iterations 16700]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import torch

import nstviz
from nstviz.report import Report

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=16_700)
    args = parser.parse_args()
    cell = CELL.format(n=args.iterations)

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    report = nstviz.trace_code(cell, {"torch": torch}, nonstrict=["helper"])
    capture_s = time.monotonic() - t0
    aten = [g for g in report.runs["nonstrict"].graphs if g.level.startswith("aten")]
    nodes = sum(len(g.nodes) for g in aten)
    t0 = time.monotonic()
    text = report.to_json()
    json_s = time.monotonic() - t0
    t0 = time.monotonic()
    Report.from_json(text)
    load_s = time.monotonic() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        page = report.save_html(Path(tmp) / "big.html")
        html_s = time.monotonic() - t0
        html_mb = Path(page).stat().st_size / 1e6
    peak_growth_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    print(
        f"{nodes} ATen nodes ({report.counts['nonstrict'].inlined_nodes} inlined): capture {capture_s:.1f} s, "
        f"to_json {json_s:.2f} s ({len(text) / 1e6:.1f} MB, {len(text) / max(nodes, 1):.0f} B/node), "
        f"from_json {load_s:.2f} s, save_html {html_s:.2f} s ({html_mb:.1f} MB), "
        f"peak RSS growth {peak_growth_mb:.0f} MB"
    )


if __name__ == "__main__":
    main()
