"""Run a recommendation's code in a fresh process, BEFORE the model is built, then capture.

Usage: ``python -m tests.models.paste_check JOB`` with the code on stdin; prints one JSON line
``{"breaks": N, "graphs": G, "error": ...}`` (distinct breaks and Dynamo graphs of a plain
``nstviz.compare`` of the job, the same figures the advisor reports for its attempts).
"""

from __future__ import annotations

import json
import sys
import types


def main() -> None:
    job_name = sys.argv[1]
    code = sys.stdin.read()
    # as a user's own module (or notebook's __main__): one Dynamo can import by its __name__
    module = types.ModuleType("__recommendation__")
    sys.modules[module.__name__] = module
    exec(compile(code, "<recommendation>", "exec"), module.__dict__)
    import nstviz
    from tests.models.corpus import JOBS

    model, inputs = JOBS[job_name].make()
    # untimed, as the advisor's runs are (timing compiles each run once more; breaks and graphs stay)
    report = nstviz.compare(model, check=False, time=False, **inputs)
    run = report.runs["baseline"]
    graphs = sum(1 for g in run.graphs if g.level == "dynamo")
    print(json.dumps({"breaks": len(run.breaks), "graphs": graphs, "error": run.error}))


if __name__ == "__main__":
    main()
