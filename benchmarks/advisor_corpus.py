"""Issue 19's table: what the advisor's pasted recommendation buys on the breaking corpus.

Run (one job at a time, each step in a fresh process)::

    PYTHONPATH=$PWD python benchmarks/advisor_corpus.py [--jobs a,b] [--budget 60]
        [--corpus 19|27|fresh|heldout|third|fourth|fifth|sixth|seventh] [--max-attempts 8] [--backend eager] [--reps 5] [--json out.json]
    python benchmarks/advisor_corpus.py --render out.json   # the table of a saved run

Jobs: ``tests/models/corpus.py`` and ``tests/models/corpus19.py`` (``--corpus 19``, the default:
all of both), ``tests/models/corpus27.py`` (``--corpus 27``: families the advisor was not built
on, its held-out jobs last), or ``tests/models/corpus_fresh.py`` (``--corpus fresh``: families
kept aside until every remedy was built, run once at the end), or ``tests/models/corpus_heldout.py``
(``--corpus heldout``: families chosen after the last remedy was built, measured once), or
``tests/models/corpus_third.py`` (``--corpus third``: a third such set, scanned on 2026-12-05),
``tests/models/corpus_fourth.py`` (``--corpus fourth``: a fourth, scanned after stop 45); ``--jobs``
picks some of any of them. For every job, three fresh processes:

1. **advise**: ``nstviz.compare(model, auto=True, budget_s=..., max_attempts=...)``; the
   Report's recommendation (its code and claims), the baseline's breaks and those left in the
   recommended run (GB id, hint categories), and the advisor's wall time.
2. **before**: ``torch._dynamo.explain`` of one call (graphs, graph breaks, reasons), then a
   fresh ``torch.compile(model, backend=...)``: the first call's time (compile time), then the
   steady state (``--reps`` calls after a warm-up call: median, min, max), and eager's the same
   way; the compiled outputs are compared with eager's.
3. **after**: the same, with the recommendation's code executed first (as a user's module,
   before the model is built): the paste check.

Then a table: breaks before -> after (explain), graphs before -> after, fully fixed (0 breaks),
compile time, steady state, advisor time, verdict; and the totals.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


# ---------------------------------------------------------------- worker side (fresh process)


def _hint_categories(hints: list[str] | tuple[str, ...]) -> list[str]:
    """The categories of ``torch._dynamo.graph_break_hints`` whose text the hints contain."""
    import torch._dynamo.graph_break_hints as H

    cats = []
    for name in ("USER_ERROR", "DYNAMO_BUG", "DIFFICULT", "FUNDAMENTAL", "SUPPORTABLE",
                 "CAUSED_BY_EARLIER_GRAPH_BREAK", "INFERENCE_MODE", "SPARSE_TENSOR"):
        texts = getattr(H, name, [])
        if any(t.strip()[:60] in h for t in texts for h in hints):
            cats.append(name)
    return cats


def _registry() -> dict[str, tuple[str, list[str]]]:
    """Dynamo's graph-break registry: gb_type -> (GB id, hints)."""
    import torch

    path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError:
        return {}
    out = {}
    for gb_id, entries in data.items():
        for e in entries:
            out.setdefault(e.get("Gb_type", ""), (gb_id, list(e.get("Hints", []))))
    return out


def _exec_code(code: str, model: Any = None) -> None:
    # as a user's own module: Dynamo can import it by its __name__; `model` is the built model, for
    # code that says "after building or loading `model`" (transformers' experts switch)
    module = types.ModuleType("__recommendation__")
    module.__dict__["model"] = model
    sys.modules[module.__name__] = module
    exec(compile(code, "<recommendation>", "exec"), module.__dict__)


def _jobs():
    from tests.models.corpus19 import MEASURABLE
    from tests.models.corpus27 import MEASURABLE as MEASURABLE27

    held_out = (importlib.import_module(f"tests.models.corpus_{name}").MEASURABLE for name in _HELD_OUT_SETS)
    return {**MEASURABLE, **MEASURABLE27, **{k: v for jobs in held_out for k, v in jobs.items()}}


