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
    index = _Index(run)
    for i, call in enumerate(calls):
        rid = f"r{i}"
        tag[(call.graph_id, call.node)] = rid
        members = _members(run, call, index)
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
                call_site=_call_site(graphs.get(call.graph_id), call, stacks),
                call_graph=call.graph_id,
                call_node=call.node,
                reads=call.reads,
            )
        )
    new_graphs = tuple(_tag_graph(g, tag) for g in run.graphs)
    return dataclasses.replace(run, graphs=new_graphs, regions=tuple(regions))


def _call_site(dyn: Graph | None, call: CallSite, stacks: Sequence[Sequence[Location]]) -> Location | None:
    """Where the opaque call node of ``call`` was called from (innermost frame), if known."""
    if dyn is None:
        return None
    node = next((n for n in dyn.nodes if n.name == call.node), None)
    if node is not None and node.stack is not None and node.stack < len(stacks) and stacks[node.stack]:
        return stacks[node.stack][-1]
    return None


class _Index:
    """A run's ATen nodes by the Dynamo node they came from and by ``seq_nr``, built once for all its calls."""

    def __init__(self, run: Run) -> None:
        self.from_node: dict[str, dict[str, list[str]]] = {}
        """ATen graph id -> Dynamo node name -> its non-placeholder nodes, in graph order."""
        self.seq_nr: dict[str, dict[str, str]] = {}
        """Forward graph id -> node name -> its ``seq_nr``."""
        self.backward: dict[str, dict[str, list[tuple[int, str]]]] = {}
        """Backward graph id -> ``seq_nr`` -> its call_function nodes (position in the graph, name)."""
        for g in run.graphs:
            if g.level not in _ATEN:
                continue
            by_source = self.from_node.setdefault(g.id, {})
            for n in g.nodes:
                if n.from_node is not None and n.op != "placeholder":
                    by_source.setdefault(n.from_node, []).append(n.name)
            if g.level == "aten_forward":
                self.seq_nr[g.id] = {n.name: n.extra["seq_nr"] for n in g.nodes if "seq_nr" in n.extra}
            elif g.level == "aten_backward":
                by_seq = self.backward.setdefault(g.id, {})
                for position, n in enumerate(g.nodes):
                    if n.op == "call_function" and "seq_nr" in n.extra:
                        by_seq.setdefault(n.extra["seq_nr"], []).append((position, n.name))


def _members(run: Run, call: CallSite, index: _Index) -> dict[str, list[str]]:
    """The ATen nodes of the region of ``call``, by graph id.

    Those inlined from its call node (``from_node``), and backward nodes with the ``seq_nr`` of
    one of its forward nodes.
    """
    members: dict[str, list[str]] = {}
    prefix = _prefix(call.graph_id)
    for g in run.graphs:
        if g.level not in _ATEN or _prefix(g.id) != prefix:
            continue
        names = index.from_node[g.id].get(call.node)
        if names:
            members[g.id] = list(names)
    # backward nodes: same seq_nr as a forward node of the region
    fw_seq = {
        seq
        for g in run.graphs
        if g.level == "aten_forward" and g.id in members
        for name in members[g.id]
        if (seq := index.seq_nr[g.id].get(name)) is not None
    }
    if fw_seq:
        for g in run.graphs:
            if g.level == "aten_backward" and _prefix(g.id) == prefix:
                by_seq = index.backward[g.id]
                found = sorted(node for seq in fw_seq for node in by_seq.get(seq, ()))
                if found:
                    members[g.id] = [name for _, name in found]
    return members


def _tag_graph(graph: Graph, tag: dict[tuple[str, str], str]) -> Graph:
    if not any((graph.id, n.name) in tag for n in graph.nodes):
        return graph
    nodes = tuple(
        dataclasses.replace(n, region=tag[(graph.id, n.name)]) if (graph.id, n.name) in tag else n
        for n in graph.nodes
    )
    return dataclasses.replace(graph, nodes=nodes)


def _innermost(node: Node, stacks: Sequence[Sequence[Location]]) -> Location | None:
    if node.stack is None or node.stack >= len(stacks) or not stacks[node.stack]:
        return None
    return stacks[node.stack][-1]


