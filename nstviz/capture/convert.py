"""Turn what torch produced (GraphModules, trace events, exceptions) into Report values.

Pure conversions with no torch private API of their own: FX ``GraphModule`` -> :class:`Graph`,
graph-break artifacts and ``Unsupported`` errors -> :class:`Break`, compilation metrics ->
:class:`Compile`. User stacks are interned in a :class:`StackTable` shared by a Report.
"""

from __future__ import annotations

import linecache
import os
import re
import traceback
from collections.abc import Iterable, Sequence
from typing import Any

import torch
import torch.fx

from nstviz._dtypes import short_dtype
from nstviz._where import original_function
from nstviz.capture import _torch_compat
from nstviz.capture.trace_log import TraceEvent
from nstviz.report import Break, BreakSplit, Compile, Graph, Location, Node, SourceFile, TensorInfo

MAX_NODES_PER_GRAPH = 60_000
"""Graphs with more nodes keep only the first ones (``Graph.truncated``; a note says so)."""
MAX_GUARDS = 200
MAX_SOURCE_BYTES = 2_000_000

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_STDLIB_DIR = os.path.dirname(os.__file__) + os.sep
_NSTVIZ_DIR = os.path.dirname(os.path.dirname(__file__)) + os.sep
_EXAMPLES_DIR = _NSTVIZ_DIR + "examples" + os.sep  # the built-in example is user code (`nstviz demo`)
_FRAME_RE = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+), in (?P<function>.+)$')
_GB_LINK_RE = re.compile(r"(https?://\S+/gb/gb(\d{4})\.html)")
_AT_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$")


def is_user_file(path: str | None) -> bool:
    """True for files of user code: not torch's, nstviz's, the standard library's or frozen modules.

    Third-party libraries (transformers...) count as user code: their breaks are the user's.
    """
    if not path:
        return False
    if path.startswith(_TORCH_DIR) or (path.startswith(_NSTVIZ_DIR) and not path.startswith(_EXAMPLES_DIR)):
        return False
    if path.startswith(_STDLIB_DIR) and "site-packages" not in path and "dist-packages" not in path:
        return False
    return not path.startswith("<frozen")


class StackTable:
    """Interned user stacks (tuples of :class:`Location`, outermost first)."""

    def __init__(self) -> None:
        self.stacks: list[tuple[Location, ...]] = []
        self._index: dict[tuple[Location, ...], int] = {}
        self._parsed: dict[str, int | None] = {}

    def intern(self, stack: Sequence[Location]) -> int | None:
        """Index of ``stack`` in :attr:`stacks` (adding it), or None for an empty stack."""
        key = tuple(stack)
        if not key:
            return None
        idx = self._index.get(key)
        if idx is None:
            idx = self._index[key] = len(self.stacks)
            self.stacks.append(key)
        return idx

    def intern_text(self, stack_trace: str | None) -> int | None:
        """Intern the user frames of an FX ``stack_trace`` string (cached per string)."""
        if not stack_trace:
            return None
        if stack_trace in self._parsed:
            return self._parsed[stack_trace]
        idx = self.intern(parse_frames(stack_trace.splitlines()))
        self._parsed[stack_trace] = idx
        return idx


def parse_frames(lines: Iterable[str], *, user_only: bool = True) -> list[Location]:
    """Parse ``File "...", line N, in fn`` lines (and the code line after each)."""
    out: list[Location] = []
    pending: dict[str, Any] | None = None
    for raw in lines:
        m = _FRAME_RE.match(raw)
        if m:
            if pending is not None:
                out.append(Location(**pending))
            pending = {"file": m["file"], "line": int(m["line"]), "function": m["function"].strip(), "code": None}
            continue
        if pending is not None and pending["code"] is None:
            text = raw.strip()
            if text and not set(text) <= set("^~ "):
                pending["code"] = text
    if pending is not None:
        out.append(Location(**pending))
    if user_only:
        out = [loc for loc in out if is_user_file(loc.file)]
    return [_with_code(loc) for loc in out]


def _with_code(loc: Location) -> Location:
    if loc.code is not None:
        return loc
    text = linecache.getline(loc.file, loc.line).strip()
    return Location(file=loc.file, line=loc.line, function=loc.function, code=text or None)


def location_from_frame(frame: Any) -> Location:
    """A :class:`Location` from a ``traceback.FrameSummary``."""
    return _with_code(
        Location(file=frame.filename, line=int(frame.lineno or 0), function=frame.name, code=(frame.line or None))
    )


