"""Plain-text summary of a Report (``Report.summary``); the consistency checks are :mod:`nstviz.report.lint`.

The summary reads :attr:`Report.headline` and :attr:`Report.counts` as they are: it derives
no numbers of its own. Breaks are listed in their rank order (:attr:`Run.break_order`), each
with its counts text (:attr:`Break.tally`: the graph breaks it caused, Dynamo's
``counters["graph_break"]``, and the times Dynamo's tracing reached it, tlparse's entries).
A timed run (:attr:`Run.timing`) gets its one line (:attr:`RunTiming.text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nstviz._where import where
from nstviz.render.attempts import attempt_lines
from nstviz.report.facts import counts_text, ranked_breaks

if TYPE_CHECKING:
    from nstviz.report import OutputCheck, Report, Run, RunCounts


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def headline(report: Report) -> str:
    """The headline as one line (:attr:`Report.headline`, computed at capture)."""
    return report.headline.text


def summary(report: Report) -> str:
    """A short plain-text summary: the headline, then one block per run."""
    lines = [headline(report)]
    if report.title:
        lines.append(f"title: {report.title}")
    lines.append(f"torch {report.torch_version}, backend {report.backend}, baseline {report.baseline_mode}")
    final = "nonstrict" if "nonstrict" in report.runs else "baseline"  # where remaining breaks' advice is said
    for run in report.runs.values():
        lines.append("")
        lines.extend(_run_lines(run, report.counts[run.name], with_advice=run.name == final))
    lines.append("")
    lines.extend(_output_lines(report.outputs))
    lines.extend(attempt_lines(report))  # every attempt and why
    for note in report.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _run_lines(run: Run, c: RunCounts, *, with_advice: bool) -> list[str]:
    """One run's block: its counts, timing, recompiles, breaks, regions, mark notes and error."""
    counted = "" if c.graph_breaks is None else f"{_plural(c.graph_breaks, 'graph break')} counted by Dynamo, "
    reached = f" ({counted}reached {c.break_hits}×)" if c.breaks or c.graph_breaks else ""
    lines = [
        f"[{run.name}] {_plural(c.graphs, 'graph')}, {_plural(c.breaks, 'distinct break')}{reached}, "
        f"{c.ops} ops, {c.aten_ops} aten ops, "
        f"{_plural(c.regions, 'region')} ({c.inlined_nodes} inlined nodes){', one full graph' if c.full_graph else ''}"
    ]
    if run.timing is not None:
        lines.append(f"  timing: {run.timing.text}")
    recompiles = [cp for cp in run.compiles if cp.recompile_reason]
    if recompiles:
        first = recompiles[0].recompile_reason.splitlines()[0]
        lines.append(
            f"  {_plural(len(run.compiles), 'compile')}, {_plural(len(recompiles), 'recompile')} "
            f"(first: {recompiles[0].frame_id}/{recompiles[0].compile_id} {first})"
        )
    for b in ranked_breaks(run):  # most graph breaks caused first
        gb = b.gb_id or "GB?"
        fatal = " FATAL" if b.fatal else ""
        lines.append(
            f"  break {gb}{fatal} at {where(b.location.file, b.location.line)} "
            f"({b.location.function}): {b.reason}"
        )
        lines.append(f"    {counts_text(b)}")
        if b.advice and with_advice:
            lines.append(f"    what else: {b.advice}")
    for r in run.regions:
        n = sum(len(v) for v in r.nodes.values())
        lines.append(f"  region {r.id} {r.function}: {n} inlined nodes")
    for m in run.marked:
        if not m.applied or m.warning:
            lines.append(f"  note: {m.warning or m.qualname + ' marked but not applied'}")
    if run.error:
        lines.append(f"  error: {run.error.splitlines()[0]}")
    return lines


def _output_lines(out: OutputCheck) -> list[str]:
    """The output check: each comparison's verdict, and a warning for non-deterministic code."""
    lines = []
    if out.match is None:
        lines.append(f"outputs: not compared ({out.skipped_reason or 'nothing to compare'})")
    else:
        for comp in out.comparisons or ():
            verdict = "match" if comp.match else ("differ" if comp.match is False else "not comparable")
            diff = f", max abs diff {comp.max_abs_diff:.3g}" if comp.max_abs_diff is not None else ""
            lines.append(f"outputs {comp.left} vs {comp.right}: {verdict}{diff}")
        if not out.comparisons:
            lines.append(f"outputs: {'match' if out.match else 'differ'}")
    if out.nondeterministic:
        lines.append(
            "outputs: the code gave different results in two eager runs (non-deterministic); "
            "differences may not come from compiling or from nonstrict_trace"
        )
    return lines
