"""A capture session: runs a Subject by a RunPlan and hands plain values to the analysis.

A :class:`Session` runs a :class:`~nstviz.capture.subject.Subject` by a :class:`~nstviz.capture.plan.RunPlan`.
It owns everything that touches live objects: process-wide state (snapshot and restore, one capture
at a time), the namespace checkpoint, the eager reference runs (``compare``'s first is a warm-up whose
module additions are kept), the compiled runs (:func:`nstviz.capture.runner.execute`), the advisor's
attempts (:class:`nstviz.capture.trials.Trials`, driven by :func:`nstviz.advisor.search.search`), output
snapshots and their comparison, and turning live functions into plain values (:mod:`nstviz.capture.plain`).
:func:`nstviz.passes.assemble.assemble` then builds the Report from plain values only; the live
exception of the last run is kept beside it (:mod:`nstviz.report.document`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import platform
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from nstviz._version import __version__
from nstviz.capture import _torch_compat, adapters, gc_pace, marking, one_capture, plain, state
from nstviz.capture._introspect import code_key, qualified_name, unwrap
from nstviz.capture.cell_inputs import rewrites_redefined
from nstviz.capture.deadline import Deadline
from nstviz.capture.namespace import NamespaceCheckpoint
from nstviz.capture.plan import RunCount, RunPlan
from nstviz.capture.reads import find_non_input_reads
from nstviz.capture.recorder import Backend
from nstviz.capture.remedy import Mark, refreshing, rewrites_applied, rewrites_in, split_remedies
from nstviz.capture.runner import Body, RunResult, captured_output, execute
from nstviz.capture.subject import Subject
from nstviz.capture.timed_runs import live_code, observed_body, time_run
from nstviz.capture.trials import Advice, Trials
from nstviz.capture.trials import compare as _compare
from nstviz.capture.trials import failed as _failed
from nstviz.capture.trials import snapshot as _snapshot
from nstviz.errors import NothingCompiledError, UsageError
from nstviz.passes.assemble import CapturedRun, CapturedRuns, ReportMeta, assemble, finish_run
from nstviz.passes.improvement import dynamo_graphs
from nstviz.passes.marks import CapturedCall, CapturedMark
from nstviz.report import (
    Candidate,
    NonInputRead,
    OutputComparison,
    Recommendation,
    Report,
    Run,
    SourceFile,
)
from nstviz.report.document import attach_user_exception as attach
from nstviz.tracing.stacks import StackTable

Progress = Callable[[dict[str, Any]], None]
_Outputs = dict[str, Mapping[str, Any]]
"""Each run's outputs by run name (``"eager"``, ``"baseline"``, ``"nonstrict"``...), snapshotted."""