# -- graphs ---------------------------------------------------------------------------------


def _dtype(dtype: Any) -> str:
    return short_dtype(dtype)


def _tensor_info(value: Any) -> TensorInfo | None:
    if isinstance(value, torch.Tensor):
        try:
            shape = tuple(int(s) if isinstance(s, int) else str(s) for s in value.shape)
            return TensorInfo(
                shape=shape,
                dtype=_dtype(value.dtype),
                device=str(value.device),
                requires_grad=bool(value.requires_grad),
            )
        except Exception:  # e.g. sparse / nested tensors without sizes
            return TensorInfo(shape=(), dtype=_dtype(value.dtype), device=str(value.device))
    return None


def _values_meta(meta: dict[str, Any]) -> tuple[tuple[TensorInfo, ...], str | None]:
    value = meta.get("val", meta.get("example_value"))
    if value is None:
        return (), None
    info = _tensor_info(value)
    if info is not None:
        return (info,), None
    if isinstance(value, (tuple, list)):
        infos = tuple(i for i in (_tensor_info(v) for v in value) if i is not None)
        return infos, None
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)):
        return (), str(value)[:80]
    return (), None


def readable_target(node: torch.fx.Node) -> str:
    """``aten.mm.default``, ``operator.add``, ``torch.sin``, a method or module name."""
    target = node.target
    if node.op != "call_function":
        return str(target)
    if _torch_compat.is_op_overload(target):
        return str(target)
    name = getattr(target, "__name__", "") or ""
    if _torch_compat.FLAT_APPLY_NAME in name:
        return "nonstrict_trace"
    try:
        qual = _torch_compat.fx_qualified_name(target)
    except Exception:
        qual = name or repr(target)
    return qual.replace("_operator.", "operator.")


_MODULE_KEY_RE = re.compile(r"\[['\"]?([^'\"\]]+)['\"]?\]")


def module_path(raw: str) -> str:
    """``L['self'].blocks[0].attn`` / ``L['self']._modules['blocks']`` -> ``blocks.0.attn``."""
    text = re.sub(r"^[LG]\['self'\]\.?", "", raw)
    text = re.sub(r"^[LG]\['([^']+)'\]", r"\1", text)
    text = text.replace("._modules", "").replace("_modules", "")
    text = _MODULE_KEY_RE.sub(r".\1", text)
    return ".".join(p for p in text.split(".") if p)


def _module_of(meta: dict[str, Any]) -> tuple[str | None, str | None]:
    stack = meta.get("nn_module_stack")
    if not stack:
        return None, None
    try:
        path, kind = list(stack.values())[-1]
    except (ValueError, TypeError):
        return None, None
    if isinstance(kind, type):
        type_name = kind.__name__
    else:
        type_name = str(kind).rsplit(".", 1)[-1].strip("'>")
    return module_path(str(path)) or None, type_name


def root_source(node: torch.fx.Node, dynamo_graph_ids: set[int]) -> str | None:
    """Name of the Dynamo node an ATen node came from (``node.meta["from_node"]``)."""
    sources = node.meta.get("from_node")
    seen = 0
    while sources and seen < 64:
        seen += 1
        src = sources[-1] if len(sources) > 1 else sources[0]
        for s in sources:
            if getattr(s, "graph_id", None) in dynamo_graph_ids:
                return str(s.name)
        nxt = getattr(src, "from_node", None)
        if not nxt:
            return str(getattr(src, "name", "")) or None
        sources = nxt
    return None


