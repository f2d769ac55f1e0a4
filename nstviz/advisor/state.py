"""The advisor's search state: everything :mod:`nstviz.advisor.steps` reads and changes, typed.

:class:`SearchState` holds the candidates' results in the order they were proposed, the queue
of attempts still to make, the kept set and the run it gave, and every verified set. Its methods
are the bookkeeping the steps share: pre-check a proposal and queue it (or reject it), queue an
adapter or a pytree registration derived from an attempt, plan the breaks an attempt revealed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from nstviz.advisor import kept as kept_set
from nstviz.advisor.attempt import AdapterAttempt, AnyAttempt, Attempt, MarkAttempt, PytreeAttempt, derive
from nstviz.advisor.code import apply_code
from nstviz.advisor.precheck import precheck
from nstviz.advisor.propose import def_line, plan_candidates
from nstviz.advisor.trials import Trials
from nstviz.capture.deadline import Deadline
from nstviz.capture.remedy import Mark
from nstviz.report import Candidate, OutputCheck, Run

__all__ = ["SearchState", "Tried", "Verified", "candidate_of"]


@dataclass(frozen=True)
class Tried:
    """An attempt that ran: its run's name, what it applied, the run and its output check."""

    run_name: str
    marks: tuple[Mark, ...]
    run: Run
    check: OutputCheck


class Verified(NamedTuple):
    """A kept set, the run that verified it (it ran exactly that set) and its output check."""

    kept: list[AnyAttempt]
    run: Run
    check: OutputCheck | None


