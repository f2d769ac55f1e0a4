"""The advisor (``auto=True``): find functions whose non-strict tracing removes graph breaks.

Steps:

1. **Propose.** For each distinct break of the baseline (most graph breaks caused first), walk its user
   stack from the innermost frame outwards: the function that contains the break, then its
   callers, up to the frame Dynamo compiled. That frame itself is a candidate only when Dynamo
   compiled it on its own after breaking at its call site (its caller is compiled code, or it
   is not the first frame compiled); the user's compiled entry point never is. Frames in torch
   itself, comprehensions and module-level code are passed over. Frames are matched to
   compiles by file, name and ``def`` line. Each candidate says why it was proposed
   (``contains the break at model.py:42 (GB0026 ...)``) and what it reads that nonstrict_trace
   would bake in (:mod:`nstviz.capture.reads`).
2. **Pre-check** what can be known without running: the name resolves (through the caller's
   ``resolve``, also as ``module.qualname``) to the very function the stack shows (same file
   and line range); it is a plain Python function: not a builtin, class, lambda, generator,
   a closure created inside the compiled region, torch's own code or already marked in the
   code (an ``nn.Module.forward`` is tried with a no-op forward pre-hook on its instances, which
   makes the mark take effect for ``module(...)`` calls, see :mod:`nstviz.capture.forward_hooks`;
   run-time wrappers, closures made by decorators that pass ``*args, **kwargs`` on, are passed
   over); its call sites on the stacks pass no explicit ``None`` (unless the user's torch takes
   ``None`` leaves: ``none_inputs_ok``), lambda or generator (GB0236 on 2.13 and 2.14.1);
   it is no ``leaf_function`` of the code; annotations name no non-pytree type. Failures are ``rejected`` with
   the reasons.
3. **Try.** Candidates are tried one at a time *on top of the ones already kept*
   (``try_marks`` runs the code again as run ``attempt-N``), so each attempt also checks the
   combination; ``breaks_before`` of a candidate is the count with the marks kept so far. A
   candidate is kept only when its attempt improves on the marks kept so far
   (:func:`nstviz.passes.improvement.judge_change`: fewer Dynamo graphs, else fewer frames
   run eagerly, else a failed compile that now compiles; with the outputs verified). Fewer
   distinct break sites, or a lower ``counters["graph_break"]``, with as many graphs is
   ``no_change`` and said as such ("the break moved: ...", "same 20 graphs (...)"). After a
   ``fullgraph=True`` failure whose fatal break moves on to a later one, the attempt is kept
   *on trial* (``no_change``) so that the break behind it can be tried on top; it turns
   ``improved`` when a later attempt makes the code compile, and is dropped otherwise. A
   failure says why: GB0236 (inputs), GB0251 with its root cause, and for data-dependent
   operations that nonstrict_trace cannot trace them either. Once a break is gone, its
   remaining (outer) candidates are ``skipped`` as not needed. Breaks revealed by an attempt
   (hidden behind a fatal break) get candidates too.
3b. **Adapters and pytree registrations** (with ``adapt`` / ``register``). A candidate turned
   down for an explicit ``None`` at its call site, or whose attempt fails with GB0236 "(it got
   NoneType)", is tried again, after the plain candidates and only for breaks still left, through
   an adapter (``kind="adapter"``, :mod:`nstviz.capture.adapters`); a kept mark that itself falls
   back on ``None`` inputs gets its adapter tried instead of it. An attempt refused for a user
   class ("(it got Box)", or a non-graphable output class) is tried again with the class
   registered with pytree (``kind="pytree"``). Both are judged like marks and count against
   ``max_attempts`` and ``budget_s``.
4. **Config hints.** With ``try_config``, the ``torch._dynamo.config`` flags the remaining
   breaks hint at (:mod:`nstviz.advisor.remedies`) are tried on top of the kept marks, as
   candidates of ``kind="config"`` judged the same way.
5. **Recommend** the kept set (and flags), verified by the last improving attempt (which ran
   exactly that set), with paste-ready code (:mod:`nstviz.advisor.code`).

Verdicts: a hard compile error that an attempt removes is an improvement (outputs checked
against eager); so are fewer Dynamo graphs, whatever the distinct breaks do; the recommendation
is made only when the kept set as a whole improves on the baseline; failures carry the real
cause (:mod:`nstviz.passes.causes`).

The work is bounded by ``max_attempts`` and ``budget_s`` (an attempt is not started when the
time left is shorter than the longest run so far, or than the baseline before any attempt):
what is left is marked ``skipped`` with the reason.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import os
import re
import sys
import time
import types
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nstviz._gb_ids import (
    NONSTRICT_REJECTED,
)
from nstviz._where import original_function
from nstviz.capture._introspect import is_module_method, unwrap
from nstviz.passes.break_counts import rank_breaks, short_counts
from nstviz.passes.candidates import is_runtime_wrapper
from nstviz.passes.causes import explain_error, explain_failure
from nstviz.passes.improvement import eager_frames, judge_change
from nstviz.report import Break, Candidate, Compile, Location, OutputCheck, Recommendation, Run
from nstviz.tracing.stacks import is_torch_file

__all__ = ["TryMarks", "apply_code", "plan_candidates", "qualname_at", "run_advisor"]

TryMarks = Callable[[tuple[Callable, ...], str], tuple[Run, OutputCheck]]
TryConfig = Callable[[tuple[Callable, ...], dict[str, bool], str], tuple[Run, OutputCheck]]
"""Like :data:`TryMarks`, with ``torch._dynamo.config`` flags patched for the run."""
MAX_CONFIG_ATTEMPTS = 3

_GB_RE = re.compile(r"\bGB\d{4}\b")
_NONSTRICT_FAILURE_GB = NONSTRICT_REJECTED


# -- proposal -------------------------------------------------------------------------------------


@dataclass
class _Proposal:
    """A candidate being built: where it is, why, and the breaks it contains."""

    name: str
    """The name passed to ``resolve`` (``"helper"``, ``"Block.stats"``)."""
    frame: Location
    reasons: list[str] = field(default_factory=list)
    breaks: list[str] = field(default_factory=list)
    """Ids (:attr:`Break.id`) of the breaks whose stack contains this function."""
    break_gb_ids: list[str | None] = field(default_factory=list)
    """The GB ids of those breaks."""
    depth: int = 0
    """0 = the function that contains the break, 1 = its caller..."""
    obj: Callable | None = None
    problems: list[str] = field(default_factory=list)
    order: int = 0
    callers: list[Location] = field(default_factory=list)
    """Frames that call it on the break stacks (their line is the call site)."""
    notes: list[str] = field(default_factory=list)
    """Warnings that do not stop it from being tried (e.g. values it reads that get baked in)."""
    module: str | None = None
    """The module path prefixed to ``name`` when only the qualified path resolved."""
    region_functions: set[str] = field(default_factory=set)
    """Functions running inside the compiled region on its break stacks."""
    forward: bool = False
    """An ``nn.Module.forward``: the mark needs a forward pre-hook to take effect."""
    none_args: bool = False
    """Rejected only because a call site passes an explicit ``None`` (an adapter can take it)."""
    kind: str = "nonstrict"
    """``"nonstrict"``: mark ``obj``; ``"adapter"``: install ``remedy`` (an adapter that drops
    None arguments); ``"pytree"``: mark ``obj`` with ``remedy`` (a user class) registered."""
    remedy: Any = None
    with_marks: tuple[Any, ...] = ()
    """For a pytree attempt: what is marked (or installed) with the class registered."""
    key: str = ""
    """The candidate's name in the results (``adapter: f``, ``pytree: C``); ``name`` when empty."""
    replaces: _Proposal | None = None
    """A kept mark this adapter is tried instead of (the mark itself fell back on None inputs)."""
    via_adapter: bool = False
    """A pytree attempt on top of this function's adapter (the adapter got the class)."""


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
        cid = f"{c.frame_id}/{c.compile_id}"
        if ids and cid not in ids and f"{cid}_{c.attempt}" not in ids:
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