def convert_graph(
    gm: torch.fx.GraphModule | torch.fx.Graph,
    *,
    graph_id: str,
    level: str,
    frame_id: int,
    compile_id: int,
    attempt: int,
    function: str | None,
    stacks: StackTable,
    dynamo_graph_ids: set[int] | None = None,
    max_nodes: int | None = None,
) -> Graph:
    """Convert one FX graph into a :class:`Graph` (nodes with edges, meta and provenance)."""
    graph = gm.graph if isinstance(gm, torch.fx.GraphModule) else gm
    if max_nodes is None:
        max_nodes = MAX_NODES_PER_GRAPH
    nodes: list[Node] = []
    op_count = 0
    truncated = False
    for fx_node in graph.nodes:
        if fx_node.op.startswith("call_"):
            op_count += 1
        if len(nodes) >= max_nodes:
            truncated = True
            continue
        meta = fx_node.meta
        tensors, value = _values_meta(meta)
        module, module_type = _module_of(meta)
        extra: dict[str, str] = {}
        if "seq_nr" in meta:
            extra["seq_nr"] = str(meta["seq_nr"])
        target = readable_target(fx_node)
        original = meta.get("original_aten")
        if original is not None and str(original) != target:
            extra["original_aten"] = str(original)
        nodes.append(
            Node(
                name=fx_node.name,
                op=fx_node.op,
                target=target,
                inputs=tuple(dict.fromkeys(n.name for n in fx_node.all_input_nodes)),
                tensors=tensors,
                value=value,
                stack=stacks.intern_text(meta.get("stack_trace")),
                module=module,
                module_type=module_type,
                from_node=root_source(fx_node, dynamo_graph_ids) if dynamo_graph_ids else None,
                nonstrict_call=target == "nonstrict_trace",
                extra=extra,
            )
        )
    return Graph(
        id=graph_id,
        level=level,  # type: ignore[arg-type]
        frame_id=frame_id,
        compile_id=compile_id,
        attempt=attempt,
        nodes=tuple(nodes),
        function=function,
        op_count=op_count,
        truncated=truncated,
    )


# -- breaks ---------------------------------------------------------------------------------


def _registry_fields(gb_id: str | None) -> dict[str, Any]:
    if gb_id is None:
        return {}
    entry = _torch_compat.gb_registry().get(gb_id)
    if not entry:
        return {}
    hints = entry.get("Hints") or []
    return {
        "gb_type": entry.get("Gb_type"),
        "explanation": entry.get("Explanation"),
        "hints": tuple(str(h) for h in hints if h),
    }


def _parse_message(message: str) -> dict[str, Any]:
    """Reason, explanation, hints and GB id from a Dynamo graph-break message."""
    lines = message.splitlines()
    reason = ""
    explanation = None
    hints: list[str] = []
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("Explanation:"):
            explanation = stripped.removeprefix("Explanation:").strip()
        elif stripped.startswith("Hint:"):
            hints.append(stripped.removeprefix("Hint:").strip())
        elif not reason and not stripped.startswith("Encountered graph break") and not stripped.startswith("Graph Break Reason:"):
            reason = stripped
        elif not reason and stripped.startswith("Graph Break Reason:"):
            rest = stripped.removeprefix("Graph Break Reason:").strip()
            if rest and not rest.startswith("Encountered graph break"):
                reason = rest
    link = _GB_LINK_RE.search(message)
    gb_id = f"GB{link.group(2)}" if link else None
    return {
        "reason": reason,
        "explanation": explanation,
        "hints": tuple(hints),
        "link": link.group(1) if link else None,
        "gb_id": gb_id,
    }


def _clean_detail(message: str) -> str:
    keep = []
    for line in message.splitlines():
        if line.startswith("Set TORCHDYNAMO_VERBOSE") or line.startswith("Traceback (most recent call last)"):
            break
        keep.append(line)
    return "\n".join(keep).strip()


# Dynamo 2.13 counts a graph break (``counters["graph_break"]``) only where
# ``break_graph_if_unsupported`` handles an ``Unsupported``: its artifact's reason starts with one
# of these. Other artifacts (a data-dependent jump, "Encountered graph break that we cannot resume
# from", "Failed to handle graph break gracefully") are logged but not counted.
_COUNTED_PREFIXES = ("Encountered graph break when attempting to trace", "Encountered intentional debugging graph break")
_REASON_LINE = "Graph Break Reason: "
_DYNAMO_EXC_RE = re.compile(r"^torch\._dynamo\.exc\.(?P<type>\w+):", re.M)


def counts_as_graph_break(payload: str) -> bool:
    """Whether Dynamo counted the graph break of a ``dynamo_graph_break_reason`` artifact.

    The rule offline logs need (they have only the text); live runs measure the counter itself
    (:func:`caused_per_event`), and the tests check that both agree.
    """
    at = payload.find(_REASON_LINE)
    if at < 0 or not payload[at + len(_REASON_LINE) :].startswith(_COUNTED_PREFIXES):
        return False
    raised = _DYNAMO_EXC_RE.findall(payload.partition("\nTraceback (most recent call last):")[2])
    return not raised or raised[-1] != "UserError"  # Dynamo counts only Unsupported


