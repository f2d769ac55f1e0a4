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
        advisor_budget_s: the advisor's time budget, in seconds.
    """

    eager_first: bool = False
    eager_if_baseline_raises: bool = False
    check: bool = True
    advisor_attempts: int = 0
    advisor_budget_s: float = 60.0

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


__all__ = ["RunPlan"]
