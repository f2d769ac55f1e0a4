"""What a fix buys, measured: graphs, compile time and time per call of one compiled run.

Plain data, like the rest of :mod:`nstviz.report` (frozen dataclasses of JSON-native values,
encoded and decoded by the Report's codec), plus the two things every consumer needs: the
order in which attempts rank (:func:`rank_key`: fewest graphs, then least steady-state time)
and the one-line text every renderer shows (:func:`format_timing`). The measurement itself is
live and lives in :mod:`nstviz.capture.timing`; this module imports neither torch nor the
capture engine.

Vocabulary:

- **first call**: the first call of the compiled function, in a fresh compile: Dynamo traces,
  the backend compiles, the code runs once (the "cold start"). A timing of a captured run's own
  compiled code (:attr:`RunTiming.reused`, what ``compare()`` does) takes the captured run's
  wall time and compile time instead, recording included, and its text says "(captured run)".
- **compile time**: Dynamo's own measure of that compile (the sum over the compiled frames of
  ``entire_frame_compile_time_s`` in ``torch._dynamo.utils``' compilation metrics: tracing and
  the backend's compile, not the run).
- **warm-up**: calls after the first one that are made but not measured (caches, allocators).
- **steady state**: the calls measured after warm-up; summarised by their median and quartiles.
- **spread**: half the interquartile range, ``(q3 - q1) / 2`` (written ``±``): robust to the
  odd slow call a loaded machine makes, unlike min..max (kept too).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

_FRZ = {"frozen": True, "slots": True, "kw_only": True}

Verdict = Literal["faster", "slower", "same"]


@dataclass(**_FRZ)
class CallTiming:
    """Wall time per call of one function over several calls (seconds).

    ``q1_s``/``q3_s`` are the quartiles (Python's ``statistics.quantiles``, "inclusive"), so
    ``min_s <= q1_s <= median_s <= q3_s <= max_s``; :attr:`spread_s` is half their distance.
    """

    median_s: float
    q1_s: float
    q3_s: float
    min_s: float
    max_s: float
    calls: int
    """Calls measured (warm-up excluded)."""
    warmup: int = 0
    """Calls made before the measured ones and not counted (the compiling first call excluded)."""
    text: str = field(init=False, metadata={"derived": True})
    """:func:`format_call` of this timing (``"12.3 ms ± 0.4 (median of 20)"``), for the viewer."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", format_call(self))

    @property
    def spread_s(self) -> float:
        """Half the interquartile range, the ``±`` of :func:`format_timing`."""
        return (self.q3_s - self.q1_s) / 2

    @classmethod
    def of(cls, samples: Sequence[float], *, warmup: int = 0) -> CallTiming:
        """Summarise per-call wall times (seconds, at least one, each finite and >= 0).

        Raises:
            ValueError: no samples, or a negative or non-finite one.
        """
        values = sorted(float(s) for s in samples)
        if not values:
            raise ValueError("CallTiming.of needs at least one sample")
        if any(not math.isfinite(v) or v < 0 for v in values):
            raise ValueError(f"per-call times must be finite and >= 0, got {values[:5]!r:.120}")
        if len(values) == 1:
            q1 = q3 = values[0]
        else:
            q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
        return cls(
            median_s=statistics.median(values), q1_s=q1, q3_s=q3, min_s=values[0], max_s=values[-1],
            calls=len(values), warmup=warmup,
        )