def caused_per_event(snapshots: Sequence[int], start: int, end: int) -> list[int]:
    """Graph breaks each artifact caused, from Dynamo's counter total at each artifact.

    ``snapshots[i]`` is the total when artifact ``i`` arrived, ``start``/``end`` the totals at
    the start and end of the run. Dynamo logs an artifact, then counts its graph break, so the
    increase up to the next artifact belongs to it. An increase before the first artifact (none
    seen in torch 2.13) is given to the first, so the results always sum to ``end - start``.
    """
    if not snapshots:
        return []
    bounds = [*snapshots[1:], end]
    out = [b - a for a, b in zip(snapshots, bounds, strict=True)]
    out[0] += snapshots[0] - start
    return out


def break_from_artifact(event: TraceEvent, caused: int | None = None) -> Break | None:
    """One break hit from a ``dynamo_graph_break_reason`` artifact.

    ``caused``: the graph breaks Dynamo counted for it (measured); None applies
    :func:`counts_as_graph_break` to the text.
    """
    text = event.payload or ""
    if not text:
        return None
    if caused is None:
        caused = int(counts_as_graph_break(text))
    head, _, rest = text.partition("\nUser code traceback:\n")
    user_tb, _, internal = rest.partition("\nTraceback (most recent call last):")
    stack = parse_frames(user_tb.splitlines())
    first = head.splitlines()[0] if head else ""
    m = _AT_RE.match(first)
    info = _parse_message(head.split("\n", 1)[1] if m and "\n" in head else head)
    if stack:
        location = stack[-1]
    elif m:
        location = _with_code(Location(file=m["file"], line=int(m["line"]), function="?"))
    else:
        return None
    body = head.split("\n", 1)[1] if m and "\n" in head else head
    brk = _make_break(info, location, stack, _clean_detail(body), event.tlparse_id, fatal=False)
    splits = (BreakSplit(compile_id=event.tlparse_id, count=caused),) if caused else ()
    brk = _replace(brk, caused=caused, splits=splits)
    cause = _root_cause_from_text(internal)
    return _replace(brk, root_cause=cause) if cause else brk


_EXC_LINE_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Unsupported|Interrupt|Exit)\w*): ?(?P<msg>.*)$")


def _root_cause_from_text(internal: str) -> str | None:
    """The first exception of a chained traceback that Dynamo converted into a break."""
    if not internal:
        return None
    found = [m for m in (_EXC_LINE_RE.match(line) for line in internal.splitlines()) if m]
    if len(found) < 2:
        return None
    first = found[0]
    text = f"{first['type'].rsplit('.', 1)[-1]}: {first['msg'].strip()}"
    if len(found) > 2 and found[1]["type"].endswith("Unsupported"):
        text += f" ({found[1]['msg'].strip()})"
    from nstviz.analysis.causes import unwrap_fake_tensor_error  # issue 11: the error inside

    return unwrap_fake_tensor_error(text, internal)[:500]


def _make_break(
    info: dict[str, Any], location: Location, stack: Sequence[Location], detail: str, compile_id: str | None, *, fatal: bool
) -> Break:
    reg = _registry_fields(info["gb_id"])
    return Break(
        gb_id=info["gb_id"],
        reason=reg.get("gb_type") or info["reason"] or "graph break",
        count=1,
        fatal=fatal,
        location=location,
        gb_type=reg.get("gb_type") or info["reason"] or None,
        detail=detail,
        explanation=info["explanation"] or reg.get("explanation"),
        hints=info["hints"] or reg.get("hints", ()),
        link=info["link"],
        stack=tuple(stack),
        compile_ids=(compile_id,) if compile_id else (),
    )


def find_unsupported(exc: BaseException | None) -> BaseException | None:
    """The Dynamo ``Unsupported`` error in ``exc`` or its cause/context chain."""
    types = _torch_compat.unsupported_types()
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, types):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def root_cause_of(exc: BaseException) -> str | None:
    """The underlying exception Dynamo converted into a break (e.g. for GB0251)."""
    inner = exc.__cause__ or exc.__context__
    seen = 0
    while inner is not None and seen < 8:
        if not isinstance(inner, _torch_compat.unsupported_types()):
            from nstviz.analysis.causes import unwrap_fake_tensor_error  # issue 11: the error inside

            first = str(inner).strip().splitlines()[0] if str(inner).strip() else ""
            return unwrap_fake_tensor_error(f"{type(inner).__name__}: {first}", str(inner))
        inner = inner.__cause__ or inner.__context__
        seen += 1
    return None


