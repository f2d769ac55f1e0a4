"""Early rewrites at different breaks tried together, when one attempt each would not fit.

The rewrites queued ahead of the marks (:data:`nstviz.advisor.steps.EARLY_REWRITES`: a branch on
tensor values, an assert on them, a C call as one op, code of one known kind) each answer the
break they were made for, in their own function. On a model where one run takes 10-30 s, a budget
of a minute holds two or three attempts, and trying them one by one leaves most of them untried
(DETR: three rewrites at three breaks, two runs left in 60 s). When the rewrites queued at the
front would not all fit one at a time (in the time left or the attempts left), those in different
functions at different breaks are tried in one attempt. The attempt is kept only when every one of
them removed its own breaks, the graphs did not go up, the outputs match and (as for any rewrite)
they hold on other inputs; otherwise they are put back at the front of the queue and tried one at
a time, as they would have been.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from nstviz.advisor.attempt import AnyAttempt, RewriteAttempt
from nstviz.advisor.judge import attempt_fields, dynamo_graphs, judge
from nstviz.advisor.rewriting import second_inputs
from nstviz.advisor.state import SearchState, Tried
from nstviz.capture._introspect import unwrap

__all__ = ["Batch", "gather", "noted", "record_batch", "split"]


@dataclass(frozen=True)
class Batch:
    """Rewrites at different breaks in different functions, tried in one attempt."""

    members: tuple[RewriteAttempt, ...]

    @property
    def names(self) -> str:
        """The members' candidate names, for messages."""
        return ", ".join(m.result_key for m in self.members)

    def others(self, member: RewriteAttempt) -> str:
        """The candidate names of the members but ``member``, for its candidate's text."""
        return ", ".join(m.result_key for m in self.members if m is not member)


def gather(state: SearchState, p: AnyAttempt, early: frozenset[str]) -> Batch | None:
    """``p`` and the early rewrites queued behind it that can share its attempt; None to try ``p`` alone.

    A batch is made only when ``p`` and the rewrites after it at the front of the queue would not
    all fit one attempt each (time left by :attr:`SearchState.clock`, or attempts left).
    """
    if not isinstance(p, RewriteAttempt) or not _batchable(p, early) or p.result_key in state.unbatched:
        return None
    members = [p]
    for q in state.queue:
        if not isinstance(q, RewriteAttempt) or not _batchable(q, early):
            break  # the early rewrites are at the front; the rest keeps its order
        if q.result_key in state.unbatched or all(k in state.resolved for k in q.breaks):
            continue
        if any(_overlaps(q, m) for m in members):
            continue
        members.append(q)
    if len(members) < 2 or _fits_one_by_one(state, len(members)):
        return None
    for q in members[1:]:
        state.queue.remove(q)
    return Batch(tuple(members))


def record_batch(state: SearchState, batch: Batch, tried: Tried) -> list[RewriteAttempt]:
    """Judge the batch's run: the members to keep (all of them), or none.

    Kept: each member's candidate records the shared run and the others it was tried with. Not
    kept because a member failed (its breaks stayed, the graphs went up, the outputs or the
    other inputs differ): the members go back to the front of the queue, each to be tried alone.
    """
    current, run, check = state.current, tried.run, tried.check
    outcome = judge(current, run, check, {g for m in batch.members for g in m.break_gb_ids})
    fields = attempt_fields(outcome, tried.run_name, current, run, check, state.clock.durations[-1])
    left = {b.id for b in run.breaks}
    why_not = None
    if not outcome.improved:
        why_not = outcome.error or outcome.status
    elif dynamo_graphs(run) > dynamo_graphs(current):
        why_not = f"{outcome.error}: more graphs"
    elif check.match is False:
        why_not = "the outputs changed"
    elif stayed := [m.result_key for m in batch.members if set(m.breaks) & left]:
        why_not = f"{outcome.error}, but the breaks of {', '.join(stayed)} stayed"
    if why_not is None:
        same, why = second_inputs(state.trials, tried.marks, state.flags)
        if same is None:  # no check can be made (no other inputs, or no time): as for one rewrite, not kept
            _record_members(state, batch, fields, "no_change", f"{outcome.error}, but not kept: {why}")
            return []
        if same:
            _record_members(state, batch, fields, "improved", f"{outcome.error}; {why}")
            return list(batch.members)
        why_not = why
    split(state, batch, tried.run_name, why_not)
    return []


def split(state: SearchState, batch: Batch, run_name: str, why: str) -> None:
    """The batch was not kept: its members go back to the front of the queue, to be tried alone.

    Each member's candidate says so until it is tried alone (or passed over: :func:`noted`).
    """
    state.say(f"{run_name}: not kept together ({why}): each is tried alone")
    for m in batch.members:
        state.results[m.result_key] = replace(
            state.results[m.result_key], run=run_name, error=f"tried in one attempt with {batch.others(m)} ({run_name}), "
            f"not kept together: {why}",
        )
    state.unbatched.update(m.result_key for m in batch.members)
    state.queue[:0] = batch.members


def noted(state: SearchState, key: str, error: str) -> str:
    """``error`` for a candidate passed over, after what its batch's attempt said (if it was in one)."""
    before = state.results[key].error if key in state.unbatched else None
    return f"{before}; then not tried alone: {error}" if before else error


def _record_members(state: SearchState, batch: Batch, fields: dict[str, Any], status: str, error: str) -> None:
    """Each member's candidate: the shared run's ``fields``, ``status``, and ``error`` naming the others."""
    for m in batch.members:
        state.results[m.result_key] = replace(
            state.results[m.result_key],
            **{**fields, "status": status, "error": f"tried in one attempt with {batch.others(m)}: {error}"},
        )


def _batchable(p: AnyAttempt, early: frozenset[str]) -> bool:
    """An early rewrite that sets no config flag of its own (a flag would change the others' runs)."""
    # the whole function as an op in the place of its call's op (``stands_for``) is early as that op is
    return (
        isinstance(p, RewriteAttempt) and p.remedy is not None
        and (p.remedy.remedy in early or getattr(p.remedy, "stands_for", "") in early)
        and not getattr(p.remedy, "config", None) and p.obj is not None
    )


def _overlaps(a: RewriteAttempt, b: RewriteAttempt) -> bool:
    """The same function (two rewrites of one function cannot both apply) or a break in common."""
    return unwrap(a.obj) is unwrap(b.obj) or bool(set(a.breaks) & set(b.breaks))


def _fits_one_by_one(state: SearchState, n: int) -> bool:
    """Whether ``n`` rewrites, one at a time, fit the attempts and the time left.

    Each costs an attempt and, to be kept, its check on other inputs, which starts only when an
    attempt's time is left (``Trials.other_inputs``): two estimates each. Counting the attempts
    alone, DETR's three rewrites were tried one at a time whenever the baseline ran fast (~9 s),
    and the third's check no longer fitted (19 -> 8 breaks, where one attempt for the three gives
    19 -> 2).
    """
    clock = state.clock
    if clock.attempts + n > state.max_attempts:
        return False
    return clock.allows(2 * n * clock.estimate())
