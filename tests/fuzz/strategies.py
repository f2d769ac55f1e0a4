"""Hypothesis strategies for Reports, derived from the dataclasses in ``nstviz/report.py``.

:func:`strategy_for` turns any type hint of the model (dataclasses, ``Literal``, unions,
``tuple[X, ...]``, ``dict[str, X]``, scalars) into a strategy, so a field added to the model is
fuzzed without touching this file. :func:`consistent` then repairs the cross references that
:meth:`Report.validate` checks (unique names, edges to existing nodes, regions, stack indices),
so :data:`reports` yields Reports that validate, with arbitrary text in every string.
"""

from __future__ import annotations

import dataclasses
import math
import types
import zlib
from typing import Any, Literal, Union, get_args, get_origin

from hypothesis import strategies as st

from nstviz import report as model
from nstviz.passes.counts import run_counts
from nstviz.report import Graph, Node, Region, Report, Run
from nstviz.report._codec import _hints
from tests.html.hostile import any_text

_MAX = 3  # items per tuple/dict: keeps examples small and fast

_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
_SCALARS: dict[Any, st.SearchStrategy[Any]] = {
    str: any_text,
    int: st.integers(min_value=-(2**53), max_value=2**53),
    float: _floats,
    bool: st.booleans(),
    type(None): st.none(),
}


def strategy_for(tp: Any, *, floats: st.SearchStrategy[float] = _floats) -> st.SearchStrategy[Any]:
    """A strategy producing values of the model type ``tp`` (see the module docstring)."""
    if tp is float:
        return floats
    if tp in _SCALARS:
        return _SCALARS[tp]
    if tp is Any:
        return st.none()
    origin = get_origin(tp)
    if origin is Literal:
        return st.sampled_from(get_args(tp))
    if origin in (Union, types.UnionType):
        return st.one_of([strategy_for(a, floats=floats) for a in get_args(tp)])
    if origin is tuple:
        item, _ellipsis = get_args(tp)
        return st.lists(strategy_for(item, floats=floats), max_size=_MAX).map(tuple)
    if origin is dict:
        _key, value = get_args(tp)
        return st.dictionaries(any_text, strategy_for(value, floats=floats), max_size=_MAX)
    if dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        fields = {
            f.name: strategy_for(hints[f.name], floats=floats)
            for f in dataclasses.fields(tp)
            if f.init and not f.metadata.get("transient")  # derived fields are computed, not drawn
        }
        return st.builds(tp, **fields)
    raise TypeError(f"no strategy for {tp!r}")  # a new kind of type in the model: teach this file


def _pick(key: str, items: list[str]) -> str:
    """A deterministic choice among ``items`` keyed by ``key`` (hash() is salted per process)."""
    return items[zlib.crc32(key.encode("utf-8", "surrogatepass")) % len(items)]


