"""The advisor (``auto=True``): find functions whose non-strict tracing removes graph breaks.

Steps:

1. **Propose.** For each distinct break of the baseline (most graph breaks caused first), walk its user
   stack from the innermost frame outwards: the function that contains the break, then its
   callers, up to the frame Dynamo compiled. That frame itself is a candidate only when Dynamo
   compiled it on its own after breaking at its call site (its caller is compiled code, or it
   is not the first frame compiled); the user's compiled entry point never is. Frames in torch
   itself, comprehensions and module-level code are passed over. Frames are matched to
   compiles by file, name and ``def`` line. Each candidate says why it was proposed
   (``contains the break at model.py:42 (GB0026 ...)``) and what it reads that nonstrict_trace
   would bake in (:mod:`nstviz.capture.reads`).
2. **Pre-check** what can be known without running: the name resolves (through the caller's
   ``resolve``, also as ``module.qualname``) to the very function the stack shows (same file
   and line range); it is a plain Python function: not a builtin, class, lambda, generator,
   a closure created inside the compiled region, torch's own code or already marked in the
   code (an ``nn.Module.forward`` is tried with a no-op forward pre-hook on its instances, which
   makes the mark take effect for ``module(...)`` calls, see :mod:`nstviz.capture.forward_hooks`;
   run-time wrappers, closures made by decorators that pass ``*args, **kwargs`` on, are passed
   over); its call sites on the stacks pass no explicit ``None`` (unless the user's torch takes
   ``None`` leaves: ``none_inputs_ok``), lambda or generator (GB0236 on 2.13 and 2.14.1);
   it is no ``leaf_function`` of the code; annotations name no non-pytree type. Failures are ``rejected`` with
   the reasons.
3a. **First, what answers a break's own kind exactly** (before any mark: the budget is best
   spent there): the rewrites made for one kind of code (:data:`TARGETED_REWRITES`:
   transformers' experts switch for an eager experts loop, or every expert run with the router's
   mask where there is no switch; Python ints for 0-d int buffers)
   when a break fits them; then, for the data-dependent breaks left (GB0124, GB0033, GB0036:
   no mark can trace ``.item()`` or ``nonzero``), the config flags they name
   (``capture_scalar_outputs``, ``capture_dynamic_output_shape_ops``). A flag kept (fewer
   graphs) stays set in every later attempt.
3. **Try.** Candidates are tried one at a time *on top of the ones already kept*
   (``try_marks`` runs the code again as run ``attempt-N``), so each attempt also checks the
   combination; ``breaks_before`` of a candidate is the count with the marks kept so far. A
   candidate is kept only when its attempt improves on the marks kept so far
   (:func:`nstviz.passes.improvement.judge_change`: fewer Dynamo graphs, else a failed
   compile that now compiles; with the outputs verified). Fewer
   distinct break sites, or a lower ``counters["graph_break"]``, with as many graphs is
   ``no_change`` and said as such ("the break moved: ...", "same 20 graphs (...)"). After a
   ``fullgraph=True`` failure whose fatal break moves on to a later one, the attempt is kept
   *on trial* (``no_change``) so that the break behind it can be tried on top; it turns
   ``improved`` when a later attempt makes the code compile, and is dropped otherwise. A
   failure says why: GB0236 (inputs), GB0251 with its root cause, and for data-dependent
   operations that nonstrict_trace cannot trace them either. Once a break is gone, its
   remaining (outer) candidates are ``skipped`` as not needed. Breaks revealed by an attempt
   (hidden behind a fatal break) get candidates too.
3b. **Adapters and pytree registrations** (with ``adapt`` / ``register``). A candidate turned
   down for an explicit ``None`` at its call site, or whose attempt fails with GB0236 "(it got
   NoneType)", is tried again, after the plain candidates and only for breaks still left, through
   an adapter (``kind="adapter"``, :mod:`nstviz.capture.adapters`); a kept mark that itself falls
   back on ``None`` inputs gets its adapter tried instead of it. An attempt refused for a user
   class ("(it got Box)", or a non-graphable output class) is tried again with the class
   registered with pytree (``kind="pytree"``). Both are judged like marks and count against
   ``max_attempts`` and ``budget_s``.
3c. **Source rewrites** (:mod:`nstviz.advisor.rewriting`), once no mark is left to try: for each
   break left, the rewrites of its innermost user function that fit it (a data-dependent ``if``
   to ``torch.where``/``torch.cond``, ``.item()`` hints, loops to tensor ops, numpy on numbers to
   ``math``), each tried on top of the kept set (``kind="rewrite"``) and judged the same way; a
   rewrite that improves is kept only when its outputs also equal eager on other inputs of the
   same shapes. The breaks it reveals get mark candidates, and marks unlock further rewrites.
4. **Config hints.** With ``try_config``, the ``torch._dynamo.config`` flags the remaining
   breaks hint at (:mod:`nstviz.advisor.remedies`) are tried on top of the kept marks, as
   candidates of ``kind="config"`` judged the same way.
5. **Recommend** the kept set (and flags), verified by the last improving attempt (which ran
   exactly that set), with paste-ready code (:mod:`nstviz.advisor.code`).

Timing: attempts are not timed as they run (the trials time the baseline and the recommended
run); when verified sets tie on graphs, each is timed then (``Trials.time_attempt``) and the
least steady-state time wins.

Verdicts: a hard compile error that an attempt removes is an improvement (outputs checked
against eager); so are fewer Dynamo graphs, whatever the distinct breaks do; the recommendation
is made only when the kept set as a whole improves on the baseline; failures carry the real
cause (:mod:`nstviz.passes.causes`).

The work is bounded by ``max_attempts`` and ``budget_s`` (an attempt is not started when the
time left is shorter than the longest run so far, or than the baseline before any attempt, plus
the room the capture keeps for its final run): what is left is marked ``skipped`` with the
reason. The budget is the capture's one :class:`~nstviz.capture.deadline.Deadline`
(``trials.deadline``), which the trials' extra runs and the final run share; what it left
untried is named on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from nstviz.advisor import kept as kept_set
from nstviz.advisor.code import apply_code
from nstviz.advisor.config_trials import TryConfig, timed, try_config_hints
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
from nstviz.advisor.precheck import _annotation_refuses, precheck
from nstviz.advisor.propose import _plain_function_name as plain_function_name
from nstviz.advisor.propose import _Proposal, def_line, local_name, plan_candidates, qualname_at
from nstviz.advisor.remedies import config_plans
from nstviz.advisor.rewriting import rewrite_candidates, second_inputs
from nstviz.capture._introspect import unwrap
from nstviz.capture.deadline import Deadline
from nstviz.passes.failures import recompile_limit_hits
from nstviz.passes.improvement import eager_frames, judge_change
from nstviz.report import Candidate, OutputCheck, Recommendation, Run
from nstviz.report.timing import best_index

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

TryMarks = Callable[[tuple[Callable, ...], str], tuple[Run, OutputCheck]]
EARLY_CONFIG_GB = frozenset({"GB0124", "GB0033", "GB0036"})
"""Data-dependent breaks (``.item()``, data-dependent operators, ``nonzero``): no mark traces
them, their own flag may; tried after the targeted rewrites, before any mark."""
TARGETED_REWRITES = frozenset({"experts-implementation", "experts-dense", "buffer-int"})
"""Rewrites made for one kind of code, tried before any mark when a break fits them."""


class Trials(Protocol):
    """What the advisor is given to try its candidates: one attempt -> one Run.

    Attributes:
        resolve: maps a name (``"helper"``, ``"Block.stats"``, ``"pkg.mod.helper"``) to the
            object it names in the user's namespace, or None.
        try_marks: runs the code again with the given marks (functions, adapters, pytree
            classes) as a run of the given name (``"attempt-1"``); returns the run and its
            output check against the baseline.
        try_config: like ``try_marks`` with ``torch._dynamo.config`` flags set; None: the flags
            the breaks hint at are not tried.
        adapt: ``adapt(qualname, function, caller_files)`` makes an adapter for a function
            refused for ``None`` inputs (:mod:`nstviz.capture.adapters`), or None when it
            cannot be placed; None: no adapters are tried.
        register: ``register(class_name, function)`` gives the user class a failed attempt was
            refused for ("(it got X)"), to register with pytree, or None when X is not a user
            class; None: no registrations are tried.
        decorator: how the pasted code spells nonstrict_trace.
        none_inputs_ok: the torch takes ``None`` leaves as nonstrict_trace inputs, so an
            explicit ``None`` at a call site is no reason to refuse or adapt a candidate.
        other_inputs (optional): ``other_inputs(marks) -> (match, why)``, the rewrites' outputs
            on other inputs of the same shapes; absent or None: no source rewrites are tried.
    """

    decorator: str
    none_inputs_ok: bool

    resolve: Callable[[str], Callable | None]
    try_marks: TryMarks
    try_config: TryConfig | None
    adapt: Callable[[str, Callable, Sequence[str]], Any] | None
    register: Callable[[str, Callable], Any] | None


@dataclass(frozen=True)
class Advice:
    """What the advisor found: the candidates, the recommendation, and the live objects behind it."""

    candidates: tuple[Candidate, ...]
    recommendation: Recommendation | None
    functions: tuple[tuple[str, Callable], ...] = ()
    """The recommended functions to mark, with their names (``recommendation.functions``)."""
    remedies: tuple[Any, ...] = ()
    """The kept adapters (``recommendation.adapters``), then the pytree classes (``recommendation.pytree``)."""


@dataclass
class _Callbacks:
    """:class:`Trials` from plain callables (:func:`run_advisor`)."""

    resolve: Callable[[str], Callable | None]
    try_marks: TryMarks
    try_config: TryConfig | None = None
    adapt: Callable[[str, Callable, Sequence[str]], Any] | None = None
    register: Callable[[str, Callable], Any] | None = None
    decorator: str = "torch._dynamo.nonstrict_trace"
    none_inputs_ok: bool = False


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
) -> tuple[tuple[Candidate, ...], Recommendation | None]:
    """:func:`search` with the trials given as callables; returns ``(candidates, recommendation)``.

    ``resolve``, ``try_marks``, ``try_config``, ``adapt``, ``register``, ``decorator`` and
    ``none_inputs_ok`` are the members of :class:`Trials` (a missing one: that kind of attempt
    is not made); ``budget_s``, ``max_attempts`` and ``progress`` are :func:`search`'s.
    """
    trials = _Callbacks(resolve, try_marks, try_config, adapt, register, decorator, none_inputs_ok)
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
    """Propose, pre-check and try functions to trace non-strictly; recommend a set.

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
    resolve, try_marks, try_config = trials.resolve, trials.try_marks, trials.try_config
    adapt, register = trials.adapt, trials.register
    decorator, none_inputs_ok = trials.decorator, trials.none_inputs_ok
    # the capture's one deadline (its final run reserved), or one of the search's own
    clock = getattr(trials, "deadline", None) or Deadline(time.monotonic(), budget_s, baseline.wall_time_s)
    say = progress or (lambda _msg: None)
    compiled_region = {plain_function_name(c.function) for c in baseline.compiles if c.function}
    compiled_region |= {plain_function_name(g.function) for g in baseline.graphs if g.function}
    already_marked = {m.qualname for m in baseline.marked}
    leaf_functions = {m.qualname for m in baseline.marked if m.decorator == "leaf_function"}
    checks = {"none_inputs_ok": none_inputs_ok, "leaf_functions": leaf_functions}

    def code_for(kept: Sequence[_Proposal], config: dict[str, Any] | None = None) -> str:
        return apply_code(kept, config, decorator=decorator)

    plan = plan_candidates(baseline)
    results: dict[str, Candidate] = {}
    order: list[str] = []
    queue: list[_Proposal] = []
    deferred: list[_Proposal] = []
    """Adapter and pytree attempts: tried after the plain marks, for breaks still left."""

    def queue_adapter(p: _Proposal, why: str, replaces: _Proposal | None = None) -> None:
        key = f"adapter: {p.name}"
        if adapt is None or p.obj is None or key in results:
            return
        q = replace(
            p, kind="adapter", key=key, problems=[], reasons=[why], breaks=list(p.breaks), replaces=replaces,
            break_gb_ids=list(p.break_gb_ids), callers=list(p.callers), notes=list(p.notes),
        )
        order.append(key)
        results[key] = replace(_candidate(q, "skipped"), function=key, kind="adapter", precheck=(), code=code_for([q]))
        deferred.append(q)

    def queue_pytree(p: _Proposal, class_name: str, output: bool = False) -> None:
        if register is None or p.obj is None:
            return
        remedy = register(class_name, p.obj)
        if remedy is None:
            return
        key = f"pytree: {getattr(remedy, 'name', class_name)}"
        if key in results:
            return
        how = "through its adapter" if p.kind == "adapter" else "non-strictly"
        why = (
            f"{p.name} {'takes or returns' if output else 'got'} {class_name.rpartition('.')[2]}, which is not a pytree: "
            f"registered with torch.utils._pytree ({_pytree_how(remedy)}), {p.name} traced {how}"
        )
        q = replace(
            p, kind="pytree", key=key, remedy=remedy, problems=[], reasons=[why], breaks=list(p.breaks),
            via_adapter=p.kind == "adapter", replaces=None, with_marks=kept_set.marks_of(p),
            break_gb_ids=list(p.break_gb_ids), callers=list(p.callers), notes=list(p.notes),
        )
        order.append(key)
        results[key] = replace(_candidate(q, "skipped"), function=key, kind="pytree", precheck=(), code=code_for([q]))
        deferred.append(q)

    def plan_revealed(before: Run, after: Run, *, again: bool = False) -> None:
        """Candidates for the breaks ``after`` has and ``before`` had not (revealed by an attempt kept).

        ``again`` (a config flag kept, which changes the breaks of every function): every break
        left counts as new; a candidate already planned takes them on too, and is tried after all
        if it was passed over as not needed (its old breaks went with the flag, the ones left are
        still on its stack).
        """
        revealed = list(after.breaks) if again else [b for b in after.breaks if b.id not in {x.id for x in before.breaks}]
        for q in plan_candidates(after, revealed):
            precheck(q, resolve, compiled_region, already_marked, **checks)  # it names q as results do
            if q.name in results and not again:
                continue
            if q.name in results:
                waiting = next((w for w in queue if w.name == q.name and w.kind == q.kind), None)
                if waiting is not None:  # still to try: for its new breaks too
                    waiting.breaks += [k for k in q.breaks if k not in waiting.breaks]
                elif results[q.name].status == "skipped" and (results[q.name].error or "").startswith("not needed"):
                    if not q.problems:  # its old breaks went, new ones came: to try after all
                        results[q.name] = replace(results[q.name], error=None)
                        queue.append(q)
                continue
            order.append(q.name)
            if q.problems:
                results[q.name] = _candidate(q, "rejected")
                if q.none_args:
                    queue_adapter(q, f"{q.name} is called with an explicit None, which nonstrict_trace refuses (GB0236)")
            else:
                results[q.name] = _candidate(q, "skipped")
                queue.append(q)

    for p in plan:
        precheck(p, resolve, compiled_region, already_marked, **checks)
        key = p.name
        if key in results:
            continue
        order.append(key)
        if p.problems:
            results[key] = _candidate(p, "rejected")
            if p.none_args:
                queue_adapter(p, f"{p.name} is called with an explicit None, which nonstrict_trace refuses (GB0236)")
        else:
            results[key] = _candidate(p, "skipped")
            queue.append(p)

    current = baseline
    kept: list[_Proposal] = []
    resolved: set[str] = set()
    last_check: OutputCheck | None = None
    seen_objs: set[int] = set()
    trial: list[str] = []
    """Keys of the kept attempts on trial (see ``_Outcome.on_trial``), not yet confirmed."""
    confirmed: tuple[list[_Proposal], Run, OutputCheck | None] = ([], baseline, None)
    """The kept marks, run and check as of the last improvement."""
    verified: list[tuple[list[_Proposal], Run, OutputCheck | None]] = []
    """Every ``confirmed`` set, in order: the recommendation is the best of them."""

    config_kept: list[str] = []
    # First what answers a break's own kind exactly: the rewrites made for one kind of code (an
    # eager experts loop, 0-d int buffers), then the config flags a data-dependent break names
    # (no mark can trace `.item()` or `nonzero`). Marks come after, generic rewrites and other flags last.
    if getattr(trials, "other_inputs", None) is not None:
        queue[:0] = rewrite_candidates(current, resolve, results, order, only=TARGETED_REWRITES)
    early_config = try_config is not None

    while True:
        if early_config and (not queue or queue[0].kind != "rewrite"):
            early_config = False
            plans = config_plans([b for b in current.breaks if b.gb_id in EARLY_CONFIG_GB])
            if plans and try_config is not None:
                before = current
                config_kept, current, last_check = try_config_hints(
                    try_config, kept_set.marks(kept), current, last_check, clock, order, results, say, plans=plans,
                )
                resolved |= {b.id for b in before.breaks} - {b.id for b in current.breaks}
                if config_kept:
                    plan_revealed(before, current, again=True)
                    confirmed = (list(kept), current, last_check)
                    verified.append(confirmed)
        if not queue:  # then adapters and pytree classes, then source rewrites of the breaks left
            queue, deferred = deferred, []
            if not queue and getattr(trials, "other_inputs", None) is not None:
                queue = rewrite_candidates(current, resolve, results, order, run_eager=getattr(trials, "run_eager", None))
            if not queue:
                break
        p = queue.pop(0)
        key = p.key or p.name
        if p.replaces is None and p.breaks and all(k in resolved for k in p.breaks):
            results[key] = replace(
                results[key],
                status="skipped",
                error="not needed: the marks kept already remove its breaks",
            )
            continue
        if p.kind == "nonstrict" and p.obj is not None and id(unwrap(p.obj)) in seen_objs:
            continue
        if clock.attempts >= max_attempts:
            results[key] = replace(
                results[key], status="skipped", error=f"attempt limit ({max_attempts}) reached"
            )
            continue
        if not clock.allows():
            results[key] = replace(results[key], status="skipped", error=clock.why_not())
            clock.leave(key)
            continue
        if p.kind == "adapter" and p.remedy is None:
            assert adapt is not None and p.obj is not None
            p.remedy = adapt(local_name(p), p.obj, [c.file for c in p.callers])
            if p.remedy is None:
                results[key] = replace(
                    results[key], status="rejected",
                    precheck=("no place to install an adapter (a classmethod, or not found where it is looked up)",),
                )
                continue
        clock.attempts += 1
        run_name = f"attempt-{clock.attempts}"
        marks = kept_set.marks([k for k in kept if k is not p.replaces]) + kept_set.marks_of(p)
        say(f"{run_name}: trying {key} ({len(marks)} marked)")
        t0 = time.monotonic()
        try:
            if config_kept and try_config is not None:
                run, check = try_config(marks, {f: True for f in config_kept}, run_name)
            else:
                run, check = try_marks(marks, run_name)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # a failure of the attempt itself, not of the user's code
            clock.durations.append(time.monotonic() - t0)
            results[key] = replace(
                results[key],
                status="failed",
                run=run_name,
                breaks_before=len(current.breaks),
                error=f"{type(exc).__name__}: {exc}",
                gb_id=gb_in(str(exc)),
                elapsed_s=clock.durations[-1],
            )
            continue
        clock.durations.append(time.monotonic() - t0)
        if p.kind == "nonstrict" and p.obj is not None:
            seen_objs.add(id(unwrap(p.obj)))
        outcome = judge(current, run, check, set(p.break_gb_ids))
        if outcome.improved and p.kind == "rewrite":  # proven on these inputs; also on others before kept
            same, why = second_inputs(trials, marks, {f: True for f in config_kept})
            outcome.error = f"{outcome.error}; {why}" if same else f"{outcome.error}, but not kept: {why}"
            if same is not True:
                outcome.status, outcome.improved = "failed" if same is False else "no_change", False
        if outcome.status == "worse" and check.match is False and p.notes:
            outcome.error = f"{outcome.error}; likely cause: {p.notes[0]}"
        if outcome.status in ("no_change", "worse") and outcome.error is None:
            outcome.error = mark_warning(run, p.name) or stayed_text(current, run)
        results[key] = replace(
            results[key], **attempt_fields(outcome, run_name, current, run, check, clock.durations[-1])
        )
        if not outcome.improved and p.kind in ("nonstrict", "adapter"):
            got = rejected_input_type(outcome.error)
            if got == "NoneType" and rejected_as_output(outcome.error):
                pass  # a None return: the None-input adapter cannot help
            elif got == "NoneType" and p.kind == "nonstrict":
                queue_adapter(p, f"{p.name} failed with None inputs (GB0236): retried through an adapter")
            elif got is not None and got != "NoneType":
                # "non-fx-graphable type" (GB0251) does not say whether it was an input or the output
                queue_pytree(p, got, output=rejected_as_output(outcome.error) or "(it got " not in (outcome.error or ""))
        if outcome.improved and p.kind == "nonstrict" and rejected_input_type(outcome.error) == "NoneType":
            # kept (the compile works now), but the mark itself falls back to eager on None inputs
            queue_adapter(
                p, f"the mark of {p.name} falls back to eager on None inputs (GB0236): tried through an "
                "adapter instead", replaces=p,
            )
        if outcome.improved and trial:
            for k in trial:  # together with this attempt, the marks on trial improve
                results[k] = replace(
                    results[k], status="improved",
                    error=f"{results[k].error}; improved together with {key}: {outcome.error}",
                )
            trial.clear()
        if outcome.on_trial:
            trial.append(key)
        if outcome.improved or outcome.on_trial:
            if p.replaces is not None and p.replaces in kept:
                kept.remove(p.replaces)
                old = results[p.replaces.name]
                results[p.replaces.name] = replace(old, error=f"{old.error}; replaced by {key}, which did better")
            kept.append(p)
            if outcome.improved:
                confirmed = (list(kept), run, check)
                verified.append(confirmed)
            after_keys = {b.id for b in run.breaks}
            resolved |= {b.id for b in current.breaks if b.id not in after_keys}
            plan_revealed(current, run)
            current = run
            last_check = check

    if trial:  # never confirmed: back to the last improvement
        for k in trial:
            results[k] = replace(results[k], error=f"{results[k].error}; not kept: no later attempt made it compile")
        kept, current, last_check = list(confirmed[0]), confirmed[1], confirmed[2]
    if len(verified) > 1:  # as few graphs as the last verified set, then the least steady-state time
        tied = [v for v in verified if dynamo_graphs(v[1]) == dynamo_graphs(confirmed[1])]
        if len(tied) > 1:
            tied = [(k, timed(trials, k, r, config_kept), c) for k, r, c in tied]
        best = tied[best_index([(dynamo_graphs(r), r.timing) for _, r, _ in tied])]
        kept, current, last_check = list(best[0]), best[1], best[2]
    if try_config is not None and (current.breaks or current.error or recompile_limit_hits(current)):
        config_kept, current, last_check = try_config_hints(
            try_config, kept_set.marks(kept), current, last_check, clock, order, results, say, kept=config_kept,
        )

    candidates = tuple(results[k] for k in order)
    if not kept and not config_kept:
        return Advice(candidates, None)
    if not judge_change(baseline, current, last_check).improved:
        return Advice(candidates, None)  # each kept step improved; the set as a whole must too
    elsewhere = getattr(trials, "graphs_elsewhere", None)
    counts = elsewhere(kept_set.marks(kept), {f: True for f in config_kept}) if elsewhere is not None else None
    # where the other inputs take the same path (as many graphs as written), the remedy must lower
    # the count there too; fewer graphs on these inputs only is luck (random routing), not a fix
    if counts is not None and counts[0] == dynamo_graphs(baseline) and counts[1] >= counts[0]:
        last = next(k for k in reversed(order) if results[k].status == "improved")
        results[last] = replace(results[last], error=(
            f"{results[last].error}; not recommended: on another input set and random state the graphs do not drop "
            f"({counts[0]} -> {counts[1]}): the graph count depends on the values"))
        return Advice(tuple(results[k] for k in order), None)
    functions = tuple(k.name for k in kept if k.kind not in ("adapter", "rewrite") and not k.via_adapter)
    recommendation = Recommendation(
        functions=functions,
        adapters=tuple(k.name for k in kept if k.kind == "adapter" or k.via_adapter),
        pytree=tuple(str(getattr(k.remedy, "name", k.remedy)) for k in kept if k.kind == "pytree"),
        code=code_for(kept, {f: True for f in config_kept}),
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


def _pytree_how(remedy: Any) -> str:
    return "register_dataclass" if getattr(remedy, "flatten", None) is None else "register_pytree_node"


def _candidate(p: _Proposal, status: str) -> Candidate:
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
