"""Why a frame was compiled again, and the rest of what Dynamo recorded for one compile.

Torch-free, shared by live captures and offline logs (:func:`nstviz.tracing.breaks.compiles_from_events`
calls it). Reads, per frame compile (tlparse's ``[frame_id/compile_id]``):

- the ``recompile_reasons`` artifact: every failing guard of the frame's earlier compiles, what
  ``TORCH_LOGS=recompiles`` prints as "triggered by the following guard failure(s)" (the
  ``recompile_reason`` of ``compilation_metrics`` holds the first one only);
- ``dynamo_start``'s stack: the user frames that called the compiled frame;
- the ``compilation_metrics`` fields a compile page shows (failure type and frame, backend time,
  guard count, how many compiled entries the frame already had).

A compile refused for hitting ``recompile_limit`` logs its metrics without ``co_name`` or file:
it is the same frame (``frame_id`` is per code object), so :func:`name_frames` names it from the
frame's other compiles.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any

from nstviz.report.model import Compile, CompileId, GuardFailure, Location
from nstviz.tracing.events import TraceEvent
from nstviz.tracing.stacks import classify, is_user_file, parse_frames

__all__ = ["compile_extras", "guard_failures", "name_frames"]

_ENTRY_RE = re.compile(r"^\s*-?\s*(?P<cid>\d+/\d+(?:_\d+)?): (?P<rest>.*)$")
_COMMENT_RE = re.compile(r"\s+#\s")
_MAX_FAILURES = 32
_MAX_STACK = 24


def _entries(payload: Any) -> list[str]:
    """The failure texts of one ``recompile_reasons`` payload (a JSON list, a JSON string, or text)."""
    if payload is None:
        return []
    if isinstance(payload, (list, tuple)):
        return [str(x) for x in payload if x]
    text = str(payload)
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, list):
        return [str(x) for x in data if x]
    if isinstance(data, str):
        text = data
    out: list[str] = []
    for line in text.splitlines():  # plain text: each failure starts with "<frame>/<compile>: "
        if _ENTRY_RE.match(line) or not out:
            out.append(line)
        else:
            out[-1] += "\n" + line
    return [e for e in out if e.strip()]


def guard_failures(payload: Any) -> tuple[GuardFailure, ...]:
    """The failing guards in a ``recompile_reasons`` payload or a ``recompile_reason`` text.

    Each entry reads ``"0/1: L['n'] == 1   # if n > 2:  # file.py:7 in step"`` and then, maybe,
    ``"User stack trace:"`` with ``File "...", line N, in fn`` lines.
    """
    out: list[GuardFailure] = []
    for entry in _entries(payload)[:_MAX_FAILURES]:
        lines = entry.strip().splitlines()
        m = _ENTRY_RE.match(lines[0]) if lines else None
        if m is None:
            out.append(GuardFailure(compile_id=None, guard=lines[0].strip() if lines else "", text=entry.strip()))
            continue
        parts = _COMMENT_RE.split(m["rest"].strip())
        guard = parts[0].strip()
        code = parts[1].strip() if len(parts) > 2 else None  # "# <code>  # <file>:<line> in <fn>"
        frames = parse_frames(lines[1:], user_only=False)
        loc = frames[-1] if frames else None
        if code is None and loc is not None:
            code = loc.code
        out.append(
            GuardFailure(
                compile_id=CompileId.parse(m["cid"]), guard=guard, code=code or None, location=loc,
                text=entry.strip() if entry.strip() != guard else "",
            )
        )
    return tuple(out)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _callers(stack: Sequence[dict[str, Any]]) -> tuple[Location, ...]:
    """The user frames of a ``dynamo_start`` stack that called the compiled frame (its last frame).

    Frames above nstviz's own (the script or cell that started the capture) are not the user's
    program calling the frame, so they are left out too.
    """
    frames = [f for f in stack if f.get("file")][:-1]
    last_ours = max((i for i, f in enumerate(frames) if classify(str(f["file"])) == "nstviz"), default=-1)
    return tuple(
        Location(file=str(f["file"]), line=int(f.get("line") or 0), function=str(f.get("function") or ""),
                 code=str(f["code"]) if f.get("code") else None)
        for f in frames[last_ours + 1 :]
        if is_user_file(str(f["file"]))
    )[-_MAX_STACK:]


def compile_extras(events: Sequence[TraceEvent]) -> dict[tuple[Any, Any, int], dict[str, Any]]:
    """Per ``(frame_id, compile_id, attempt)``: the :class:`Compile` fields this module fills.

    Keys of each dict are :class:`Compile` field names; a field is absent when the log has nothing
    for it. ``guard_failures`` are keyed by ``(frame_id, compile_id)`` too (attempt 0 logs them).
    """
    reasons: dict[tuple[Any, Any], Any] = {}
    callers: dict[tuple[Any, Any], tuple[Location, ...]] = {}
    for e in events:
        key = (e.frame_id, e.compile_id)
        if e.kind == "recompile_reasons" and e.payload and key not in reasons:
            reasons[key] = e.payload
        elif e.kind == "dynamo_start" and key not in callers:
            callers[key] = _callers(e.metadata.get("stack", []))
    out: dict[tuple[Any, Any, int], dict[str, Any]] = {}
    for e in events:
        if e.kind != "compilation_metrics":
            continue
        m = e.metadata
        key = (e.frame_id, e.compile_id)
        fields: dict[str, Any] = {}
        failures = guard_failures(reasons[key]) if key in reasons else guard_failures(m.get("recompile_reason"))
        if failures:
            fields["guard_failures"] = failures
        if m.get("fail_type"):
            fields["fail_type"] = str(m["fail_type"])
        if m.get("fail_user_frame_filename"):
            fields["fail_location"] = Location(
                file=str(m["fail_user_frame_filename"]), line=_int(m.get("fail_user_frame_lineno")) or 0, function=""
            )
        for name in ("backend_compile_time_s",):
            if _float(m.get(name)) is not None:
                fields[name] = _float(m.get(name))
        for name in ("guard_count", "cache_size"):
            if _int(m.get(name)) is not None:
                fields[name] = _int(m.get(name))
        if callers.get(key):
            fields["stack"] = callers[key]
        out[(e.frame_id, e.compile_id, e.attempt)] = fields
    return out


def name_frames(compiles: Sequence[Compile]) -> tuple[Compile, ...]:
    """``compiles`` with a compile that logged no function or file named from its frame's others."""
    named: dict[int, Compile] = {}
    for c in compiles:
        if c.function and c.location is not None:
            named.setdefault(c.frame_id, c)
    out = []
    for c in compiles:
        src = named.get(c.frame_id)
        if src is not None and (not c.function or c.location is None):
            c = dataclasses.replace(c, function=c.function or src.function, location=c.location or src.location)
        out.append(c)
    return tuple(out)
