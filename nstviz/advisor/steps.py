"""The advisor's search, step by step: plan, next attempt, run it, record the outcome, choose.

Each step takes the :class:`~nstviz.advisor.state.SearchState` and changes it;
:func:`nstviz.advisor.search.search` runs them in a loop. The order of the attempts and the
rules of each step are told in docs/architecture.md ("The advisor's search").
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace

from nstviz._text import first_line, shorten
from nstviz.advisor import kept as kept_set
from nstviz.advisor.attempt import AdapterAttempt, AnyAttempt, Attempt, MarkAttempt, RewriteAttempt
from nstviz.advisor.batch import Batch, gather, noted, record_batch, split
from nstviz.advisor.config_trials import timed, try_config_hints
from nstviz.advisor.judge import (
    attempt_fields,
    dynamo_graphs,
    gb_in,
    judge,
    mark_warning,
    rejected_as_output,
    rejected_input_type,
    stayed_text,
)
from nstviz.advisor.propose import _plain_function_name as plain_function_name
from nstviz.advisor.propose import local_name, plan_candidates, qualname_at
from nstviz.advisor.remedies import config_plans
from nstviz.advisor.returns import refuse_unreturnable
from nstviz.advisor.rewriting import rewrite_candidates, second_inputs
from nstviz.advisor.state import SearchState, Tried, Verified
from nstviz.advisor.trials import Trials
from nstviz.capture._introspect import unwrap
from nstviz.capture.deadline import Deadline
from nstviz.capture.remedy import Mark
from nstviz.capture.trials import Advice
from nstviz.passes.failures import recompile_limit_hits
from nstviz.passes.improvement import eager_frames, judge_change
from nstviz.report import Recommendation, Run
from nstviz.report.timing import best_index

__all__ = [
    "EARLY_CONFIG_GB", "EARLY_REWRITES", "FLAG_REWRITES", "OPAQUE_CALL_REWRITES", "TARGETED_REWRITES", "VALUE_BRANCH_REWRITES", "Tried", "choose",
    "next_attempt", "plan", "record", "run_attempt",
]

EARLY_CONFIG_GB = frozenset({"GB0124", "GB0033", "GB0036"})
"""Data-dependent breaks (``.item()``, data-dependent operators, ``nonzero``): no mark traces
them, their own flag may; tried after the targeted rewrites, before any mark."""
TARGETED_REWRITES = frozenset({
    "experts-implementation", "experts-dense", "buffer-int", "index-select", "numpy-op", "build-once", "loop-range",
    "segment-mask", "logger-noop",
})
"""Rewrites made for one kind of code, tried before any mark when a break fits them (``logger-noop``: the
switch is the break's own hint, and a mark cannot take a log call in the compiled function itself). Not ``mask-count``
or ``masked-reduce``: ``capture_dynamic_output_shape_ops``, tried early, takes the same selections, and
an attempt ahead of it cost Gemma 4 the budget its second flag needed (7 -> 0 breaks became 7 -> 4);
they come with the source rewrites of the breaks left."""
FLAG_REWRITES = frozenset({"size-cond", "size-check", "static-first"})
"""Rewrites of the break an early config flag moved, with that flag in their own config."""
SIZE_HINT_REWRITES = frozenset({"size-check", "static-first"})
"""A hint on the breaks a kept flag leaves (two unbacked sizes a call needs equal, a chain testing an
unbacked size first): no mark can take one either (the call would guard the same way on fake
tensors), so before the marks."""
VALUE_BRANCH_REWRITES = frozenset({"state-where", "guarded-write", "check-assert", "branch-where", "branch-cond", "branch-keep", "buffer-read"})
"""Rewrites of a branch on tensor values (GB0170): no mark can take one (nonstrict_trace runs the
function on fake tensors, whose values it cannot branch on), so they go before the marks too."""
OPAQUE_CALL_REWRITES = frozenset({"call-op"})
"""A C call on tensors as a custom op: proposed only when the call was seen taking tensors or
arrays, which no mark can trace either (the C code would get fake tensors), so before the marks."""
EARLY_REWRITES = TARGETED_REWRITES | VALUE_BRANCH_REWRITES | OPAQUE_CALL_REWRITES
"""The rewrites queued before the marks (a flag's own rewrites aside): tried together when one at a
time would not fit (:mod:`nstviz.advisor.batch`)."""


def plan(
    baseline: Run, trials: Trials, *, budget_s: float, max_attempts: int, progress: Callable[[str], None] | None = None
) -> SearchState:
    """Step 1: propose and pre-check the baseline's candidates; queue the targeted rewrites first."""
    # the capture's one deadline (its final run reserved), or one of the search's own
    clock = trials.deadline or Deadline(time.monotonic(), budget_s, baseline.wall_time_s)
    compiled_region = {plain_function_name(c.function) for c in baseline.compiles if c.function}
    compiled_region |= {plain_function_name(g.function) for g in baseline.graphs if g.function}
    state = SearchState(
        baseline=baseline,
        trials=trials,
        clock=clock,
        max_attempts=max_attempts,
        say=progress or (lambda _msg: None),
        compiled_region=compiled_region,
        already_marked={m.qualname for m in baseline.marked},
        leaf_functions={m.qualname for m in baseline.marked if m.decorator == "leaf_function"},
        current=baseline,
        confirmed=Verified([], baseline, None),
    )
    planned: dict[str, Attempt] = {}
    for p in plan_candidates(baseline):
        state.precheck(p)
        planned.setdefault(p.name, p)
    # a helper seen returning a numpy array cannot be marked: refused before any compiled run
    refuse_unreturnable(list(planned.values()), trials.run_eager)
    for p in planned.values():
        state.add_planned(p)
    # First what answers a break's own kind exactly: the rewrites made for one kind of code (an
    # eager experts loop, 0-d int buffers), then the config flags a data-dependent break names
    # (no mark can trace `.item()` or `nonzero`). Marks come after, generic rewrites and other flags last.
    if trials.other_inputs is not None:
        state.queue[:0] = rewrite_candidates(
            state.current, trials.resolve, state.results, state.order,
            only=TARGETED_REWRITES | VALUE_BRANCH_REWRITES | OPAQUE_CALL_REWRITES, run_eager=trials.run_eager,
        )
    state.early_config = trials.try_config is not None
    return state


def next_attempt(state: SearchState) -> AnyAttempt | Batch | None:
    """Step 2: the next attempt to run, or None when the search is done.

    Before the first attempt that is not a targeted or value-branch rewrite (queued first), the
    config flags of the data-dependent breaks are tried (attempts of their own). When the queue runs dry, the
    deferred adapters and pytree registrations come next, then the source rewrites of the breaks
    left. An attempt no longer needed, or past the attempt limit or the time budget, is marked
    ``skipped`` with the reason; an adapter that cannot be placed is ``rejected``. Early rewrites
    at different breaks that would not fit one at a time come as one :class:`~nstviz.advisor.batch.Batch`.
    """
    trials = state.trials
    while True:
        if state.early_config and (not state.queue or state.queue[0].kind != "rewrite"):
            state.early_config = False
            _try_early_config(state)
        if not state.queue:  # then adapters and pytree classes, then source rewrites of the breaks left
            state.queue, state.deferred = state.deferred, []
            if not state.queue and trials.other_inputs is not None:
                state.queue = rewrite_candidates(
                    state.current, trials.resolve, state.results, state.order, run_eager=trials.run_eager
                )
            if not state.queue:
                return None
        p = state.queue.pop(0)
        if not _passed_over(state, p):
            return gather(state, p, EARLY_REWRITES) or p


def run_attempt(state: SearchState, p: AnyAttempt | Batch) -> Tried | None:
    """Step 3: run ``p`` on top of the kept set (and kept flags); None when the attempt itself failed (recorded).

    A batch whose run fails is split: its rewrites are tried alone.
    """
    trials, clock = state.trials, state.clock
    clock.attempts += 1
    run_name = f"attempt-{clock.attempts}"
    if isinstance(p, Batch):
        key, marks = p.names, kept_set.marks(state.kept) + tuple(m.remedy for m in p.members)
    else:
        key, marks = p.result_key, kept_set.marks([k for k in state.kept if k is not p.replaced]) + kept_set.marks_of(p)
    state.say(f"{run_name}: trying {key} ({len(marks)} marked)")
    t0 = time.monotonic()
    try:
        if state.config_kept and trials.try_config is not None:
            run, check = trials.try_config(marks, state.flags, run_name)
        else:
            run, check = trials.try_marks(marks, run_name)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a failure of the attempt itself, not of the user's code
        clock.durations.append(time.monotonic() - t0)
        if isinstance(p, Batch):
            split(state, p, run_name, f"{type(exc).__name__}: {first_line(str(exc), 200)}")
            return None
        state.results[key] = replace(
            state.results[key],
            status="failed",
            run=run_name,
            breaks_before=len(state.current.breaks),
            error=f"{type(exc).__name__}: {exc}",
            gb_id=gb_in(str(exc)),
            elapsed_s=clock.durations[-1],
        )
        return None
    clock.durations.append(time.monotonic() - t0)
    return Tried(run_name, marks, run, check)


def record(state: SearchState, p: AnyAttempt | Batch, tried: Tried) -> None:
    """Step 4: judge the attempt against the kept set's run; keep it, retry it another way, or move on.

    A rewrite that improves must also hold on other inputs. A mark refused for ``None`` inputs is
    retried through an adapter, one refused for a user class with the class registered. An
    improvement confirms the attempts on trial; a kept attempt's revealed breaks get candidates.
    A batch is kept whole or split (:func:`nstviz.advisor.batch.record_batch`).
    """
    if isinstance(p, Batch):
        kept = record_batch(state, p, tried)
        if kept:
            _confirm_on_trial(state, p.names, state.results[kept[0].result_key].error)
        for m in kept:
            _keep(state, m, tried, confirm=m is kept[-1])
    else:
        _record_one(state, p, tried)


def _record_one(state: SearchState, p: AnyAttempt, tried: Tried) -> None:
    """:func:`record` for one attempt."""
    key, current, run, check = p.result_key, state.current, tried.run, tried.check
    if p.kind == "nonstrict" and p.obj is not None:
        state.seen_objs.add(id(unwrap(p.obj)))
    outcome = judge(current, run, check, set(p.break_gb_ids))
    if outcome.improved and _ahead_of_marks(p) and dynamo_graphs(run) > dynamo_graphs(current):
        # tried before the marks because it answers the break's kind; kept there only for fewer graphs:
        # a frame that compiles now in more graphs (wav2vec2's numpy-op, 8 -> 9) would leave the
        # marks after it nothing to remove (its feature encoder's mark: 6 -> 4 breaks)
        outcome.status, outcome.improved = "no_change", False
        outcome.error = f"{outcome.error}; not kept: tried before the marks, it is kept only for fewer graphs"
    if outcome.improved and p.kind == "rewrite":  # proven on these inputs; also on others before kept
        same, why = second_inputs(state.trials, tried.marks, state.flags)
        outcome.error = f"{outcome.error}; {why}" if same else f"{outcome.error}, but not kept: {why}"
        if same is not True:
            outcome.status, outcome.improved = "failed" if same is False else "no_change", False
    if outcome.status == "worse" and check.match is False and p.notes:
        outcome.error = f"{outcome.error}; likely cause: {p.notes[0]}"
    if outcome.status in ("no_change", "worse") and outcome.error is None:
        outcome.error = mark_warning(run, p.name) or stayed_text(current, run)
    state.results[key] = replace(
        state.results[key], **attempt_fields(outcome, tried.run_name, current, run, check, state.clock.durations[-1])
    )
    if not outcome.improved and p.kind in ("nonstrict", "adapter"):
        got = rejected_input_type(outcome.error)
        if got == "NoneType" and rejected_as_output(outcome.error):
            pass  # a None return: the None-input adapter cannot help
        elif got == "NoneType" and p.kind == "nonstrict":
            state.queue_adapter(p, f"{p.name} failed with None inputs (GB0236): retried through an adapter")
        elif got is not None and got != "NoneType":
            # "non-fx-graphable type" (GB0251) does not say whether it was an input or the output
            state.queue_pytree(p, got, output=rejected_as_output(outcome.error) or "(it got " not in (outcome.error or ""))
    if outcome.improved and isinstance(p, MarkAttempt) and rejected_input_type(outcome.error) == "NoneType":
        # kept (the compile works now), but the mark itself falls back to eager on None inputs
        state.queue_adapter(
            p, f"the mark of {p.name} falls back to eager on None inputs (GB0236): tried through an "
            "adapter instead", replaces=p,
        )
    if outcome.improved:
        _confirm_on_trial(state, key, outcome.error)
    if outcome.on_trial:
        state.on_trial.append(key)
    if outcome.improved or outcome.on_trial:
        _keep(state, p, tried, confirm=outcome.improved)
    elif isinstance(p, MarkAttempt):
        _skip_doomed_callers(state, p, run, outcome.error or "")


def _confirm_on_trial(state: SearchState, key: str, how: str | None) -> None:
    """``key`` improved: the marks on trial (kept though they did not improve alone) improved with it."""
    for k in state.on_trial:
        state.results[k] = replace(
            state.results[k], status="improved", error=f"{state.results[k].error}; improved together with {key}: {how}",
        )
    state.on_trial.clear()


def _ahead_of_marks(p: AnyAttempt) -> bool:
    """Whether ``p`` is a rewrite queued before the marks (targeted, value branch, opaque call, a flag's)."""
    early = TARGETED_REWRITES | VALUE_BRANCH_REWRITES | OPAQUE_CALL_REWRITES | FLAG_REWRITES
    return isinstance(p, RewriteAttempt) and p.remedy is not None and p.remedy.remedy in early


def choose(state: SearchState) -> Advice:
    """Step 5: the recommendation: the best verified set (fewest graphs, then least time), then its flags.

    Attempts still on trial are dropped (back to the last improvement); the remaining breaks'
    config hints are tried on top. The set is recommended only when, as a whole, it improves on
    the baseline, and (where the trials can tell) also on another input set.
    """
    trials, baseline, results, order = state.trials, state.baseline, state.results, state.order
    kept, current, last_check, config_kept = state.kept, state.current, state.last_check, state.config_kept
    if state.on_trial:  # never confirmed: back to the last improvement
        for k in state.on_trial:
            results[k] = replace(results[k], error=f"{results[k].error}; not kept: no later attempt made it compile")
        kept, current, last_check = list(state.confirmed.kept), state.confirmed.run, state.confirmed.check
    if len(state.verified) > 1:  # as few graphs as the last verified set, then the least steady-state time
        tied = [v for v in state.verified if dynamo_graphs(v.run) == dynamo_graphs(state.confirmed.run)]
        if len(tied) > 1:
            tied = [Verified(k, timed(trials, k, r, config_kept), c) for k, r, c in tied]
        best = tied[best_index([(dynamo_graphs(v.run), v.run.timing) for v in tied])]
        kept, current, last_check = list(best.kept), best.run, best.check
    if trials.try_config is not None and (current.breaks or current.error or recompile_limit_hits(current)):
        config_kept, current, last_check = try_config_hints(
            trials.try_config, kept_set.marks(kept), current, last_check, state.clock, order, results, state.say,
            kept=config_kept,
        )
    state.kept, state.current, state.last_check, state.config_kept = kept, current, last_check, config_kept

    candidates = tuple(results[k] for k in order)
    if not kept and not config_kept:
        return Advice(candidates, None)
    if not judge_change(baseline, current, last_check).improved:
        return Advice(candidates, None)  # each kept step improved; the set as a whole must too
    state.clock.release_check()  # the room kept for it is the check's now
    if why_not := _not_confirmed_elsewhere(trials, kept_set.marks(kept), state.flags, baseline):
        last = next(k for k in reversed(order) if results[k].status == "improved")
        results[last] = replace(results[last], error=f"{results[last].error}; not recommended: {why_not}")
        return Advice(tuple(results[k] for k in order), None)
    recommendation = Recommendation(
        functions=tuple(k.name for k in kept if k.kind not in ("adapter", "rewrite") and not k.through_adapter),
        adapters=tuple(k.name for k in kept if k.through_adapter),
        pytree=tuple(str(getattr(k.remedy, "name", k.remedy)) for k in kept if k.kind == "pytree"),
        code=state.code_for(kept, state.flags),
        breaks_before=len(baseline.breaks),
        breaks_after=len(current.breaks),
        outputs_match=last_check.match if last_check is not None else None,
        config=tuple(config_kept),
        graph_breaks_before=baseline.dynamo_graph_breaks,
        graph_breaks_after=current.dynamo_graph_breaks,
        graphs_before=dynamo_graphs(baseline),
        graphs_after=dynamo_graphs(current),
        eager_frames_before=eager_frames(baseline),
        eager_frames_after=eager_frames(current),
    )
    return Advice(candidates, recommendation, functions=kept_set.functions(kept), remedies=kept_set.remedies(kept))


# -- the steps' parts ---------------------------------------------------------------------------


def _not_confirmed_elsewhere(
    trials: Trials, marks: tuple[Mark, ...], flags: dict[str, bool], baseline: Run
) -> str | None:
    """Why another input set speaks against the remedy, or None.

    Where the other inputs take the same path (as many graphs as written), the remedy must lower
    the count there too: fewer graphs on the attempt's inputs only is luck (random routing), not a
    fix. And it must compile there with Dynamo's ``eager`` backend, as ``torch._dynamo.explain``
    does, wherever the code as written does (torch 2.13 raises inside Dynamo on Pixtral's
    ``split_with_sizes`` under ``capture_scalar_outputs`` with that backend, not with AOTAutograd's).
    Each count is a whole compile, so the one likelier to settle it goes first and the other is
    made only when it decides: the remedied count (below the baseline's is a drop, whatever the
    code as written gives there), or, when the baseline's compile failed, the count as written (it
    likely fails there too, and a count that cannot be made is no verdict). A remedy that raises
    there is compiled on the inputs given next (where the pasted code, and explain, run first): a
    raise there, or no time left to see, refuses it; then the code as written on the other set,
    which refuses it only if it compiles there.
    """
    elsewhere = trials.graphs_elsewhere
    if elsewhere is None:
        return None
    graphs_before = dynamo_graphs(baseline)
    if baseline.error is not None:
        if (written := elsewhere((), {})) != graphs_before:
            return None
        remedied = elsewhere(marks, flags)
        return _no_drop(written, remedied) if isinstance(remedied, int) and remedied >= written else None
    remedied = elsewhere(marks, flags)
    if isinstance(remedied, Exception):
        raised = f"{type(remedied).__name__}: {shorten(remedied, 300)}"
        # first where the pasted code runs first, and explain with it: the inputs given
        if isinstance(given := elsewhere(marks, flags, given_inputs=True), Exception):
            return ("compiled with Dynamo's eager backend (as torch._dynamo.explain compiles), it raises on the "
                    f"inputs given: {type(given).__name__}: {shorten(given, 300)}")
        if given is None:  # the budget ended the check: a raise not explained is not passed
            return ("on another input set, compiled with Dynamo's eager backend (as torch._dynamo.explain compiles), "
                    f"it raises ({raised}), and the time budget ran out before the check could compile it on the "
                    "inputs given")
        if isinstance(elsewhere((), {}), int):
            return ("on another input set, compiled with Dynamo's eager backend (as torch._dynamo.explain "
                    f"compiles), it raises where the code as written does not: {raised}")
        return None  # the other inputs break the code as written too (or no time to tell); the inputs given compile
    if remedied is None or remedied < graphs_before:
        return None
    written = elsewhere((), {})
    return _no_drop(written, remedied) if written == graphs_before else None


def _no_drop(written: object, remedied: int) -> str:
    return (f"on another input set and random state the graphs do not drop ({written} -> {remedied}): "
            "the graph count depends on the values")



def _try_early_config(state: SearchState) -> None:
    """The config flags the data-dependent breaks name, before any mark; a flag kept reveals breaks again."""
    trials = state.trials
    plans = config_plans([b for b in state.current.breaks if b.gb_id in EARLY_CONFIG_GB])
    if not plans or trials.try_config is None:
        return
    before = state.current
    not_kept: list[tuple[Run, tuple[str, ...]]] = []
    state.config_kept, state.current, state.last_check = try_config_hints(
        trials.try_config, kept_set.marks(state.kept), state.current, state.last_check, state.clock, state.order,
        state.results, state.say, plans=plans, not_kept=not_kept,
    )
    if trials.other_inputs is not None:
        # a flag that only moved the break (onto a guard on an unbacked size): the rewrite that answers
        # the new break sets the flag itself, and goes before any mark
        for run, flags in not_kept:
            state.queue[:0] = rewrite_candidates(
                run, trials.resolve, state.results, state.order, only=FLAG_REWRITES, flags=flags)
    state.resolved |= {b.id for b in before.breaks} - {b.id for b in state.current.breaks}
    if state.config_kept:
        state.plan_revealed(before, state.current, again=True)
        _value_branches_first(state)
        state.confirmed = Verified(list(state.kept), state.current, state.last_check)
        state.verified.append(state.confirmed)


def _value_branches_first(state: SearchState) -> None:
    """The rewrites of the branches on tensor values (and size hints) among the breaks left, at the front of the queue."""
    trials = state.trials
    if trials.other_inputs is not None:
        state.queue[:0] = rewrite_candidates(
            state.current, trials.resolve, state.results, state.order,
            only=VALUE_BRANCH_REWRITES | SIZE_HINT_REWRITES,
        )


def _skip_doomed_callers(state: SearchState, p: MarkAttempt, run: Run, error: str) -> None:
    """After ``p``'s mark failed on data-dependent code inside it, skip the queued marks of its callers.

    The failure shows as a new break on the way to ``p`` (its call site, or a caller's), data-dependent
    by its reason or the attempt's error (``Could not guard on data-dependent expression``,
    ``DataDependentOutputException``): marking a function that calls ``p`` traces the same code on
    fake tensors again.
    """
    before = {b.id for b in state.current.breaks}
    failed = [b for b in run.breaks if b.id not in before and _data_dependent(f"{error} {b.gb_type} {b.reason}")]
    if not failed:
        return
    callers: dict[str, set[tuple[str, str]]] = {}  # break id -> the frames outside p on its stack
    for b in state.current.breaks:
        if b.id not in p.breaks:
            continue
        stack = list(b.stack) or [b.location]
        at = next((i for i, f in enumerate(stack) if f.file == p.frame.file and qualname_at(f) == qualname_at(p.frame)), None)
        if at is not None:
            callers[b.id] = {(f.file, qualname_at(f)) for f in stack[:at]}
    sites = {(f.file, f.line) for b in state.current.breaks if b.id in callers for f in b.stack}
    cause = next((b for b in failed if (b.location.file, b.location.line) in sites), None)
    if cause is None:
        return
    where = f"{os.path.basename(cause.location.file)}:{cause.location.line}"
    for q in list(state.queue):
        if q is p or not isinstance(q, MarkAttempt):
            continue
        if any((q.frame.file, qualname_at(q.frame)) in callers.get(k, ()) for k in q.breaks):
            state.queue.remove(q)
            state.results[q.result_key] = replace(
                state.results[q.result_key], status="skipped",
                error=f"not tried: it calls {p.name}, whose mark failed on data-dependent code ({where}: "
                f"{first_line(cause.gb_type or cause.reason, 100)}); marking a caller traces the same code",
            )


def _data_dependent(text: str) -> bool:
    low = text.lower()
    return "data-dependent" in low or "data dependent" in low


def _passed_over(state: SearchState, p: AnyAttempt) -> bool:
    """Whether ``p`` is not run after all: not needed, a function tried already, out of attempts or time, no adapter."""
    key, clock = p.result_key, state.clock
    if p.replaced is None and p.breaks and all(k in state.resolved for k in p.breaks):
        state.results[key] = replace(
            state.results[key], status="skipped", error="not needed: the marks kept already remove its breaks"
        )
        return True
    if p.kind == "nonstrict" and p.obj is not None and id(unwrap(p.obj)) in state.seen_objs:
        return True
    if clock.attempts >= state.max_attempts:
        state.results[key] = replace(
            state.results[key], status="skipped", error=noted(state, key, f"attempt limit ({state.max_attempts}) reached")
        )
        return True
    if not clock.allows():
        state.results[key] = replace(state.results[key], status="skipped", error=noted(state, key, clock.why_not()))
        clock.leave(key)
        return True
    if isinstance(p, AdapterAttempt) and p.remedy is None:
        adapt = state.trials.adapt
        assert adapt is not None and p.obj is not None
        p.remedy = adapt(local_name(p), p.obj, [c.file for c in p.callers])
        if p.remedy is None:
            state.results[key] = replace(
                state.results[key], status="rejected",
                precheck=("no place to install an adapter (a classmethod, or not found where it is looked up)",),
            )
            return True
    return False


def _keep(state: SearchState, p: AnyAttempt, tried: Tried, *, confirm: bool) -> None:
    """Keep ``p`` (in place of the mark it replaces); ``confirm``: it improved, a verified set."""
    replaced = p.replaced
    if replaced is not None and replaced in state.kept:
        state.kept.remove(replaced)
        old = state.results[replaced.name]
        state.results[replaced.name] = replace(old, error=f"{old.error}; replaced by {p.result_key}, which did better")
    state.kept.append(p)
    if confirm:
        state.confirmed = Verified(list(state.kept), tried.run, tried.check)
        state.verified.append(state.confirmed)
    after_keys = {b.id for b in tried.run.breaks}
    state.resolved |= {b.id for b in state.current.breaks if b.id not in after_keys}
    state.plan_revealed(state.current, tried.run)
    state.current = tried.run
    state.last_check = tried.check
    _value_branches_first(state)
