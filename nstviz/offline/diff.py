"""Diff two offline runs per rank into a full Report (``nstviz diff`` / ``nstviz check``).

Each side (BEFORE, AFTER) is a folder of single-run Reports (``rank-N.nstviz.json``, written
by ``nstviz record`` or ``nstviz ingest``), one such file, or a TORCH_TRACE folder (ingested
on the fly). Ranks are paired; for each rank the BEFORE run becomes ``"baseline"`` and the
AFTER run ``"nonstrict"``, and the breaks are classified resolved / remaining / introduced.
The lowest rank fills :attr:`Report.runs`; every other rank is a :class:`RankView` in
:attr:`Report.ranks`. Ranks that compiled differently (different graphs, breaks or
recompiles) are named in a :class:`Finding`.

Breaks are matched through one function, :func:`break_identity`.
"""

from __future__ import annotations

import dataclasses
import datetime
import platform
from collections.abc import Sequence
from pathlib import Path

from nstviz._version import __version__
from nstviz.errors import ReportFormatError, UsageError
from nstviz.offline.ingest import find_logs, ingest_log
from nstviz.passes.assemble import build_report, summarize_runs
from nstviz.passes.break_diff import diff_breaks
from nstviz.passes.checks import Failure, pair_failures
from nstviz.report import (
    Break,
    BreakDiff,
    Finding,
    Graph,
    OutputCheck,
    RankView,
    Report,
    Run,
    SourceFile,
)
from nstviz.tracing.stacks import StackTable

RUN_LABELS = {"baseline": "before", "nonstrict": "after"}
_RANK_GLOB = "rank-*.nstviz.json"


def break_identity(brk: Break) -> str:
    """The identity two runs' breaks are matched by: :attr:`Break.id`, assigned at capture or ingest."""
    return brk.id


def diff_run_breaks(before: Run, after: Run) -> BreakDiff:
    """Resolved (before only), remaining (both; AFTER's break), introduced (after only)."""
    return diff_breaks(before, after)


# -- loading ----------------------------------------------------------------------------


def _single_run(report: Report, source: Path) -> Run:
    if len(report.runs) != 1:
        raise UsageError(
            f"{source} holds {len(report.runs)} runs ({', '.join(report.runs)}): `nstviz diff` takes single-run "
            "files written by `nstviz record` or `nstviz ingest`"
        )
    return next(iter(report.runs.values()))


def _load_file(path: Path) -> Report:
    try:
        report = Report.load_json(path)
    except ReportFormatError as exc:
        raise ReportFormatError(f"{path}: {exc}") from None
    _single_run(report, path)
    return report


def load_side(path: str | Path) -> dict[int, Report]:
    """The single-run Reports of one side, by rank.

    Args:
        path: a folder of ``rank-N.nstviz.json`` files, one such file, or a folder of
            TORCH_TRACE logs (ingested in memory).

    Raises:
        UsageError: the path is missing, holds nothing usable, or has two files of one rank.
        ReportFormatError: a file is not a Report.
    """
    root = Path(path)
    if root.is_file():
        if root.suffix == ".json":
            reports = [_load_file(root)]
        else:
            reports = [ingest_log(root)]
    elif root.is_dir():
        files = sorted(root.glob(_RANK_GLOB))
        if files:
            reports = [_load_file(f) for f in files]
        else:
            reports = [ingest_log(log) for log in find_logs(root)]
    else:
        raise UsageError(f"no such file or folder: {root} (give the --out folder of `nstviz record` or `nstviz ingest`)")
    out: dict[int, Report] = {}
    for report in reports:
        run = _single_run(report, root)
        rank = run.rank if run.rank is not None else (report.rank or 0)
        if rank in out:
            raise UsageError(f"{root} has two runs of rank {rank}: give one job's files")
        out[rank] = report
    return out


# -- building ---------------------------------------------------------------------------


class _Merger:
    """Re-interns every input's node stacks into one stack table."""

    def __init__(self) -> None:
        self.stacks = StackTable()
        self.sources: dict[str, SourceFile] = {}

    def run(self, report: Report, name: str) -> Run:
        run = _single_run(report, Path(report.title or "?"))
        mapping = {i: self.stacks.intern(stack) for i, stack in enumerate(report.stacks)}
        graphs = tuple(self._graph(g, mapping) for g in run.graphs)
        for path, src in report.sources.items():
            self.sources.setdefault(path, src)
        return dataclasses.replace(run, name=name, graphs=graphs)

    @staticmethod
    def _graph(graph: Graph, mapping: dict[int, int | None]) -> Graph:
        if not any(n.stack is not None for n in graph.nodes):
            return graph
        nodes = tuple(
            n if n.stack is None else dataclasses.replace(n, stack=mapping.get(n.stack)) for n in graph.nodes
        )
        return dataclasses.replace(graph, nodes=nodes)