def plan_candidates(run: Run, breaks: Sequence[Break] | None = None) -> list[_Proposal]:
    """Candidates for the breaks of ``run`` (all of them unless ``breaks`` is given), in try order.

    For each break (ranked: most graph breaks caused, then most reached, see
    :func:`~nstviz.passes.break_counts.rank_breaks`), the functions on its stack inside the compiled
    region, innermost first. A function on the stack of several breaks is one candidate with
    all the reasons. A break in the compiled function itself gives a rejected candidate that
    says what to do instead.
    """
    chosen = rank_breaks(breaks if breaks is not None else run.breaks)  # most graph breaks caused first
    proposals: dict[str, _Proposal] = {}
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
        elif usable == 0:
            qual = qualname_at(top)
            p = proposals.get(f"{qual} (compiled)")
            if p is None:
                p = proposals[f"{qual} (compiled)"] = _Proposal(name=qual, frame=top, order=order)
                order += 1
                p.problems.append(
                    "it is the function torch.compile compiles, so it cannot be traced non-strictly; "
                    "move the code that breaks into a helper function defined outside it, then mark the helper"
                )
            p.reasons.append(f"contains the break at {_short_break(b)} directly")
            p.breaks.append(b.id)
            p.break_gb_ids.append(b.gb_id)
    return sorted(proposals.values(), key=lambda p: (bool(p.problems), p.order))


