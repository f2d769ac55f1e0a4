"""Turn one rank's TORCH_TRACE log into a single-run Report (``nstviz ingest``).

The log is read once, streaming (:mod:`nstviz.offline.tracelog`). From its records:

- ``dynamo_graph_break_reason`` artifacts -> :class:`Break` hits (reason, GB id, hints, user
  stack), merged into distinct breaks exactly as an in-process capture merges them;
- ``compilation_metrics`` with ``fail_type`` ``Unsupported`` -> the fatal break of a
  ``fullgraph=True`` compile (its stack and real cause from the ``dynamo_error`` artifact), the
  same Break a live capture makes, whether the job caught the exception or not;
- ``dynamo_start``, ``compilation_metrics``, ``dynamo_cpp_guards_str`` -> :class:`Compile`
  (function, time, guards, recompile and restart reasons);
- ``dynamo_output_graph`` / ``aot_forward_graph`` / ``aot_backward_graph`` /
  ``aot_inference_graph`` / ``inductor_post_grad_graph`` -> :class:`Graph` with nodes and edges
  (:mod:`nstviz.offline.graph_text`);
- non-strict regions, *approximately*: the ``flat_apply`` node of a Dynamo graph is the call,
  and the ATen nodes of the same compile whose ``# File:`` line is the call's line are taken
  as inlined from it (:attr:`Region.approximate` is set).

Which frames are torch's (not the user's) is decided by the shape of their paths and by the
log's own paths (:class:`nstviz.tracing.stacks.RootLearner`), never by where torch is installed
on the machine reading the log: a log recorded on a cluster reads the same on a laptop.

Each graph is handed to a sink as soon as it is parsed, so :func:`write_ingested` holds one
graph at a time: memory is bounded by the largest graph, not by the log.
"""

from __future__ import annotations

import dataclasses
import datetime
import gc
import json
import os
import platform
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from nstviz._version import __version__
from nstviz.errors import UsageError
from nstviz.offline._sources import sources_of
from nstviz.offline.graph_text import parse_graph_text
from nstviz.offline.tracelog import LogStats, TraceLogReader
from nstviz.passes.assemble import build_report
from nstviz.report import CompileId, Graph, Location, Node, Region, Report, Run
from nstviz.report._codec import _LONE_SURROGATE, _encode
from nstviz.report.compiles import RECOMPILE_LIMIT_RE
from nstviz.tracing import stacks as path_rules
from nstviz.tracing.breaks import (
    BreakHit,
    break_from_artifact,
    compiles_from_events,
    link_breaks,
    make_hit,
    parse_message,
    root_cause_from_text,
)
from nstviz.tracing.events import METRIC_KEYS, TraceEvent
from nstviz.tracing.stacks import PathRules, RootLearner, StackTable, parse_frames

GRAPH_LEVELS = {
    "dynamo_output_graph": "dynamo",
    "aot_forward_graph": "aten_forward",
    "aot_backward_graph": "aten_backward",
    "aot_inference_graph": "aten_inference",
    "artifact:inductor_post_grad_graph": "inductor_post_grad",
    "inductor_post_grad_graph": "inductor_post_grad",
}
"""Record kind -> graph level."""

_KEEP = frozenset(
    {
        *GRAPH_LEVELS,
        "artifact:dynamo_graph_break_reason",
        "artifact:recompile_reasons",
        "artifact:torch_version",
        "artifact:dynamo_error",
        "recompile_reasons",
        "dynamo_cpp_guards_str",
        "dynamo_guards",
    }
)
# Kinds ingest ignores: read without decoding their JSON.
_SKIP = frozenset({"chromium_event", "describe_tensor", "describe_storage", "describe_source", "aot_joint_graph"})
_MAX_GUARD_LINES = 200
_RANK_RE = re.compile(r"rank_(\d+)")
_LOG_GLOB = "*.log*"
_FILE_RE = re.compile(r'^\s*File "([^"]+)", line \d+', re.M)


@dataclasses.dataclass(slots=True)
class _Site:
    """A non-strict call found in a Dynamo graph: its region and the line it is on."""

    region: str
    function: str
    graph_id: str
    node: str
    location: Location | None
    members: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