class Session:
    """Runs one capture and assembles its Report."""

    def __init__(
        self,
        *,
        backend: Backend,
        baseline_mode: str,
        progress: Progress | None = None,
        echo: bool = False,
        advisor: Callable[..., Advice] | None = None,
        timing: bool = False,
    ) -> None:
        self.backend = backend
        self.timing = timing
        """Time every compiled run (:mod:`nstviz.capture.timing`): ``Run.timing``."""
        # the advisor is a layer above the capture: the caller hands it in (nstviz.advisor.search.search)
        self.advisor = advisor
        self.baseline_mode = baseline_mode
        self.progress_cb = progress
        self.echo = echo
        self.plan = RunPlan()
        self.count = RunCount()
        """Runs done and the total they go to (the progress events')."""
        self.start = time.perf_counter()
        self.created = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        self.stacks = StackTable()
        self.results: dict[str, RunResult] = {}
        self.targets: dict[str, tuple[marking.Target, ...]] = {}
        self.notes: list[str] = []
        self.advisor_keys: set[Any] = set()
        self.deadline: Deadline | None = None
        """The advisor's one deadline (``auto``), from its start to the end of the final run's timing."""
        self._timing_cost = 0.0
        """Seconds the longest timing of a run took (what the next one is expected to cost)."""
        self._untimed: dict[str, list[Any] | None] = {}
        """Advisor attempts not timed yet, with the compiled calls they were seen to make."""
        self._reads_cache: dict[int, tuple[NonInputRead, ...]] = {}
        self._hooks_before: set[int] | None = None
        self._names_before: set[str] = set()
        self._code_namespace: dict[str, Any] | None = None
        self._subject: Subject | None = None
        self._lost: dict[str, str] = {}
        """Notes of the torch features this torch lacks (``_torch_compat.lose``), by hook."""

    def say(self, phase: str, message: str) -> None:
        """Report progress (never fails the capture)."""
        if self.progress_cb is None:
            return
        with contextlib.suppress(Exception):
            self.progress_cb(
                {
                    "phase": phase,
                    "message": message,
                    "elapsed_s": round(time.perf_counter() - self.start, 3),
                    "runs_done": self.count.done,
                    "runs_total": self.count.total,
                }
            )

    def capture(self, subject: Subject, plan: RunPlan) -> Report:
        """Run ``subject`` by ``plan``; return the Report (the live user exception attached)."""
        with _torch_compat.noting_lost_features() as self._lost, gc_pace.fewer_collections():
            _torch_compat.gb_registry()  # notes a registry this torch lacks (breaks then go unexplained)
            return self._capture(subject, plan)

    def _capture(self, subject: Subject, plan: RunPlan) -> Report:
        self.plan = plan
        self.count.start(plan)
        self._code_namespace = subject.code_namespace
        self._subject = subject
        one_capture.acquire()
        try:
            snapshot = state.StateSnapshot.take()
            checkpoint = NamespaceCheckpoint(subject.namespace)
        except BaseException:
            one_capture.release()
            raise
        rng = snapshot.rng
        finished = False
        outputs: _Outputs = {}
        try:
            if plan.eager_first and subject.eager_body is not None:
                self._eager_references(subject, checkpoint, rng, outputs)
            base, eager_reference = self._baseline(subject, rng, outputs)
            # names the code defines exist now: resolve the requested functions
            targets = subject.resolve()
            if eager_reference:
                self._eager_reference_for_failed_baseline(subject, checkpoint, rng, outputs)
            advice = self._advise(subject, base, checkpoint, outputs, rng) if plan.auto else Advice((), None)
            candidates, recommendation = advice.candidates, advice.recommendation
            remedies: tuple[Mark, ...] = ()  # adapters and pytree classes the advisor kept
            if recommendation is not None:
                remedies = advice.remedies
                targets += self._advised_targets(advice, targets)
            flags = dict.fromkeys(recommendation.config if recommendation is not None else (), True)
            # Nothing marked (no names given, the advisor recommended nothing): the nonstrict run
            # would repeat the baseline, so it is not made. With baseline="strict" the nonstrict
            # run still differs (it keeps the code's own nonstrict_trace marks), so it is made.
            nothing_marked = not targets and not flags and not remedies and self.baseline_mode != "strict"
            if nothing_marked:
                self.count.skip_nonstrict()
                why = "the advisor recommended none" if plan.auto else "the advisor was off (auto=False)"
                self.notes.append(f"Nothing was marked (no functions named to trace non-strictly, and {why}), "
                                  "so the nonstrict run was not made: it would repeat the baseline.")
            else:
                checkpoint.restore()
                nst = self._nonstrict_run(subject, rng, targets, flags, remedies)
                if plan.check:
                    outputs["nonstrict"] = _snapshot(subject.outputs_of(nst))
            checkpoint.discard()
            finished = True
            return self._report(subject, outputs if plan.check else None, candidates, recommendation, nothing_marked)
        except BaseException:
            if not finished:
                with contextlib.suppress(Exception):
                    checkpoint.restore(keep_added=False)
            raise
        finally:
            try:
                with state.interrupt_latch(defer=True):  # a Ctrl-C now must not cut the restore in half
                    with contextlib.suppress(Exception):
                        _torch_compat.dynamo_reset()
                    snapshot.restore()
            finally:
                one_capture.release()

    def _eager_references(
        self, subject: Subject, checkpoint: NamespaceCheckpoint, rng: dict[str, Any], outputs: _Outputs
    ) -> None:
        """The output check's references: two eager runs (the second tells whether the code disagrees with itself)."""
        assert subject.eager_body is not None
        self.say("baseline", "running eagerly (reference for the output check)")
        outputs["eager"] = self._eager(subject.eager_body, rng, subject) or {}
        if subject.entry == "compare":  # every run after it starts past the first call's lazy set-up
            checkpoint.keep_module_additions()
        checkpoint.restore()
        outputs["eager (again)"] = self._eager(subject.eager_body, rng, subject) or {}
        self.count.run_done()
        checkpoint.restore()

    def _baseline(self, subject: Subject, rng: dict[str, Any], outputs: _Outputs) -> tuple[RunResult, bool]:
        """The baseline run (the code as written), and whether eager must be the output check's reference.

        A baseline whose compile failed (raised, or caught by the code) has no outputs to compare
        with: with ``eager_if_baseline_raises``, the code then runs eagerly as the reference.
        """
        plan = self.plan
        attempts = f" (then up to {plan.advisor_attempts} advisor attempts)" if plan.auto else ""
        self.say("baseline", "running the code as written" + attempts)
        base = self._run("baseline", subject.body, rng, (), lift=self.baseline_mode == "strict")
        if plan.check:
            outputs["baseline"] = _snapshot(subject.outputs_of(base))
        eager_reference = plan.check and plan.eager_if_baseline_raises and _failed(base)
        self.count.baseline_done(raised=eager_reference)
        if not base.run.graphs and not base.run.breaks and not base.run.compiles:
            _nothing_compiled(subject, base)
        return base, eager_reference

    def _eager_reference_for_failed_baseline(
        self, subject: Subject, checkpoint: NamespaceCheckpoint, rng: dict[str, Any], outputs: _Outputs
    ) -> None:
        """The baseline raised, so there is nothing to compare the nonstrict run with: the code, once eagerly.

        It runs before the advisor's attempts (their outputs are checked against it too) and the
        nonstrict run (not after), so that the namespace still ends as after the last compiled
        run, whose compiled code the user keeps using, without re-running anything.
        """
        checkpoint.restore()
        self.say("eager", "the baseline raised: running the code eagerly (reference for the output check)")
        reference = self._eager(subject.body, rng, subject, force_eager=True)
        self.count.run_done()
        if reference is not None:
            outputs["eager"] = reference

    def _advised_targets(self, advice: Advice, targets: tuple[marking.Target, ...]) -> tuple[marking.Target, ...]:
        """The targets the advisor's recommendation adds to ``targets``: its marks, then its adapters' inner functions."""
        known = {id(t.function) for t in targets}
        added = tuple(marking.Target(spec=n, function=f) for n, f in advice.functions if id(f) not in known)
        added += tuple(  # the functions adapters trace non-strictly
            marking.Target(spec=f"adapter: {a.qualname}", function=a.inner)
            for a in advice.remedies
            if isinstance(a, adapters.Adapter)
        )
        self.advisor_keys.update(code_key(t.function) for t in added)
        return added

    def _nonstrict_run(
        self, subject: Subject, rng: dict[str, Any], targets: tuple[marking.Target, ...],
        flags: dict[str, bool], remedies: tuple[Mark, ...],
    ) -> RunResult:
        """The nonstrict run: ``targets`` marked, the recommended config, adapters, pytree classes and rewrites applied."""
        self.say("nonstrict", f"running with {_names(targets) or 'no functions'} traced non-strictly")
        functions = tuple(t.function for t in targets)
        _, ads, classes = split_remedies(remedies)  # the adapters' inner functions are targets
        with (
            _torch_compat.dynamo_config_patch(flags),
            rewrites_redefined(rewrites_in(remedies), subject.code_namespace) as redefine,
            rewrites_applied(remedies),
            adapters.installed(ads) as readapt,
            adapters.registered(classes, subject.code_namespace) as refresh,
        ):
            marks = refreshing(subject.rematch(functions), lambda: (redefine(), refresh()), readapt)
            result = self._run("nonstrict", subject.body, rng, functions, marks=marks)
        self.targets["nonstrict"] = targets
        return result

    def _report(
        self, subject: Subject, outputs: _Outputs | None, candidates: tuple[Candidate, ...],
        recommendation: Recommendation | None, nothing_marked: bool,
    ) -> Report:
        """The Report of the runs made, the last run's user exception attached."""
        captured = self._captured(subject, outputs, candidates, recommendation)
        report = assemble(dataclasses.replace(captured, nothing_marked=nothing_marked))
        last = self.results.get("nonstrict") or self.results.get("baseline")
        attach(report, last.exception if last is not None else None)
        self.say("done", report.headline.text)
        return report

    # -- runs ------------------------------------------------------------------------------

    def _eager(
        self, body: Body, rng: dict[str, Any], subject: Subject, *, force_eager: bool = False
    ) -> Mapping[str, Any] | None:
        """Outputs of one eager run of ``body``.

        ``torch.compile``-wrapped code inside ``body`` runs eagerly too
        (``torch.compiler.set_stance("force_eager")``, put back after): a function that calls a
        compiled one is eager only so. With ``force_eager``, its printed output is captured like
        a run's, and None is returned when it raised.
        """
        import torch

        state.set_rng_state(rng)
        try:
            if force_eager:
                with captured_output(self.echo), torch.compiler.set_stance("force_eager"):
                    value = body(lambda: None)
            else:
                with torch.compiler.set_stance("force_eager"):
                    value = body(lambda: None)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            self.notes.append(f"the eager reference run raised {type(exc).__name__}: {exc}"[:500])
            return None if force_eager else {}
        return _snapshot(subject.outputs_of(RunResult(run=Run(name="eager"), value=value)))

    def _run(
        self,
        name: str,
        body: Body,
        rng: dict[str, Any],
        functions: Sequence[Callable[..., Any]],
        *,
        lift: bool = False,
        marks: Callable[[], Sequence[Callable[..., Any]]] | None = None,
    ) -> RunResult:
        if self._hooks_before is not None:
            # The previous run's compiled code is dead after this reset (execute() resets too):
            # drop the globals Dynamo installed for it, or every run leaks its graphs into the
            # namespace. The last run's globals stay: its compiled code is what the user keeps.
            _torch_compat.dynamo_reset()
            _torch_compat.drop_dynamo_globals(self._hooks_before)
            if self._code_namespace is not None:
                _torch_compat.drop_new_dynamo_names(self._code_namespace, self._names_before)
        self._hooks_before = _torch_compat.dynamo_global_hooks()
        self._names_before = set(self._code_namespace or ())
        observed: list[Any] | None = None
        if self.timing and self._subject is not None and self._subject.entry != "compare":
            body, observed = observed_body(body)
        result = execute(
            name,
            body,
            backend=self.backend,
            stacks=self.stacks,
            rng=rng,
            marks=marks or (lambda: functions),
            lift_source_marks=lift,
            echo=self.echo,
        )
        if self.timing and name.startswith("attempt-"):
            # an attempt is timed only if the advisor must choose between it and another with as
            # few graphs (time_attempt): most attempts are never compared by time
            self._untimed[name] = observed
        elif self.timing and self._worth_timing(name, result) and self._timing_fits(name):
            # now, before the next run resets Dynamo: the run's own compiled code is timed, not compiled again
            began = time.perf_counter()
            self._attach_timing(name, observed, functions, marks, lift, result, live=True)
            self._timing_cost = max(self._timing_cost, time.perf_counter() - began)
        self.results[name] = result
        self.notes.extend(result.notes)
        self.count.run_done()
        return result

    def run_trial(
        self,
        name: str,
        body: Body,
        rng: dict[str, Any],
        functions: Sequence[Callable[..., Any]],
        marks: Callable[[], Sequence[Callable[..., Any]]],
    ) -> RunResult:
        """Run ``body`` as the advisor's attempt ``name``, ``functions`` marked (``marks`` asks them again)."""
        self.count.attempt_starting()
        result = self._run(name, body, rng, functions, marks=marks)
        self.targets[name] = tuple(marking.Target(spec=qualified_name(f), function=f) for f in functions)
        return result

    def plain_run(self, name: str) -> Run:
        """The run ``name`` as plain values, finished (its marks as records; what the advisor judges)."""
        return finish_run(self._plain_run(self.results[name], name), self.stacks.stacks)

    def _timing_fits(self, name: str) -> bool:
        """Whether the run's timing fits the advisor's deadline (always, without one); a note if not."""
        deadline = self.deadline
        if deadline is None or deadline.allows(self._timing_cost):
            return True
        deadline.leave(f"timing the {name} run")
        self.notes.append(f"{name}: not timed: the advisor's time budget ran out")
        return False

    def time_attempt(
        self,
        name: str,
        functions: Sequence[Callable[..., Any]],
        marks: Callable[[], Sequence[Callable[..., Any]]] | None,
    ) -> Run | None:
        """Time the advisor's attempt ``name`` now (its remedies applied by the caller); its Run, timed."""
        result = self.results.get(name)
        if not self.timing or result is None or name not in self._untimed or not self._worth_timing(name, result):
            return None
        if self.deadline is not None and not self.deadline.allows(result.run.wall_time_s + self._timing_cost):  # compile + time
            self.deadline.leave(f"timing {name} (tied on graphs)")
            return None
        self._attach_timing(name, self._untimed.pop(name), functions, marks, False, result)
        return result.run

    def _attach_timing(
        self,
        name: str,
        observed: list[Any] | None,
        functions: Sequence[Callable[..., Any]],
        marks: Callable[[], Sequence[Callable[..., Any]]] | None,
        lift: bool,
        result: RunResult,
        *,
        live: bool = False,
    ) -> None:
        """Time run ``name``, put the figures on ``result.run``; ``live``: its compiled code is still in Dynamo's cache."""
        self.say(name, f"{name}: timing it (graphs, compile, steady state, eager)")
        # the timed calls run dozens of times: what they change in place (parameters, an
        # optimizer, input tensors) is put back, so the namespace ends as after the run
        timed_state = NamespaceCheckpoint(self._subject.namespace) if self._subject is not None else None
        try:
            calls = self._timed_calls(observed)  # see nstviz.capture.timed_runs
            timing, note = time_run(
                name, calls,
                backend=self.backend,
                marks=marks or (lambda: functions),
                lift=lift,
                failed=result.exception is not None,
                eager=not name.startswith("attempt-"),  # eager is the same code every attempt
                live=live_code(self._subject, result.run, observed, calls) if live and self._subject else None,
            )
        finally:
            if timed_state is not None:
                timed_state.restore()
                timed_state.discard()
        if timing is not None:
            result.run = dataclasses.replace(result.run, timing=timing)
        if note is not None:
            self.notes.append(note)

    def _worth_timing(self, name: str, result: RunResult) -> bool:
        """Whether to time this run: always but an advisor attempt with more graphs than a run before.

        Such an attempt cannot become the recommendation (the fewest graphs win, time only
        breaks ties), so its measurement would buy nothing.
        """
        graphs = dynamo_graphs(result.run)
        fewest = min((dynamo_graphs(r.run) for r in self.results.values() if not _failed(r)), default=None)
        if name.startswith("attempt-") and (_failed(result) or (fewest is not None and graphs > fewest)):
            return False
        return True

    def _timed_calls(self, observed: list[Any] | None) -> list[Any]:
        """The calls to time: ``compare``'s call, or the compiled calls a code run was seen to make."""
        if observed is not None:
            return observed
        subject = self._subject
        if subject is None:
            return []
        ns = subject.namespace
        return [(ns["fn"], ns["args"], ns["kwargs"])]

    def _advise(
        self, subject: Subject, base: RunResult, checkpoint: NamespaceCheckpoint, outputs: _Outputs, rng: dict[str, Any]
    ) -> Advice:
        if self.advisor is None:
            raise UsageError("auto=True needs an advisor: pass Session(advisor=nstviz.advisor.search.search)")
        search = self.advisor
        baseline_run = self.plain_run("baseline")
        run_s = base.run.wall_time_s
        # one deadline for the whole advisor (given, or 60 s / six runs), room kept for the final run, its timing and the last check
        checks = 2 if subject.entry == "compare" else 0  # the recommendation's last check: compiles as explain makes them
        self.deadline = Deadline.for_advisor(self.plan.advisor_budget_s, run_s, after_run_s=self._timing_cost, check_compiles=checks)
        self.say("attempt", f"advisor: {self.deadline.named()}")
        try:
            advice = search(
                baseline_run,
                Trials(self, subject, base, checkpoint, outputs, rng),
                budget_s=self.deadline.budget_s,
                max_attempts=self.plan.advisor_attempts,
                progress=lambda msg: self.say(msg.split(":", 1)[0] if msg.startswith("attempt-") else "attempt", msg),
            )
        finally:
            self.deadline.reserve_s = self.deadline.check_s = 0.0  # the reserve is the final run's to spend now
        self.count.advisor_done(sum(1 for name in self.results if name.startswith("attempt-")))
        return advice

    # -- live objects -> plain values --------------------------------------------------------

    def _plain_run(self, result: RunResult, name: str) -> CapturedRun:
        """The run, its non-strict calls and its marks, with every function turned into names."""
        calls = [self._plain_call(call, "nonstrict_trace") for call in result.nonstrict_calls]
        calls += [self._plain_call(call, "leaf_function") for call in result.leaf_calls]
        marks = []
        for target in self.targets.get(name, ()):
            key = code_key(target.function)
            origin = "requested" if name == "nonstrict" and key not in self.advisor_keys else "advisor"
            record = marking.marked_function(target, origin)
            marks.append(
                CapturedMark(
                    record=_with_reads(record, self._reads(target.function)),
                    key=str(key),
                    name=getattr(unwrap(target.function), "__name__", None),
                )
            )
        return CapturedRun(run=result.run, calls=tuple(calls), marks=tuple(marks))

    def _plain_call(self, call: Any, decorator: Literal["nonstrict_trace", "leaf_function"]) -> CapturedCall:
        """One traced call as names; a leaf_function's body runs eagerly, so it bakes in no reads."""
        fn = unwrap(call.function) if call.function is not None else None
        site = plain.call_site(call, reads=self._reads(fn) if decorator == "nonstrict_trace" else ())
        return CapturedCall(site=site, key=str(code_key(fn)) if fn is not None else None, decorator=decorator)

    def _reads(self, fn: Any) -> tuple[NonInputRead, ...]:
        if fn is None:
            return ()
        key = id(fn)
        if key not in self._reads_cache:
            try:
                reads = tuple(find_non_input_reads(fn))
            except Exception:  # a scan that fails must not fail the capture
                reads = ()
            self._reads_cache[key] = reads
        return self._reads_cache[key]

    def _captured(
        self,
        subject: Subject,
        outputs: dict[str, Mapping[str, Any]] | None,
        candidates: tuple[Candidate, ...],
        recommendation: Recommendation | None,
    ) -> CapturedRuns:
        runs = {name: self._plain_run(result, name) for name, result in self.results.items()}
        comparisons: tuple[OutputComparison, ...] | None = None
        nondeterministic = False
        if outputs is not None:
            failed = {n for n in ("baseline", "nonstrict") if n in self.results and _failed(self.results[n])}
            comparisons, nondeterministic = _compare(
                {k: v for k, v in outputs.items() if k not in failed}, "nonstrict"
            )
        stacks = tuple(tuple(s) for s in self.stacks.stacks)
        meta = ReportMeta(
            torch_version=_torch_compat.torch_version(),
            nstviz_version=__version__,
            python_version=platform.python_version(),
            created=self.created,
            title=subject.title,
            entry=subject.entry,
            backend=self.backend if isinstance(self.backend, str) else qualified_name(self.backend),
            nonstrict=tuple(s if isinstance(s, str) else qualified_name(unwrap(s)) for s in subject.requested),
            baseline_mode=self.baseline_mode,  # type: ignore[arg-type]
            elapsed_s=round(time.perf_counter() - self.start, 3),
        )
        return CapturedRuns(
            meta=meta,
            runs=runs,
            stacks=stacks,
            comparisons=comparisons,
            nondeterministic=nondeterministic,
            notes=(*_torch_compat.capture_notes(self._lost), *self.notes),
            advisor_untried=self.deadline.summary() if self.deadline is not None else None,
            candidates=candidates,
            recommendation=recommendation,
            sources=_sources(runs.values(), stacks),
        )