def _where(brk: Break) -> str:
    loc = brk.location
    return f"{Path(loc.file).name}:{loc.line} in {loc.function} ({brk.gb_id or brk.reason})"


def _signature(run: Run) -> tuple[object, ...]:
    dynamo = tuple(
        (g.id, tuple(n.target for n in g.nodes if n.op.startswith("call_")))
        for g in run.graphs
        if g.level == "dynamo"
    )
    others = tuple(sorted((g.id, g.op_count) for g in run.graphs if g.level != "dynamo"))
    breaks = tuple(sorted((break_identity(b), b.count) for b in run.breaks))
    recompiles = sum(1 for c in run.compiles if c.recompile_reason)
    return (dynamo, others, breaks, len(run.compiles), recompiles)


def _differences(run: Run, ref: Run, rank: int, ref_rank: int) -> list[str]:
    out: list[str] = []
    graphs, ref_graphs = (sum(1 for g in r.graphs if g.level == "dynamo") for r in (run, ref))
    if graphs != ref_graphs:
        out.append(f"rank {rank} compiled {graphs} graph(s), rank {ref_rank} {ref_graphs}")
    mine = {break_identity(b): b for b in run.breaks}
    theirs = {break_identity(b): b for b in ref.breaks}
    for key, brk in mine.items():
        if key not in theirs:
            out.append(f"break only on rank {rank}: {_where(brk)}")
        elif brk.count != theirs[key].count:
            out.append(f"break hit {brk.count}x on rank {rank}, {theirs[key].count}x on rank {ref_rank}: {_where(brk)}")
    for key, brk in theirs.items():
        if key not in mine:
            out.append(f"break missing on rank {rank}: {_where(brk)}")
    recompiles, ref_recompiles = (sum(1 for c in r.compiles if c.recompile_reason) for r in (run, ref))
    if recompiles != ref_recompiles:
        out.append(f"rank {rank} recompiled {recompiles} time(s), rank {ref_rank} {ref_recompiles}")
    if not out:
        if len(run.compiles) != len(ref.compiles):
            out.append(f"rank {rank} had {len(run.compiles)} compile(s), rank {ref_rank} {len(ref.compiles)}")
        else:
            out.append(f"the graphs of rank {rank} differ from rank {ref_rank}'s (ops or op counts)")
    return out