class _Ingest:
    """Folds the entries of one log into the pieces of a Run."""

    def __init__(self, sink: Callable[[Graph], None], stacks: StackTable) -> None:
        self.sink = sink
        self.stacks = stacks
        self.strings: dict[int, str] = {}
        self.events: list[TraceEvent] = []
        self.hits: list[BreakHit] = []
        self.headers: list[Graph] = []  # graphs without nodes, for compiles and break links
        self.functions: dict[tuple[int | None, int | None], str] = {}
        self.sites: dict[str, list[_Site]] = {}  # compile prefix -> calls
        self.regions: list[_Site] = []
        self.ids: set[str] = set()
        self.rank: int | None = None
        self.torch_version = ""
        self.error_stacks: dict[tuple[int | None, int | None], list[Location]] = {}
        self.error_causes: dict[tuple[int | None, int | None], str] = {}
        self.failed: list[tuple[dict[str, Any], Any]] = []  # compilation metrics of failed compiles
        self.logged: set[tuple[int | None, int | None]] = set()  # frame compiles that logged a graph break
        self.rules = PathRules()  # whose files are torch's: by their shape and this log's own paths
        self.learner = RootLearner(self.rules)

    def feed(self, entries: Iterable[Any]) -> None:
        learner = self.learner
        for e in entries:
            if self.rank is None and e.rank is not None:
                self.rank = e.rank
            learner.site(e.site)
            kind = e.kind
            if kind == "str":
                value = e.metadata
                if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
                    self.strings[value[1]] = str(value[0])
                    learner.path(self.strings[value[1]])
            elif kind in GRAPH_LEVELS:
                if e.payload is not None:
                    self._graph(e, GRAPH_LEVELS[kind])
            elif kind == "dynamo_start":
                stack = [self._frame(f) for f in (e.metadata or {}).get("stack", []) if isinstance(f, dict)]
                if stack and stack[-1].get("function"):
                    self.functions[(e.frame_id, e.compile_id)] = str(stack[-1]["function"])
                self._event(e, "dynamo_start", {"stack": stack})
            elif kind == "artifact:dynamo_graph_break_reason":
                for file in _FILE_RE.findall(e.text):
                    learner.path(file)
                brk = break_from_artifact(self._event(e, "dynamo_graph_break_reason", {}, e.text))
                self.logged.add((e.frame_id, e.compile_id))
                if brk is not None:
                    self.hits.append(brk)
            elif kind == "compilation_metrics" and isinstance(e.metadata, dict):
                meta = {k: e.metadata.get(k) for k in METRIC_KEYS}
                self._event(e, "compilation_metrics", meta)
                if str(meta.get("fail_type") or "").endswith("Unsupported"):
                    self.failed.append((meta, (e.frame_id, e.compile_id, e.attempt)))
            elif kind == "artifact:dynamo_error":
                text = e.text
                for file in _FILE_RE.findall(text):
                    learner.path(file)
                if "\nfrom user code:\n" in text:
                    frames = text.split("\nfrom user code:\n", 1)[1].splitlines()
                    self.error_stacks[(e.frame_id, e.compile_id)] = parse_frames(frames)
                cause = root_cause_from_text(text.split("\nfrom user code:\n", 1)[0])
                if cause:  # the exception Dynamo turned into the break, as a live capture reads it
                    self.error_causes[(e.frame_id, e.compile_id)] = cause
            elif kind in ("dynamo_cpp_guards_str", "dynamo_guards"):
                lines = [ln for ln in (e.payload or ()) if ln.strip()][:_MAX_GUARD_LINES]  # as Compile keeps them
                self._event(e, kind, {}, "\n".join(lines))
            elif kind in ("recompile_reasons", "artifact:recompile_reasons"):
                self._event(e, "recompile_reasons", {}, e.text)
            elif kind == "artifact:torch_version":
                try:
                    self.torch_version = str(json.loads(e.text).get("pytorch_version", ""))
                except (ValueError, AttributeError):
                    pass

    def _event(self, e: Any, kind: str, meta: dict[str, Any], payload: str | None = None) -> TraceEvent:
        event = TraceEvent(
            kind=kind, frame_id=e.frame_id, compile_id=e.compile_id, attempt=e.attempt, metadata=meta, payload=payload
        )
        if kind != "dynamo_graph_break_reason":
            self.events.append(event)
        return event

    def _frame(self, frame: dict[str, Any]) -> dict[str, Any]:
        filename = frame.get("filename")
        if isinstance(filename, int):
            filename = self.strings.get(filename, str(filename))
        return {"file": filename, "line": frame.get("line"), "function": frame.get("name"), "code": frame.get("loc")}

    def _unique(self, gid: str) -> str:
        base, n = gid, 1
        while gid in self.ids:
            n += 1
            gid = f"{base}#{n}"
        self.ids.add(gid)
        return gid

    def _graph(self, e: Any, level: str) -> None:
        frame = e.frame_id if e.frame_id is not None else -1
        compile_id = e.compile_id if e.compile_id is not None else -1
        prefix = CompileId(frame_id=frame, frame_compile_id=compile_id, attempt=e.attempt).text
        header = Graph(
            id=self._unique(f"{prefix}:{level}"),
            level=level,  # type: ignore[arg-type]
            frame_id=frame,
            compile_id=compile_id,
            attempt=e.attempt,
            function=self.functions.get((e.frame_id, e.compile_id)),
        )
        graph = parse_graph_text(e.payload, header, stacks=self.stacks)
        e.payload = None  # the text is no longer needed: keep memory to one graph
        if level == "dynamo":
            self._find_calls(graph, prefix)
        elif prefix in self.sites:
            graph = self._mark_region_nodes(graph, self.sites[prefix])
        self.headers.append(dataclasses.replace(graph, nodes=(), code=None))
        self.sink(graph)

    def _find_calls(self, graph: Graph, prefix: str) -> None:
        for node in graph.nodes:
            if not node.nonstrict_call:
                continue
            callable_name = next((i for i in node.inputs if i.endswith("_callable")), None)
            function = callable_name[: -len("_callable")] if callable_name else node.name
            stack = self.stacks.stacks[node.stack] if node.stack is not None else ()
            site = _Site(
                region=f"r{len(self.regions)}",
                function=function,
                graph_id=graph.id,
                node=node.name,
                location=stack[-1] if stack else None,
            )
            self.regions.append(site)
            self.sites.setdefault(prefix, []).append(site)

    def _mark_region_nodes(self, graph: Graph, sites: list[_Site]) -> Graph:
        by_line: dict[tuple[str, int], _Site] = {}
        for site in sites:
            if site.location is not None:
                by_line.setdefault((site.location.file, site.location.line), site)
        if not by_line:
            return graph
        stacks = self.stacks.stacks
        nodes: list[Node] = []
        members: dict[str, list[str]] = {}
        for node in graph.nodes:
            site = None
            if node.stack is not None and node.op == "call_function":
                loc = stacks[node.stack][-1]
                site = by_line.get((loc.file, loc.line))
            if site is not None:
                node = dataclasses.replace(node, region=site.region)
                members.setdefault(site.region, []).append(node.name)
            nodes.append(node)
        for site in sites:
            if site.region in members:
                site.members[graph.id] = tuple(members[site.region])
        return dataclasses.replace(graph, nodes=tuple(nodes))

    def run(self, name: str, stats: LogStats, world_size: int | None) -> Run:
        for meta, (frame, compile_id, attempt) in self.failed:
            if (frame, compile_id) in self.logged:
                continue  # not fatal: the frame logged its break and fell back to eager (no fullgraph)
            stack = self.error_stacks.get((frame, compile_id), [])
            fatal = _fatal_break(meta, frame, compile_id, attempt, stack, self.error_causes.get((frame, compile_id)))
            if fatal is not None and RECOMPILE_LIMIT_RE.search(fatal.detail or ""):
                continue  # the frame runs eagerly from then on: not a break (as a live capture decides)
            if fatal is not None:
                self.hits.append(fatal)
        compiles = compiles_from_events(self.events, self.headers)
        breaks = link_breaks(self.hits, compiles, self.headers)
        regions = tuple(
            Region(
                id=s.region,
                function=s.function,
                nodes=dict(s.members),
                call_site=s.location,
                call_graph=s.graph_id,
                call_node=s.node,
                approximate=True,
            )
            for s in self.regions
        )
        return Run(
            name=name,
            breaks=breaks,
            regions=regions,
            compiles=compiles,
            rank=self.rank if self.rank is not None else None,
            world_size=world_size,
            origin="torch_trace",
            log_stats=stats.as_dict(),
        )


