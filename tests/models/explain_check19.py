"""``torch._dynamo.explain`` of one corpus job in a fresh process: graphs, graph breaks, GB ids.

Usage: ``python -m tests.models.explain_check19 JOB`` (any job of ``tests/models/corpus.py`` or
``tests/models/corpus19.py``); prints one JSON line ``{"graph_count": G, "graph_break_count": B,
"gb": {"GB0036": n, ...}, "error": ...}``. ``gb`` counts explain's break reasons by the GB id whose
``Gb_type`` in Dynamo's graph-break registry is the reason's first line (``"-"`` when none is).
The model is called once eagerly first, as ``benchmarks/advisor_corpus.py`` does before it
explains (transformers installs some hooks on a model's first call).
"""

from __future__ import annotations

import collections
import json
import os
import sys


def gb_ids_by_type() -> dict[str, str]:
    """Dynamo's graph-break registry as gb_type -> GB id (the first id of a type)."""
    import torch

    path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    with open(path) as f:
        data = json.load(f)
    out: dict[str, str] = {}
    for gb_id, entries in data.items():
        for entry in entries:
            out.setdefault(entry.get("Gb_type", ""), gb_id)
    return out


def main(jobs: dict | None = None) -> None:
    """Explain the job named by ``sys.argv[1]`` (of ``jobs``; default: both corpora of issue 19)."""
    import torch

    from tests.models.corpus import seed_all

    if jobs is None:
        from tests.models.corpus19 import MEASURABLE as jobs
    model, inputs = jobs[sys.argv[1]].make()
    seed_all(1)
    model(**inputs)
    try:
        out = torch._dynamo.explain(model)(**inputs)
    except Exception as exc:  # a fullgraph-style failure: explain has no counts to give
        print(json.dumps({"graph_count": None, "graph_break_count": None, "gb": {},
                          "error": f"{type(exc).__name__}: {exc}"[:300]}))
        return
    ids = gb_ids_by_type()
    gb = collections.Counter(ids.get(r.reason.strip().splitlines()[0] if r.reason.strip() else "", "-")
                             for r in out.break_reasons)
    print(json.dumps({"graph_count": out.graph_count, "graph_break_count": out.graph_break_count,
                      "gb": dict(sorted(gb.items())), "error": None}))


if __name__ == "__main__":
    main()