@dataclass(**_FRZ)
class RunTiming:
    """One compiled run timed: its graphs, its compile, its steady state, and eager alongside."""

    graphs: int
    """Dynamo graphs the first call compiled (what ``torch._dynamo.explain`` counts)."""
    first_call_s: float
    """Wall time of the first compiled call (trace, compile, run once): the cold start."""
    compile_s: float | None = None
    """Dynamo's own compile time of the first call's frames (see the module docstring); None
    when this torch keeps no compilation metrics."""
    steady: CallTiming | None = None
    """The compiled function per call after warm-up; None when it was not measured."""
    eager: CallTiming | None = None
    """The same call run eagerly, measured interleaved with the compiled calls; None when not measured."""
    recompiles: int = 0
    """Graphs compiled after the first call (during warm-up or the measured calls): guards
    that fail from call to call. Non-zero means ``steady`` includes compiling."""
    backend: str = ""
    """The backend compiled with (``"inductor"``, ``"aot_eager"``...)."""
    synchronized: bool = False
    """True when each call was followed by ``torch.cuda.synchronize()`` (a CUDA device was in use)."""
    budget_s: float | None = None
    """The time budget the measured calls were bounded by, if any."""
    reused: bool = False
    """True: the captured run's own compiled code was timed, not a fresh compile of it (no second
    compile). ``graphs``, ``compile_s`` and ``first_call_s`` are then the captured run's figures
    (its Dynamo graphs, Dynamo's compile time of its frames, its wall time), nstviz's recording
    included; ``steady`` and ``eager`` are measured with the recording off."""
    cost_s: float | None = None
    """Wall time the measurement itself took (a fresh compile, if any, the warm-up and the
    measured calls): what timing this run added to the capture."""
    text: str = field(init=False, metadata={"derived": True})
    """:func:`format_timing` of this timing (the one line every renderer shows)."""
    compile_text: str = field(init=False, metadata={"derived": True})
    """The compile time (or, without it, the first call's time), formatted: ``"4.21 s"``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", format_timing(self))
        seconds = self.compile_s if self.compile_s is not None else self.first_call_s
        object.__setattr__(self, "compile_text", format_seconds(seconds))

    @property
    def speedup(self) -> float | None:
        """Eager median over compiled median (> 1: compiled is faster), or None."""
        if self.steady is None or self.eager is None or self.steady.median_s <= 0:
            return None
        return self.eager.median_s / self.steady.median_s


def steady_median(timing: RunTiming | None) -> float:
    """The steady-state median of ``timing``, or +inf when there is none (sorts last)."""
    if timing is None or timing.steady is None:
        return math.inf
    return timing.steady.median_s


def rank_key(graphs: int | None, timing: RunTiming | None = None) -> tuple[float, float, float]:
    """Sort key of an attempt: fewest graphs, then least steady-state time, then least compile time.

    ``graphs`` is the attempt's Dynamo graph count (None: unknown, sorts last); ``timing`` its
    measurement (None, or no steady state: sorts after the timed ones with as many graphs).
    Use as ``sorted(attempts, key=lambda a: rank_key(a.graphs, a.timing))``. Times rank as
    measured; whether a difference is beyond the noise is :func:`compare_steady`'s question.
    """
    g = math.inf if graphs is None else float(graphs)
    compile_s = math.inf if timing is None or timing.compile_s is None else timing.compile_s
    return (g, steady_median(timing), compile_s)


def ranked(items: Iterable[tuple[str, int | None, RunTiming | None]]) -> list[str]:
    """The names of ``(name, graphs, timing)`` items, best first (:func:`rank_key`; ties keep order)."""
    return [name for name, graphs, timing in sorted(items, key=lambda it: rank_key(it[1], it[2]))]


def best_index(items: Sequence[tuple[int | None, RunTiming | None]]) -> int:
    """Which of ``(graphs, timing)`` items, made in order, to choose: the fewest graphs, then the fastest.

    Among the items with the fewest graphs (None: unknown, never fewest unless all are) the
    latest is chosen, unless an earlier one is measurably faster (:func:`compare_steady` of
    their steady states: the interquartile ranges do not overlap), so that noise never trades
    the latest item for an earlier one. Without timings, the latest with the fewest graphs.

    Raises:
        ValueError: no items.
    """
    if not items:
        raise ValueError("best_index needs at least one item")
    keys = [math.inf if g is None else g for g, _ in items]
    fewest = min(keys)
    tied = [i for i, k in enumerate(keys) if k == fewest]
    best = tied[-1]
    for i in reversed(tied[:-1]):
        mine, theirs = items[best][1], items[i][1]
        if mine is not None and theirs is not None and mine.steady is not None and theirs.steady is not None:
            if compare_steady(mine.steady, theirs.steady) == "faster":
                best = i
    return best


def compare_steady(before: CallTiming, after: CallTiming) -> Verdict:
    """Whether ``after`` is measurably faster than ``before``, slower, or the same.

    Measurably means the interquartile ranges do not overlap: ``after``'s third quartile is
    below ``before``'s first (faster) or its first above ``before``'s third (slower). A single
    slow call cannot decide it, and a difference inside the noise reads ``"same"``.
    """
    if after.q3_s < before.q1_s:
        return "faster"
    if after.q1_s > before.q3_s:
        return "slower"
    return "same"


def _unit(seconds: float) -> tuple[float, str]:
    scale = abs(seconds)
    for factor, unit in ((1.0, "s"), (1e-3, "ms")):
        if scale >= factor:
            return factor, unit
    return 1e-6, "µs"


def _decimals(value: float) -> int:
    """Decimals that give ``value`` 3 significant digits (none for 100 and more)."""
    if value == 0:
        return 0
    return max(0, 2 - math.floor(math.log10(abs(value))))


def format_seconds(seconds: float) -> str:
    """``seconds`` with 3 significant digits in s, ms or µs: ``"4.21 s"``, ``"12.3 ms"``, ``"51.0 µs"``."""
    factor, unit = _unit(seconds)
    value = seconds / factor
    return f"{value:.{_decimals(value)}f} {unit}"


def format_call(timing: CallTiming) -> str:
    """``"12.3 ms ± 0.4 (median of 20)"``: the median, the spread in its unit and decimals, the calls."""
    factor, unit = _unit(timing.median_s)
    median = timing.median_s / factor
    digits = _decimals(median)
    return f"{median:.{digits}f} {unit} ± {timing.spread_s / factor:.{digits}f} (median of {timing.calls})"


def format_timing(timing: RunTiming) -> str:
    """One line: ``"12.3 ms ± 0.4 (median of 20), eager 15.1 ms; compile 4.2 s; 1 graph"``.

    Parts that were not measured are left out; recompiles during timing are said.
    """
    parts: list[str] = []
    if timing.steady is not None:
        head = format_call(timing.steady)
        if timing.eager is not None:
            head += f", eager {format_seconds(timing.eager.median_s)}"
        parts.append(head)
    elif timing.eager is not None:
        parts.append(f"eager {format_call(timing.eager)}")
    captured = " (captured run)" if timing.reused else ""
    if timing.compile_s is not None:
        parts.append(f"compile {format_seconds(timing.compile_s)}{captured}")
    else:
        parts.append(f"first call {format_seconds(timing.first_call_s)}{captured}")
    parts.append(f"{timing.graphs} graph" + ("" if timing.graphs == 1 else "s"))
    if timing.recompiles:
        parts.append(f"{timing.recompiles} recompile" + ("" if timing.recompiles == 1 else "s") + " while timing")
    return "; ".join(parts)


TIMING_CLASSES: tuple[type, ...] = (CallTiming, RunTiming)
"""The model classes of this module (for :data:`nstviz.report.MODEL_CLASSES` and the schema)."""

__all__ = [
    "TIMING_CLASSES",
    "CallTiming",
    "RunTiming",
    "Verdict",
    "best_index",
    "compare_steady",
    "format_call",
    "format_seconds",
    "format_timing",
    "rank_key",
    "ranked",
    "steady_median",
]
