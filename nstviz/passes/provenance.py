"""Non-strict regions: each call of a marked function, and the ATen nodes inlined from it.

Exact, from node provenance: an ATen node belongs to a region when its
``node.meta["from_node"]`` (kept as :attr:`Node.from_node`) names the region's opaque
Dynamo node (``flat_apply_capture``); backward nodes follow their forward node through
``seq_nr``. Nothing is guessed from names or lines. Also :func:`assign_baseline_graphs`:
for each ATen node of a nonstrict run, the baseline graph its source location belonged to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from nstviz.report.model import Graph, Location, Node, NonInputRead, Region, Run

_ATEN = ("aten_forward", "aten_backward", "aten_inference", "inductor_post_grad")


@dataclass(frozen=True, slots=True)
class CallSite:
    """An opaque non-strict call node and what is known about the function behind it."""

    graph_id: str
    node: str
    qualname: str
    file: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    reads: tuple[NonInputRead, ...] = ()


def _prefix(graph_id: str) -> str:
    return graph_id.rsplit(":", 1)[0]


def build_regions(run: Run, calls: Sequence[CallSite], stacks: Sequence[Sequence[Location]]) -> Run:
    """Return ``run`` with :attr:`Run.regions` filled and :attr:`Node.region` set."""
    if not calls:
        return run
    graphs = {g.id: g for g in run.graphs}
    regions: list[Region] = []
    # (graph id, node name) -> region id, per level
    tag: dict[tuple[str, str], str] = {}
    for i, call in enumerate(calls):
        rid = f"r{i}"
        dyn = graphs.get(call.graph_id)
        call_site = None
        if dyn is not None:
            node = next((n for n in dyn.nodes if n.name == call.node), None)
            if node is not None and node.stack is not None and node.stack < len(stacks) and stacks[node.stack]:
                call_site = stacks[node.stack][-1]
        tag[(call.graph_id, call.node)] = rid
        members: dict[str, list[str]] = {}
        prefix = _prefix(call.graph_id)
        for g in run.graphs:
            if g.level not in _ATEN or _prefix(g.id) != prefix:
                continue
            names = [n.name for n in g.nodes if n.from_node == call.node and n.op != "placeholder"]
            if names:
                members[g.id] = names
        # backward nodes: same seq_nr as a forward node of the region
        fw_seq = {
            n.extra["seq_nr"]
            for g in run.graphs
            if g.level == "aten_forward" and g.id in members
            for n in g.nodes
            if n.name in set(members[g.id]) and "seq_nr" in n.extra
        }
        if fw_seq:
            for g in run.graphs:
                if g.level == "aten_backward" and _prefix(g.id) == prefix:
                    names = [n.name for n in g.nodes if n.op == "call_function" and n.extra.get("seq_nr") in fw_seq]
                    if names:
                        members[g.id] = names
        for gid, names in members.items():
            for name in names:
                tag[(gid, name)] = rid
        regions.append(
            Region(
                id=rid,
                function=call.qualname,
                nodes={gid: tuple(names) for gid, names in members.items()},
                file=call.file,
                line_start=call.line_start,
                line_end=call.line_end,
                call_site=call_site,
                call_graph=call.graph_id,
                call_node=call.node,
                reads=call.reads,
            )
        )
    new_graphs = tuple(_tag_graph(g, tag) for g in run.graphs)
    return dataclasses.replace(run, graphs=new_graphs, regions=tuple(regions))


def _tag_graph(graph: Graph, tag: dict[tuple[str, str], str]) -> Graph:
    if not any((graph.id, n.name) in tag for n in graph.nodes):
        return graph
    nodes = tuple(
        dataclasses.replace(n, region=tag[(graph.id, n.name)]) if (graph.id, n.name) in tag else n for n in graph.nodes
    )
    return dataclasses.replace(graph, nodes=nodes)


def assign_baseline_graphs(baseline: Run, other: Run, stacks: Sequence[Sequence[Location]]) -> Run:
    """Set :attr:`Node.baseline_graph` on ``other``'s ATen nodes.

    A node's source location (innermost user frame) is looked up among the baseline's
    nodes; the Dynamo graph (of the same compile) that held that location is the answer.
    Nodes inlined from a region whose call site has no baseline graph fall back to the
    baseline graph that compiled the marked function's own lines, when one did.
    """
    where: dict[tuple[str, int], str] = {}
    for g in baseline.graphs:
        if g.level != "dynamo":
            continue
        for n in g.nodes:
            if n.stack is None or n.stack >= len(stacks) or not stacks[n.stack]:
                continue
            for loc in stacks[n.stack]:
                where.setdefault((loc.file, loc.line), g.id)
    if not where:
        return other
    by_region: dict[str, str | None] = {}
    for region in other.regions:
        found = None
        if region.file and region.line_start:
            end = region.line_end or region.line_start
            for (file, line), gid in where.items():
                if file == region.file and region.line_start <= line <= end:
                    found = gid
                    break
        by_region[region.id] = found
    graphs = []
    for g in other.graphs:
        if g.level not in _ATEN:
            graphs.append(g)
            continue
        nodes = []
        changed = False
        for n in g.nodes:
            target = None
            if n.stack is not None and n.stack < len(stacks) and stacks[n.stack]:
                loc = stacks[n.stack][-1]
                target = where.get((loc.file, loc.line))
            if target is None and n.region is not None:
                target = by_region.get(n.region)
            if target is not None:
                n = dataclasses.replace(n, baseline_graph=target)
                changed = True
            nodes.append(n)
        graphs.append(dataclasses.replace(g, nodes=tuple(nodes)) if changed else g)
    return dataclasses.replace(other, graphs=tuple(graphs))


__all__ = ["CallSite", "assign_baseline_graphs", "build_regions"]
del Node
