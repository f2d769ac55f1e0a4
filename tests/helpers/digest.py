"""Small digests of Report parts that tests assert on exactly."""

from __future__ import annotations

import os

from nstviz.report import Report, Run


def breaks(run: Run) -> list[tuple]:
    """``(gb_id, file basename, line, function, count, fatal)`` per distinct break."""
    return [
        (b.gb_id, os.path.basename(b.location.file), b.location.line, b.location.function, b.count, b.fatal)
        for b in run.breaks
    ]


def dynamo_graphs(run: Run) -> int:
    return sum(1 for g in run.graphs if g.level == "dynamo")


def regions(run: Run) -> list[tuple[str, dict[str, tuple[str, ...]]]]:
    return [(r.function, dict(r.nodes)) for r in run.regions]


def tagged_nodes(run: Run) -> dict[str, set[tuple[str, str]]]:
    """Region id -> {(graph id, node name)} from ``Node.region`` (must equal ``Region.nodes``)."""
    out: dict[str, set[tuple[str, str]]] = {}
    for g in run.graphs:
        if g.level == "dynamo":
            continue
        for n in g.nodes:
            if n.region is not None:
                out.setdefault(n.region, set()).add((g.id, n.name))
    return out


def check_consistent(report: Report) -> None:
    """validate(), JSON round trip, and Node.region agreeing with Region.nodes."""
    report.validate()
    assert Report.from_json(report.to_json()) == report
    for run in report.runs.values():
        want = {r.id: {(gid, n) for gid, names in r.nodes.items() for n in names} for r in run.regions}
        want = {k: v for k, v in want.items() if v}
        assert tagged_nodes(run) == want, run.name
