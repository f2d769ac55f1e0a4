"""Export one graph of a Report to Graphviz DOT or SVG, for papers, bug reports and diffs.

The drawing follows the viewer's conventions: inputs green, the output dark, the opaque
non-strict call dashed, and nodes inlined from a non-strict region filled in the region colour
and boxed per region (a ``cluster``) with the function's name. Labels are passed to Graphviz as
quoted strings (never as HTML-like labels), so user text stays text.

SVG needs Graphviz's ``dot`` program (Debian: ``apt-get install graphviz``) and the ``graphviz``
Python package (``pip install 'nstviz[graphviz]'``); DOT needs only the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nstviz.errors import UsageError

if TYPE_CHECKING:
    import graphviz

    from nstviz.report import Graph, Node, Report

_REGION_FILL = "#fde7c8"
_REGION_LINE = "#e8910c"
_MAX_LABEL = 60


def find_graph(report: Report, run: str = "nonstrict", graph: str | None = None) -> Graph:
    """Return a graph of ``report.runs[run]`` by id; by default its first ATen graph.

    Raises:
        UsageError: the run or the graph does not exist (the message lists what does).
    """
    if run not in report.runs:
        raise UsageError(f"no run {run!r} in this Report; it has: {', '.join(report.runs)}")
    graphs = report.runs[run].graphs
    if not graphs:
        raise UsageError(f"run {run!r} compiled no graph (see its breaks and error)")
    if graph is None:
        return next((g for g in graphs if g.level.startswith("aten")), graphs[0])
    for candidate in graphs:
        if candidate.id == graph:
            return candidate
    raise UsageError(f"no graph {graph!r} in run {run!r}; it has: {', '.join(g.id for g in graphs)}")


def to_digraph(report: Report, run: str = "nonstrict", graph: str | None = None) -> graphviz.Digraph:
    """Build a ``graphviz.Digraph`` of one graph (see :func:`find_graph` for the arguments)."""
    try:
        import graphviz
    except ImportError:
        raise UsageError("exporting to DOT/SVG needs the graphviz package: pip install 'nstviz[graphviz]'") from None
    selected = find_graph(report, run, graph)
    regions = {r.id: r.function for r in report.runs[run].regions}
    dot = graphviz.Digraph(name=selected.id, graph_attr={"rankdir": "TB", "label": graphviz.nohtml(f"{run} · {selected.id}")})
    dot.attr("node", fontname="Helvetica", fontsize="10", shape="box", style="rounded,filled", fillcolor="white")
    by_region: dict[str | None, list[Node]] = {}
    for node in selected.nodes:
        by_region.setdefault(node.region, []).append(node)
    for region_id, nodes in by_region.items():
        if region_id is None:
            for node in nodes:
                _add_node(dot, node)
            continue
        with dot.subgraph(name=f"cluster_{region_id}") as cluster:
            cluster.attr(
                label=graphviz.nohtml(f"non-strict · {regions.get(region_id, '?')} · {region_id}"),
                color=_REGION_LINE,
                style="rounded",
            )
            for node in nodes:
                _add_node(cluster, node)
    names = {n.name for n in selected.nodes}
    for node in selected.nodes:
        for source in node.inputs:
            if source in names:
                dot.edge(graphviz.nohtml(source), graphviz.nohtml(node.name))
    return dot


def to_dot(report: Report, run: str = "nonstrict", graph: str | None = None) -> str:
    """Return the DOT text of one graph."""
    return to_digraph(report, run, graph).source


def to_svg(report: Report, run: str = "nonstrict", graph: str | None = None) -> str:
    """Render one graph to SVG text with Graphviz's ``dot``.

    Raises:
        UsageError: the graphviz package or the ``dot`` program is missing.
    """
    import graphviz

    try:
        return to_digraph(report, run, graph).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise UsageError("rendering SVG needs Graphviz's dot program: apt-get install graphviz") from None


def save_graph(report: Report, path: str | Path, run: str = "nonstrict", graph: str | None = None) -> Path:
    """Write one graph to ``path`` as DOT (``.dot``/``.gv``) or SVG (``.svg``); return the path."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix in (".dot", ".gv"):
        target.write_text(to_dot(report, run, graph), encoding="utf-8")
    elif suffix == ".svg":
        target.write_text(to_svg(report, run, graph), encoding="utf-8")
    else:
        raise UsageError(f"cannot tell the format of {str(target)!r}: use a .dot, .gv or .svg file name")
    return target


def _add_node(dot: graphviz.Digraph, node: Node) -> None:
    label = node.name if node.op in ("placeholder", "output") else f"{node.name}\n{_short(node.target)}"
    if node.tensors:
        info = node.tensors[0]
        label += f"\n{info.dtype}[{', '.join(str(s) for s in info.shape)}]"
    attrs: dict[str, str] = {}
    if node.op == "placeholder":
        attrs = {"shape": "ellipse", "fillcolor": "#e3f5e8", "color": "#1a9850"}
    elif node.op == "output":
        attrs = {"shape": "ellipse", "fillcolor": "#2f3b4c", "fontcolor": "white"}
    elif node.nonstrict_call:
        attrs = {"style": "rounded,dashed,filled", "fillcolor": "#fff7ec", "color": _REGION_LINE}
    elif node.region is not None:
        attrs = {"fillcolor": _REGION_FILL, "color": _REGION_LINE, "penwidth": "1.5"}
    elif node.op == "get_attr":
        attrs = {"style": "rounded,dashed,filled"}
    import graphviz

    dot.node(graphviz.nohtml(node.name), label=graphviz.nohtml(label), **attrs)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_LABEL else text[: _MAX_LABEL - 1] + "…"
