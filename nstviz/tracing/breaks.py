"""Graph breaks and compiles from structured-trace events and the text torch wrote.

Torch-free: live captures (:mod:`nstviz.capture`) and logs read on another machine
(:mod:`nstviz.offline`) both go through these. The graph-break registry (GB ids -> type,
explanation, hints) is read from the installed torch's files without importing torch, and is
empty where torch is not installed (the messages in a log carry the same text).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import linecache
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from nstviz._where import original_function
from nstviz.report.compiles import RECOMPILE_LIMIT_RE
from nstviz.report.model import Break, BreakSplit, Compile, CompileId, Graph, Location, break_id
from nstviz.tracing import MAX_GUARDS
from nstviz.tracing.events import TraceEvent
from nstviz.tracing.recompiles import compile_extras, name_frames
from nstviz.tracing.stacks import parse_frames, with_code
from nstviz.tracing.unwrap import unwrap_fake_tensor_error

_GB_LINK_RE = re.compile(r"(https?://\S+/gb/gb(\d{4})\.html)")
_AT_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$")
_REGISTRY = "graph_break_registry.json"

DYNAMO_EXCEPTION_NAMES = frozenset(
    {
        "AutogradGradRestartAnalysis", "BackendCompilerFailed", "CompileCollectiveRestartAnalysis",
        "CondOpArgsMismatchError", "FakeTensorObservedException", "InfiniteGeneratorError",
        "InternalTorchDynamoError", "InvalidBackend", "ObservedAttributeError", "ObservedException",
        "ObservedGeneratorExit", "ObservedIndexError", "ObservedKeyError", "ObservedLookupError",
        "ObservedNotImplementedError", "ObservedRuntimeError", "ObservedTypeError", "ObservedUserStopIteration",
        "PackageError", "RecompileError", "RequiresGradRestartAnalysis", "ResetRequired", "RestartAnalysis",
        "ResumePrologueTracingError", "ShortenTraceback", "SkipFrame", "SpeculationRestartAnalysis",
        "StepUnsupported", "TensorifyScalarRestartAnalysis", "TorchDynamoException", "TorchRuntimeError",
        "UncapturedHigherOrderOpError", "UnknownPropertiesDuringBackwardTrace", "UnsafeScriptObjectError",
        "UnspecializeRestartAnalysis", "Unsupported", "UserError",
    }
)
"""The ``torch._dynamo.exc.TorchDynamoException`` classes of torch 2.13 and 2.14, by name: how a
Report read without importing torch tells a fatal graph break from the script's own error
(:func:`nstviz.capture._torch_compat.dynamo_exception_names` reads the running torch's)."""


def _registry_path() -> str | None:
    dynamo = sys.modules.get("torch._dynamo")
    if getattr(dynamo, "__file__", None):
        return os.path.join(os.path.dirname(dynamo.__file__), _REGISTRY)  # type: ignore[union-attr]
    try:
        spec = importlib.util.find_spec("torch")  # locates the package without importing it
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    return os.path.join(locations[0], "_dynamo", _REGISTRY) if locations else None


def gb_registry() -> dict[str, dict[str, Any]]:
    """The graph-break registry shipped with torch: ``{"GB0007": {...}}`` (empty if absent)."""
    path = _registry_path()
    return read_gb_registry(os.path.dirname(path))[0] if path else {}


@functools.cache
def read_gb_registry(folder: str) -> tuple[dict[str, dict[str, Any]], str]:
    """The registry in ``folder`` (torch's ``_dynamo``), and why it could not be read (``""`` if it could)."""
    path = os.path.join(folder, _REGISTRY)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError:
        return {}, "is missing"
    except ValueError as exc:
        return {}, f"has changed (not JSON: {exc})"[:200]
    out: dict[str, dict[str, Any]] = {}
    for key, entries in data.items() if isinstance(data, dict) else ():
        entry = entries[0] if isinstance(entries, list) and entries else entries
        if isinstance(entry, dict):
            out[key] = entry
    return out, "" if out else "has changed (no entries nstviz can read)"


def _registry_fields(gb_id: str | None) -> dict[str, Any]:
    if gb_id is None:
        return {}
    entry = gb_registry().get(gb_id)
    if not entry:
        return {}
    hints = entry.get("Hints") or []
    return {
        "gb_type": entry.get("Gb_type"),
        "explanation": entry.get("Explanation"),
        "hints": tuple(str(h) for h in hints if h),
    }


def parse_message(message: str) -> dict[str, Any]:
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


def clean_detail(message: str) -> str:
    """A graph-break message without torch's verbose hint and traceback."""
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


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakHit:
    """One time Dynamo's tracing reached a graph break, as its log artifact or exception tells it.

    The raw material of a :class:`Break`: a run collects its hits, then :func:`link_breaks` merges
    the hits of each distinct break (same :attr:`id`, :func:`break_id`) and builds its Break once.
    """

    id: str
    gb_id: str | None
    reason: str
    fatal: bool
    location: Location
    gb_type: str | None
    detail: str
    explanation: str | None
    hints: tuple[str, ...]
    link: str | None
    stack: tuple[Location, ...]
    compile_id: CompileId | None
    """The compile that hit it, where known."""
    caused: int | None
    """Graph breaks Dynamo counted for this hit (None: not known)."""
    root_cause: str | None


def make_hit(
    info: dict[str, Any],
    location: Location,
    stack: Sequence[Location],
    detail: str,
    compile_id: CompileId | None,
    *,
    fatal: bool,
    caused: int | None,
    root_cause: str | None = None,
) -> BreakHit:
    """A hit from a parsed message (:func:`parse_message`) and where it happened; the registry fills the gaps."""
    reg = _registry_fields(info["gb_id"])
    reason = reg.get("gb_type") or info["reason"] or "graph break"
    return BreakHit(
        id=break_id(location, info["gb_id"], reason),
        gb_id=info["gb_id"],
        reason=reason,
        fatal=fatal,
        location=location,
        gb_type=reg.get("gb_type") or info["reason"] or None,
        detail=detail,
        explanation=info["explanation"] or reg.get("explanation"),
        hints=info["hints"] or reg.get("hints", ()),
        link=info["link"],
        stack=tuple(stack),
        compile_id=compile_id,
        caused=caused,
        root_cause=root_cause,
    )


def break_from_artifact(event: TraceEvent, caused: int | None = None) -> BreakHit | None:
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
    body = head.split("\n", 1)[1] if m and "\n" in head else head
    if stack:
        location = stack[-1]
    elif m:
        location = with_code(Location(file=m["file"], line=int(m["line"]), function="?"))
    else:
        return None
    return make_hit(
        parse_message(body), location, stack, clean_detail(body), event.cid,
        fatal=False, caused=caused, root_cause=root_cause_from_text(internal),
    )


_EXC_LINE_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Unsupported|Interrupt|Exit)\w*): ?(?P<msg>.*)$")


