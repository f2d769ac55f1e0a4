"""Consistency checks of a Report (:meth:`Report.validate`), like ``torch.fx.Graph.lint``.

What :meth:`Report.validate` calls (:mod:`nstviz.report.document` imports this module, so it
takes what it reads of a Report as a protocol, :class:`Checked`, not the class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from nstviz.errors import ReportFormatError
from nstviz.report.model import Location, Run, RunCounts, SourceFile


class Checked(Protocol):
    """What the checks read of a Report."""

    @property
    def runs(self) -> Mapping[str, Run]: ...
    @property
    def counts(self) -> Mapping[str, RunCounts]: ...
    @property
    def stacks(self) -> Sequence[Sequence[Location]]: ...
    @property
    def sources(self) -> Mapping[str, SourceFile]: ...


def validate(report: Checked) -> None:
    """:meth:`Report.validate`: raise :class:`ReportFormatError` listing every problem found."""
    found = problems(report)
    if found:
        shown = "\n  ".join(found[:20])
        more = f"\n  ... and {len(found) - 20} more" if len(found) > 20 else ""
        raise ReportFormatError(f"the Report is inconsistent:\n  {shown}{more}")


def problems(report: Checked) -> list[str]:
    """Problems found in the Report's internal references (empty when consistent)."""
    out: list[str] = []
    n_stacks = len(report.stacks)
    for name, run in report.runs.items():
        if run.name != name:
            out.append(f"runs[{name!r}] is named {run.name!r}")
        ids: set[str] = set()
        names_by_graph: dict[str, set[str]] = {}
        for g in run.graphs:
            if g.id in ids:
                out.append(f"{name}: duplicate graph id {g.id!r}")
            ids.add(g.id)
            names: set[str] = set()
            for node in g.nodes:
                if node.name in names:
                    out.append(f"{name}/{g.id}: duplicate node name {node.name!r}")
                names.add(node.name)
            for node in g.nodes:
                for inp in node.inputs:
                    if inp not in names and not g.truncated:
                        out.append(f"{name}/{g.id}/{node.name}: input {inp!r} is not a node of the graph")
                if node.stack is not None and not 0 <= node.stack < n_stacks:
                    out.append(f"{name}/{g.id}/{node.name}: stack {node.stack} out of range")
            names_by_graph[g.id] = names
        region_ids = {r.id for r in run.regions}
        if len(region_ids) != len(run.regions):
            out.append(f"{name}: duplicate region ids")
        for r in run.regions:
            for gid, node_names in r.nodes.items():
                if gid not in names_by_graph:
                    out.append(f"{name}: region {r.id} refers to unknown graph {gid!r}")
                    continue
                for n in node_names:
                    if n not in names_by_graph[gid]:
                        out.append(f"{name}: region {r.id} refers to unknown node {gid}/{n}")
            if r.call_graph is not None and r.call_graph not in names_by_graph:
                out.append(f"{name}: region {r.id} call graph {r.call_graph!r} unknown")
        for g in run.graphs:
            for node in g.nodes:
                if node.region is not None and node.region not in region_ids:
                    out.append(f"{name}/{g.id}/{node.name}: unknown region {node.region!r}")
        for b in run.breaks:
            if b.count < 1:
                out.append(f"{name}: break at {b.location.file}:{b.location.line} has count {b.count}")
    out.extend(_baseline_references(report))
    for key in report.counts:
        if key not in report.runs:
            out.append(f"counts for unknown run {key!r}")
    for key in report.runs:
        if key not in report.counts:
            out.append(f"run {key!r} has no counts")
    for name, run in report.runs.items():
        ids = [b.id for b in run.breaks]
        if len(set(ids)) != len(ids):
            out.append(f"{name}: two breaks share an id")
    for path, src in report.sources.items():
        if src.path != path:
            out.append(f"sources[{path!r}] has path {src.path!r}")
    return out


def _baseline_references(report: Checked) -> list[str]:
    """Merged mode's names: a node's ``baseline_graph`` and a run's ``graph_runs`` name graphs that exist."""
    out: list[str] = []
    base = report.runs.get("baseline")
    base_ids = {g.id for g in base.graphs} if base is not None else set()
    for name, run in report.runs.items():
        own = {g.id for g in run.graphs}
        unknown = sorted({gid for gid in run.graph_runs if gid not in own})
        if unknown:
            out.append(f"{name}: graph_runs names unknown graphs {unknown[:3]}")
        for g in run.graphs:
            for node in g.nodes:
                if node.baseline_graph is not None and node.baseline_graph not in base_ids:
                    out.append(
                        f"{name}/{g.id}/{node.name}: baseline graph {node.baseline_graph!r} is not a baseline graph"
                    )
    return out


__all__ = ["problems", "validate"]
