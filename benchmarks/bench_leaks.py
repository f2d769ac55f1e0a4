"""100 consecutive ``%%nstrace`` runs in one IPython shell: memory growth and what is left behind.

Usage::

    python benchmarks/bench_leaks.py [--runs 100] [--warmup 10] [--cell seed|breaking|training]

Runs the cell under ``%%nstrace`` in an in-process IPython ``InteractiveShell`` (the magic, the
widget and the capture are the real ones; there is no front end) and prints, after the warm-up
and then every 10 runs: RSS, Python heap objects, Reports alive, widgets alive, logging handlers
across ALL loggers, trace-rule ids, threads, atexit callbacks, and Dynamo's callbacks. At the end
it states the bound checked: RSS growth after warm-up < 50 MB over the runs, and zero growth in
handlers, hooks, threads, marked ids and Reports not bound by the user.

Every displayed Viewer stays alive for the life of the kernel (ipywidgets keeps each widget
until it is closed, as for any widget); it holds the Report's JSON text only. The figures show
that cost separately ("widgets" and their JSON bytes).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import logging
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CELLS = {
    "seed": (
        "import torch\n"
        "def get_magic_num():\n    torch._dynamo.graph_break()\n    return torch.tensor([42.0])\n",
        "%%nstrace --nonstrict get_magic_num\n"
        "@torch.compile(fullgraph=True)\ndef func(x):\n    return x + get_magic_num()\n\nout = func(torch.ones(4))\n",
    ),
    "breaking": (
        "import torch\n",
        "%%nstrace --nonstrict helper\n"
        "def helper(x):\n    torch._dynamo.graph_break()\n    return x * 2\n\n"
        "@torch.compile\ndef fn(x):\n    return helper(x.sin()) + 1\n\ny = fn(torch.ones(4))\n",
    ),
    "training": (
        "import torch\n"
        "def stats(h):\n    torch._dynamo.graph_break()\n    return h.mean(dim=-1, keepdim=True)\n"
        "class Block(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.lin = torch.nn.Linear(64, 64)\n"
        "    def forward(self, h):\n        h = self.lin(h)\n        return h - stats(h)\n"
        "model = torch.nn.Sequential(*[Block() for _ in range(4)])\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.01)\n",
        "%%nstrace --nonstrict stats\n"
        "@torch.compile\ndef step(x):\n    loss = model(x).pow(2).mean()\n    loss.backward()\n    return loss\n\n"
        "loss = step(torch.randn(8, 64))\nopt.step()\nopt.zero_grad()\n",
    ),
}


def _handlers() -> int:
    loggers = [logging.getLogger()] + [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    return sum(len(lg.handlers) for lg in loggers)


def _widgets() -> dict[Any, Any]:
    import ipywidgets.widgets.widget as widget_module

    return getattr(widget_module, "_instances", None) or widget_module.Widget.widgets


def _figures(refs: list[weakref.ref[Any]]) -> dict[str, Any]:
    import torch
    from torch._dynamo import trace_rules

    from nstviz.jupyter.widget import Viewer

    gc.collect()
    viewers = [w for w in _widgets().values() if isinstance(w, Viewer)]
    return {
        "rss_mb": psutil.Process().memory_info().rss / 2**20,
        "objects": len(gc.get_objects()),
        "reports_alive": sum(1 for r in refs if r() is not None),
        "widgets": len(_widgets()),
        "widget_json_mb": sum(len(w.report_json) for w in viewers) / 1e6,
        "handlers": _handlers(),
        "marked_ids": len(trace_rules._nonstrict_trace_callable_ids()),
        "threads": threading.active_count(),
        "atexit": atexit._ncallbacks(),
        "dynamo_callbacks": len(torch._dynamo.callback_handler.start_callbacks)
        + len(torch._dynamo.callback_handler.end_callbacks),
        "sys_modules": len(sys.modules),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--cell", choices=sorted(CELLS), default="seed")
    parser.add_argument("--bound-mb", type=float, default=50.0)
    parser.add_argument(
        "--close-widgets", action="store_true", help="close each Viewer after its run (as w.close() does)"
    )
    args = parser.parse_args()

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    import nstviz.api

    refs: list[weakref.ref[Any]] = []
    real = nstviz.api.trace_code

    def recording(*a: Any, **k: Any) -> Any:
        report = real(*a, **k)
        refs.append(weakref.ref(report))
        return report

    nstviz.api.trace_code = recording  # the magic imports it at call time
    from nstviz.jupyter import cell_labels

    real_relabel = cell_labels.with_cell_labels

    def relabelling(*a: Any, **k: Any) -> Any:  # the Report the magic hands out ('Cell In[N]' labels)
        report = real_relabel(*a, **k)
        refs.append(weakref.ref(report))
        return report

    cell_labels.with_cell_labels = relabelling
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "nstviz")
    setup, cell = CELLS[args.cell]
    shell.run_cell(setup)

    def run(n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            with capture_output():
                result = shell.run_cell(cell)
            if result.error_before_exec is not None or (
                result.error_in_exec is not None and args.cell != "seed"
            ):
                raise SystemExit(f"the cell failed: {result.error_before_exec or result.error_in_exec!r}")
            if args.close_widgets:
                from nstviz.jupyter import last_viewer

                viewer = last_viewer()
                if viewer is not None:
                    viewer.layout.close()
                    viewer.close()
        return time.perf_counter() - t0

    run(args.warmup)
    start = _figures(refs)
    closing = ", each Viewer closed after its run" if args.close_widgets else ""
    print(f"cell {args.cell!r}{closing}, {args.runs} runs after {args.warmup} warm-up runs (torch {__import__('torch').__version__})")
    cols = ["run", "rss_mb", "objects", "reports_alive", "widgets", "widget_json_mb", "handlers", "marked_ids", "threads", "atexit", "dynamo_callbacks", "sys_modules", "s/run"]
    print(" ".join(f"{c:>14}" for c in cols))

    def row(label: str, figs: dict[str, Any], per_run: float | None) -> None:
        values = [label] + [f"{figs[c]:.1f}" if isinstance(figs[c], float) else str(figs[c]) for c in cols[1:-1]]
        values.append(f"{per_run:.2f}" if per_run is not None else "")
        print(" ".join(f"{v:>14}" for v in values))

    row("after warm-up", start, None)
    done = 0
    while done < args.runs:
        n = min(10, args.runs - done)
        elapsed = run(n)
        done += n
        row(str(done), _figures(refs), elapsed / n)
    end = _figures(refs)
    growth = end["rss_mb"] - start["rss_mb"]
    same = ("handlers", "marked_ids", "threads", "atexit", "dynamo_callbacks", "reports_alive", "sys_modules")
    leaked = {k: (start[k], end[k]) for k in same if end[k] != start[k]}
    per_widget_kb = (end["widget_json_mb"] - start["widget_json_mb"]) * 1e3 / max(args.runs, 1)
    print(
        f"\nRSS growth over {args.runs} runs after warm-up: {growth:+.1f} MB (bound {args.bound_mb:.0f} MB); "
        f"widgets kept by ipywidgets: {end['widgets'] - start['widgets']} (+{per_widget_kb:.1f} KB of JSON each)"
    )
    if leaked:
        print(f"LEAK: counts changed: {leaked}")
    ok = growth < args.bound_mb and not leaked
    print("OK: within the bound, nothing left behind" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