def root_cause_from_text(internal: str) -> str | None:
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
    return unwrap_fake_tensor_error(text, internal)[:500]


# -- compiles -------------------------------------------------------------------------------


def compiles_from_events(events: Sequence[TraceEvent], graphs: Sequence[Graph]) -> tuple[Compile, ...]:
    """One :class:`Compile` per ``compilation_metrics`` event, with guards, graph ids and why it recompiled."""
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
    extras = compile_extras(events)
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
                **extras.get((e.frame_id, e.compile_id, e.attempt), {}),
            )
        )
    named = name_frames(out)
    names = _CompiledNames(named)
    return tuple(replace(c, qualname=names.name(c.cid) or None) if c.function else c for c in named)


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _text(v: Any, limit: int = 4000) -> str | None:
    if v is None or v == "":
        return None
    if isinstance(v, (list, tuple)):
        v = "\n".join(str(x) for x in v)
    return str(v)[:limit]


def link_breaks(hits: Sequence[BreakHit], compiles: Sequence[Compile], graphs: Sequence[Graph]) -> tuple[Break, ...]:
    """The distinct breaks of a run (first seen first), each built once from its hits.

    Hits with the same :attr:`BreakHit.id` are one break: reached once per hit, fatal if one
    was, caused the sum of what they caused (None when no hit knew), split the frame compiles
    whose graph a hit split. Where the compiles tell, also names those frames, starts the stack
    at the compiled entry point (:class:`_CompiledNames`) and fills ``graph_before`` and
    ``graph_after``.

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
    groups: dict[str, list[BreakHit]] = {}
    for hit in hits:
        groups.setdefault(hit.id, []).append(hit)
    return tuple(_break_of(group, names, dynamo, resume) for group in groups.values())


def _break_of(
    hits: Sequence[BreakHit], names: _CompiledNames, dynamo: dict[tuple[int, int], str], resume: dict[str, str]
) -> Break:
    """The one Break of a distinct break's hits (the first hit says what and where)."""
    first = hits[0]
    compile_ids = tuple(dict.fromkeys(h.compile_id for h in hits if h.compile_id is not None))
    split_counts: dict[CompileId, int] = {}
    for h in hits:
        if h.caused and h.compile_id is not None:
            split_counts[h.compile_id] = split_counts.get(h.compile_id, 0) + h.caused
    causes = [h.caused for h in hits if h.caused is not None]
    stack = first.stack[next((i for i, f in enumerate(first.stack) if names.entered(f)), 0) :]
    before = next((dynamo[c.frame_compile] for c in compile_ids if c.frame_compile in dynamo), None)  # type: ignore[index]
    after = None
    for loc in reversed(stack or (first.location,)):
        after = resume.get(f"torch_dynamo_resume_in_{loc.function}_at_{loc.line}")
        if after is not None:
            break
    return Break(
        id=first.id,
        gb_id=first.gb_id,
        reason=first.reason,
        count=len(hits),
        fatal=any(h.fatal for h in hits),
        location=first.location,
        gb_type=first.gb_type,
        detail=first.detail,
        explanation=first.explanation,
        hints=first.hints,
        link=first.link,
        stack=stack,
        compile_ids=compile_ids,
        graph_before=before,
        graph_after=after,
        root_cause=next((h.root_cause for h in hits if h.root_cause), None),
        caused=sum(causes) if causes else None,
        splits=tuple(BreakSplit(compile_id=c, function=names.name(c), count=n) for c, n in split_counts.items()),
    )


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
        self.names: dict[tuple[int | None, int | None], str] = {}
        self.spans: dict[tuple[str, str], list[tuple[int, int] | None]] = {}
        for c in compiles:
            fn, line = original_function(c.function, c.location.line if c.location else None)
            found = _def_at(c.location.file, fn, line) if c.location and fn else None
            self.names[(c.frame_id, c.compile_id)] = found[0] if found else fn
            if c.location and fn:
                self.spans.setdefault((c.location.file, fn), []).append(found[1:] if found else None)

    def name(self, compile_id: CompileId) -> str:
        """The function of frame compile ``compile_id`` (any attempt)."""
        return self.names.get(compile_id.frame_compile, "")

    def entered(self, frame: Location) -> bool:
        """Whether ``frame`` runs in a function Dynamo compiled in this run."""
        spans = self.spans.get((frame.file, frame.function))
        return spans is not None and any(s is None or s[0] <= frame.line <= s[1] for s in spans)


__all__ = [
    "DYNAMO_EXCEPTION_NAMES",
    "RECOMPILE_LIMIT_RE",
    "BreakHit",
    "break_from_artifact",
    "caused_per_event",
    "clean_detail",
    "compiles_from_events",
    "counts_as_graph_break",
    "gb_registry",
    "link_breaks",
    "make_hit",
    "parse_message",
    "root_cause_from_text",
]
