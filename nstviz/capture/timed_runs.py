"""Timing the session's runs: which calls, which backend, with the run's marks, never failing it.

The capture session times a run right after it (``Session(timing=True)``), while the run's
remedies are still in effect (config flags, adapters, pytree registrations: the session and
the advisor's trials apply them around the run), with the run's non-strict marks applied again
for the measurement. What is timed:

- ``compare``: the call ``fn(*args, **kwargs)`` itself (it has no other side effects to fear);
- code (``trace_code``, ``%%nstrace --time``, ``nstviz run --time``): only the calls of
  ``torch.compile`` wrappers the run made (:func:`observed_body` notes them while the run goes),
  re-run as one unit by :func:`nstviz.capture.timing.time_calls`; the rest of the code is not
  run again.

How, and what it costs:

- **Right after the run** (the baseline, the nonstrict run): the compiled code the run made is
  still in Dynamo's cache, with the capture's backend, so the same compiled objects are called
  again, warmed up and measured against eager (:mod:`nstviz.capture.reused_timing`): nothing is
  compiled twice. The timing's graphs, compile time and first call are the captured run's own
  (recording included; :attr:`RunTiming.reused`, "(captured run)" in its text). The cost is the
  measured calls: about ``WARMUP + MIN_CALLS`` calls, or ``BUDGET_S`` seconds, per run, compiled
  and eager.
- **Later** (an advisor attempt timed to break a tie, after other runs reset Dynamo): the calls
  are compiled afresh with the timing backend (:func:`nstviz.capture.timing.time_calls`: a
  second compile of that attempt). That backend follows the capture's: ``"record"`` (no code
  generation) times with ``aot_eager`` (the same AOTAutograd graphs, run), ``"as_written"``
  with each compiled object's own backend, any other with itself.

A measurement that fails gives no timing and a note; the run and the capture are unaffected.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nstviz.capture import marking
from nstviz.capture._introspect import qualified_name
from nstviz.capture.observed_calls import CompiledCall, observing_compiled_calls
from nstviz.capture.reused_timing import CapturedFigures, rewrapped, time_warm
from nstviz.capture.runner import Body
from nstviz.capture.subject import Subject
from nstviz.capture.timing import ObservedCall, Sampling, time_calls
from nstviz.passes.improvement import dynamo_graphs
from nstviz.report import Run
from nstviz.report.timing import RunTiming

WARMUP = 1
"""Calls after the compiling one that are not measured."""
BUDGET_S = 0.3
"""Time for the measured calls of one run, compiled and eager together (seconds)."""
MIN_CALLS = 3
"""The fewest measured calls, even past the budget (a slow call is still measured thrice)."""
MAX_CALLS = 50
"""The most measured calls (a fast call stops here, well inside the budget)."""


def captured_compile_s(run: Run) -> float | None:
    """Dynamo's compile time of the run's frames (the sum over its compiles), or None when none has one."""
    times = [c.compile_time_s for c in run.compiles if c.compile_time_s is not None]
    return round(sum(times), 6) if times else None


def timing_backend(capture_backend: Any) -> Any:
    """The backend runs are timed with, for the capture's ``backend``."""
    if capture_backend == "record":
        return "aot_eager"
    return capture_backend


def observed_body(body: Body) -> tuple[Body, ObservedCalls]:
    """``body`` that notes the compiled calls it makes, and the list they are noted in."""
    seen = ObservedCalls()

    def observing(remark: Callable[[], None]) -> Any:
        with observing_compiled_calls() as observed:
            try:
                return body(remark)
            finally:
                seen.extend(observed)
                seen.note = observed.note

    return observing, seen


class ObservedCalls(list):  # type: ignore[type-arg]
    """The compiled calls one run made, and (``note``) why none could be observed, if so."""

    note: str | None = None


@dataclass(frozen=True, slots=True)
class LiveCode:
    """A run just made whose compiled code Dynamo still holds: timed as it is, not compiled again."""

    run: Run
    """The captured run (its graphs, wall time and compile times become the timing's)."""
    compiled: Sequence[ObservedCall]
    """The calls of its compiled objects (:func:`nstviz.capture.reused_timing.rewrapped`)."""
    eager: Sequence[ObservedCall]
    """The same calls, to run eagerly."""