def _add_proposal(
    proposals: dict[str, _Proposal],
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
        p = proposals[qual] = _Proposal(name=qual, frame=frame, depth=depth, order=order)
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


# -- pre-checks -----------------------------------------------------------------------------------


def _precheck(
    p: _Proposal,
    resolve: Callable[[str], Callable | None],
    compiled_region: set[str],
    already_marked: Collection[str] = (),
    *,
    none_inputs_ok: bool = False,
    leaf_functions: Collection[str] = (),
) -> None:
    if p.problems:
        return
    if p.name in leaf_functions:
        p.problems.append("it is a leaf_function in the code (it runs eagerly); the break happens inside it")
        return
    if p.name in already_marked:
        p.problems.append(
            "it is already traced non-strictly (marked in the code); the break happens inside it"
        )
        return
    name = _plain_function_name(p.frame.function)
    if name == "<lambda>":
        p.problems.append(
            "a lambda cannot be marked by name; give it a name with def, outside the compiled function"
        )
        return
    if "<locals>" in p.name:
        outer = p.name.split(".<locals>.")[0].split(".")[-1]
        if outer in compiled_region or outer in p.region_functions:
            p.problems.append(
                f"it is defined inside `{outer}`, which runs inside the compiled region: a new function "
                "object is created on every call, so it cannot be marked; define it at module level"
            )
            return
    obj, tried = _resolve(p, resolve)
    if obj is None:
        other = [t.removeprefix("<mismatch>") for t in tried if t.startswith("<mismatch>")]
        errors = [t.removeprefix("<error>") for t in tried if t.startswith("<error>")]
        names = ", ".join(repr(t) for t in tried if not t.startswith(("<mismatch>", "<error>")))
        if other:
            p.problems.append(
                f"the name {names} now refers to another function (defined at {other[0]}), not the one "
                f"on the break stack ({os.path.basename(p.frame.file)}:{p.frame.line}); it was redefined "
                "or rebound, so it cannot be marked by name"
            )
        elif errors:
            p.problems.append(f"cannot resolve it by name (tried {names}): {errors[0]}")
        elif "<locals>" in p.name:
            maker = p.name.split(".<locals>.")[0]
            p.problems.append(
                f"it is a function created at run time inside `{maker}` (e.g. by a decorator or a "
                "factory), so there is no name to mark it by; mark the function it wraps or calls instead"
            )
        else:
            p.problems.append(f"cannot find it by name (tried {names}) in the namespace")
        return
    p.obj = obj
    p.problems.extend(_object_problems(obj, p.frame))
    if not p.problems:
        p.problems.extend(_call_site_problems(p, none_inputs_ok=none_inputs_ok))
        # an explicit None at the call site is all that stands in the way: an adapter can take it
        p.none_args = bool(p.problems) and all("an explicit None" in x for x in p.problems)
    if not p.problems:
        p.notes.extend(_read_notes(obj))
    if not p.problems and unwrap(obj).__name__ == "forward" and is_module_method(unwrap(obj)):
        p.forward = True  # tried with a no-op forward pre-hook (nstviz.capture.forward_hooks)


def _resolve(p: _Proposal, resolve: Callable[[str], Callable | None]) -> tuple[Callable | None, list[str]]:
    names = [p.name]
    module = _module_name_for(p.frame.file)
    if module and module != "__main__":
        names.append(f"{module}.{p.name}")
    tried = []
    mismatch = None
    for n in names:
        tried.append(n)
        try:
            obj = resolve(n)
        except Exception as exc:  # e.g. NameResolutionError for an ambiguous name
            tried.append(f"<error>{exc}")
            obj = None
        if obj is None:
            continue
        if _same_code(obj, p.frame):
            if n != p.name:
                p.module = n[: -len(p.name) - 1]
                p.name = n
            return obj, tried
        mismatch = obj
    if mismatch is not None and not _code_of(mismatch):
        return mismatch, tried  # a builtin or C function by that name: let the checks say so
    if mismatch is not None:
        code = _code_of(mismatch)
        assert code is not None
        tried.append(f"<mismatch>{os.path.basename(code.co_filename)}:{code.co_firstlineno}")
    return None, tried


def _module_name_for(path: str) -> str | None:
    if path.startswith("<"):
        return None
    norm = os.path.abspath(path)
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if f and os.path.abspath(f) == norm:
            return name
    return None


def _code_of(obj: Any) -> types.CodeType | None:
    code = getattr(unwrap(obj), "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _same_code(obj: Any, frame: Location) -> bool:
    code = _code_of(obj)
    if code is None:
        return False
    if code.co_name != _plain_function_name(frame.function):
        return False
    if code.co_filename != frame.file:
        if frame.file.startswith("<") or code.co_filename.startswith("<"):
            return False
        if os.path.abspath(code.co_filename) != os.path.abspath(frame.file):
            return False
    if frame.line <= 0:
        return True
    # The function's own line range, from its code object (no source needed): tells apart
    # same-named functions of one file, e.g. a cell that redefines a helper.
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return code.co_firstlineno <= frame.line <= max(lines, default=code.co_firstlineno)


def _object_problems(obj: Any, frame: Location) -> list[str]:
    if isinstance(obj, type):
        return [f"`{obj.__name__}` is a class; mark one of its methods instead"]
    raw = unwrap(obj)
    if inspect.isbuiltin(raw) or not isinstance(raw, types.FunctionType):
        return [
            f"{type(raw).__name__} `{getattr(raw, '__name__', raw)}` is not a Python function (builtin or C code)"
        ]
    problems = []
    if raw.__name__ == "<lambda>":
        problems.append("a lambda cannot be marked by name; give it a name with def")
    if (
        inspect.isgeneratorfunction(raw)
        or inspect.iscoroutinefunction(raw)
        or inspect.isasyncgenfunction(raw)
    ):
        problems.append(
            "a generator or async function cannot be traced non-strictly (its result is not a pytree)"
        )
    module = getattr(raw, "__module__", "") or ""
    if module == "torch" or module.startswith("torch."):
        problems.append("it is part of torch itself; nstviz proposes only your code")
    problems.extend(_signature_problems(raw))
    return problems


def _call_site_problems(p: _Proposal, *, none_inputs_ok: bool = False) -> list[str]:
    """Arguments visibly not accepted at the call sites the break stacks show (GB0236).

    An explicit ``None`` is one of them unless ``none_inputs_ok`` (a torch whose nonstrict_trace
    takes ``None`` leaves, :func:`nstviz.capture._torch_compat.nonstrict_accepts_none`).
    """
    name = _plain_function_name(p.frame.function)
    problems: list[str] = []
    for caller in p.callers:
        index = _index(caller.file)
        if index is None:
            continue
        for node in index.calls.get(caller.line, ()):
            func = node.func
            callee = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else None
            )
            if callee != name:
                continue
            args = [(f"argument {i + 1}", a) for i, a in enumerate(node.args)]
            args += [(f"argument `{k.arg}`", k.value) for k in node.keywords if k.arg]
            for label, value in args:
                kind = _bad_argument(value)
                if kind == "an explicit None" and none_inputs_ok:
                    continue
                if kind:
                    problems.append(
                        f"it is called with {kind} as its {label} at {os.path.basename(caller.file)}:{caller.line}: "
                        "nonstrict_trace refuses None, lambdas and generators as inputs on this torch (GB0236); "
                        "leave such parameters at their default or pass tensors, numbers or containers of them"
                    )
    return list(dict.fromkeys(problems))


def _bad_argument(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and node.value is None:
        return "an explicit None"
    if isinstance(node, ast.Lambda):
        return "a lambda"
    if isinstance(node, ast.GeneratorExp):
        return "a generator"
    return None


def _read_notes(obj: Any) -> list[str]:
    try:
        from nstviz.capture.reads import find_non_input_reads

        reads = find_non_input_reads(obj)
    except Exception:
        return []
    if not reads:
        return []
    kinds = {
        "global": "global",
        "closure": "closure variable",
        "self_attribute": "attribute",
        "randomness": "randomness",
        "nonlocal_mutation": "state it changes",
    }
    listed = ", ".join(f"{r.name} ({kinds.get(r.kind, r.kind)})" for r in reads[:4])
    more = f" and {len(reads) - 4} more" if len(reads) > 4 else ""
    return [f"it reads {listed}{more}: nonstrict_trace bakes these in at trace time, so check the outputs"]


_NON_PYTREE_HINTS = ("Generator", "Iterator", "Callable", "IO")


def _signature_problems(func: types.FunctionType) -> list[str]:
    """Arguments that are visibly not pytree-able from annotations."""
    problems = []
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return problems
    for param in sig.parameters.values():
        ann = param.annotation
        if ann is inspect.Parameter.empty:
            continue
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", None) or repr(ann)
        if _annotation_refuses(str(text)):
            problems.append(
                f"argument `{param.name}` is annotated `{text}`, which is not a pytree: nonstrict_trace "
                "accepts tensors, numbers, and lists/tuples/dicts of them (GB0236 otherwise)"
            )
    return problems


_PYTREE_OK = re.compile(r"^(str|int|float|bool|None|NoneType|complex|Tensor|torch\.Tensor|list|tuple|dict)\b")


def _annotation_refuses(text: str) -> bool:
    """An annotation whose every alternative is a non-pytree type (``str | Callable`` is not)."""
    text = text.replace("typing.", "").strip()
    m = re.fullmatch(r"(?:Optional|Union)\[(.*)\]", text)
    inner = m.group(1) if m else text
    members = [t.strip() for t in re.split(r"\||,(?![^\[]*\])", inner) if t.strip()]
    if m and text.startswith("Optional"):
        members.append("None")
    if len(members) > 1 and any(_PYTREE_OK.match(t) for t in members):
        return False
    return any(h in text for h in _NON_PYTREE_HINTS)


# -- trying -----------------------------------------------------------------------------------------


@dataclass
class _Outcome:
    status: str
    improved: bool
    error: str | None = None
    gb_id: str | None = None
    on_trial: bool = False
    """Not an improvement, but kept on trial: a ``fullgraph=True`` failure's fatal break moved on
    to a later one, which can only be tried on top of it. Confirmed when a later attempt compiles."""


def _fatal(run: Run) -> Break | None:
    return next((b for b in run.breaks if b.fatal), None)


def _attempt_fields(
    outcome: _Outcome, run_name: str, before: Run, after: Run, check: OutputCheck, elapsed_s: float
) -> dict[str, Any]:
    """The :class:`Candidate` fields an attempt fills in, the same for marks and config remedies."""
    return {
        "status": outcome.status,
        "run": run_name,
        "breaks_before": len(before.breaks),
        "breaks_after": len(after.breaks),
        "outputs_match": check.match,
        "error": outcome.error,
        "gb_id": outcome.gb_id,
        "elapsed_s": round(elapsed_s, 3),
    }


def _judge(
    before: Run, after: Run, check: OutputCheck, candidate_gb_ids: set[str | None] | None = None
) -> _Outcome:
    before_keys = {b.id for b in before.breaks}
    introduced = [b for b in after.breaks if b.id not in before_keys]
    also = f"; the outputs also changed ({_mismatch_text(check)})" if check.match is False else ""
    failure = next(
        (b for b in introduced if b.gb_id in _NONSTRICT_FAILURE_GB or "nonstrict_trace" in (b.reason or "")),
        None,
    )
    change = judge_change(before, after, check)
    if change.improved and change.kind == "compiles_now":
        # a hard compile error is gone: the code compiles now (outputs checked against eager)
        note = f"the compile works now ({len(after.breaks)} break(s) remain)"
        if failure is not None:
            note += f"; the mark itself falls back to eager: {explain_failure(failure, candidate_gb_ids or ())}"
        return _Outcome("improved", True, note)
    if failure is not None:
        return _Outcome("failed", False, explain_failure(failure, candidate_gb_ids or ()) + also, failure.gb_id)
    if after.error and not before.error:
        fatal = _fatal(after)
        m = _GB_RE.search(after.error or "")
        text = explain_error(after.error, fatal)
        return _Outcome("failed", False, text + also, (fatal.gb_id if fatal else None) or (m.group(0) if m else None))
    n_before, n_after = len(before.breaks), len(after.breaks)
    if check.match is False:
        return _Outcome("worse", False, _mismatch_text(check))
    if change.improved:
        return _Outcome("improved", True, change.text)
    if change.kind == "moved" and _fatal(before) is not None and n_after <= n_before:
        # fullgraph=True: the fatal break moved on to a later one. Not an improvement (the
        # compile still fails), but the break behind it can only be tried on top of it.
        return _Outcome("no_change", False, change.text + " (kept on trial, to try the break behind it)", on_trial=True)
    if n_after > n_before and change.kind != "more_eager_frames":
        new = "; ".join(_short_break(b) for b in introduced[:3]) or "?"
        return _Outcome("worse", False, f"breaks went up from {n_before} to {n_after}: new break at {new} ({change.text})")
    if change.kind in ("more_graphs", "more_eager_frames"):
        return _Outcome("worse", False, change.text)
    same = change.kind == "same" and n_after == n_before  # _stayed_text names the sites
    return _Outcome("no_change", False, None if same else change.text)


def _stayed_text(before: Run, after: Run) -> str | None:
    """Why a ran attempt changed nothing, when nothing more specific is known: what stayed."""
    if len(after.breaks) != len(before.breaks):
        return None
    kept = [b for b in after.breaks if b.id in {x.id for x in before.breaks}]
    counted = ""
    if before.dynamo_graph_breaks is not None and after.dynamo_graph_breaks is not None:
        counted = f", Dynamo counted {before.dynamo_graph_breaks} -> {after.dynamo_graph_breaks} graph breaks"
    sites = "; ".join(_short_break(b) for b in kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
    return (
        f"the breaks stayed where they were ({_dynamo_graphs(before)} -> {_dynamo_graphs(after)} graphs{counted})"
        + (f": {sites}" if sites else "")
    )


def _dynamo_graphs(run: Run) -> int:
    return sum(1 for g in run.graphs if g.level == "dynamo")


def _mismatch_text(check: OutputCheck) -> str:
    bad = [d for d in check.details if d.match is False]
    if not bad:
        return "outputs differ from the baseline"
    d = bad[0]
    diff = f", max abs diff {d.max_abs_diff:.3g}" if d.max_abs_diff is not None else ""
    note = f": {d.note}" if d.note else ""
    more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
    return f"outputs differ from the baseline at {d.path}{diff}{note}{more}"


def run_advisor(
    baseline: Run,
    resolve: Callable[[str], Callable | None],
    try_marks: TryMarks,
    *,
    budget_s: float,
    max_attempts: int,
    progress: Callable[[str], None] | None = None,
    try_config: TryConfig | None = None,
    adapt: Callable[[str, Callable, Sequence[str]], Any] | None = None,
    register: Callable[[str, Callable], Any] | None = None,
    decorator: str = "torch._dynamo.nonstrict_trace",
    none_inputs_ok: bool = False,
) -> tuple[tuple[Candidate, ...], Recommendation | None]:
    """Propose, pre-check and try functions to trace non-strictly; recommend a set.

    Args:
        baseline: the run of the code as written.
        resolve: maps a name (``"helper"``, ``"Block.stats"``, ``"pkg.mod.helper"``) to the
            object it names in the user's namespace, or None.
        try_marks: runs the code again with the given functions marked non-strict, as a run
            of the given name (``"attempt-1"``), and returns the run and its output check
            against the baseline.
        budget_s: stop starting attempts after this many seconds (an attempt is not started
            when the time left looks shorter than one attempt).
        max_attempts: stop after this many attempts.
        progress: called with a one-line message before each attempt.
        try_config: runs the code with marks and ``torch._dynamo.config`` flags; when given,
            the flags the remaining breaks hint at are tried after the nonstrict candidates
            (at most ``MAX_CONFIG_ATTEMPTS`` attempts, on top of ``max_attempts``, within the
            time budget).
        adapt: ``adapt(qualname, function, caller_files)`` makes an adapter for a function
            refused for ``None`` inputs (GB0236, or an explicit None at its call site): an
            object passed to ``try_marks`` among the marks (see
            :mod:`nstviz.capture.adapters`), or None when it cannot be placed. Adapter
            attempts come after the plain marks, for the breaks still left.
        register: ``register(class_name, function)`` gives the user class named in a failed
            attempt's "Invalid input type ... (it got X)" as an object for ``try_marks``
            (registered with pytree for the attempt), or None when X is not a user class.
        decorator: how the pasted code spells nonstrict_trace (``torch.compiler.nonstrict_trace``
            where the user's torch has the public name, see
            :func:`nstviz.capture._torch_compat.nonstrict_trace_spelling`).
        none_inputs_ok: the user's torch takes ``None`` leaves as nonstrict_trace inputs, so an
            explicit ``None`` at a call site is no reason to refuse a candidate or to adapt it.

    Returns:
        ``(candidates, recommendation)``: every candidate with its status (tried ones in the
        order tried), and the recommended set (None when no candidate helped).
    """
    start = time.monotonic()
    say = progress or (lambda _msg: None)
    compiled_region = {_plain_function_name(c.function) for c in baseline.compiles if c.function}
    compiled_region |= {_plain_function_name(g.function) for g in baseline.graphs if g.function}
    already_marked = {m.qualname for m in baseline.marked}
    leaf_functions = {m.qualname for m in baseline.marked if m.decorator == "leaf_function"}
    checks = {"none_inputs_ok": none_inputs_ok, "leaf_functions": leaf_functions}

    def apply_code(kept: Sequence[_Proposal], config: dict[str, Any] | None = None) -> str:
        return _apply_code(kept, config, decorator=decorator)

    plan = plan_candidates(baseline)
    results: dict[str, Candidate] = {}
    order: list[str] = []
    queue: list[_Proposal] = []
    deferred: list[_Proposal] = []
    """Adapter and pytree attempts: tried after the plain marks, for breaks still left."""

    def queue_adapter(p: _Proposal, why: str, replaces: _Proposal | None = None) -> None:
        key = f"adapter: {p.name}"
        if adapt is None or p.obj is None or key in results:
            return
        q = replace(
            p, kind="adapter", key=key, problems=[], reasons=[why], breaks=list(p.breaks), replaces=replaces,
            break_gb_ids=list(p.break_gb_ids), callers=list(p.callers), notes=list(p.notes),
        )
        order.append(key)
        results[key] = replace(_candidate(q, "skipped"), function=key, kind="adapter", precheck=(), code=apply_code([q]))
        deferred.append(q)

    def queue_pytree(p: _Proposal, class_name: str, output: bool = False) -> None:
        if register is None or p.obj is None:
            return
        remedy = register(class_name, p.obj)
        if remedy is None:
            return
        key = f"pytree: {getattr(remedy, 'name', class_name)}"
        if key in results:
            return
        how = "through its adapter" if p.kind == "adapter" else "non-strictly"
        why = (
            f"{p.name} {'takes or returns' if output else 'got'} {class_name.rpartition('.')[2]}, which is not a pytree: "
            f"registered with torch.utils._pytree ({_pytree_how(remedy)}), {p.name} traced {how}"
        )
        q = replace(
            p, kind="pytree", key=key, remedy=remedy, problems=[], reasons=[why], breaks=list(p.breaks),
            via_adapter=p.kind == "adapter", replaces=None, with_marks=_marks_of(p),
            break_gb_ids=list(p.break_gb_ids), callers=list(p.callers), notes=list(p.notes),
        )
        order.append(key)
        results[key] = replace(_candidate(q, "skipped"), function=key, kind="pytree", precheck=(), code=apply_code([q]))
        deferred.append(q)

    for p in plan:
        _precheck(p, resolve, compiled_region, already_marked, **checks)
        key = p.name
        if key in results:
            continue
        order.append(key)
        if p.problems:
            results[key] = _candidate(p, "rejected")
            if p.none_args:
                queue_adapter(p, f"{p.name} is called with an explicit None, which nonstrict_trace refuses (GB0236)")
        else:
            results[key] = _candidate(p, "skipped")
            queue.append(p)

    current = baseline
    kept: list[_Proposal] = []
    attempts = 0
    durations: list[float] = []
    resolved: set[str] = set()
    last_check: OutputCheck | None = None
    last_run_name: str | None = None
    seen_objs: set[int] = set()
    trial: list[str] = []
    """Keys of the kept attempts on trial (see ``_Outcome.on_trial``), not yet confirmed."""
    confirmed: tuple[list[_Proposal], Run, OutputCheck | None] = ([], baseline, None)
    """The kept marks, run and check as of the last improvement."""

    while queue or deferred:
        if not queue:
            queue, deferred = deferred, []
        p = queue.pop(0)
        key = p.key or p.name
        if p.replaces is None and p.breaks and all(k in resolved for k in p.breaks):
            results[key] = replace(
                results[key],
                status="skipped",
                error="not needed: the marks kept already remove its breaks",
            )
            continue
        if p.kind == "nonstrict" and p.obj is not None and id(unwrap(p.obj)) in seen_objs:
            continue
        elapsed = time.monotonic() - start
        estimate = max(durations) if durations else baseline.wall_time_s
        if attempts >= max_attempts:
            results[key] = replace(
                results[key], status="skipped", error=f"attempt limit ({max_attempts}) reached"
            )
            continue
        if elapsed >= budget_s or elapsed + estimate > budget_s:
            if elapsed + estimate > budget_s and elapsed < budget_s:
                why = (
                    f"time budget ({budget_s:g} s): {budget_s - elapsed:.1f} s left, "
                    f"shorter than one run (~{estimate:.1f} s)"
                )
            else:
                why = f"time budget ({budget_s:g} s) used up after {elapsed:.1f} s"
            results[key] = replace(results[key], status="skipped", error=why)
            continue
        if p.kind == "adapter" and p.remedy is None:
            assert adapt is not None and p.obj is not None
            p.remedy = adapt(_local_name(p), p.obj, [c.file for c in p.callers])
            if p.remedy is None:
                results[key] = replace(
                    results[key], status="rejected",
                    precheck=("no place to install an adapter (a classmethod, or not found where it is looked up)",),
                )
                continue
        attempts += 1
        run_name = f"attempt-{attempts}"
        marks = _marks([k for k in kept if k is not p.replaces]) + _marks_of(p)
        say(f"{run_name}: trying {key} ({len(marks)} marked)")
        t0 = time.monotonic()
        try:
            run, check = try_marks(marks, run_name)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # a failure of the attempt itself, not of the user's code
            durations.append(time.monotonic() - t0)
            results[key] = replace(
                results[key],
                status="failed",
                run=run_name,
                breaks_before=len(current.breaks),
                error=f"{type(exc).__name__}: {exc}",
                gb_id=_gb(str(exc)),
                elapsed_s=durations[-1],
            )
            continue
        durations.append(time.monotonic() - t0)
        if p.kind == "nonstrict" and p.obj is not None:
            seen_objs.add(id(unwrap(p.obj)))
        outcome = _judge(current, run, check, set(p.break_gb_ids))
        if outcome.status == "worse" and check.match is False and p.notes:
            outcome.error = f"{outcome.error}; likely cause: {p.notes[0]}"
        if outcome.status in ("no_change", "worse") and outcome.error is None:
            outcome.error = _mark_warning(run, p.name) or _stayed_text(current, run)
        results[key] = replace(
            results[key], **_attempt_fields(outcome, run_name, current, run, check, durations[-1])
        )
        if not outcome.improved and p.kind in ("nonstrict", "adapter"):
            got = _rejected_input_type(outcome.error)
            if got == "NoneType" and p.kind == "nonstrict":
                queue_adapter(p, f"{p.name} failed with None inputs (GB0236): retried through an adapter")
            elif got is not None and got != "NoneType":
                # "non-fx-graphable type" (GB0251) does not say whether it was an input or the output
                queue_pytree(p, got, output="(it got " not in (outcome.error or ""))
        if outcome.improved and p.kind == "nonstrict" and _rejected_input_type(outcome.error) == "NoneType":
            # kept (the compile works now), but the mark itself falls back to eager on None inputs
            queue_adapter(
                p, f"the mark of {p.name} falls back to eager on None inputs (GB0236): tried through an "
                "adapter instead", replaces=p,
            )
        if outcome.improved and trial:
            for k in trial:  # together with this attempt, the marks on trial improve
                results[k] = replace(
                    results[k], status="improved",
                    error=f"{results[k].error}; improved together with {key}: {outcome.error}",
                )
            trial.clear()
        if outcome.on_trial:
            trial.append(key)
        if outcome.improved or outcome.on_trial:
            if p.replaces is not None and p.replaces in kept:
                kept.remove(p.replaces)
                old = results[p.replaces.name]
                results[p.replaces.name] = replace(old, error=f"{old.error}; replaced by {key}, which did better")
            kept.append(p)
            if outcome.improved:
                confirmed = (list(kept), run, check)
            after_keys = {b.id for b in run.breaks}
            resolved |= {b.id for b in current.breaks if b.id not in after_keys}
            revealed = [b for b in run.breaks if b.id not in {x.id for x in current.breaks}]
            current = run
            last_check = check
            last_run_name = run_name
            for q in plan_candidates(run, revealed):
                if q.name in results:
                    continue
                _precheck(q, resolve, compiled_region, already_marked, **checks)
                order.append(q.name)
                if q.problems:
                    results[q.name] = _candidate(q, "rejected")
                    if q.none_args:
                        queue_adapter(q, f"{q.name} is called with an explicit None, which nonstrict_trace refuses (GB0236)")
                else:
                    results[q.name] = _candidate(q, "skipped")
                    queue.append(q)

    if trial:  # never confirmed: back to the last improvement
        for k in trial:
            results[k] = replace(results[k], error=f"{results[k].error}; not kept: no later attempt made it compile")
        kept, current, last_check = list(confirmed[0]), confirmed[1], confirmed[2]
    config_kept: list[str] = []
    if try_config is not None and (current.breaks or current.error):
        from nstviz.advisor.remedies import config_code, config_plans

        marks = _marks(kept)
        plans = config_plans(current.breaks)
        config_attempts = 0
        for flags in plans:
            if set(flags) <= set(config_kept) or config_attempts >= MAX_CONFIG_ATTEMPTS:
                continue
            if len(flags) > 1 and config_kept:
                continue  # a single flag already helped; the other was tried on top of it
            name = "config: " + ", ".join(f"{f}=True" for f in flags)
            elapsed = time.monotonic() - start
            estimate = max(durations) if durations else baseline.wall_time_s
            if elapsed + estimate > budget_s:
                order.append(name)
                results[name] = Candidate(
                    function=name, why="the break's own hint", status="skipped", kind="config",
                    code=config_code(flags), error=f"time budget ({budget_s:g} s) used up",
                )
                continue
            attempts += 1
            config_attempts += 1
            run_name = f"attempt-{attempts}"
            applied = {f: True for f in (*config_kept, *flags)}
            say(f"{run_name}: trying {name}")
            t0 = time.monotonic()
            try:
                run, check = try_config(marks, applied, run_name)
            except KeyboardInterrupt:
                raise
            except Exception as exc:
                durations.append(time.monotonic() - t0)
                order.append(name)
                results[name] = Candidate(
                    function=name, why="the break's own hint", status="failed", kind="config",
                    code=config_code(flags), run=run_name, error=f"{type(exc).__name__}: {exc}",
                )
                continue
            durations.append(time.monotonic() - t0)
            outcome = _judge(current, run, check)
            if outcome.status == "no_change" and outcome.error is None:
                outcome.error = _stayed_text(current, run)
            hinted = [b for b in current.breaks if set(flags) & set(_flags_of(b))]
            order.append(name)
            results[name] = Candidate(
                function=name,
                why="hinted by the break at " + ", ".join(_short_break(b) for b in hinted[:3]),
                kind="config",
                code=config_code(flags),
                **_attempt_fields(outcome, run_name, current, run, check, durations[-1]),
            )
            if outcome.improved:
                config_kept += [f for f in flags if f not in config_kept]
                current = run
                last_check = check

    candidates = tuple(results[k] for k in order)
    if not kept and not config_kept:
        return candidates, None
    if not judge_change(baseline, current, last_check).improved:
        return candidates, None  # each kept step improved; the set as a whole must too
    functions = tuple(k.name for k in kept if k.kind != "adapter" and not k.via_adapter)
    recommendation = Recommendation(
        functions=functions,
        adapters=tuple(k.name for k in kept if k.kind == "adapter" or k.via_adapter),
        pytree=tuple(str(getattr(k.remedy, "name", k.remedy)) for k in kept if k.kind == "pytree"),
        code=apply_code(kept, {f: True for f in config_kept}),
        breaks_before=len(baseline.breaks),
        breaks_after=len(current.breaks),
        outputs_match=last_check.match if last_check is not None else None,
        config=tuple(config_kept),
        graph_breaks_before=baseline.dynamo_graph_breaks,
        graph_breaks_after=current.dynamo_graph_breaks,
        graphs_before=_dynamo_graphs(baseline),
        graphs_after=_dynamo_graphs(current),
        eager_frames_before=eager_frames(baseline),
        eager_frames_after=eager_frames(current),
    )
    del last_run_name
    return candidates, recommendation


def _local_name(p: _Proposal) -> str:
    """The proposal's name inside its module (``Class.method``, ``fn``)."""
    return p.name[len(p.module) + 1 :] if p.module and p.name.startswith(p.module + ".") else p.name


def _marks_of(p: _Proposal) -> tuple[Any, ...]:
    """What an attempt passes to ``try_marks`` for one proposal."""
    if p.kind == "adapter":
        return (p.remedy,)
    if p.kind == "pytree":
        return (*p.with_marks, p.remedy)
    return (p.obj,) if p.obj is not None else ()


def _marks(kept: Sequence[_Proposal]) -> tuple[Any, ...]:
    out: list[Any] = []
    for k in kept:
        out += [m for m in _marks_of(k) if not any(m is x for x in out)]
    return tuple(out)


_GOT_RE = re.compile(r"\(it got ([\w.]+)\)|non-fx-graphable type <class '([\w.]+)'>|input of type <([\w.]+)>")


def _rejected_input_type(error: str | None) -> str | None:
    """The type a failed nonstrict attempt was refused for (``NoneType``, ``Box``), if any."""
    m = _GOT_RE.search(error or "")
    return next((g for g in m.groups() if g), None) if m else None


def _pytree_how(remedy: Any) -> str:
    return "register_dataclass" if getattr(remedy, "flatten", None) is None else "register_pytree_node"


def _flags_of(b: Break) -> tuple[str, ...]:
    from nstviz.advisor.remedies import flags_hinted

    return flags_hinted(b)


def _mark_warning(run: Run, name: str) -> str | None:
    """The capture's warning for a mark that did not take effect in ``run`` (e.g. never called)."""
    for m in run.marked:
        if (m.qualname == name or name.endswith("." + m.qualname)) and not m.applied and m.warning:
            return m.warning
    return None


def _gb(text: str) -> str | None:
    m = _GB_RE.search(text or "")
    return m.group(0) if m else None


def _candidate(p: _Proposal, status: str) -> Candidate:
    why = "; ".join(dict.fromkeys(p.reasons))
    if p.notes:
        why += "; note: " + "; ".join(p.notes)
    return Candidate(
        function=p.name,
        why=why,
        status=status,  # type: ignore[arg-type]
        file=p.frame.file,
        line=_def_line(p) or p.frame.line,
        precheck=tuple(p.problems),
    )


def _def_line(p: _Proposal) -> int | None:
    code = _code_of(p.obj) if p.obj is not None else None
    return code.co_firstlineno if code is not None else None


def apply_code(
    kept: Sequence[_Proposal], config: dict[str, Any] | None = None, *, decorator: str = "torch._dynamo.nonstrict_trace"
) -> str:
    """Paste-ready code that applies the marks, adapters and pytree registrations (see :mod:`nstviz.advisor.code`)."""
    return _apply_code(kept, config, decorator=decorator)


def _apply_code(kept: Sequence[_Proposal], config: dict[str, Any] | None, *, decorator: str) -> str:
    from nstviz.advisor.code import Mark, recommendation_code

    marks, adapters, classes = [], [], []
    for p in kept:
        name = _local_name(p)
        where = f"{os.path.basename(p.frame.file)}:{_def_line(p) or p.frame.line}"
        mark = Mark(qualname=name, obj=p.obj, where=where, caller_files=[c.file for c in p.callers], forward=p.forward)
        if p.kind == "pytree":
            classes.append(p.remedy)
        if p.kind == "adapter" or p.via_adapter:
            if not any(m.obj is p.obj for m in adapters):
                adapters.append(mark)
            continue
        if not any(m.obj is p.obj for m in marks):
            marks.append(mark)
    return recommendation_code(marks, config, adapters=adapters, pytree=classes, decorator=decorator)
