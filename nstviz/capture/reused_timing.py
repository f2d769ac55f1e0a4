"""Timing a captured run's own compiled code: no fresh compile, the capture's compile figures kept.

:func:`nstviz.capture.timing.time_calls` compiles everything afresh (a clean cold start, at the
price of a second compile of the whole program). Right after a captured run, though, Dynamo still
holds the code that run compiled, with the same backend: calling the same compiled objects again
runs that code (cache hits). :func:`time_warm` times exactly that, steady state after warm-up,
eager alongside; the compile figures (graphs, compile time, first call) are the captured run's own,
and :attr:`RunTiming.reused <nstviz.report.timing.RunTiming.reused>` says so.

What runs while the clock runs is the compiled code and the user's Python around it: the run's
trace-log handler, backend interception and source-line hook are off again (they are on only inside
:func:`nstviz.capture.runner.execute`), and the recording backend's per-graph counter is switched
off when the run ends (:meth:`nstviz.capture.recorder.Recorder.release`), so its wrapper costs one
flag test per graph call.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from nstviz.capture import _torch_compat, state
from nstviz.capture.observed_calls import CompiledCall
from nstviz.capture.timing import (
    ObservedCall,
    Sampling,
    _Discard,
    _eager_runner,
    _rounds,
    _run_all,
)
from nstviz.errors import UsageError
from nstviz.report.timing import RunTiming


def rewrapped(observed: Sequence[ObservedCall | CompiledCall]) -> list[ObservedCall]:
    """The observed calls as calls of their own compiled objects (no new compile: Dynamo's cache serves them).

    A :class:`CompiledCall` is called through a new wrapper of the same Dynamo context (backend
    and flags), so the code objects' cache entries the run compiled are found again.
    """
    wrappers: dict[tuple[int, int], Callable[..., Any]] = {}
    calls: list[ObservedCall] = []
    for item in observed:
        if isinstance(item, CompiledCall):
            key = (id(item.context), id(getattr(item.original, "__func__", item.original)))
            if key not in wrappers:
                wrappers[key] = item.context(item.original)
            calls.append((wrappers[key], item.args, item.kwargs))
        else:
            calls.append(item)
    return calls


@dataclass(frozen=True, slots=True)
class CapturedFigures:
    """What the captured run measured, which :func:`time_warm` reports as its compile figures.

    Attributes:
        graphs: the Dynamo graphs the run compiled.
        first_call_s: the captured run's wall time.
        compile_s: Dynamo's compile time of the run's frames, or None.
        backend: the backend the run compiled with (its name, as shown).
    """

    graphs: int
    first_call_s: float
    compile_s: float | None
    backend: str


def time_warm(
    compiled_calls: Sequence[ObservedCall],
    eager_calls: Sequence[ObservedCall] | None,
    captured: CapturedFigures,
    sampling: Sampling | None = None,
) -> RunTiming:
    """Time calls whose compiled code Dynamo holds already (a captured run's), without compiling anew.

    Steps 3 and 4 of the module docstring only: warm-up, then the interleaved rounds, with the
    same state put back. The compile figures are not measured here: they are ``captured``'s
    (what the captured run measured), and the timing says so (:attr:`RunTiming.reused`). A
    frame compiled during the calls (a guard that fails outside the captured run) counts in
    :attr:`RunTiming.recompiles`.

    Args:
        compiled_calls: ``(callable, args, kwargs)`` per call, in order: the compiled objects the
            run called (see :func:`rewrapped`); one "call" is the whole sequence.
        eager_calls: the same calls to run eagerly (under ``force_eager``), or None.
        captured: the captured run's graphs, wall time, compile time and backend.
        sampling: the warm-up and the measured sequences (rounds until its budget, at least
            ``min_calls``, at most ``max_calls``, unless it gives ``calls``); default :class:`Sampling`'s.

    Returns:
        The measurement (``reused`` set).

    Raises:
        UsageError: no calls, or bad counts. What the calls raise propagates, with the state restored.
    """
    sampling = (sampling or Sampling()).checked()
    if not compiled_calls:
        raise UsageError("time_warm needs at least one (function, args, kwargs) call")
    snapshot = state.StateSnapshot.take()
    started = time.perf_counter()
    try:
        sys.stdout = sys.stderr = _Discard()  # the calls run dozens of times (restored below)
        with _torch_compat.compilation_metrics_room():
            before = _torch_compat.compilation_metrics()
            samples = _rounds(lambda: _run_all(compiled_calls), _eager_runner(eager_calls), sampling)
            seen = {id(m) for m in before}
            recompiles = sum(1 for m in _torch_compat.compilation_metrics() if id(m) not in seen)
    finally:
        snapshot.restore()
    steady, eager = sampling.call_timings(samples)
    return RunTiming(
        graphs=captured.graphs,
        first_call_s=captured.first_call_s,
        compile_s=captured.compile_s,
        steady=steady,
        eager=eager,
        recompiles=recompiles,
        backend=captured.backend,
        synchronized=torch.cuda.is_available() and torch.cuda.is_initialized(),
        budget_s=sampling.budget_s if sampling.calls is None else None,
        reused=True,
        cost_s=round(time.perf_counter() - started, 4),
    )


__all__ = ["CapturedFigures", "rewrapped", "time_warm"]