@dataclass
class SearchState:
    """The advisor's search between two steps."""

    baseline: Run
    trials: Trials
    clock: Deadline
    max_attempts: int
    say: Callable[[str], None]
    compiled_region: set[str]
    """Functions Dynamo compiled in the baseline (a closure made inside them cannot be named)."""
    already_marked: set[str]
    leaf_functions: set[str]
    current: Run
    """The run of the kept set (the baseline before anything was kept)."""
    confirmed: Verified
    """The kept set, run and check as of the last improvement."""
    results: dict[str, Candidate] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    """Keys of ``results`` in the order the candidates were proposed (the Report's order)."""
    queue: list[AnyAttempt] = field(default_factory=list)
    deferred: list[AnyAttempt] = field(default_factory=list)
    """Adapter and pytree attempts: tried after the plain marks, for breaks still left."""
    last_check: OutputCheck | None = None
    kept: list[AnyAttempt] = field(default_factory=list)
    resolved: set[str] = field(default_factory=set)
    """Ids of the baseline's breaks an attempt kept has removed."""
    seen_objs: set[int] = field(default_factory=set)
    """Functions tried as marks already (by id of the unwrapped function)."""
    on_trial: list[str] = field(default_factory=list)
    """Keys of the kept attempts on trial (see ``judge.Outcome.on_trial``), not yet confirmed."""
    verified: list[Verified] = field(default_factory=list)
    """Every ``confirmed`` set, in order: the recommendation is the best of them."""
    config_kept: list[str] = field(default_factory=list)
    """``torch._dynamo.config`` flags kept: set in every later attempt."""
    early_config: bool = False
    """The config flags of the data-dependent breaks are still to try (before any mark)."""
    unbatched: set[str] = field(default_factory=set)
    """Keys of rewrites tried together that did not hold as a batch: each is tried alone now."""

    @property
    def flags(self) -> dict[str, bool]:
        """The kept config flags, as set for a run."""
        return {f: True for f in self.config_kept}

    def code_for(self, kept: Sequence[Attempt], config: dict[str, Any] | None = None) -> str:
        """Paste-ready code applying ``kept`` (and ``config``)."""
        return apply_code(kept, config, decorator=self.trials.decorator)

    def precheck(self, p: Attempt) -> None:
        """Resolve ``p`` and note what refuses it (:func:`nstviz.advisor.precheck.precheck`); names it as results do."""
        precheck(
            p, self.trials.resolve, self.compiled_region, self.already_marked,
            none_inputs_ok=self.trials.none_inputs_ok, leaf_functions=self.leaf_functions,
        )

    def add_planned(self, p: Attempt) -> None:
        """A new candidate: rejected with its problems (an adapter queued for an explicit None), else queued."""
        self.order.append(p.name)
        if p.problems:
            self.results[p.name] = candidate_of(p, "rejected")
            if p.none_args:
                self.queue_adapter(p, f"{p.name} is called with an explicit None, which nonstrict_trace refuses (GB0236)")
        else:
            self.results[p.name] = candidate_of(p, "skipped")
            self.queue.append(p)

    def queue_adapter(self, p: Attempt, why: str, replaces: MarkAttempt | None = None) -> None:
        """Queue ``p`` through an adapter that drops its ``None`` arguments (made when it is tried)."""
        key = f"adapter: {p.name}"
        if self.trials.adapt is None or p.obj is None or key in self.results:
            return
        q = derive(
            AdapterAttempt, p, key=key, problems=[], reasons=[why], breaks=list(p.breaks), replaces=replaces,
            break_gb_ids=list(p.break_gb_ids), callers=list(p.callers), notes=list(p.notes),
        )
        self.order.append(key)
        self.results[key] = replace(
            candidate_of(q, "skipped"), function=key, kind="adapter", precheck=(), code=self.code_for([q])
        )
        self.deferred.append(q)

    def queue_pytree(self, p: Attempt, class_name: str, output: bool = False) -> None:
        """Queue ``p`` again with the user class ``class_name`` registered with pytree."""
        if self.trials.register is None or p.obj is None:
            return
        remedy = self.trials.register(class_name, p.obj)
        if remedy is None:
            return
        key = f"pytree: {getattr(remedy, 'name', class_name)}"
        if key in self.results:
            return
        how = "through its adapter" if p.kind == "adapter" else "non-strictly"
        why = (
            f"{p.name} {'takes or returns' if output else 'got'} {class_name.rpartition('.')[2]}, which is not a pytree: "
            f"registered with torch.utils._pytree ({_pytree_how(remedy)}), {p.name} traced {how}"
        )
        q = derive(
            PytreeAttempt, p, key=key, remedy=remedy, problems=[], reasons=[why], breaks=list(p.breaks),
            via_adapter=p.kind == "adapter", with_marks=kept_set.marks_of(p),
            break_gb_ids=list(p.break_gb_ids), callers=list(p.callers), notes=list(p.notes),
        )
        self.order.append(key)
        self.results[key] = replace(
            candidate_of(q, "skipped"), function=key, kind="pytree", precheck=(), code=self.code_for([q])
        )
        self.deferred.append(q)

    def plan_revealed(self, before: Run, after: Run, *, again: bool = False) -> None:
        """Candidates for the breaks ``after`` has and ``before`` had not (revealed by an attempt kept).

        ``again`` (a config flag kept, which changes the breaks of every function): every break
        left counts as new; a candidate already planned takes them on too, and is tried after all
        if it was passed over as not needed (its old breaks went with the flag, the ones left are
        still on its stack).
        """
        revealed = list(after.breaks) if again else [b for b in after.breaks if b.id not in {x.id for x in before.breaks}]
        for q in plan_candidates(after, revealed):
            self.precheck(q)
            if q.name in self.results and not again:
                continue
            if q.name in self.results:
                waiting = next((w for w in self.queue if w.name == q.name and w.kind == q.kind), None)
                if waiting is not None:  # still to try: for its new breaks too
                    waiting.breaks += [k for k in q.breaks if k not in waiting.breaks]
                elif self.results[q.name].status == "skipped" and (self.results[q.name].error or "").startswith("not needed"):
                    if not q.problems:  # its old breaks went, new ones came: to try after all
                        self.results[q.name] = replace(self.results[q.name], error=None)
                        self.queue.append(q)
                continue
            self.add_planned(q)


def _pytree_how(remedy: Any) -> str:
    return "register_dataclass" if getattr(remedy, "flatten", None) is None else "register_pytree_node"


def candidate_of(p: Attempt, status: str) -> Candidate:
    """The Report's :class:`Candidate` for ``p`` before it is tried."""
    why = "; ".join(dict.fromkeys(p.reasons))
    if p.notes:
        why += "; note: " + "; ".join(p.notes)
    return Candidate(
        function=p.name,
        why=why,
        status=status,  # type: ignore[arg-type]
        file=p.frame.file,
        line=def_line(p) or p.frame.line,
        precheck=tuple(p.problems),
    )
