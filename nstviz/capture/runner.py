"""Execute one run of the user's code under capture and turn it into a :class:`Run`.

A run: ``torch._dynamo.reset()``; the RNGs set to the given state; the chosen functions
marked non-strict; the structured-trace handler and the recording backend installed;
stdout/stderr captured; the code executed. User exceptions are recorded in the Run
(``KeyboardInterrupt`` is re-raised after everything is undone).
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from nstviz.capture import _torch_compat, marking, state
from nstviz.capture.convert import fatal_breaks
from nstviz.capture.recorder import Backend, NonstrictCall, Recorder
from nstviz.capture.trace_log import collecting
from nstviz.report import Run
from nstviz.report.facts import error_kind
from nstviz.tracing.breaks import (
    BreakHit,
    break_from_artifact,
    caused_per_event,
    compiles_from_events,
    link_breaks,
)
from nstviz.tracing.stacks import StackTable

MAX_CAPTURED_OUTPUT = 200_000
"""Characters of stdout/stderr kept per run."""


class _Capture(io.TextIOBase):
    """A text stream that records what is written and optionally passes it through."""

    def __init__(self, passthrough: Any | None) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.size = 0
        self.passthrough = passthrough

    @property
    def encoding(self) -> str:  # libraries (tqdm, rich) read it
        return getattr(self.passthrough, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:
        return "strict"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.size < MAX_CAPTURED_OUTPUT:
            self.parts.append(text)
            self.size += len(text)
        if self.passthrough is not None:
            self.passthrough.write(text)
        return len(text)

    def flush(self) -> None:
        if self.passthrough is not None:
            self.passthrough.flush()

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        return "".join(self.parts)[:MAX_CAPTURED_OUTPUT]


@contextlib.contextmanager
def captured_output(echo: bool) -> Iterator[tuple[_Capture, _Capture]]:
    """Capture ``sys.stdout``/``sys.stderr``; restore them after."""
    saved = sys.stdout, sys.stderr
    out, err = _Capture(saved[0] if echo else None), _Capture(saved[1] if echo else None)
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = saved


@dataclass(slots=True)
class RunResult:
    """A finished run: the :class:`Run` plus live objects the API still needs."""

    run: Run
    value: Any = None
    exception: BaseException | None = None
    nonstrict_calls: list[NonstrictCall] = field(default_factory=list)
    leaf_calls: list[NonstrictCall] = field(default_factory=list)
    """Calls of functions the code decorated with ``leaf_function`` (shown like its own marks)."""
    notes: list[str] = field(default_factory=list)
    marked_ids: frozenset[int] = frozenset()


Body = Callable[[Callable[[], None]], Any]
"""The code to run. It receives ``remark()``, to call whenever the code may have (re)defined
functions to mark (``trace_code`` calls it after every top-level statement)."""


@dataclass(slots=True)
class _Live:
    """What a run under capture holds while the code runs (see :func:`_capturing`), and its outcome."""

    latch: Any
    collector: Any
    out: _Capture
    err: _Capture
    marked_ids: set[int]
    remark: Callable[[], None]
    value: Any = None
    """What the code returned."""
    error: BaseException | None = None
    """What the code raised (the user's exception: a finding)."""


@contextlib.contextmanager
def _capturing(
    recorder: Recorder,
    marks: Callable[[], Sequence[Callable[..., Any]]],
    *,
    lift_source_marks: bool,
    echo: bool,
) -> Iterator[_Live]:
    """Install what a run needs around the code; undo it on the way out, also on errors.

    That is: the interrupt latch, the marks (``remark()`` adds the ones found since), the trace
    handler, the recorder, the captured output.
    """
    hooks_before = _torch_compat.dynamo_global_hooks()
    marked_ids: set[int] = set()
    with contextlib.ExitStack() as stack:
        latch = stack.enter_context(state.interrupt_latch())
        if lift_source_marks:
            stack.enter_context(marking.source_marks_lifted())

        def remark() -> None:
            functions = [f for f in marks() if id(f) not in marked_ids]
            if functions:
                marked_ids.update(stack.enter_context(marking.marked(functions)))

        remark()
        collector = stack.enter_context(collecting())
        stack.enter_context(recorder.active())
        out, err = stack.enter_context(captured_output(echo))
        # the run's Dynamo globals must not make torch print KeyErrors at interpreter exit
        stack.callback(_torch_compat.quiet_dynamo_cleanups, hooks_before)
        yield _Live(latch=latch, collector=collector, out=out, err=err, marked_ids=marked_ids, remark=remark)


def execute(
    name: str,
    body: Body,
    *,
    backend: Backend,
    stacks: StackTable,
    rng: dict[str, Any],
    marks: Callable[[], Sequence[Callable[..., Any]]] = tuple,
    lift_source_marks: bool = False,
    echo: bool = False,
) -> RunResult:
    """Run ``body`` once under capture (see the module docstring).

    Args:
        name: the run name (``"baseline"``, ``"nonstrict"``, ``"attempt-1"``).
        body: the code to run (see :data:`Body`).
        backend: ``"record"``, ``"inductor"``, ``"as_written"``, a backend name or callable.
        stacks: the Report's interned stack table.
        rng: RNG states to start from (:func:`nstviz.capture.state.rng_state`).
        marks: returns the functions to trace non-strictly; called again by ``remark()``.
        lift_source_marks: run with ``nonstrict_trace`` marks in the code lifted.
        echo: also pass the printed output through to the real stdout/stderr.
    """
    _torch_compat.dynamo_reset()
    state.set_rng_state(rng)
    recorder = Recorder(backend, stacks)
    count = _BreakCount(before=_torch_compat.graph_break_count())
    start = time.perf_counter()
    with _capturing(recorder, marks, lift_source_marks=lift_source_marks, echo=echo) as live:
        try:
            live.value = body(live.remark)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the user's code failed: a finding, not a crash
            live.error = exc.with_traceback(_without_nstviz_frames(exc.__traceback__))
    wall = time.perf_counter() - start
    if live.latch.tripped:  # a Ctrl-C that torch swallowed (see state.InterruptLatch)
        raise KeyboardInterrupt(f"interrupted during the {name} run")
    if count.before is not None:
        count.after = _torch_compat.graph_break_count()
    result = _finished(name, recorder, live, wall, count)
    recorder.release()
    return result


@dataclass(slots=True)
class _BreakCount:
    """Dynamo's own graph-break counter before and after the run (None: this torch has none)."""

    before: int | None
    after: int | None = None

    def caused(self) -> int | None:
        """The graph breaks the run caused, by the counter (None without one)."""
        if self.before is None or self.after is None:
            return None
        return max(0, self.after - self.before)


def _finished(name: str, recorder: Recorder, live: _Live, wall: float, count: _BreakCount) -> RunResult:
    """The finished run: what was recorded and logged while the code ran, as a :class:`Run` (plain values)."""
    error = live.error
    hits = _break_hits(live.collector, error, count)
    graphs = tuple(recorder.graphs)
    notes = _run_notes(name, recorder, live.collector, graphs)
    compiles = compiles_from_events(live.collector.events, graphs)
    run = Run(
        name=name,
        graphs=graphs,
        breaks=link_breaks(hits, compiles, graphs),
        compiles=compiles,
        **_error_fields(error),
        stdout=live.out.text(),
        stderr=live.err.text(),
        wall_time_s=round(wall, 4),
        graph_runs=tuple(recorder.graph_runs),
        dynamo_graph_breaks=count.caused(),
    )
    return RunResult(
        run=run,
        value=live.value,
        exception=error,
        nonstrict_calls=list(recorder.nonstrict_calls),
        leaf_calls=list(recorder.leaf_calls),
        notes=notes,
        marked_ids=frozenset(live.marked_ids),
    )


def _break_hits(collector: Any, error: BaseException | None, count: _BreakCount) -> list[BreakHit]:
    """The run's break hits: one per logged break artifact, then the fatal ones (compile errors, ``error``).

    Each logged hit carries the increase of Dynamo's graph-break counter after it.
    """
    hits: list[BreakHit] = []
    events = collector.of_kind("dynamo_graph_break_reason")
    caused: list[int | None]
    if count.before is None or count.after is None:  # no counter: break_from_artifact reads the message
        caused = [None] * len(events)
    else:
        caused = list(caused_per_event([int(e.metadata.get("counter", 0)) for e in events], count.before, count.after))
    for event, n in zip(events, caused, strict=True):
        brk = break_from_artifact(event, caused=n)  # n: Dynamo's counter increase after this artifact
        if brk is not None:
            hits.append(brk)
    hits.extend(fatal_breaks(error, collector.compile_errors, {(e.frame_id, e.compile_id) for e in events}))
    collector.compile_errors.clear()  # their tracebacks hold Dynamo's frames: drop them now
    return hits


def _run_notes(name: str, recorder: Recorder, collector: Any, graphs: tuple[Any, ...]) -> list[str]:
    """What the run's notes say: the recorder's errors, a failed trace handler, truncated graphs."""
    notes = list(recorder.errors)
    trace_note = collector.failure_note(name)
    if trace_note is not None:
        notes.append(trace_note)
    for g in graphs:
        if g.truncated:
            notes.append(f"{name}: graph {g.id} has {g.op_count} ops; only the first {len(g.nodes)} nodes are kept")
    return notes


def _error_fields(error: BaseException | None) -> dict[str, Any]:
    """The :class:`Run` fields that describe the exception the code raised (all None without one)."""
    return {
        "error": _error_text(error),
        "error_type": type(error).__name__ if error is not None else None,
        "error_kind": None
        if error is None
        else error_kind(type(error).__name__, _error_text(error), _torch_compat.dynamo_exception_names()),
        "error_traceback": _traceback_text(error),
    }


_NSTVIZ_DIR = __file__.rsplit("/capture/", 1)[0] + "/"


def _without_nstviz_frames(tb: Any) -> Any:
    """The traceback from the first frame that is not nstviz's (the user's code).

    Keeps the traceback short for users, and keeps nstviz's own frames (which hold the whole
    capture session) from being kept alive by a Report that holds the exception.
    """
    first = tb
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_NSTVIZ_DIR):
        tb = tb.tb_next
    return tb if tb is not None else first


def _error_text(exc: BaseException | None) -> str | None:
    if exc is None:
        return None
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    if first.endswith("raised:") and len(lines) > 1:
        # BackendCompilerFailed: "backend='x' raised:" says where, the next line what
        first = f"{first} {lines[1]}"
    return f"{type(exc).__name__}: {first}"[:4000] if first else type(exc).__name__


def _traceback_text(exc: BaseException | None) -> str | None:
    if exc is None:
        return None
    return "".join(traceback.format_exception(exc))[-20_000:]
