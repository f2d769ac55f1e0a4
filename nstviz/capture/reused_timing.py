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
from typing import Any

import torch

from nstviz.capture import _torch_compat, state
from nstviz.capture.observed_calls import CompiledCall
from nstviz.capture.timing import (
    DEFAULT_BUDGET_S,
    DEFAULT_MAX_CALLS,
    DEFAULT_MIN_CALLS,
    DEFAULT_WARMUP,
    ObservedCall,
    _check_counts,
    _Discard,
    _eager_stance,
    _rounds,
    _run_all,
)
from nstviz.errors import UsageError
from nstviz.report.timing import CallTiming, RunTiming


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


def time_warm(
    compiled_calls: Sequence[ObservedCall],
    eager_calls: Sequence[ObservedCall] | None,
    *,
    graphs: int,
    first_call_s: float,
    compile_s: float | None,
    backend: str,
    warmup: int = DEFAULT_WARMUP,
    budget_s: float | None = DEFAULT_BUDGET_S,
    min_calls: int = DEFAULT_MIN_CALLS,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> RunTiming:
    """Time calls whose compiled code Dynamo holds already (a captured run's), without compiling anew.

    Steps 3 and 4 of the module docstring only: warm-up, then the interleaved rounds, with the
    same state put back. The compile figures are not measured here: ``graphs``,
    ``first_call_s`` and ``compile_s`` are given (what the captured run measured), and the
    timing says so (:attr:`RunTiming.reused`). A frame compiled during the calls (a guard that
    fails outside the captured run) counts in :attr:`RunTiming.recompiles`.

    Args:
        compiled_calls: ``(callable, args, kwargs)`` per call, in order: the compiled objects the
            run called (see :func:`rewrapped`); one "call" is the whole sequence.
        eager_calls: the same calls to run eagerly (under ``force_eager``), or None.
        graphs: the Dynamo graphs the run compiled.
        first_call_s: the captured run's wall time.
        compile_s: Dynamo's compile time of the run's frames, or None.
        backend: the backend the run compiled with (its name, as shown).
        warmup: sequences run first and not measured.
        budget_s: time for the measured sequences, compiled and eager together (None: no bound).
        min_calls: the fewest sequences measured (even past the budget).
        max_calls: the most sequences measured.

    Returns:
        The measurement (``reused`` set).

    Raises:
        UsageError: no calls, or bad counts. What the calls raise propagates, with the state restored.
    """
    _check_counts(warmup, None, min_calls, max_calls, budget_s)
    if not compiled_calls:
        raise UsageError("time_warm needs at least one (function, args, kwargs) call")
    snapshot = state.StateSnapshot.take()
    started = time.perf_counter()
    try:
        sys.stdout = sys.stderr = _Discard()  # the calls run dozens of times (restored below)

        def run_eager() -> None:
            with _eager_stance():
                _run_all(eager_calls or ())

        with _torch_compat.compilation_metrics_room():
            before = _torch_compat.compilation_metrics()
            samples = _rounds(
                lambda: _run_all(compiled_calls), run_eager if eager_calls is not None else None,
                warmup=warmup, calls=None, budget_s=budget_s, min_calls=min_calls, max_calls=max_calls,
            )
            seen = {id(m) for m in before}
            recompiles = sum(1 for m in _torch_compat.compilation_metrics() if id(m) not in seen)
    finally:
        snapshot.restore()
    return RunTiming(
        graphs=graphs,
        first_call_s=first_call_s,
        compile_s=compile_s,
        steady=CallTiming.of(samples["compiled"], warmup=warmup),
        eager=CallTiming.of(samples["eager"], warmup=warmup) if "eager" in samples else None,
        recompiles=recompiles,
        backend=backend,
        synchronized=torch.cuda.is_available() and torch.cuda.is_initialized(),
        budget_s=budget_s,
        reused=True,
        cost_s=round(time.perf_counter() - started, 4),
    )


__all__ = ["rewrapped", "time_warm"]