def _fatal_break(
    meta: dict[str, Any], frame: int | None, compile_id: int | None, attempt: int, stack: list[Location],
    root_cause: str | None,
) -> BreakHit | None:
    """The fatal break hit of a ``fullgraph=True`` compile.

    From its compilation metrics, and the user stack and root cause of its ``dynamo_error``
    artifact (``from user code:``) where logged.
    """
    file = meta.get("fail_user_frame_filename")
    if not stack and not file:
        return None
    info = parse_message(str(meta.get("fail_reason") or ""))
    if stack:
        loc = stack[-1]
    else:
        line = int(meta.get("fail_user_frame_lineno") or 0)
        loc = Location(file=str(file), line=line, function=str(meta.get("co_name") or "?"))
    cid = CompileId(frame_id=frame, frame_compile_id=compile_id, attempt=attempt) if frame is not None else None
    detail = str(meta.get("fail_reason") or "")[:4000]
    # a fullgraph error: Dynamo counts no graph break
    return make_hit(info, loc, tuple(stack) or (loc,), detail, cid, fatal=True, caused=0, root_cause=root_cause)


def rank_of_path(path: Path) -> int | None:
    """The rank in a TORCH_TRACE file name (``dedicated_log_torch_trace_rank_1_xyz.log``)."""
    m = _RANK_RE.search(path.name)
    return int(m[1]) if m else None


