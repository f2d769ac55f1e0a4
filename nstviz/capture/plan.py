"""Which runs a capture makes, declared before it starts: the :class:`RunPlan`.

The plan also gives the progress totals (``runs_total``), so that no code path has to patch
a counter: the total follows from the plan and from what is known so far (whether the
baseline raised, how many advisor attempts were made).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunPlan:
    """The runs of one capture, in order.

    Attributes:
        eager_first: run the callable eagerly first (twice: the second run tells
            non-deterministic code), as the output check's reference (``compare`` with
            ``check=True``).
        eager_if_baseline_raises: when the baseline raised, run the code once eagerly before
            the nonstrict run, as the output check's reference (``trace_code`` with ``check``).
        check: compare the runs' outputs.
        advisor_attempts: at most this many advisor attempts (0: no advisor).
        advisor_budget_s: the advisor's time budget, in seconds; None: the default, known once
            the baseline ran (:func:`nstviz._options.default_budget_s`).
    """

    eager_first: bool = False
    eager_if_baseline_raises: bool = False
    check: bool = True
    advisor_attempts: int = 0
    advisor_budget_s: float | None = None

    @property
    def auto(self) -> bool:
        """Whether the advisor runs."""
        return self.advisor_attempts > 0

    def runs_total(self, *, baseline_raised: bool = False, attempts_done: int | None = None) -> int:
        """How many runs the capture makes (the eager pair counts as one).

        The nonstrict run is counted; when nothing is marked (no names, nothing recommended)
        the Session does not make it and lowers its total by one.

        Args:
            baseline_raised: the baseline raised (adds the eager reference run, if planned).
            attempts_done: advisor attempts made, once the advisor finished (None: the
                planned maximum).
        """
        attempts = self.advisor_attempts if attempts_done is None else attempts_done
        eager = int(self.eager_first) + int(self.eager_if_baseline_raises and baseline_raised)
        return eager + 1 + attempts + 1  # eager reference(s), baseline, attempts, nonstrict


@dataclasses.dataclass(slots=True)
class RunCount:
    """The progress counts of one capture: runs done, and the total they go to.

    The one place the total is worked out: from the plan (:meth:`RunPlan.runs_total`) and what
    is known so far, which the session tells it as the capture goes on.
    """

    plan: RunPlan = dataclasses.field(default_factory=RunPlan)
    done: int = 0
    """Runs made so far (the eager pair counts as one)."""
    started: bool = False
    baseline_raised: bool = False
    attempts_done: int | None = None
    """Advisor attempts made, once the advisor finished (None: still the planned maximum)."""
    attempts_floor: int = 0
    """While the advisor runs: at least this many (the attempt started and the nonstrict run)."""
    nonstrict_skipped: bool = False

    @property
    def total(self) -> int:
        """How many runs the capture makes, as far as is known now."""
        if not self.started:
            return 0
        total = self.plan.runs_total(baseline_raised=self.baseline_raised, attempts_done=self.attempts_done)
        if self.attempts_done is None:
            total = max(total, self.attempts_floor)
        return max(self.done, total - 1) if self.nonstrict_skipped else total

    def start(self, plan: RunPlan) -> None:
        """The capture starts by ``plan``."""
        self.plan, self.started = plan, True

    def run_done(self) -> None:
        """One more run made."""
        self.done += 1

    def baseline_done(self, *, raised: bool) -> None:
        """The baseline ran; ``raised``: it failed and the eager reference run is added."""
        self.baseline_raised = raised

    def attempt_starting(self) -> None:
        """An advisor attempt starts: it and the nonstrict run are still to come."""
        self.attempts_floor = max(self.attempts_floor, self.done + 2)

    def advisor_done(self, attempts: int) -> None:
        """The advisor finished after ``attempts`` attempts."""
        self.attempts_done = attempts

    def skip_nonstrict(self) -> None:
        """Nothing is marked: the nonstrict run is not made."""
        self.nonstrict_skipped = True


__all__ = ["RunCount", "RunPlan"]
