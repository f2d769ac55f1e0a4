"""The advisor's attempts of ``torch._dynamo.config`` flags.

The time budget is the capture's one :class:`~nstviz.capture.deadline.Deadline` (the search's
``clock``); :func:`try_config_hints` tries the flags
the breaks hint at (and the recompile-limit flag) on top of the kept marks, judged like any
attempt. :func:`timed` times an attempt late, when the search must choose between tied sets.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from nstviz.advisor import kept as kept_set
from nstviz.advisor.attempt import Attempt
from nstviz.advisor.judge import attempt_fields, judge, stayed_text
from nstviz.advisor.propose import _short_break
from nstviz.advisor.remedies import config_code, config_plans, flags_hinted, recompile_plans, recompile_text
from nstviz.advisor.trials import Trials, TryConfig
from nstviz.capture.deadline import Deadline
from nstviz.capture.remedy import Mark
from nstviz.report import Candidate, OutputCheck, Run

__all__ = ["MAX_CONFIG_ATTEMPTS", "TryConfig", "timed", "try_config_hints"]

MAX_CONFIG_ATTEMPTS = 3


def timed(trials: Trials, kept: Sequence[Attempt], run: Run, config: Sequence[str]) -> Run:
    """``run`` with its timing (measured now, when the trials time attempts on request), else as it was."""
    time_attempt = trials.time_attempt
    if time_attempt is None or run.timing is not None or not run.name.startswith("attempt-"):
        return run
    timed = time_attempt(kept_set.marks(kept), {f: True for f in config}, run.name)
    return timed if timed is not None else run


def try_config_hints(
    try_config: TryConfig,
    marks: tuple[Mark, ...],
    current: Run,
    last_check: OutputCheck | None,
    clock: Deadline,
    order: list[str],
    results: dict[str, Candidate],
    say: Callable[[str], None],
    *,
    kept: Sequence[str] = (),
    plans: Sequence[tuple[str, ...]] | None = None,
    not_kept: list[tuple[Run, tuple[str, ...]]] | None = None,
) -> tuple[list[str], Run, OutputCheck | None]:
    """Try the ``torch._dynamo.config`` flags the remaining breaks hint at, on top of ``marks``.

    ``kept`` are flags kept before (set in every attempt, not tried again); ``plans`` limits the
    flag sets tried (default: what the breaks hint at, and the recompile-limit flag). Returns the
    flags kept (``kept`` first), and the run and check as of the last one kept; the runs of the
    flags not kept are appended to ``not_kept`` with their flags when given (where a flag moved the break to).
    """
    config_kept: list[str] = list(kept)
    budget_s = clock.budget_s
    config_attempts = 0
    if plans is None:
        plans = [*config_plans(current.breaks, config_kept), *recompile_plans(current, config_kept)]
    for flags in plans:
        if f"config: {', '.join(f'{f}=True' for f in flags)}" in results:
            continue
        if set(flags) <= set(config_kept) or config_attempts >= MAX_CONFIG_ATTEMPTS:
            continue
        if len(flags) > 1 and len(config_kept) > len(kept):
            continue  # a single flag already helped; the other was tried on top of it
        name = "config: " + ", ".join(f"{f}=True" for f in flags)
        if not clock.allows():
            clock.leave(name)
            order.append(name)
            results[name] = Candidate(
                function=name, why="the break's own hint", status="skipped", kind="config",
                code=config_code(flags), error=f"time budget ({budget_s:g} s) used up",
            )
            continue
        clock.attempts += 1
        config_attempts += 1
        run_name = f"attempt-{clock.attempts}"
        applied = {f: True for f in (*config_kept, *flags)}
        say(f"{run_name}: trying {name}")
        t0 = time.monotonic()
        try:
            run, check = try_config(marks, applied, run_name)
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            clock.durations.append(time.monotonic() - t0)
            order.append(name)
            results[name] = Candidate(
                function=name, why="the break's own hint", status="failed", kind="config",
                code=config_code(flags), run=run_name, error=f"{type(exc).__name__}: {exc}",
            )
            continue
        clock.durations.append(time.monotonic() - t0)
        outcome = judge(current, run, check)
        if outcome.status == "no_change" and outcome.error is None:
            outcome.error = stayed_text(current, run)
        hinted = [b for b in current.breaks if set(flags) & set(flags_hinted(b))]
        order.append(name)
        results[name] = Candidate(
            function=name,
            why="hinted by the break at " + ", ".join(_short_break(b) for b in hinted[:3]) if hinted else (
                recompile_text(current) + ": sizes that change compiled as dynamic (dynamic=None)"),
            kind="config",
            code=config_code(flags),
            **attempt_fields(outcome, run_name, current, run, check, clock.durations[-1]),
        )
        if outcome.improved:
            config_kept += [f for f in flags if f not in config_kept]
            current = run
            last_check = check
        elif not_kept is not None:
            not_kept.append((run, tuple(flags)))
    return config_kept, current, last_check