def _notes(path: Path, stats: LogStats) -> tuple[str, ...]:
    notes = []
    if stats.skipped:
        notes.append(f"{path.name}: {stats.skipped} line(s) were neither a record nor a payload and were skipped")
    if stats.unknown:
        kinds = ", ".join(f"{k} ({n})" for k, n in sorted(stats.unknown_kinds.items())[:8])
        notes.append(f"{path.name}: {stats.unknown} record(s) of kinds nstviz does not know were ignored: {kinds}")
    if stats.truncated:
        notes.append(f"{path.name}: the log ends inside a record (the job was killed or the file cut): that record was dropped")
    return tuple(notes)


def _build(path: Path, sink: Callable[[Graph], None], run_name: str) -> tuple[Report, StackTable]:
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"no such TORCH_TRACE log: {path}")
    stacks = StackTable()
    reader = TraceLogReader(path, _KEEP, skip_kinds=_SKIP)
    stubs: list[Graph] = []  # each graph without its nodes: what the counts pass reads

    def keep(graph: Graph) -> None:
        stubs.append(dataclasses.replace(graph, nodes=()))
        sink(graph)

    ingest = _Ingest(keep, stacks)
    with path_rules.using(ingest.rules):  # this log's torch, not the reading machine's
        return _build_with(path, reader, ingest, stubs, stacks, run_name)


def _build_with(
    path: Path, reader: TraceLogReader, ingest: _Ingest, stubs: list[Graph], stacks: StackTable, run_name: str
) -> tuple[Report, StackTable]:
    # The parse makes millions of small acyclic objects; the cyclic GC would rescan them all
    # at every generation threshold (measured: a third of the ingest time). Paused, restored.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        ingest.feed(reader)
    finally:
        if was_enabled:
            gc.enable()
    if ingest.rank is None:
        ingest.rank = rank_of_path(path)
    run = ingest.run(run_name, reader.stats, None)
    if run.rank is None:
        run = dataclasses.replace(run, rank=0)
    report = build_report(
        torch_version=ingest.torch_version,
        runs={run_name: dataclasses.replace(run, graphs=tuple(stubs))},
        nstviz_version=__version__,
        python_version=platform.python_version(),
        created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        title=f"{path.name} (rank {run.rank})",
        entry="cli",
        backend="as_written",
        stacks=tuple(stacks.stacks),
        sources=sources_of(run, stacks.stacks),
        notes=_notes(path, reader.stats),
        rank=run.rank,
    )
    # The graphs themselves went to ``sink``; the counts and headline were made with the stubs.
    return dataclasses.replace(report, runs={run_name: run}), stacks


def ingest_log(path: str | Path, *, run_name: str = "baseline") -> Report:
    """Read one rank's TORCH_TRACE log into a single-run Report, in memory.

    Args:
        path: the log file (``dedicated_log_torch_trace_rank_N_*.log``, gzipped or not).
        run_name: the name of the one run (``"baseline"``).

    Returns:
        A Report whose :attr:`Report.runs` holds one run, with ``rank`` and ``log_stats`` set.

    Raises:
        ForeignLogError, CorruptLogError, TruncatedLogError: the file cannot be read as a log.
    """
    graphs: list[Graph] = []
    report, _ = _build(Path(path), graphs.append, run_name)
    run = report.runs[run_name]
    return dataclasses.replace(report, runs={run_name: dataclasses.replace(run, graphs=tuple(graphs))})


_NODE_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Node) if f.default is not dataclasses.MISSING}