def _names(ranks: Sequence[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(str(r) for r in ranks)


def rank_findings(runs_by_rank: dict[int, dict[str, Run]]) -> tuple[Finding, ...]:
    """A finding per run in which some ranks compiled differently from the others.

    The reference is the largest group of ranks that compiled alike (ties: the group with the
    lowest rank); every other rank is named, with what differs from the reference's lowest rank.
    """
    findings: list[Finding] = []
    for name in ("baseline", "nonstrict"):
        groups: dict[tuple[object, ...], list[int]] = {}
        for rank in sorted(runs_by_rank):
            run = runs_by_rank[rank].get(name)
            if run is not None:
                groups.setdefault(_signature(run), []).append(rank)
        if len(groups) < 2:
            continue
        reference = max(groups.values(), key=lambda ranks: (len(ranks), -ranks[0]))
        ref_rank = reference[0]
        odd = sorted(r for ranks in groups.values() if ranks is not reference for r in ranks)
        details: list[str] = []
        for rank in odd:
            details.extend(_differences(runs_by_rank[rank][name], runs_by_rank[ref_rank][name], rank, ref_rank))
        label = RUN_LABELS[name]
        findings.append(
            Finding(
                kind="ranks_differ",
                message=f"{label}: {_names(odd)} compiled differently from {_names(reference)} "
                "(a rank-dependent graph break or recompile; in a distributed job this can also hang collectives)",
                ranks=tuple(odd),
                run=name,
                details=tuple(details),
            )
        )
    return tuple(findings)


def diff_sides(before: dict[int, Report], after: dict[int, Report], *, title: str = "") -> Report:
    """Build the full Report of an offline diff from two sides (see :func:`load_side`).

    Raises:
        UsageError: the two sides have no rank in common.
    """
    common = sorted(set(before) & set(after))
    if not common:
        raise UsageError(
            f"BEFORE has ranks {sorted(before)} and AFTER ranks {sorted(after)}: no rank in common to compare"
        )
    merger = _Merger()
    views: dict[int, dict[str, Run]] = {}
    notes: list[str] = []
    for rank in common:
        views[rank] = {"baseline": merger.run(before[rank], "baseline"), "nonstrict": merger.run(after[rank], "nonstrict")}
        for side, report in (("before", before[rank]), ("after", after[rank])):
            notes.extend(f"{side}, rank {rank}: {n}" for n in report.notes)
    findings = list(rank_findings(views))
    for side, present, other in (("before", before, after), ("after", after, before)):
        missing = sorted(set(other) - set(present))
        if missing:
            findings.append(
                Finding(
                    kind="rank_missing",
                    message=f"{side} has no run of {_names(missing)}: those ranks are not compared",
                    ranks=tuple(missing),
                )
            )
    first = common[0]
    not_compared = OutputCheck(match=None, skipped_reason="offline runs keep no outputs")
    rank_views = tuple(_rank_view(rank, views[rank], not_compared) for rank in common[1:])
    runs = views[first]
    ref_after = after[first]
    return build_report(
        torch_version=ref_after.torch_version,
        runs=runs,
        outputs=not_compared,
        nstviz_version=__version__,
        python_version=platform.python_version(),
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        title=title,
        entry="cli",
        backend=ref_after.backend,
        nonstrict=ref_after.nonstrict,
        stacks=tuple(merger.stacks.stacks),
        sources=merger.sources,
        notes=tuple(dict.fromkeys(notes)),
        rank=first,
        ranks=rank_views,
        findings=tuple(findings),
    )


def _rank_view(rank: int, runs: dict[str, Run], outputs: OutputCheck) -> RankView:
    """One more rank: its runs with their break diff, counts and headline (the same passes as a Report)."""
    diff, counts, headline = summarize_runs(runs, outputs)
    return RankView(rank=rank, runs=runs, diff=diff, counts=counts, headline=headline)


def diff_paths(before: str | Path, after: str | Path) -> Report:
    """:func:`diff_sides` of two paths (folders or files, see :func:`load_side`)."""
    title = f"{Path(before).name} -> {Path(after).name}"
    return diff_sides(load_side(before), load_side(after), title=title)


def offline_check_failures(report: Report, *, fail_on_break: bool = False) -> list[str]:
    """Why ``nstviz check BEFORE AFTER`` fails (empty when it passes), over every rank."""
    failures: list[str] = []
    views = [_main_view(report), *report.ranks]
    for view in views:
        after = view.runs.get("nonstrict")
        if after is None:
            continue  # no nonstrict run on this rank: nothing to check (the rank findings say it)
        # The outputs of recorded runs are not compared, and what a run raised is not asked.
        for failure in pair_failures(after, view.diff, outputs_match=None, fail_on_break=fail_on_break):
            failures.append(f"rank {view.rank}: {_rank_sentence(failure)}")
    for finding in report.findings:
        if finding.kind == "ranks_differ" and finding.run == "nonstrict":
            failures.append(finding.message)
    return failures


def _rank_sentence(failure: Failure) -> str:
    if failure.kind == "introduced":
        where = "; ".join(_where(b) for b in failure.breaks[:3])
        return f"{len(failure.breaks)} break(s) introduced: {where}"
    if failure.kind == "not_applied":
        return f"--nonstrict {failure.spec} never applied"
    return f"{len(failure.breaks)} distinct break(s) remain (--fail-on-break)"


def rank_lines(report: Report) -> list[str]:
    """One line per rank: breaks and graphs before -> after, and the break diff."""
    views = [_main_view(report), *report.ranks]
    lines = []
    for view in sorted(views, key=lambda v: v.rank):
        before, after = view.counts.get("baseline"), view.counts.get("nonstrict")
        if before is None or after is None:
            continue
        d = view.diff
        lines.append(
            f"rank {view.rank}: breaks {before.breaks} -> {after.breaks}, graphs {before.graphs} -> {after.graphs}; "
            f"{len(d.resolved)} resolved, {len(d.remaining)} remaining, {len(d.introduced)} introduced"
        )
    return lines


def _main_view(report: Report) -> RankView:
    """The rank held in :attr:`Report.runs`, as a RankView."""
    return RankView(
        rank=report.rank or 0, runs=report.runs, diff=report.diff, counts=report.counts, headline=report.headline
    )


def findings_text(report: Report) -> str:
    """The findings as plain text lines (for the CLI)."""
    lines = []
    for f in report.findings:
        lines.append(f"finding: {f.message}")
        lines.extend(f"  - {d}" for d in f.details)
    return "\n".join(lines)


__all__ = [
    "break_identity",
    "diff_paths",
    "diff_run_breaks",
    "diff_sides",
    "findings_text",
    "load_side",
    "offline_check_failures",
    "rank_findings",
    "rank_lines",
]
