"""Propose: the advisor's candidates for a run's breaks, from their stacks and the sources.

For each distinct break (most graph breaks caused first), the functions on its user stack
inside the compiled region, innermost first, up to the frame Dynamo compiled (a candidate only
when Dynamo compiled it on its own after a break at its call site). Frames are matched to
compiles by file, name and ``def`` line (:class:`_SourceIndex`, parsed once per text). Live
objects are not looked at here: :mod:`nstviz.advisor.precheck` resolves the names.
"""

from __future__ import annotations

import ast
import functools
import linecache
import os
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nstviz._where import original_function
from nstviz.advisor.attempt import Attempt, MarkAttempt
from nstviz.advisor.rewrites._source import REWRITE_FILE
from nstviz.capture._introspect import unwrap
from nstviz.passes.candidates import is_runtime_wrapper
from nstviz.report import Break, Compile, CompileId, Location, Run
from nstviz.report.facts import rank_breaks, short_counts
from nstviz.tracing.stacks import is_torch_file

__all__ = ["plan_candidates", "qualname_at"]


def _short_break(b: Break) -> str:
    where = f"{os.path.basename(b.location.file)}:{b.location.line}"
    kind = " ".join(x for x in (b.gb_id, b.gb_type or _first_line(b.reason)) if x)
    if b.count > 1 or (b.caused or 0) > 1:
        kind = f"{kind}, {short_counts(b)}" if kind else short_counts(b)
    return f"{where} ({kind})" if kind else where


def _first_line(text: str, limit: int = 80) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _plain_function_name(name: str) -> str:
    return original_function(name)[0]


_FrameKey = tuple[str | None, str, int | None]
"""(file or None, function, line of its ``def`` where the source tells)."""


def _enclosing_def_line(file: str, line: int, function: str) -> int | None:
    """The ``def`` line of the innermost function named ``function`` around ``line``."""
    index = _index(file) if file else None
    if index is None or line <= 0:
        return None
    best = None
    for name, start, first, end, _qual in index.defs:
        if name == function and start <= line <= end and (best is None or first > best):
            best = first
    return best


def _frame_key(file: str | None, line: int, function: str) -> _FrameKey:
    fn = _plain_function_name(function)
    return (file, fn, _enclosing_def_line(file, line, fn) if file else None)


def _compile_key(c: Compile) -> _FrameKey | None:
    fn = _plain_function_name(c.function or (c.location.function if c.location else ""))
    if not fn:
        return None
    if c.location is None:
        return (None, fn, None)
    # A resume function's location is its resume point, inside the original function.
    return _frame_key(c.location.file, c.location.line, fn)


def _compiled_frames(run: Run, b: Break | None) -> set[_FrameKey]:
    """The frames Dynamo compiled: for ``b`` (its compile ids) or all of the run's."""
    ids = set(b.compile_ids) if b is not None else set()
    found: set[_FrameKey] = set()
    for c in run.compiles:
        if ids and CompileId(frame_id=c.frame_id, frame_compile_id=c.compile_id) not in ids and c.cid not in ids:
            continue
        key = _compile_key(c)
        if key is not None:
            found.add(key)
    return found


def _matches(frame: Location, compiled: set[_FrameKey]) -> bool:
    file, fn, def_line = _frame_key(frame.file, frame.line, frame.function)
    return any(
        f == fn and (path is None or path == file) and (dl is None or def_line is None or dl == def_line)
        for path, f, dl in compiled
    )


def _inner_frames(run: Run, b: Break) -> tuple[list[Location], Location | None, bool | None, Location | None]:
    """Split a break's stack at the frame Dynamo compiled.

    Returns:
        The frames inside the compiled region (innermost first), the compiled frame,
        whether that frame can be marked (True when its caller is compiled code too: Dynamo
        compiled it on its own after breaking at the call; False when it is an entry point, the
        function the user compiled; None when the run has no compile records to tell), and the
        compiled frame's caller, where the stack shows it.
    """
    stack = list(b.stack) or [b.location]
    if (stack[-1].file, stack[-1].line) != (b.location.file, b.location.line):
        stack.append(b.location)
    all_compiled = _compiled_frames(run, None)
    if not all_compiled:
        # No compile records: Dynamo's break stacks start at the frame being compiled.
        return list(reversed(stack[1:])), stack[0], None, None
    mine = _compiled_frames(run, b) or all_compiled
    start = next((i for i, f in enumerate(stack) if _matches(f, mine)), None)
    if start is None:
        start = next((i for i, f in enumerate(stack) if _matches(f, all_compiled)), 0)
    markable = start > 0 and _matches(stack[start - 1], all_compiled)
    if not markable and not _matches(stack[start], _entry_frames(run)):
        # Not the function the user compiled (frame 0): Dynamo started on it after a break at
        # its call site, even if the stack does not show that caller.
        markable = True
    return list(reversed(stack[start + 1 :])), stack[start], markable, stack[start - 1] if start > 0 else None