_HELD_OUT_SETS = ("fresh", "heldout", "third", "fourth", "fifth", "sixth", "seventh")
"""The held-out sets, each ``tests/models/corpus_<name>.py`` with its breaking ``JOBS``."""


def _corpus_jobs(corpus: str) -> list[str]:
    """The default job list of ``--corpus``: 19 (corpus.py and corpus19.py), 27 (corpus27.py, held-out jobs last),
    or one held-out set's breaking jobs (:data:`_HELD_OUT_SETS`)."""
    if corpus in _HELD_OUT_SETS:
        return list(importlib.import_module(f"tests.models.corpus_{corpus}").JOBS)
    if corpus == "27":
        from tests.models.corpus27 import HELD_OUT, JOBS

        return list(JOBS) + [j.name for j in HELD_OUT]
    from tests.models.corpus19 import ALL_JOBS

    return list(ALL_JOBS)


def _call(target, inputs):
    from tests.models.corpus import seed_all

    seed_all(1)
    return target(**inputs)


def _times(fn, reps: int) -> dict[str, float]:
    fn()  # warm-up
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return {"median_ms": round(1e3 * statistics.median(ts), 3), "min_ms": round(1e3 * min(ts), 3),
            "max_ms": round(1e3 * max(ts), 3)}


def worker_measure(job: str, code: str, backend: str, reps: int, save: str | None = None,
                   ref: str | None = None) -> dict[str, Any]:
    """explain's counts, compile time, steady state and the output check of one job (code run after the build).

    ``save``: write the compiled call's outputs there (``torch.save``); ``ref``: compare the compiled
    outputs with the ones saved there too (``match_baseline``: the baseline compile's, when the
    baseline itself does not match eager)."""
    import collections

    import torch

    from tests.models.corpus import seed_all
    from tests.models.measure import flat_tensors, same

    # the code runs after the model is built, before anything is compiled (as a user pastes it)
    model, inputs = _jobs()[job].make()
    _exec_code(code, model)
    res: dict[str, Any] = {"job": job}
    eager_out = flat_tensors(_call(model, inputs))
    res["eager"] = _times(lambda: _call(model, inputs), reps)
    reg = _registry()
    torch._dynamo.reset()
    try:
        # seeded like the other calls: a job that writes into its inputs (Whisper's SpecAugment zeroes
        # the masked input features in place) must write the same places, or later calls see other inputs
        seed_all(1)
        ex = torch._dynamo.explain(model)(**inputs)
        kinds = collections.Counter()
        for r in ex.break_reasons:
            first = r.reason.strip().splitlines()[0] if r.reason.strip() else "?"
            gb = reg.get(first, (None, []))[0]
            kinds[f"{gb or '-'} {first[:80]}"] += 1
        res.update(graphs=ex.graph_count, breaks=ex.graph_break_count, kinds=dict(kinds), explain_error=None)
    except Exception as exc:  # a fullgraph-style failure: explain has no counts
        res.update(graphs=None, breaks=None, kinds={}, explain_error=f"{type(exc).__name__}: {exc}"[:300])
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend)
    try:
        t0 = time.perf_counter()
        out = flat_tensors(_call(compiled, inputs))
        res["compile_s"] = round(time.perf_counter() - t0, 3)
        res["match_eager"] = same(out, eager_out)
        if save:
            torch.save(out, save)
        if ref and os.path.exists(ref):
            res["match_baseline"] = same(out, torch.load(ref))
        from torch._dynamo.utils import counters

        frames = counters["frames"]["total"]
        res["steady"] = _times(lambda: _call(compiled, inputs), reps)
        # frames Dynamo compiled again during the timed calls (recompiles make the steady state a compile)
        res["steady_recompiles"] = counters["frames"]["total"] - frames
        res["error"] = None
    except Exception as exc:
        res.update(compile_s=None, match_eager=None, steady=None, error=f"{type(exc).__name__}: {exc}"[:300])
    return res


