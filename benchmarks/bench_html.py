"""Standalone HTML report: size per node, render time, and time to first paint in Chromium.

Builds synthetic Reports (``make_synthetic_report.py``: a GPT-like nonstrict ATen graph of
N nodes plus the baseline graphs), writes each with :func:`nstviz.render.html.save_html`, opens the
file from ``file://`` in headless Debian Chromium (a fresh browser context per load) and
waits for the viewer's ``data-nstviz-ready="1"`` (first paint of the selected graph). The
time is the page's own ``performance.now()`` when the attribute appears, i.e. measured from
the start of navigation. Prints a table; the target is <= 2 s at 10,000 nodes.

Usage::

    python benchmarks/bench_html.py [--nodes 2000 10000 --repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "html"))

from make_synthetic_report import make_report  # noqa: E402
from page_probe import probe  # noqa: E402

from nstviz.render.html import render_html, save_html  # noqa: E402

TARGET_MS = 2000


def graph_nodes(report) -> int:
    """Nodes in every graph of every run (what the page carries)."""
    return sum(len(g.nodes) for run in report.runs.values() for g in run.graphs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--flat", action="store_true", help="graphs without module paths")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.nodes:
            report = make_report(n, flat=args.flat)
            main_graph = report.runs["nonstrict"].graphs[-1]
            t0 = time.perf_counter()
            render_html(report)
            render_ms = (time.perf_counter() - t0) * 1000
            path = save_html(report, Path(tmp) / f"r{n}.html")
            size = path.stat().st_size
            json_size = len(report.to_json().encode("utf-8"))
            observations = probe([{"path": str(path), "timeout_ms": 30000} for _ in range(args.repeat)])
            ready = [o["readyMs"] for o in observations if o.get("ready") and o.get("readyMs") is not None]
            problems = [o["errors"] + o["requests"] for o in observations if o["errors"] or o["requests"]]
            if problems:
                print(f"{n} nodes: page problems: {problems[0]}", file=sys.stderr)
            total_nodes = graph_nodes(report)
            rows.append(
                {
                    "main graph nodes": len(main_graph.nodes),
                    "all nodes": total_nodes,
                    "HTML MB": size / 1e6,
                    "bytes/node": size / total_nodes,
                    "JSON bytes/node": json_size / total_nodes,
                    "render ms": render_ms,
                    "first paint ms (median)": statistics.median(ready) if ready else float("nan"),
                    "first paint ms (max)": max(ready) if ready else float("nan"),
                    "loads": f"{len(ready)}/{args.repeat}",
                }
            )

    headers = list(rows[0])
    widths = [max(len(h), 9) for h in headers]
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    for row in rows:
        cells = [
            f"{v:.2f}" if isinstance(v, float) and v < 100 else f"{v:.0f}" if isinstance(v, float) else str(v)
            for v in row.values()
        ]
        print("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
    worst = max((r["first paint ms (max)"] for r in rows if r["main graph nodes"] >= 10000), default=None)
    if worst is not None:
        verdict = "OK" if worst <= TARGET_MS else "OVER TARGET"
        print(
            f"\n10,000-node first paint, worst of {args.repeat}: {worst:.0f} ms (target <= {TARGET_MS} ms): {verdict}"
        )


if __name__ == "__main__":
    main()