def graph_dict(graph: Graph) -> dict[str, Any]:
    """``graph.to_dict()``'s JSON form, fast: what :meth:`Report.to_dict` writes for a Graph.

    The generic codec spends most of an ingest's encoding time on per-field introspection;
    graphs from a log only use the fields written here. A test keeps both forms equal.
    """
    nodes = []
    for n in graph.nodes:
        d: dict[str, Any] = {"name": n.name, "op": n.op, "target": n.target, "inputs": list(n.inputs), "region": n.region}
        if n.tensors:
            d["tensors"] = [
                {"shape": list(t.shape), "dtype": t.dtype, "device": t.device, **({"requires_grad": True} if t.requires_grad else {})}
                for t in n.tensors
            ]
        if n.value is not None:
            d["value"] = n.value
        if n.stack is not None:
            d["stack"] = n.stack
        if n.module is not None or n.module_type is not None or n.from_node is not None or n.baseline_graph is not None or n.extra:
            d = _encode(n)  # fields a log never fills: the generic codec
        elif n.nonstrict_call:
            d["nonstrict_call"] = True
        nodes.append(d)
    out = _encode(dataclasses.replace(graph, nodes=()))
    out["nodes"] = nodes
    return out


def write_ingested(path: str | Path, out: str | Path, *, run_name: str = "baseline") -> Report:
    """Ingest one log and write its single-run Report JSON to ``out``, one graph at a time.

    Graph JSON is streamed to a temporary file as each graph is parsed, then spliced into the
    Report, so memory stays bounded by the largest graph. Returns the Report without graphs
    (for a summary).
    """
    out = Path(out)
    tmp = tempfile.NamedTemporaryFile("w", encoding="utf-8", delete=False, dir=out.parent, suffix=".graphs")
    first = [True]

    def sink(graph: Graph) -> None:
        text = json.dumps(graph_dict(graph), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        tmp.write(("" if first[0] else ",") + _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
        first[0] = False

    try:
        try:
            report, _ = _build(Path(path), sink, run_name)
        finally:
            tmp.close()
        marker = "__nstviz_graphs__"
        data = report.to_dict()
        data["runs"][run_name]["graphs"] = marker
        head, tail = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).split(f'"{marker}"', 1)
        with out.open("w", encoding="utf-8") as f, open(tmp.name, encoding="utf-8") as g:
            f.write(_LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", head) + "[")
            while chunk := g.read(1 << 20):
                f.write(chunk)
            f.write("]" + _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", tail))
    finally:
        os.unlink(tmp.name)
    return report


def find_logs(trace_dir: str | Path) -> list[Path]:
    """The TORCH_TRACE logs in a folder (or the one file given), ordered by rank."""
    root = Path(trace_dir)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise UsageError(f"no such TORCH_TRACE folder or file: {root}")
    logs = sorted((p for p in root.glob(_LOG_GLOB) if p.is_file()), key=lambda p: (rank_of_path(p) or 0, p.name))
    if not logs:
        raise UsageError(
            f"{root} holds no *.log files: give the folder TORCH_TRACE=DIR wrote (dedicated_log_torch_trace_*.log)"
        )
    return logs


def rank_file_name(rank: int) -> str:
    """File name of a rank's single-run Report: ``rank-0.nstviz.json``."""
    return f"rank-{rank}.nstviz.json"


def ingest_dir(trace_dir: str | Path, out_dir: str | Path) -> list[tuple[Path, Report]]:
    """Ingest every rank's log in ``trace_dir``; write ``out_dir/rank-N.nstviz.json`` for each.

    Returns:
        ``(path written, Report without graphs)`` per log, by rank.

    Raises:
        UsageError: no logs, or two logs of the same rank.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[tuple[Path, Report]] = []
    seen: dict[int, Path] = {}
    for log in find_logs(trace_dir):
        tmp = out / f".{log.name}.partial.json"
        report = write_ingested(log, tmp)
        rank = report.rank if report.rank is not None else 0
        if rank in seen:
            tmp.unlink()
            raise UsageError(
                f"{log} and {seen[rank]} are both rank {rank}: give one job's TORCH_TRACE folder (one log per rank)"
            )
        seen[rank] = log
        target = out / rank_file_name(rank)
        tmp.replace(target)
        written.append((target, report))
    return written


__all__ = ["GRAPH_LEVELS", "find_logs", "ingest_dir", "ingest_log", "rank_file_name", "rank_of_path", "write_ingested"]