def _unique(names: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for i, name in enumerate(names):
        if name in seen:
            name = f"{name}#{i}"
        seen.add(name)
        out.append(name)
    return out


def _fix_graph(g: Graph, n_stacks: int, region_ids: list[str]) -> Graph:
    names = _unique([n.name for n in g.nodes])
    nodes = []
    for i, (node, name) in enumerate(zip(g.nodes, names, strict=True)):
        earlier = names[:i]
        inputs = tuple(_pick(inp, earlier) for inp in node.inputs) if earlier else ()
        stack = None if node.stack is None or n_stacks == 0 else node.stack % n_stacks
        region = None if node.region is None or not region_ids else _pick(node.region, region_ids)
        nodes.append(dataclasses.replace(node, name=name, inputs=inputs, stack=stack, region=region))
    return dataclasses.replace(g, nodes=tuple(nodes))


def _fix_run(name: str, run: Run, n_stacks: int) -> Run:
    region_ids = _unique([r.id for r in run.regions])
    graph_ids = _unique([g.id for g in run.graphs])
    graphs = [
        _fix_graph(dataclasses.replace(g, id=gid), n_stacks, region_ids)
        for g, gid in zip(run.graphs, graph_ids, strict=True)
    ]
    regions = []
    for r, rid in zip(run.regions, region_ids, strict=True):
        nodes = {g.id: tuple(n.name for n in g.nodes if n.region == rid) for g in graphs}
        nodes = {k: v for k, v in nodes.items() if v}
        call_graph = graphs[0].id if r.call_graph is not None and graphs else None
        regions.append(dataclasses.replace(r, id=rid, nodes=nodes, call_graph=call_graph))
    # break ids are unique within a run (a distinct break is one id)
    breaks = tuple(dataclasses.replace(b, count=max(1, abs(b.count)), id=f"{b.id}#{i}") for i, b in enumerate(run.breaks))
    return dataclasses.replace(run, name=name, graphs=tuple(graphs), regions=tuple(regions), breaks=breaks)


def _fix_baseline_refs(runs: dict[str, Run]) -> dict[str, Run]:
    """Merged mode's names point at graphs that exist: ``baseline_graph`` (a baseline graph or None), ``graph_runs``."""
    base = runs.get("baseline")
    base_ids = [g.id for g in base.graphs] if base is not None else []
    out = {}
    for name, run in runs.items():
        graphs = tuple(
            dataclasses.replace(g, nodes=tuple(
                dataclasses.replace(n, baseline_graph=_pick(n.baseline_graph, base_ids) if n.baseline_graph is not None and base_ids else None)
                for n in g.nodes
            ))
            for g in run.graphs
        )
        own = {g.id for g in graphs}
        out[name] = dataclasses.replace(run, graphs=graphs, graph_runs=tuple(gid for gid in run.graph_runs if gid in own))
    return out


def consistent(report: Report) -> Report:
    """Repair the references :meth:`Report.validate` checks; everything else stays as drawn."""
    n = len(report.stacks)
    runs = _fix_baseline_refs({name: _fix_run(name, run, n) for name, run in report.runs.items()})
    ranks = tuple(
        dataclasses.replace(v, runs=_fix_baseline_refs({name: _fix_run(name, run, n) for name, run in v.runs.items()}))
        for v in report.ranks
    )
    counts = {k: report.counts.get(k) or run_counts(run) for k, run in runs.items()}  # every run has counts
    sources = {path: dataclasses.replace(src, path=path) for path, src in report.sources.items()}
    return dataclasses.replace(report, runs=runs, counts=counts, sources=sources, ranks=ranks)


_node = strategy_for(Node)
_graph = st.builds(
    Graph,
    id=any_text,
    level=strategy_for(model.Level),
    frame_id=st.integers(0, 50),
    compile_id=st.integers(0, 50),
    nodes=st.lists(_node, max_size=8).map(tuple),
    op_count=st.integers(0, 10**6),
    truncated=st.booleans(),
    function=strategy_for(str | None),
)
_run = st.builds(
    Run,
    name=any_text,
    graphs=st.lists(_graph, max_size=3).map(tuple),
    breaks=strategy_for(tuple[model.Break, ...]),
    regions=st.lists(strategy_for(Region), max_size=2).map(tuple),
    marked=strategy_for(tuple[model.MarkedFunction, ...]),
    error=strategy_for(str | None),
    stdout=any_text,
)
_run_names = st.sampled_from(["baseline", "nonstrict", "attempt-1", "attempt-2"])


_rank_view = st.builds(
    model.RankView,
    rank=st.integers(0, 7),
    runs=st.dictionaries(_run_names, _run, max_size=1),
    headline=strategy_for(model.Headline),
)


def _report(floats: st.SearchStrategy[float]) -> st.SearchStrategy[Report]:
    hints = _hints(Report)
    generic = {
        f.name: strategy_for(hints[f.name], floats=floats)
        for f in dataclasses.fields(Report)
        if not f.metadata.get("transient") and f.name not in ("runs", "schema_version", "counts", "ranks")
    }
    return st.builds(
        Report,
        runs=st.dictionaries(_run_names, _run, min_size=1, max_size=3),
        counts=st.dictionaries(_run_names, strategy_for(model.RunCounts, floats=floats), max_size=2),
        ranks=st.lists(_rank_view, max_size=1).map(tuple),  # kept small: each rank holds whole runs
        **generic,
    ).map(consistent)


reports: st.SearchStrategy[Report] = _report(_floats)
"""Reports that validate, with arbitrary (hostile, surrogate-laden) text in every string."""

reports_with_non_finite: st.SearchStrategy[Report] = _report(st.floats(width=64))
"""The same, with NaN and infinities allowed in float fields."""


def same_floats(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to NaN (for Reports with non-finite floats)."""
    if dataclasses.is_dataclass(a) and dataclasses.is_dataclass(b):
        return type(a) is type(b) and all(
            same_floats(getattr(a, f.name), getattr(b, f.name))
            for f in dataclasses.fields(a)
            if not f.metadata.get("transient")
        )
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_floats(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_floats(a[k], b[k]) for k in a)
    return bool(a == b)