def _wrapped_entry_keys(run: Run) -> set[_FrameKey]:
    """The function(s) the compiled entry's run-time wrappers wrap: the entry in all but name.

    E.g. the model's ``forward`` under transformers' ``capture_outputs``: never a candidate.
    """
    entries = _entry_frames(run)
    keys: set[_FrameKey] = set()
    if not entries:
        return keys
    for b in run.breaks:
        stack = list(b.stack)
        start = next((i for i, f in enumerate(stack) if _matches(f, entries)), None)
        if start is None or not is_runtime_wrapper(stack[start]):
            continue
        i = start + 1
        while i < len(stack) and is_runtime_wrapper(stack[i]):
            i += 1
        if i < len(stack):
            f = stack[i]
            keys.add(_frame_key(f.file, f.line, f.function))
    return keys


def _entry_frames(run: Run) -> set[_FrameKey]:
    """The first frame Dynamo compiled: the user's compiled entry point."""
    first = min((c.frame_id for c in run.compiles), default=None)
    keys = {_compile_key(c) for c in run.compiles if c.frame_id == first}
    return {k for k in keys if k is not None}


def qualname_at(frame: Location) -> str:
    """The qualified name of the function running at ``frame`` (``Block.stats``), from source.

    Falls back to the bare function name when the source is not available.
    """
    name = _plain_function_name(frame.function)
    index = _index(frame.file)
    if index is None:
        return name
    best: tuple[int, str] | None = None
    for fname, start, first, end, qual in index.defs:
        if fname == name and start <= frame.line <= end and (best is None or first > best[0]):
            best = (first, qual)
    return best[1] if best else name


@dataclass(frozen=True)
class _SourceIndex:
    """What the advisor looks up in one source text, computed once per text."""

    defs: tuple[tuple[str, int, int, int, str], ...]
    """(name, first line incl. decorators, def line, last line, qualified name) of every def."""
    calls: dict[int, tuple[ast.Call, ...]]
    """Call nodes by every line they span."""


def _index(path: str) -> _SourceIndex | None:
    """The index of a source file or notebook cell (as linecache has it now), or None."""
    lines = linecache.getlines(path)
    return _index_text("".join(lines)) if lines else None