def break_from_exception(exc: BaseException) -> Break | None:
    """The fatal break of a ``fullgraph=True`` compile that raised ``Unsupported``."""
    unsupported = find_unsupported(exc)
    if unsupported is None:
        return None
    message = str(unsupported)
    head = message.split("\nfrom user code:\n", 1)[0]
    info = _parse_message(head)
    real = getattr(unsupported, "real_stack", None)
    stack: list[Location] = []
    if real:
        stack = [location_from_frame(f) for f in real if is_user_file(f.filename)]
    if not stack and "\nfrom user code:\n" in message:
        stack = parse_frames(message.split("\nfrom user code:\n", 1)[1].splitlines())
    if not stack:
        tb = traceback.extract_tb(exc.__traceback__)
        stack = [location_from_frame(f) for f in tb if is_user_file(f.filename)][-1:]
    if not stack:
        return None
    compile_id = getattr(unsupported, "compile_id", None)
    brk = _make_break(info, stack[-1], stack, _clean_detail(head), str(compile_id) if compile_id else None, fatal=True)
    brk = _replace(brk, caused=0)  # a fullgraph error stops the compile; Dynamo counts no graph break
    cause = root_cause_of(unsupported)
    if cause:
        brk = _replace(brk, root_cause=cause)
    return brk


_RECOMPILE_LIMIT_RE = re.compile(r"recompile limit exceeded|exceeding the \w*recompile_limit", re.IGNORECASE)


def fatal_breaks(
    error: BaseException | None,
    compile_errors: Sequence[tuple[tuple[int | None, int | None, int], BaseException]],
    logged: set[tuple[int | None, int | None]],
) -> list[Break]:
    """The fatal breaks of one run: each ``fullgraph=True`` compile that failed on a graph break.

    Caught by the user's code or not, the failure is the same break. ``error`` is the exception
    the run raised (when the code did not catch it); ``compile_errors`` the live exceptions of
    the run's failed compiles (:attr:`~nstviz.capture.trace_log.TraceCollector.compile_errors`);
    ``logged`` the ``(frame, compile)`` ids that logged a graph-break artifact. A failed compile
    that logged its break fell back to eager (no fullgraph): not fatal, as offline ingest
    decides. A frame refused for hitting ``recompile_limit`` is not a break (it runs eagerly).
    """
    out: list[Break] = []
    seen: set[int] = set()
    raised = find_unsupported(error)
    if error is not None and raised is not None:
        brk = break_from_exception(error)
        if brk is not None:
            out.append(brk)
            seen.add(id(raised))
    for (frame, compile_id, _attempt), exc in compile_errors:
        unsupported = find_unsupported(exc)
        if unsupported is None or id(unsupported) in seen or (frame, compile_id) in logged:
            continue
        if _RECOMPILE_LIMIT_RE.search(str(unsupported)):
            continue
        seen.add(id(unsupported))
        brk = break_from_exception(exc)
        if brk is not None:
            out.append(brk)
    return out


def _replace(obj: Any, **changes: Any) -> Any:
    import dataclasses

    return dataclasses.replace(obj, **changes)


def dedupe_breaks(hits: Sequence[Break]) -> tuple[Break, ...]:
    """Merge identical break hits into distinct breaks with counts (first-seen order)."""
    merged: dict[str, Break] = {}
    for hit in hits:
        key = hit.id
        prev = merged.get(key)
        if prev is None:
            merged[key] = hit
            continue
        ids = prev.compile_ids + tuple(c for c in hit.compile_ids if c not in prev.compile_ids)
        merged[key] = _replace(
            prev,
            count=prev.count + hit.count,
            fatal=prev.fatal or hit.fatal,
            compile_ids=ids,
            root_cause=prev.root_cause or hit.root_cause,
            caused=None if prev.caused is None and hit.caused is None else (prev.caused or 0) + (hit.caused or 0),
            splits=_merge_splits(prev.splits + hit.splits),
        )
    return tuple(merged.values())


def _merge_splits(splits: Sequence[BreakSplit]) -> tuple[BreakSplit, ...]:
    counts: dict[str, BreakSplit] = {}
    for s in splits:
        prev = counts.get(s.compile_id)
        counts[s.compile_id] = s if prev is None else _replace(prev, count=prev.count + s.count)
    return tuple(counts.values())


