"""Establish a corpus case's truth with torch alone: ``python -m tests.users.truth [NAME...]``.

One fresh process per case (so nothing nstviz does is in the way): the cell runs with a
counting backend standing in for ``backend="eager"`` (``torch._dynamo.testing.CompileCounter``:
the Dynamo graphs), ``torch._dynamo.utils.counters["graph_break"]`` gives the breaks, mapped to
their GB ids through torch's own ``graph_break_registry.json``; the values the cell assigns are
compared with a run under ``torch._dynamo.config.disable`` (eager). The breaks are read from
``TORCH_LOGS=graph_breaks`` (``torch._logging.set_logs(graph_breaks=True)``; Dynamo's
``counters["graph_break"]`` misses data-dependent branches and frames skipped after a break),
their GB ids from torch's own ``graph_break_registry.json``. With ``--fix``, the fix
written by hand (:data:`FIXES`) runs the same way. Prints one JSON line per case.
"""

from __future__ import annotations

import json
import subprocess
import sys

FIXES = {
    "data_dependent_branch_lt": lambda s: s.replace(
        "    if y < 0:\n        x = torch.add(x, 55)\n", "    x = torch.where(y < 0, torch.add(x, 55), x)\n"
    ),
    "class_inside_compiled_fn": lambda s: s.replace(
        '@torch.compile(backend="eager")\ndef fn', '@torch.compile(backend="eager")\n@torch._dynamo.nonstrict_trace\ndef fn'
    ),
    "item_scale": lambda s: "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n" + s,
    "sum_item_add": lambda s: "import torch\ntorch._dynamo.config.capture_scalar_outputs = True\n" + s,
}

_CHILD = r'''
import json, os, sys
import numpy as np
import torch
import torch._dynamo.testing
from torch._dynamo.utils import counters

import logging

torch._logging.set_logs(graph_breaks=True)
logged = []


class _Keep(logging.Handler):
    def emit(self, record):
        logged.append(record.getMessage())


logging.getLogger("torch._dynamo").addHandler(_Keep())
source = sys.stdin.read()
registry = json.load(open(os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")))
by_type = {entry["Gb_type"]: gb for gb, entries in registry.items() for entry in entries}
cnt = torch._dynamo.testing.CompileCounter()
counted = source.replace('backend="eager"', "backend=__cnt").replace('optimize("eager")', "optimize(__cnt)")
ns = {"__cnt": cnt, "__name__": "__main__"}
exec(compile(counted, "<cell>", "exec"), ns)
torch._logging.set_logs()
types, skipped = [], False
for message in logged:  # TORCH_LOGS=graph_breaks: "Graph Break Reason: <gb type>"
    if "Graph Break Reason:" not in message:
        continue
    reason = message.split("Graph Break Reason:", 1)[1].strip()
    if "Skipping the function" in reason or "Skipping the frame" in reason:
        skipped = True
        reason = reason.split("Graph break encountered:", 1)[-1].strip()
    types.append(reason.splitlines()[0].strip())
types += [k.split("\n")[0].strip() for k in counters["graph_break"]]  # the real type behind a CALL wrapper
types = [t for t in types if not t.startswith("Encountered graph break when attempting to trace")]
gb = sorted({by_type.get(t, t) for t in types})
with torch._dynamo.config.patch(disable=True):
    eager = {"__name__": "__main__"}
    exec(compile(source, "<cell>", "exec"), eager)

def same(a, b):
    if isinstance(a, torch.Tensor):
        return bool(torch.equal(a, b))
    if isinstance(a, np.ndarray):
        return bool(np.array_equal(a, b)) and a.dtype == b.dtype
    return bool(a == b)

names = [k for k in ("out", "res") if k in ns]
print(json.dumps({"graphs": cnt.frame_count, "gb_ids": gb, "types": sorted(set(types)), "skipped": skipped,
                  "equal": all(same(ns[k], eager[k]) for k in names),
                  "kinds": {k: type(ns[k]).__name__ for k in names}}))
'''


def measure(source: str) -> dict:
    """The truth of one cell, from a fresh Python process with torch alone."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], input=source, capture_output=True, text=True, timeout=300, check=False
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"error": done.stderr[-2000:]}
    return json.loads(lines[-1])


def main(argv: list[str]) -> None:
    from tests.users.corpus import CASES

    fix = "--fix" in argv
    names = [a for a in argv if not a.startswith("-")]
    for case in CASES:
        if names and case.name not in names:
            continue
        row = {"name": case.name, **measure(case.source)}
        if fix and case.name in FIXES:
            row["fix"] = measure(FIXES[case.name](case.source))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