def _baseline_ops(baseline: Run, stacks: Sequence[Sequence[Location]]) -> tuple[dict, dict, dict]:
    """What each baseline Dynamo graph computed, by source line and op.

    ``(file, line, ATen target)`` -> graph ids (from its ATen graphs), ``(file, line)`` -> graph
    ids (Dynamo level, for ATen nodes of runs without ATen graphs), and ``(file, line, target)``
    -> graph ids (Dynamo level, for the nonstrict run's Dynamo nodes).
    """
    dynamo = {_prefix(g.id): g.id for g in baseline.graphs if g.level == "dynamo"}
    by_op: dict[tuple[str, int, str], list[str]] = {}
    by_line: dict[tuple[str, int], list[str]] = {}
    by_dyn: dict[tuple[str, int, str], list[str]] = {}
    for g in baseline.graphs:
        gid = dynamo.get(_prefix(g.id))
        if gid is None or g.level not in ("dynamo", "aten_forward", "aten_inference"):
            continue
        for n in g.nodes:
            loc = _innermost(n, stacks) if n.op.startswith("call_") else None
            if loc is None:
                continue
            keys: list[tuple[dict, tuple]] = (
                [(by_line, (loc.file, loc.line)), (by_dyn, (loc.file, loc.line, n.target))]
                if g.level == "dynamo"
                else [(by_op, (loc.file, loc.line, n.target))]
            )
            for index, key in keys:
                ids = index.setdefault(key, [])
                if gid not in ids:
                    ids.append(gid)
    return by_op, by_line, by_dyn


def assign_baseline_graphs(baseline: Run, other: Run, stacks: Sequence[Sequence[Location]]) -> Run:
    """Set :attr:`Node.baseline_graph` on ``other``'s nodes: the baseline graph that computed them.

    The candidates of an ATen node are the baseline Dynamo graphs whose ATen graphs hold the same
    op (ATen target) from the same source line (innermost user frame); of a Dynamo node, the
    baseline Dynamo graphs holding the same target from the same line. A node inlined from a
    non-strict region whose stack stops at the call site (Reports made before nstviz kept the
    op's own line) looks for the op among the marked function's lines instead. One candidate is
    the answer. Several (the same code compiled more than once: block 0 by ``1/0``, the next
    blocks by the recompile ``1/1``) are told apart by the order the baseline's graphs ran
    (:attr:`Run.graph_runs`): the nodes are walked in graph order along that sequence, each
    taking the next run of one of its candidates. Without that order, or when the walk finds
    none, the node names no baseline graph: nothing honest can be said. Backward nodes take
    their forward node's graph (same ``seq_nr``); the opaque Dynamo node of a non-strict call
    takes the graph of its inlined ATen nodes when they all name the same one.
    """
    by_op, by_line, by_dyn = _baseline_ops(baseline, stacks)
    if not by_op and not by_line:
        return other
    candidates = _Candidates(by_op, by_line, by_dyn, {r.id: r for r in other.regions}, stacks)
    known = {g.id for g in baseline.graphs}
    walk = _Walk(candidates, [gid for gid in baseline.graph_runs if gid in known])
    graphs = [walk.graph(g) for g in sorted(other.graphs, key=lambda g: g.level == "aten_backward")]  # forward first: seq_nr
    order = {g.id: i for i, g in enumerate(other.graphs)}
    graphs.sort(key=lambda g: order[g.id])
    return dataclasses.replace(other, graphs=tuple(_opaque_calls(graphs, other.regions)))