# -- compiles -------------------------------------------------------------------------------


def compiles_from_events(events: Sequence[TraceEvent], graphs: Sequence[Graph]) -> tuple[Compile, ...]:
    """One :class:`Compile` per ``compilation_metrics`` event, with guards and graph ids."""
    guards: dict[tuple[Any, ...], tuple[str, ...]] = {}
    starts: dict[tuple[Any, ...], Location] = {}
    for e in events:
        key = (e.frame_id, e.compile_id)
        if e.kind in ("dynamo_cpp_guards_str", "dynamo_guards") and e.payload:
            lines = tuple(ln.rstrip() for ln in e.payload.splitlines() if ln.strip())
            guards[key] = lines[:MAX_GUARDS]
        elif e.kind == "dynamo_start":
            frames = [f for f in e.metadata.get("stack", []) if f.get("file")]
            if frames:
                f = frames[-1]
                starts[key] = Location(
                    file=str(f["file"]), line=int(f.get("line") or 0), function=str(f.get("function") or "")
                )
    by_compile: dict[tuple[int, int], list[str]] = {}
    for g in graphs:
        by_compile.setdefault((g.frame_id, g.compile_id), []).append(g.id)
    out: list[Compile] = []
    for e in events:
        if e.kind != "compilation_metrics":
            continue
        m = e.metadata
        key = (e.frame_id, e.compile_id)
        loc = None
        if m.get("co_filename"):
            loc = Location(file=str(m["co_filename"]), line=int(m.get("co_firstlineno") or 0), function=str(m.get("co_name") or ""))
        out.append(
            Compile(
                frame_id=int(e.frame_id if e.frame_id is not None else -1),
                compile_id=int(e.compile_id if e.compile_id is not None else -1),
                attempt=e.attempt,
                function=str(m.get("co_name") or ""),
                location=loc or starts.get(key),
                compile_time_s=_float(m.get("entire_frame_compile_time_s")),
                graph_ids=tuple(by_compile.get((int(e.frame_id or 0), int(e.compile_id or 0)), ())),
                guards=guards.get(key, ()),
                recompile_reason=_text(m.get("recompile_reason")),
                restart_reasons=tuple(str(r) for r in (m.get("restart_reasons") or ()) if r),
                fail_reason=_text(m.get("fail_reason"), 2000),
            )
        )
    return tuple(out)


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _text(v: Any, limit: int = 4000) -> str | None:
    if v is None or v == "":
        return None
    if isinstance(v, (list, tuple)):
        v = "\n".join(str(x) for x in v)
    return str(v)[:limit]


# -- sources --------------------------------------------------------------------------------


def read_source(path: str) -> SourceFile | None:
    """Text of a user file or IPython cell (via :mod:`linecache`), capped in size."""
    lines = linecache.getlines(path)
    if not lines:
        return None
    text = "".join(lines)
    truncated = len(text) > MAX_SOURCE_BYTES
    return SourceFile(path=path, text=text[:MAX_SOURCE_BYTES], truncated=truncated)


MAX_TOTAL_SOURCE_CHARS = 8_000_000
"""Source text kept in one Report, all files together (later files are truncated)."""


def read_sources(paths: Iterable[str]) -> dict[str, SourceFile]:
    """Text of each readable user file in ``paths`` (first mention first), within the Report's budget."""
    out: dict[str, SourceFile] = {}
    budget = MAX_TOTAL_SOURCE_CHARS
    for path in dict.fromkeys(paths):
        if not is_user_file(path):
            continue
        src = read_source(path)
        if src is None:
            continue
        if len(src.text) > budget:
            src = SourceFile(path=src.path, text=src.text[: max(budget, 0)], truncated=True)
        budget -= len(src.text)
        out[path] = src
    return out


