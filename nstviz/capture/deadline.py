"""The advisor's one deadline: its time budget, what it has spent, and what it left untried.

A capture with ``auto=True`` makes one :class:`Deadline` when the advisor starts and hands the
same object to every phase that spends the budget: the search's attempts and config hints, the
trials' extra runs (a rewrite's other-input check, the graph count on another input set, the
eager recording of a custom op), the late timing of tied attempts, and the final (nonstrict)
run with its timing, for which room is kept (:attr:`Deadline.reserve_s`), and the recommendation's
last check, compiled as ``torch._dynamo.explain`` compiles (:attr:`Deadline.check_s`). A phase starts only
when the time left covers its expected cost (:meth:`Deadline.allows`, estimated from what runs
have cost so far); what is not started is named (:meth:`Deadline.leave`) and the Report says it
in one line (:attr:`Report.advisor_untried <nstviz.report.Report.advisor_untried>`).
A run already started is never cut short: the overrun is at most one run.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

from nstviz._options import DEFAULT_BUDGET_RUNS, DEFAULT_BUDGET_S, default_budget_s

MAX_NAMED = 8
"""How many untried steps :meth:`Deadline.summary` names (the rest are counted)."""


@dataclass
class Deadline:
    """The advisor's time budget, shared by every phase that spends it."""

    start: float
    """``time.monotonic()`` when the advisor started."""
    budget_s: float
    first_estimate: float
    """How long one run is expected to take before any attempt ran (the baseline's wall time)."""
    reserve_s: float = 0.0
    """Seconds kept for the work after the search (the final nonstrict run and its timing), as
    expected before any attempt ran; :meth:`reserve` is what is kept once attempts have run."""
    after_run_s: float = 0.0
    """The part of :attr:`reserve_s` that comes after the final run itself (its timing)."""
    check_s: float = 0.0
    """Seconds kept for the recommendation's last check (its graph count with Dynamo's ``eager``
    backend, on another input set), until :meth:`release_check` hands them to it."""
    durations: list[float] = field(default_factory=list)
    """Seconds each attempt took, in order."""
    attempts: int = 0
    untried: list[str] = field(default_factory=list)
    """What was not started for lack of time (candidate names, checks), in order."""
    ran_out_s: float | None = None
    """Seconds into the budget when the first step was left untried."""
    basis: str | None = None
    """Where a budget nobody gave comes from (``"the default: 5 runs of 27.4 s"``); None: given, or 60 s."""

    @classmethod
    def starting_now(
        cls, budget_s: float, first_estimate: float, *, reserve_s: float = 0.0, basis: str | None = None
    ) -> Deadline:
        """A deadline ``budget_s`` from now."""
        return cls(time.monotonic(), budget_s, first_estimate, reserve_s, basis=basis)

    @classmethod
    def for_advisor(
        cls, budget_s: float | None, run_s: float, *, after_run_s: float = 0.0, check_compiles: int = 0
    ) -> Deadline:
        """The advisor's deadline from now: ``budget_s``, or when None the default for runs of ``run_s`` seconds.

        Room is kept for the final run (``run_s`` until attempts have run) and ``after_run_s`` after it,
        and for ``check_compiles`` compiles of the last check (each about one run as written:
        measured on Mistral 3, 5.0-8.6 s against a 7.5 s baseline run and 11-13 s attempts).
        """
        basis = None
        if budget_s is None:
            budget_s = default_budget_s(run_s)
            basis = f"the default: {DEFAULT_BUDGET_RUNS} runs of {run_s:.1f} s" if budget_s > DEFAULT_BUDGET_S else None
        deadline = cls.starting_now(budget_s, run_s, reserve_s=run_s + after_run_s, basis=basis)
        deadline.after_run_s = after_run_s
        deadline.check_s = check_compiles * run_s
        return deadline

    def named(self) -> str:
        """``time budget (60 s)``, and where the budget comes from when nobody gave it."""
        basis = f", {self.basis}" if self.basis else ""
        return f"time budget ({self.budget_s:g} s{basis})"

    def elapsed(self) -> float:
        """Seconds since the advisor started."""
        return time.monotonic() - self.start

    def estimate(self) -> float:
        """How long the next attempt is expected to take: the longest so far."""
        return max(self.durations) if self.durations else self.first_estimate

    def last_attempt(self) -> float:
        """What repeating the attempt that just ran costs (its check on other inputs): that attempt's own time.

        Attempts get cheaper as breaks go (fewer graphs to compile): Grounding DINO's first took
        27 s, the one that took it to one graph about 10 s. Before any attempt: :meth:`estimate`.
        """
        return self.durations[-1] if self.durations else self.estimate()

    def reserve(self) -> float:
        """The room kept for the final run and what follows it.

        The final run repeats an attempt's run (the set kept), so once attempts have run it is
        expected to cost what they cost (their median), never more than :attr:`reserve_s`: the
        baseline's run, the first, also paid one-time costs (measured on Grounding DINO: baseline
        35.5 s, attempts 15-28 s, final run 18.6 s).
        """
        if self.reserve_s <= 0 or not self.durations:
            return self.reserve_s + self.check_s
        return min(self.reserve_s, statistics.median(self.durations) + self.after_run_s) + self.check_s

    def check_cost(self) -> float:
        """What one compile of the last check is expected to cost: one run as written."""
        return self.first_estimate

    def release_check(self) -> None:
        """The search is over: the room kept for the last check is its to spend now."""
        self.check_s = 0.0

    def allows(self, cost: float | None = None) -> bool:
        """Whether a step of ``cost`` seconds (default: one attempt) fits, the reserve kept."""
        spend = self.estimate() if cost is None else cost
        return self.elapsed() + spend + self.reserve() <= self.budget_s

    def why_not(self) -> str:
        """Why :meth:`allows` said no, in words (a skipped candidate's error)."""
        elapsed, estimate = self.elapsed(), self.estimate()
        left = self.budget_s - elapsed
        if left <= 0:
            return f"{self.named()} used up after {elapsed:.1f} s"
        why = f"{self.named()}: {left:.1f} s left, shorter than one run (~{estimate:.1f} s)"
        if (reserve := self.reserve()) > 0:
            why += f" and the final run (~{reserve - self.check_s:.1f} s)" if reserve > self.check_s else ""
            why += f" and the last check (~{self.check_s:.1f} s)" if self.check_s > 0 else ""
        return why

    def leave(self, what: str) -> None:
        """Note ``what`` as left untried for lack of time."""
        if self.ran_out_s is None:
            self.ran_out_s = self.elapsed()
        if what not in self.untried:
            self.untried.append(what)

    def summary(self) -> str | None:
        """One line: when the budget ran out and what was left untried; None when nothing was."""
        if not self.untried:
            return None
        named = ", ".join(self.untried[:MAX_NAMED])
        more = len(self.untried) - MAX_NAMED
        if more > 0:
            named += f" and {more} more"
        at = f" after {self.ran_out_s:.1f} s" if self.ran_out_s is not None else ""
        return f"{self.named()} ran out{at}; left untried: {named}"


__all__ = ["MAX_NAMED", "Deadline"]