# -- helpers ------------------------------------------------------------------------------------


def _nothing_compiled(subject: Subject, base: RunResult) -> None:
    """Raise what the user must see when the baseline compiled nothing."""
    if base.exception is not None and not isinstance(base.exception, NothingCompiledError):
        raise base.exception
    if subject.entry == "compare":
        raise NothingCompiledError(
            f"calling {subject.title or 'the function'}(...) compiled nothing: Dynamo produced no graph "
            "(it ran no tensor code, or returned a generator without running it); pass a "
            "function or module whose call runs tensor operations"
        )
    raise NothingCompiledError(
        "the code ran but torch.compile compiled nothing: no function or module "
        "wrapped by torch.compile was called. Wrap it (e.g. @torch.compile(fullgraph=True)) "
        "and call it in the same code."
    )


def _with_reads(record: Any, reads: tuple[NonInputRead, ...]) -> Any:
    import dataclasses

    return dataclasses.replace(record, reads=reads)


def _names(items: Iterable[Any]) -> str:
    return ", ".join(qualified_name(getattr(item, "function", item)) for item in items)


def _sources(runs: Iterable[CapturedRun], stacks: Sequence[Sequence[Any]]) -> dict[str, SourceFile]:
    paths: list[str] = []
    for captured in runs:
        sites = [call.site for call in captured.calls]
        paths += plain.source_paths(captured.run, sites=sites, marks=[m.record.file for m in captured.marks])
    return plain.sources(stacks, paths)


__all__ = ["Progress", "Session"]