def link_breaks(breaks: Sequence[Break], compiles: Sequence[Compile], graphs: Sequence[Graph]) -> tuple[Break, ...]:
    """Fill ``graph_before``/``graph_after`` of each break where the compiles tell.

    Also names the frames of its :attr:`~Break.splits` and starts its stack at the compiled
    entry point (:class:`_CompiledNames`).

    Before: the Dynamo graph compiled by the frame compile that hit the break (Dynamo compiles
    the part before a break as its own graph). After: the Dynamo graph of the resume function
    Dynamo generated for the frame that broke (``torch_dynamo_resume_in_<fn>_at_<line>``).
    """
    dynamo = {(g.frame_id, g.compile_id): g.id for g in graphs if g.level == "dynamo"}
    resume: dict[str, str] = {}
    for c in compiles:
        gid = dynamo.get((c.frame_id, c.compile_id))
        if gid is not None and c.function.startswith("torch_dynamo_resume_in_"):
            resume.setdefault(c.function, gid)
    names = _CompiledNames(compiles)
    out = []
    for brk in breaks:
        brk = names.apply(brk)
        before = None
        for cid in brk.compile_ids:
            m = re.match(r"^(\d+)/(\d+)", cid)
            if m and (int(m[1]), int(m[2])) in dynamo:
                before = dynamo[(int(m[1]), int(m[2]))]
                break
        after = None
        for loc in reversed(brk.stack or (brk.location,)):
            after = resume.get(f"torch_dynamo_resume_in_{loc.function}_at_{loc.line}")
            if after is not None:
                break
        if before is not None or after is not None:
            brk = _replace(brk, graph_before=brk.graph_before or before, graph_after=brk.graph_after or after)
        out.append(brk)
    return tuple(out)


# -- compiled frames: names and entry points ------------------------------------------------

_DEFS: dict[tuple[str, int], list[tuple[str, str, int, int]] | None] = {}


def _defs(path: str) -> list[tuple[str, str, int, int]] | None:
    """``(name, qualname, first line incl. decorators, last line)`` of every def in a source file."""
    import ast

    text = "".join(linecache.getlines(path))
    key = (path, hash(text))  # the file's current text: a cell or script may change between runs
    if key in _DEFS:
        return _DEFS[key]
    found: list[tuple[str, str, int, int]] | None = None
    if text:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            tree = None
        if tree is not None:
            found = []

            def walk(node: ast.AST, prefix: str) -> None:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        qual = prefix + child.name
                        first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                        found.append((child.name, qual, first, child.end_lineno or child.lineno))
                        walk(child, qual + ".<locals>.")
                    elif isinstance(child, ast.ClassDef):
                        walk(child, prefix + child.name + ".")
                    else:
                        walk(child, prefix)

            walk(tree, "")
    if len(_DEFS) > 256:
        _DEFS.clear()
    _DEFS[key] = found
    return found


def _def_at(path: str, name: str, line: int | None) -> tuple[str, int, int] | None:
    """The innermost def ``name`` in ``path`` whose lines hold ``line``: (qualname, first, last)."""
    best = None
    for fn, qual, first, last in _defs(path) or ():
        if fn == name and line is not None and first <= line <= last and (best is None or first >= best[1]):
            best = (qual, first, last)
    return best


class _CompiledNames:
    """The frames Dynamo compiled in a run: their readable names, and where a stack enters them."""

    def __init__(self, compiles: Sequence[Compile]) -> None:
        self.names: dict[str, str] = {}
        self.spans: dict[tuple[str, str], list[tuple[int, int] | None]] = {}
        for c in compiles:
            fn, line = original_function(c.function, c.location.line if c.location else None)
            found = _def_at(c.location.file, fn, line) if c.location and fn else None
            self.names[f"{c.frame_id}/{c.compile_id}"] = found[0] if found else fn
            if c.location and fn:
                self.spans.setdefault((c.location.file, fn), []).append(found[1:] if found else None)

    def name(self, compile_id: str) -> str:
        """The function of frame compile ``compile_id`` (``"1/0"`` or ``"1/0_1"``)."""
        m = _ID_RE.match(compile_id)
        return self.names.get(f"{m[1]}/{m[2]}", "") if m else ""

    def entered(self, frame: Location) -> bool:
        """Whether ``frame`` runs in a function Dynamo compiled in this run."""
        spans = self.spans.get((frame.file, frame.function))
        return spans is not None and any(s is None or s[0] <= frame.line <= s[1] for s in spans)

    def apply(self, brk: Break) -> Break:
        """``brk`` with its splits named and its stack starting at the compiled entry point."""
        splits = tuple(_replace(s, function=s.function or self.name(s.compile_id)) for s in brk.splits)
        stack = brk.stack
        start = next((i for i, f in enumerate(stack) if self.entered(f)), 0)
        if splits == brk.splits and start == 0:
            return brk
        return _replace(brk, splits=splits, stack=stack[start:])


_ID_RE = re.compile(r"^\[?(\d+)/(\d+)")
