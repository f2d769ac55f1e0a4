"""Count a job's graphs with ``torch._dynamo.explain`` in a fresh process, code pasted first.

Usage: ``python -m tests.models.explain_check JOB`` with code on stdin (a recommendation, or
nothing); prints one JSON line ``{"graph_count": G, "graph_break_count": B, "error": ...}``:
what ``torch._dynamo.explain`` reports for one call of the job, independent of nstviz's own
capture. :func:`tests.models.corpus_checks.check_paste` compares the advisor's claims with it.
"""

from __future__ import annotations

import json
import sys
import types


def main() -> None:
    job_name = sys.argv[1]
    code = sys.stdin.read()
    module = types.ModuleType("__recommendation__")
    sys.modules[module.__name__] = module
    exec(compile(code, "<recommendation>", "exec"), module.__dict__)
    import torch

    from tests.models.corpus import JOBS

    model, inputs = JOBS[job_name].make()
    try:
        out = torch._dynamo.explain(model)(**inputs)
        got = {"graph_count": out.graph_count, "graph_break_count": out.graph_break_count, "error": None}
    except Exception as exc:  # a fullgraph-style failure: explain has no counts to give
        got = {"graph_count": None, "graph_break_count": None, "error": f"{type(exc).__name__}: {exc}"[:300]}
    print(json.dumps(got))


if __name__ == "__main__":
    main()
