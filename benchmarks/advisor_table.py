"""The advisor table, measured on the real-model corpus: what the advisor fixes, and how honestly.

Run: ``PYTHONPATH=$PWD python benchmarks/advisor_table.py [job ...] [--json out.json]``

For every job of ``tests/models/corpus.py`` one ``nstviz.compare(model, auto=True)`` is made,
then, from its Report alone:

* **sites fixed or reduced** (outputs verified): the baseline's distinct breaks (``Break.id``)
  that are gone, or caused fewer graph breaks, in the run of the last *kept* attempt whose
  outputs match, counted once with non-strict marks only, once with every remedy (config
  flags, adapters, pytree registrations). A hard compile error the attempts remove counts as
  its site fixed.
* **failures explained**: failed/worse/no-change attempts whose text names a cause (an
  exception, a GB id, or the new break), over all such attempts.
* **jobs where the advisor tried nothing** although a break has a candidate on its stack.
* **wrong verdicts**: kept attempts whose outputs do not match.

The paste check (each recommendation run in a fresh process) is a test:
``tests/models/test_corpus_*.py``; this script prints the number of recommendations.
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass, field

sys.path.insert(0, ".")

_CAUSE_RE = re.compile(r"\bGB\d{4}\b|[A-Z]\w*(Error|Exception)\b|new break at|Invalid input type|Unsupported output type|went up|fell back|no call went through nonstrict_trace|never applied|not needed")


@dataclass
class JobFigures:
    """The table's figures for one job."""

    job: str
    wall_s: float
    sites: int
    fixed_nonstrict: list[str] = field(default_factory=list)
    fixed_all: list[str] = field(default_factory=list)
    attempts: int = 0
    failures: int = 0
    explained: int = 0
    wrong_verdicts: int = 0
    recommended: bool = False
    kinds: dict[str, int] = field(default_factory=dict)


def _weight(b) -> int:
    caused = getattr(b, "caused", None)
    return caused if caused is not None else b.count


def _fixed(base, after) -> list[str]:
    """Baseline break ids gone from ``after`` or with a lower weight there."""
    if after is None:
        return []
    later = {b.id: b for b in after.breaks}
    out = []
    for b in base.breaks:
        a = later.get(b.id)
        if a is None or _weight(a) < _weight(b):
            out.append(b.id)
    if base.error and not after.error and not base.breaks:
        out.append("compile error")
    return out


def figures(job: str, report, wall: float) -> JobFigures:
    """The table's figures from one advisor Report."""
    base = report.runs["baseline"]
    fig = JobFigures(job=job, wall_s=round(wall, 1), sites=len(base.breaks) + (1 if base.error and not base.breaks else 0))
    kept = [c for c in report.candidates if c.status == "improved" and c.run]
    verified = [c for c in kept if c.outputs_match is not False]
    last_ns = next((c for c in reversed(verified) if c.kind == "nonstrict"), None)
    last_all = verified[-1] if verified else None
    fig.fixed_nonstrict = _fixed(base, report.runs.get(last_ns.run) if last_ns else None)
    fig.fixed_all = _fixed(base, report.runs.get(last_all.run) if last_all else None)
    tried = [c for c in report.candidates if c.run]
    fig.attempts = len(tried)
    failed = [c for c in tried if c.status in ("failed", "worse", "no_change")]
    fig.failures = len(failed)
    fig.explained = sum(1 for c in failed if c.error and _CAUSE_RE.search(c.error))
    fig.wrong_verdicts = sum(1 for c in kept if c.outputs_match is False)
    fig.recommended = report.recommendation is not None
    for c in tried:
        fig.kinds[c.kind] = fig.kinds.get(c.kind, 0) + 1
    return fig


def main(argv: list[str]) -> None:
    import nstviz
    from tests.models.corpus import JOBS

    out_json = None
    if "--json" in argv:
        i = argv.index("--json")
        out_json = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    rows: list[JobFigures] = []
    for name in argv or list(JOBS):
        model, inputs = JOBS[name].make()
        t0 = time.perf_counter()
        report = nstviz.compare(model, auto=True, budget_s=600, max_attempts=8, **inputs)
        fig = figures(name, report, time.perf_counter() - t0)
        rows.append(fig)
        print(
            f"{name:<16} {fig.wall_s:6.1f} s  sites {fig.sites:2d}  fixed: nonstrict {len(fig.fixed_nonstrict):2d}, "
            f"all {len(fig.fixed_all):2d}  attempts {fig.attempts} {fig.kinds}  failures explained "
            f"{fig.explained}/{fig.failures}  wrong {fig.wrong_verdicts}  rec {'yes' if fig.recommended else 'no'}",
            flush=True,
        )
    tried_nothing = sum(1 for r in rows if r.sites and not r.attempts)
    print()
    print("| figure | measured |")
    print("| --- | --- |")
    print(f"| jobs / distinct break sites | {len(rows)} / {sum(r.sites for r in rows)} |")
    print(f"| sites fixed or reduced, outputs verified, nonstrict_trace | {sum(len(r.fixed_nonstrict) for r in rows)} |")
    print(f"| ... counting every verified remedy | {sum(len(r.fixed_all) for r in rows)} |")
    print(f"| recommendations (each pasted in a fresh process by the corpus test) | {sum(r.recommended for r in rows)} |")
    print(f"| failures explained with a cause | {sum(r.explained for r in rows)} of {sum(r.failures for r in rows)} |")
    print(f"| jobs where the advisor tried nothing | {tried_nothing} of {len(rows)} |")
    print(f"| wrong verdicts (kept, outputs differ) | {sum(r.wrong_verdicts for r in rows)} |")
    if out_json:
        with open(out_json, "w") as fh:
            json.dump([r.__dict__ for r in rows], fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