def _break_row(b) -> dict[str, Any]:
    return {"gb_id": b.gb_id, "gb_type": b.gb_type, "count": b.caused if b.caused is not None else b.count,
            "where": f"{os.path.basename(b.location.file or '?')}:{b.location.line}:{b.location.function}",
            "hints": _hint_categories(b.hints), "fatal": b.fatal}


def worker_advise(job: str, budget: float | None, max_attempts: int) -> dict[str, Any]:
    """The advisor on one job: its recommendation and the breaks before and after."""
    import nstviz

    model, inputs = _jobs()[job].make()
    t0 = time.monotonic()
    report = nstviz.compare(model, auto=True, budget_s=budget, max_attempts=max_attempts, **inputs)
    res: dict[str, Any] = {"job": job, "advisor_s": round(time.monotonic() - t0, 2)}
    rec = report.recommendation
    res["baseline_breaks"] = [_break_row(b) for b in report.runs["baseline"].breaks]
    res["candidates"] = [{"function": c.function, "kind": c.kind, "status": c.status, "gb_id": c.gb_id,
                          "error": (c.error or "")[:200]} for c in report.candidates]
    if rec is None:
        res["recommendation"] = None
        return res
    res["recommendation"] = {
        "code": rec.code, "functions": list(rec.functions), "config": list(rec.config),
        "adapters": list(rec.adapters), "pytree": list(rec.pytree), "outputs_match": rec.outputs_match,
        "graphs_before": rec.graphs_before, "graphs_after": rec.graphs_after,
        "graph_breaks_before": rec.graph_breaks_before, "graph_breaks_after": rec.graph_breaks_after,
    }
    nst = report.runs.get("nonstrict")
    res["remaining_breaks"] = [_break_row(b) for b in nst.breaks] if nst is not None else []
    return res


# ---------------------------------------------------------------- driver side


def _fresh(args: list[str], code: str = "", timeout: float = 1200) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), *args], input=code, capture_output=True,
                             text=True, cwd=ROOT, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"fatal": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in out.stdout.strip().splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"fatal": f"exit {out.returncode}: {out.stderr.strip()[-600:]}"}
    return json.loads(lines[-1])


def verdict(before: dict, after: dict | None, rec: dict | None) -> str:
    """One word for the job: fixed / improved / no change / worse / WRONG / unverified / no recommendation / error."""
    if rec is None:
        return "no recommendation"
    if after is None or after.get("fatal") or after.get("error"):
        return "error"
    if after.get("match_eager") is False:
        if before.get("match_eager") is not False:
            return "WRONG"  # the baseline compile matches eager, the pasted one does not
        if after.get("match_baseline") is not True:
            # the baseline compile is unlike eager too (train mode: random ops drawn in another order)
            return "unverified"
    gb, ga = before.get("graphs"), after.get("graphs")
    if ga is None:
        return "error"
    if gb is None:
        return "fixed" if after.get("breaks") == 0 else "improved"
    if after.get("breaks") == 0 and before.get("breaks"):
        return "fixed"
    if ga < gb:
        return "improved"
    return "worse" if ga > gb else "no change"


