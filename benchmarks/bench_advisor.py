"""Cost of the advisor (nstviz.advisor.search).

Run: python benchmarks/bench_advisor.py
1. Pure planning: proposals and pre-checks for a synthetic baseline with many distinct breaks
   and deep stacks (no runs), to show the advisor's own overhead is negligible next to runs.
2. A real ``trace_code(..., auto=True)`` on a cell with three breaks of different kinds:
   total time, time per attempt, attempts used, and what was recommended.
3. The real-model corpus (``tests/models/corpus.py``; ``--corpus [job ...]``, run from the
   worktree root with ``PYTHONPATH=$PWD``): wall time per model of ``compare(auto=True)``
   against ``compare()`` (baseline + nonstrict + eager), the advisor's cost as a multiple of
   that, and the median over the models (target: median model under 60 s on 2 cores).
"""

from __future__ import annotations

import linecache
import time

import torch  # noqa: F401  (imported before timing: the advisor itself never pays for it)

from nstviz.advisor.search import run_advisor
from nstviz.report import Break, Compile, Location, OutputCheck, Run


def synthetic(n_funcs: int, depth: int) -> tuple[Run, dict]:
    lines = []
    for i in range(n_funcs):
        lines += [f"def f{i}(x):\n", f"    return g{i}(x)\n"]
    src = "".join(lines)
    path = "<bench-advisor>"
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    ns: dict = {}
    exec(compile(src, path, "exec"), {"g0": None, **{f"g{i}": None for i in range(n_funcs)}}, ns)
    top = Location(file=path, line=1, function="entry")
    breaks = []
    for i in range(n_funcs):
        stack = [top] + [Location(file=path, line=2 * ((i + k) % n_funcs) + 2, function=f"f{(i + k) % n_funcs}") for k in range(depth)]
        breaks.append(Break(gb_id="GB0059", reason="r", count=1 + i % 7, fatal=False, location=stack[-1], stack=tuple(stack)))
    run = Run(name="baseline", breaks=tuple(breaks), compiles=(Compile(frame_id=0, compile_id=0, function="entry"),))
    return run, ns


def bench_planning() -> None:
    for n, depth in [(50, 5), (300, 10)]:
        run, ns = synthetic(n, depth)
        def try_marks(marks, name, run=run):
            return run, OutputCheck(match=True)

        t0 = time.perf_counter()
        cands, _ = run_advisor(run, ns.get, try_marks, budget_s=1e9, max_attempts=0)
        dt = time.perf_counter() - t0
        print(f"planning + pre-checks: {n} breaks x depth {depth}: {len(cands)} candidates in {dt * 1000:.1f} ms")


CELL = '''
import torch

def noisy(x):
    print("noisy called")
    return x * 2

def outer(x):
    return noisy(x) + 1

def data_dependent(x):
    n = int(x.abs().sum().item())
    return x + n

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def stats(self, x):
        print("stats")
        return x.mean(-1, keepdim=True)

    def forward(self, x):
        return self.lin(x) - self.stats(x)

torch.manual_seed(0)
blk = Block()

@torch.compile
def model(x):
    y = outer(x.sin())
    y = blk(y)
    y = data_dependent(y)
    return y.cos()

out = model(torch.randn(2, 4))
'''


def bench_real() -> None:
    import nstviz

    t0 = time.perf_counter()
    report = nstviz.trace_code(CELL, {}, auto=True, budget_s=300, max_attempts=8)
    total = time.perf_counter() - t0
    tried = [c for c in report.candidates if c.run]
    per = [c.elapsed_s for c in tried if c.elapsed_s is not None]
    print(f"trace_code(auto=True), 3 breaks: {total:.1f} s total, {len(tried)} attempts, "
          f"{sum(per) / max(1, len(per)):.2f} s per attempt, baseline {report.runs['baseline'].wall_time_s:.2f} s")
    for c in report.candidates:
        print(f"  {c.status:<9} {c.function:<16} {c.error or ''}"[:150])
    rec = report.recommendation
    print(f"  recommended: {rec.functions if rec else None} ({rec.breaks_before} -> {rec.breaks_after} breaks)" if rec else "  nothing recommended")


def bench_corpus(names: list[str]) -> None:
    import statistics
    import sys

    import nstviz

    sys.path.insert(0, ".")
    from tests.models.corpus import JOBS

    rows = []
    for name in names or list(JOBS):
        model, inputs = JOBS[name].make()
        t0 = time.perf_counter()
        nstviz.compare(model, **inputs)
        plain = time.perf_counter() - t0
        model, inputs = JOBS[name].make()
        t0 = time.perf_counter()
        report = nstviz.compare(model, auto=True, budget_s=600, max_attempts=8, **inputs)
        total = time.perf_counter() - t0
        tried = sum(1 for c in report.candidates if c.run)
        rec = report.recommendation
        rows.append(total)
        print(f"{name:<18} auto {total:6.1f} s  plain {plain:5.1f} s  x{total / plain:4.1f}  "
              f"{tried} attempts  rec: {(rec.breaks_before, rec.breaks_after) if rec else None}", flush=True)
    print(f"median model: {statistics.median(rows):.1f} s over {len(rows)} models")


if __name__ == "__main__":
    import sys

    if "--corpus" in sys.argv:
        bench_corpus(sys.argv[sys.argv.index("--corpus") + 1 :])
    else:
        bench_planning()
        bench_real()
