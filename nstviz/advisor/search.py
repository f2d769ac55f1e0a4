"""The advisor (``auto=True``): find functions whose non-strict tracing removes graph breaks.

:func:`search` runs the steps of :mod:`nstviz.advisor.steps` on a typed
:class:`~nstviz.advisor.state.SearchState`: plan (propose and pre-check the baseline's
candidates), next attempt, run it, record the outcome, and at the end choose the
recommendation. docs/architecture.md ("The advisor's search") tells the steps and the order
of the attempts in full.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nstviz.advisor.code import apply_code
from nstviz.advisor.precheck import _annotation_refuses
from nstviz.advisor.propose import plan_candidates, qualname_at
from nstviz.advisor.steps import choose, next_attempt, plan, record, run_attempt
from nstviz.advisor.trials import Trials, TryConfig, TryMarks
from nstviz.capture.trials import Advice
from nstviz.report import Candidate, Recommendation, Run

__all__ = [
    "Advice",
    "Trials",
    "TryMarks",
    "_annotation_refuses",
    "apply_code",
    "plan_candidates",
    "qualname_at",
    "run_advisor",
    "search",
]


@dataclass
class _Callbacks:
    """:class:`Trials` from plain callables (:func:`run_advisor`); what is not given is None."""

    resolve: Callable[[str], Callable | None]
    try_marks: TryMarks
    try_config: TryConfig | None = None
    adapt: Callable[[str, Callable, Sequence[str]], Any] | None = None
    register: Callable[[str, Callable], Any] | None = None
    decorator: str = "torch._dynamo.nonstrict_trace"
    none_inputs_ok: bool = False
    other_inputs: None = None
    run_eager: Callable[[], bool] | None = None
    graphs_elsewhere: None = None
    time_attempt: None = None
    deadline: None = None
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
    run_eager: Callable[[], bool] | None = None,
) -> tuple[tuple[Candidate, ...], Recommendation | None]:
    """:func:`search` with the trials given as callables; returns ``(candidates, recommendation)``.

    ``resolve``, ``try_marks``, ``try_config``, ``adapt``, ``register``, ``decorator``,
    ``none_inputs_ok`` and ``run_eager`` are the members of :class:`Trials` (a missing one: that
    kind of attempt or check is not made); ``budget_s``, ``max_attempts`` and ``progress`` are
    :func:`search`'s.
    """
    trials = _Callbacks(resolve, try_marks, try_config, adapt, register, decorator, none_inputs_ok, run_eager=run_eager)
    advice = search(baseline, trials, budget_s=budget_s, max_attempts=max_attempts, progress=progress)
    return advice.candidates, advice.recommendation


def search(
    baseline: Run,
    trials: Trials,
    *,
    budget_s: float,
    max_attempts: int,
    progress: Callable[[str], None] | None = None,
) -> Advice:
    """Propose, pre-check and try functions to trace non-strictly (and other remedies); recommend a set.

    Args:
        baseline: the run of the code as written.
        trials: runs the attempts (:class:`Trials`; the capture's is
            :class:`nstviz.capture.trials.Trials`).
        budget_s: stop starting attempts after this many seconds (an attempt is not started
            when the time left looks shorter than one attempt).
        max_attempts: stop after this many attempts (config attempts come on top, at most
            ``MAX_CONFIG_ATTEMPTS``, within the time budget).
        progress: called with a one-line message before each attempt.

    Returns:
        The candidates with their status (tried ones in the order tried), the recommended set
        (None when no candidate helped) and the live objects behind it.
    """
    state = plan(baseline, trials, budget_s=budget_s, max_attempts=max_attempts, progress=progress)
    while (attempt := next_attempt(state)) is not None:
        tried = run_attempt(state, attempt)
        if tried is not None:
            record(state, attempt, tried)
    return choose(state)