def run_job(job: str, opts: argparse.Namespace) -> dict[str, Any]:
    """The three fresh processes of one job, and its verdict."""
    common = ["--backend", opts.backend, "--reps", str(opts.reps)]
    row: dict[str, Any] = {"job": job}
    tmp = tempfile.mkdtemp(prefix="advisor_corpus_")
    ref = os.path.join(tmp, "baseline_outputs.pt")
    row["before"] = _fresh(["--worker", "measure", job, *common, "--save-out", ref])
    if row["before"].get("fatal") is None and row["before"].get("breaks") == 0:
        row["advise"], row["after"], row["verdict"] = None, None, "not breaking"
        return row
    budget = ["--budget", str(opts.budget)] if opts.budget is not None else []
    row["advise"] = _fresh(["--worker", "advise", job, *budget, "--max-attempts", str(opts.max_attempts)],
                           timeout=(opts.budget or 300) * 3 + 900)
    rec = row["advise"].get("recommendation")
    row["after"] = _fresh(["--worker", "measure", job, *common, "--ref-out", ref], code=rec["code"]) if rec else None
    row["verdict"] = verdict(row["before"], row["after"], rec)
    shutil.rmtree(tmp, ignore_errors=True)
    return row


def _fmt(v: Any, spec: str = "") -> str:
    return "-" if v is None else format(v, spec)


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table and the totals."""
    head = ("| job | graph breaks | graphs | fully fixed | compile s | steady ms (median [min-max]) | eager ms "
            "| advisor s | verdict |\n|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    tb = ta = fixed = breaking = 0
    adv = []
    for r in rows:
        b = r["before"]
        a = r.get("after") or {}
        if r["verdict"] == "not breaking":
            continue
        breaking += 1
        bb = b.get("breaks")
        ab = a.get("breaks") if a else None
        if r.get("after") is None or ab is None:
            ab = bb  # no recommendation (or it failed): nothing removed
        if bb is not None:
            tb += bb
            ta += ab if ab is not None else bb
        is_fixed = r["verdict"] == "fixed"
        fixed += is_fixed
        adv_s = (r.get("advise") or {}).get("advisor_s")
        if adv_s is not None:
            adv.append(adv_s)

        def steady(m):
            s = (m or {}).get("steady")
            return "-" if not s else f"{s['median_ms']:.2f} [{s['min_ms']:.2f}-{s['max_ms']:.2f}]"

        after_graphs = a.get("graphs") if a else b.get("graphs")
        note = " (baseline compile differs from eager)" if b.get("match_eager") is False else ""
        lines.append(
            f"| {r['job']} | {_fmt(bb)} -> {_fmt(ab)} | {_fmt(b.get('graphs'))} -> {_fmt(after_graphs)} "
            f"| {'yes' if is_fixed else 'no'} | {_fmt(b.get('compile_s'), '.2f')} -> "
            f"{_fmt((a or b).get('compile_s'), '.2f')} | {steady(b)} -> {steady(a or b)} "
            f"| {_fmt((b.get('eager') or {}).get('median_ms'), '.2f')} | {_fmt(adv_s, '.1f')} | {r['verdict']}{note} |"
        )
    removed = 100.0 * (tb - ta) / tb if tb else 0.0
    med = statistics.median(adv) if adv else None
    lines.append("")
    lines.append(f"Totals: {breaking} breaking jobs; graph breaks {tb} -> {ta} ({removed:.0f}% removed); "
                 f"fully fixed {fixed}; median advisor time {_fmt(med, '.1f')} s.")
    return "\n".join(lines)


def remaining(rows: list[dict[str, Any]]) -> str:
    """Per job: the break kinds explain still counts after the paste, and nstviz's remaining breaks."""
    out = []
    for r in rows:
        if r["verdict"] == "not breaking":
            continue
        a = r.get("after") or r["before"]
        kinds = ", ".join(f"{k} x{n}" for k, n in sorted((a.get("kinds") or {}).items(), key=lambda kv: -kv[1]))
        adv = r.get("advise") or {}
        left = adv.get("remaining_breaks") if adv.get("recommendation") else adv.get("baseline_breaks")
        nst = "; ".join(f"{x['gb_id'] or '-'} {x['where']} x{x['count']} [{','.join(x['hints']) or '-'}]"
                        for x in (left or []))
        rec = adv.get("recommendation") or {}
        what = ", ".join(rec.get("functions", []) + [f"config:{c}" for c in rec.get("config", [])]
                         + [f"adapter:{c}" for c in rec.get("adapters", [])]
                         + [f"pytree:{c}" for c in rec.get("pytree", [])]) or "-"
        out.append(f"- **{r['job']}** ({r['verdict']}); recommended: {what}\n  - explain after: {kinds or 'none'}"
                   f"\n  - nstviz, left: {nst or 'none'}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--jobs", default="", help="comma-separated job names (default: every job of --corpus)")
    p.add_argument("--corpus", choices=("19", "27", *_HELD_OUT_SETS), default="19",
                   help="19: tests/models/corpus.py and corpus19.py; 27: corpus27.py (families of issue 27); "
                   "fresh: corpus_fresh.py (families kept aside until the end); heldout: corpus_heldout.py "
                   "(families never looked at while the remedies were built, measured once); third: corpus_third.py "
                   "(a third set of such families, scanned 2026-12-05); fourth: corpus_fourth.py (a fourth, after stop 45); "
                   "fifth: corpus_fifth.py (a fifth, after stop 47); sixth: corpus_sixth.py (a sixth, after stop 48); "
                   "seventh: corpus_seventh.py (a seventh, after stop 49)")
    p.add_argument("--budget", type=float, default=None,
                   help="advisor budget_s per job (default: compare()'s, 60 s or five runs of the job)")
    p.add_argument("--max-attempts", type=int, default=8)
    p.add_argument("--backend", default="eager", help="torch.compile backend for the timings")
    p.add_argument("--reps", type=int, default=5, help="timed calls after one warm-up call")
    p.add_argument("--json", default=None, help="write the raw figures here")
    p.add_argument("--render", default=None, metavar="JSON", help="print the table of a saved --json run, run nothing")
    p.add_argument("--worker", choices=("measure", "advise"), help=argparse.SUPPRESS)
    p.add_argument("--save-out", default=None, help=argparse.SUPPRESS)
    p.add_argument("--ref-out", default=None, help=argparse.SUPPRESS)
    p.add_argument("job", nargs="?", help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.worker:
        with contextlib.redirect_stdout(sys.stderr):  # the model's prints must not mix with the JSON line
            if opts.worker == "measure":
                res = worker_measure(opts.job, sys.stdin.read(), opts.backend, opts.reps, opts.save_out, opts.ref_out)
            else:
                res = worker_advise(opts.job, opts.budget, opts.max_attempts)
        print(json.dumps(res))
        return
    if opts.render:
        with open(opts.render) as f:
            saved = json.load(f)["rows"]
        for r in saved:  # the verdict by this version's rule
            if r["verdict"] != "not breaking":
                r["verdict"] = verdict(r["before"], r.get("after"), (r.get("advise") or {}).get("recommendation"))
        print(table(saved))
        print()
        print(remaining(saved))
        return
    known = _jobs()
    names = [n for n in opts.jobs.split(",") if n] or _corpus_jobs(opts.corpus)
    unknown = [n for n in names if n not in known]
    if unknown:
        p.error(f"unknown job(s): {', '.join(unknown)}; known: {', '.join(known)}")
    rows = []
    for name in names:
        t0 = time.monotonic()
        row = run_job(name, opts)
        row["wall_s"] = round(time.monotonic() - t0, 1)
        rows.append(row)
        a = row.get("after") or {}
        print(f"{name}: {row['verdict']}; breaks {row['before'].get('breaks')} -> {a.get('breaks')}, graphs "
              f"{row['before'].get('graphs')} -> {a.get('graphs')} ({row['wall_s']} s)"
              + (f" [{row['before']['fatal'][:200]}]" if row["before"].get("fatal") else ""), flush=True)
        if opts.json:  # after every job: a long run that is stopped keeps what it measured
            with open(opts.json, "w") as f:
                json.dump({"argv": sys.argv, "rows": rows}, f, indent=1)
    print()
    print(table(rows))
    print()
    print(remaining(rows))


if __name__ == "__main__":
    main()