@dataclass(frozen=True, slots=True)
class _Candidates:
    """The baseline graphs that may have computed a node (see :func:`assign_baseline_graphs`)."""

    by_op: dict[tuple[str, int, str], list[str]]
    by_line: dict[tuple[str, int], list[str]]
    by_dyn: dict[tuple[str, int, str], list[str]]
    regions: dict[str, Region]
    stacks: Sequence[Sequence[Location]]

    def of(self, n: Node, dynamo_level: bool) -> list[str]:
        """The candidates of ``n``: same target from the same line (a region's own lines for an op at its call site)."""
        loc = _innermost(n, self.stacks)
        if loc is None or not n.op.startswith("call_"):
            return []
        if dynamo_level:
            return list(self.by_dyn.get((loc.file, loc.line, n.target), ()))
        found = self.by_op.get((loc.file, loc.line, n.target)) or (
            self.by_line.get((loc.file, loc.line)) if not self.by_op else None
        )
        region = self.regions.get(n.region) if n.region is not None else None
        site = region.call_site if region is not None else None
        if (
            region is not None
            and region.file
            and site is not None
            and (site.file, site.line) == (loc.file, loc.line)
        ):
            # the stack stops at the call site: the op is one of the function's own lines
            found = [
                gid
                for (file, line, target), ids in self.by_op.items()
                if file == region.file and _within(region, line) and target == n.target
                for gid in ids
            ]
        return list(dict.fromkeys(found or ()))


class _Walk:
    """The nodes walked in graph order along the order the baseline's graphs ran (``runs``).

    Each node takes the next run of one of its candidates (per lane: forward, post-grad,
    Dynamo); a backward node takes its forward node's graph (same ``seq_nr``).
    """

    def __init__(self, candidates: _Candidates, runs: list[str]) -> None:
        self.candidates = candidates
        self.runs = runs
        self.pointer = {"forward": 0, "post_grad": 0, "dynamo": 0}
        self.by_seq: dict[tuple[str, str], str] = {}

    def graph(self, g: Graph) -> Graph:
        """``g`` with :attr:`Node.baseline_graph` set on its nodes (``g`` itself when nothing changes)."""
        if g.level not in _ATEN and g.level != "dynamo":
            return g
        lane = (
            "post_grad" if g.level == "inductor_post_grad" else "dynamo" if g.level == "dynamo" else "forward"
        )
        nodes = []
        changed = False
        for n in g.nodes:
            target = self._target(g, n, lane)
            if target != n.baseline_graph:
                n = dataclasses.replace(n, baseline_graph=target)
                changed = True
            nodes.append(n)
        return dataclasses.replace(g, nodes=tuple(nodes)) if changed else g

    def _target(self, g: Graph, n: Node, lane: str) -> str | None:
        target = None
        if g.level == "aten_backward" and "seq_nr" in n.extra:
            target = self.by_seq.get((_prefix(g.id), n.extra["seq_nr"]))
        cands = self.candidates.of(n, lane == "dynamo") if target is None else []
        if len(cands) == 1:
            target = cands[0]
        runs = self.runs
        if cands and runs and lane in self.pointer:
            at = next((i for i in range(self.pointer[lane], len(runs)) if runs[i] in cands), None)
            if at is not None:
                target, self.pointer[lane] = runs[at], at
        if target is not None and g.level in ("aten_forward", "aten_inference") and "seq_nr" in n.extra:
            self.by_seq.setdefault((_prefix(g.id), n.extra["seq_nr"]), target)
        return target


def _opaque_calls(graphs: list[Graph], regions: Sequence[Region]) -> list[Graph]:
    """The opaque node of each non-strict call: the baseline graph all its inlined ops name, if one."""
    by_id = {g.id: g for g in graphs}
    named: dict[tuple[str, str], str] = {}
    for r in regions:
        if r.call_graph is None or r.call_node is None:
            continue
        owners = {
            n.baseline_graph
            for gid, names in r.nodes.items()
            if gid in by_id and by_id[gid].level in ("aten_forward", "aten_inference")
            for n in by_id[gid].nodes
            if n.name in set(names) and n.op == "call_function"
        }
        if len(owners) == 1 and None not in owners:
            named[(r.call_graph, r.call_node)] = owners.pop()
    if not named:
        return graphs
    out = []
    for g in graphs:
        if not any((g.id, n.name) in named for n in g.nodes):
            out.append(g)
            continue
        nodes = tuple(
            dataclasses.replace(n, baseline_graph=named[(g.id, n.name)]) if (g.id, n.name) in named else n
            for n in g.nodes
        )
        out.append(dataclasses.replace(g, nodes=nodes))
    return out


def _within(region: Region, line: int) -> bool:
    return region.line_start is not None and region.line_start <= line <= (
        region.line_end or region.line_start
    )


__all__ = ["CallSite", "assign_baseline_graphs", "build_regions"]