def live_code(subject: Subject, run: Run, observed: Sequence[Any] | None, calls: Sequence[Any]) -> LiveCode | None:
    """The calls of the compiled objects ``run`` just made (``observed``, or ``compare``'s one call), and their eager twins."""
    if observed is None:  # compare: its one call, compiled as the run called it, and eagerly
        if subject.eager_body is None:
            return None
        quiet = (lambda: None,)  # the body's remark(): nothing to mark again
        return LiveCode(run=run, compiled=[(subject.body, quiet, {})], eager=[(subject.eager_body, quiet, {})])
    eager = [(c.original, c.args, c.kwargs) if isinstance(c, CompiledCall) else c for c in calls]
    return LiveCode(run=run, compiled=rewrapped(calls), eager=eager)


def time_run(
    name: str,
    calls: Sequence[Any],
    *,
    backend: Any,
    marks: Callable[[], Sequence[Callable[..., Any]]],
    lift: bool = False,
    failed: bool = False,
    eager: bool = True,
    live: LiveCode | None = None,
) -> tuple[RunTiming | None, str | None]:
    """Time the run ``name``'s ``calls`` with its marks applied: ``(timing, note)``.

    ``calls`` are ``(function, args, kwargs)`` or the :class:`ObservedCalls` of the run;
    ``marks`` returns the functions the run traced non-strictly; ``lift`` lifts the code's own
    non-strict marks (``baseline="strict"``); ``failed``: the run raised (not timed); ``eager``:
    also time the calls eagerly (the advisor's attempts do not: eager is the baseline's).
    ``live``: the run's compiled code is still in Dynamo's cache, so it is timed as it is
    (:func:`~nstviz.capture.reused_timing.time_warm`, no second compile; the compile figures
    are the captured run's); without it, ``calls`` are compiled afresh
    (:func:`~nstviz.capture.timing.time_calls`).
    Never raises (but KeyboardInterrupt): a failure is a note.
    """
    note_prefix = f"{name}: not timed"
    if failed:
        return None, f"{note_prefix}: the run raised"
    if isinstance(calls, ObservedCalls) and calls.note is not None:
        return None, f"{note_prefix}: {calls.note}"
    if not calls:
        return None, f"{note_prefix}: it made no call of a compiled function or module"
    try:
        with contextlib.ExitStack() as stack:
            if lift:
                stack.enter_context(marking.source_marks_lifted())
            stack.enter_context(marking.marked(list(marks())))
            if live is not None:
                timing = _time_live(live, backend, eager)
            else:
                timing = time_calls(
                    calls,
                    backend=timing_backend(backend),
                    eager=eager,
                    warmup=WARMUP,
                    budget_s=BUDGET_S,
                    min_calls=MIN_CALLS,
                    max_calls=MAX_CALLS,
                )
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the measurement must never fail the capture
        return None, f"{note_prefix}: timing raised {type(exc).__name__}: {exc}"[:500]
    return timing, None


def _time_live(live: LiveCode, backend: Any, eager: bool) -> RunTiming:
    """The run's own compiled code timed as it is, its compile figures the captured run's."""
    captured = CapturedFigures(
        graphs=dynamo_graphs(live.run),
        first_call_s=live.run.wall_time_s,
        compile_s=captured_compile_s(live.run),
        backend=backend if isinstance(backend, str) else qualified_name(backend),
    )
    sampling = Sampling(warmup=WARMUP, budget_s=BUDGET_S, min_calls=MIN_CALLS, max_calls=MAX_CALLS)
    return time_warm(live.compiled, live.eager if eager else None, captured, sampling)


__all__ = [
    "BUDGET_S", "MAX_CALLS", "MIN_CALLS", "WARMUP", "LiveCode", "ObservedCalls", "captured_compile_s", "live_code", "observed_body",
    "time_run", "timing_backend",
]