@functools.lru_cache(maxsize=32)
def _index_text(text: str) -> _SourceIndex | None:
    # Keyed by the text itself: a file edited between captures is parsed again; bounded, so a
    # long-lived kernel does not accumulate trees.
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    defs: list[tuple[str, int, int, int, str]] = []
    calls: dict[int, list[ast.Call]] = {}

    def walk(node: ast.AST, prefix: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = [*prefix, child.name]
                if not isinstance(child, ast.ClassDef):
                    end = getattr(child, "end_lineno", None) or child.lineno
                    start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    defs.append((child.name, start, child.lineno, end, ".".join(qual)))
                    walk(child, [*qual, "<locals>"])
                else:
                    walk(child, qual)
            else:
                if isinstance(child, ast.Call):
                    for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                        calls.setdefault(line, []).append(child)
                walk(child, prefix)

    walk(tree, [])
    return _SourceIndex(defs=tuple(defs), calls={k: tuple(v) for k, v in calls.items()})


def plan_candidates(run: Run, breaks: Sequence[Break] | None = None) -> list[MarkAttempt]:
    """Candidates for the breaks of ``run`` (all of them unless ``breaks`` is given), in try order.

    For each break (ranked: most graph breaks caused, then most reached, see
    :func:`~nstviz.report.facts.rank_breaks`), the functions on its stack inside the compiled
    region, innermost first. A function on the stack of several breaks is one candidate with
    all the reasons. A break in the compiled function itself gives a rejected candidate that
    says what to do instead.
    """
    chosen = rank_breaks(breaks if breaks is not None else run.breaks)  # most graph breaks caused first
    proposals: dict[str, MarkAttempt] = {}
    order = 0
    entry_keys = _wrapped_entry_keys(run)
    for b in chosen:
        inner, top, top_markable, top_caller = _inner_frames(run, b)
        if top is not None and _frame_key(top.file, top.line, top.function) in entry_keys:
            top_markable = False  # the model's own forward behind the entry's wrappers
        # frames that are the entry's wrapped function are not proposed from inside either
        inner = [f for f in inner if _frame_key(f.file, f.line, f.function) not in entry_keys]
        while top is not None and inner and is_runtime_wrapper(top):
            # Dynamo compiled a decorator's wrapper (e.g. transformers' capture_outputs around
            # the model's forward): the function it wraps runs in the same frame, as the entry
            top_caller, top, inner = top, inner[-1], inner[:-1]
        in_region = {_plain_function_name(f.function) for f in inner}
        if top is not None:
            in_region.add(_plain_function_name(top.function))
        usable = 0
        previous: Location | None = None
        for k, frame in enumerate(inner):
            fname = _plain_function_name(frame.function)
            if is_torch_file(frame.file) or (fname.startswith("<") and fname != "<lambda>"):
                continue
            if is_runtime_wrapper(frame):
                continue  # a decorator's closure: go outward to the model's or user's own code
            if frame.file.startswith(REWRITE_FILE):
                continue  # a kept rewrite's own code: its original was a candidate already
            if usable == 0:
                why = f"contains the break at {_short_break(b)}"
            else:
                why = f"calls {_describe_frame(previous)}, which leads to the break at {_short_break(b)}"
            caller = inner[k + 1] if k + 1 < len(inner) else top
            order = _add_proposal(
                proposals, qualname_at(frame), frame, why, b, usable, order, caller, in_region
            )
            previous = frame
            usable += 1
        if (
            top is None
            or is_torch_file(top.file)
            or _plain_function_name(top.function).startswith("<")
            or is_runtime_wrapper(top)
            or top.file.startswith(REWRITE_FILE)
        ):
            continue
        if top_markable or (top_markable is None and usable == 0):
            why = (
                f"contains the break at {_short_break(b)}"
                if usable == 0
                else f"calls {_describe_frame(previous)}, which leads to the break at {_short_break(b)}"
            )
            if top_markable:
                why += " (Dynamo compiled it on its own after a break at its call site)"
            order = _add_proposal(
                proposals, qualname_at(top), top, why, b, usable, order, top_caller, in_region
            )
        elif usable == 0 and "." not in qualname_at(top):
            # the plain function torch.compile compiles: marked as @torch.compile over
            # @nonstrict_trace is (capture/compiled_entry.py), the attempt shows what torch does
            why = f"contains the break at {_short_break(b)} directly (it is the function torch.compile compiles)"
            order = _add_proposal(proposals, qualname_at(top), top, why, b, usable, order, top_caller, in_region)
        elif usable == 0:
            qual = qualname_at(top)
            p = proposals.get(f"{qual} (compiled)")
            if p is None:
                p = proposals[f"{qual} (compiled)"] = MarkAttempt(name=qual, frame=top, order=order)
                order += 1
                p.problems.append(
                    "it is the method of the module torch.compile compiles, which nstviz does not mark; "
                    "move the code that breaks into a helper function defined outside it, then mark the helper"
                )
            p.reasons.append(f"contains the break at {_short_break(b)} directly")
            p.breaks.append(b.id)
            p.break_gb_ids.append(b.gb_id)
    return sorted(proposals.values(), key=lambda p: (bool(p.problems), p.order))


def _add_proposal(
    proposals: dict[str, MarkAttempt],
    qual: str,
    frame: Location,
    why: str,
    b: Break,
    depth: int,
    order: int,
    caller: Location | None,
    in_region: set[str],
) -> int:
    p = proposals.get(qual)
    if p is None:
        p = proposals[qual] = MarkAttempt(name=qual, frame=frame, depth=depth, order=order)
        order += 1
    p.reasons.append(why)
    p.breaks.append(b.id)
    p.break_gb_ids.append(b.gb_id)
    if caller is not None and caller not in p.callers:
        p.callers.append(caller)
    p.region_functions |= in_region
    return order


def _describe_frame(frame: Location | None) -> str:
    if frame is None:
        return "?"
    return f"{_plain_function_name(frame.function)} ({os.path.basename(frame.file)}:{frame.line})"



def local_name(p: Attempt) -> str:
    """The proposal's name inside its module (``Class.method``, ``fn``)."""
    return p.name[len(p.module) + 1 :] if p.module and p.name.startswith(p.module + ".") else p.name


def code_of(obj: Any) -> types.CodeType | None:
    """The code object of a (wrapped) function, or None (a builtin, a class)."""
    code = getattr(unwrap(obj), "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def def_line(p: Attempt) -> int | None:
    """The first line of the resolved function's code, when it is resolved."""
    code = code_of(p.obj) if p.obj is not None else None
    return code.co_firstlineno if code is not None else None
