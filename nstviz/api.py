"""Capture what ``torch.compile`` does to code, with and without ``nonstrict_trace``.

Two entry points build a :class:`~nstviz.report.Report`:

- :func:`compare` for a callable (a function, an ``nn.Module``, or an object already wrapped
  by ``torch.compile``, whose own settings, ``fullgraph`` included, are kept);
- :func:`trace_code` for a block of code run in a namespace (what ``%%nstrace`` calls).

Both run the code several times under capture: **baseline** (as written), **nonstrict**
(with the chosen functions traced by ``torch._dynamo.nonstrict_trace``), and, with
``auto=True``, advisor attempts (``attempt-N``); :func:`compare` also runs the function
eagerly, twice, for the output check (the second eager run tells non-deterministic code).
:func:`trace_code` runs the code eagerly once (``torch.compiler.set_stance("force_eager")``)
only when the baseline raised, so the nonstrict outputs are still checked (against eager).

How it works, and its limits:

- ``torch._dynamo.reset()`` runs before every run and once more at the end: compiled code
  cached before the call is dropped, and the next call of a compiled object recompiles with
  its own backend (the first call after nstviz is slower, as after a restart). Dynamo's
  ``__compiled_fn_*``/``__resume_at_*`` globals of every run but the last are deleted then.
- Every run starts from the same RNG state (torch, ``random``, numpy); at the end the RNG
  states are put back as they were before the call.
- Functions are marked non-strict by id (``torch._dynamo.trace_rules``), never by editing
  or rebinding the user's code; marks are always removed afterwards. In :func:`trace_code`,
  functions the code itself (re)defines are found again after every top-level statement,
  so ``nonstrict=["helper"]`` works for a ``def helper`` in the same cell.
- ``torch`` ignores non-strict marks on an ``nn.Module``'s ``forward`` for ``module(...)``
  calls: such a mark is reported as not applied (:attr:`MarkedFunction.applied`).
- The namespace is rolled back between runs (:mod:`nstviz.capture.namespace`) and ends as
  after the last run. Objects outside the namespace (module globals, files) are not.
- The printed output of each run is captured into :attr:`Run.stdout`/:attr:`Run.stderr`
  (``echo=True`` also lets it through).
- A ``fullgraph=True`` failure in the baseline is a finding (a fatal :class:`Break`), not a
  crash; the nonstrict run still happens. Other exceptions of the user's code are recorded in
  :attr:`Run.error` and kept live on :attr:`Report.user_exception` (see
  :meth:`Report.raise_user_error`, :func:`user_exception`).
- One capture at a time: a second one started meanwhile (another thread, or nested in the
  captured code) is refused with :class:`~nstviz.errors.UsageError`. Other threads may run
  torch meanwhile: their compiles are not recorded, but the resets make them recompile and
  the RNG states are put back at the end (see ``docs/reliability.md``).
- Backends: ``"record"`` (default; ``aot_autograd`` without code generation, fast),
  ``"inductor"`` (the real inductor, also records its post-grad graphs), ``"as_written"``
  (each compiled object's own backend; ATen graphs are recorded for inductor and
  ``aot_eager``, the Dynamo graph for any backend), or any backend name or callable
  (Dynamo graphs recorded around it).
- Size limits: a graph keeps at most ``nstviz.capture.convert.MAX_NODES_PER_GRAPH`` nodes
  (60,000; :attr:`Graph.truncated` and a note say so), source text at most 8 M characters
  per Report, guards 200 lines per compile, printed output 200,000 characters per run.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import datetime
import itertools
import linecache
import platform
import threading
import time
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from nstviz.analysis.break_diff import diff_breaks
from nstviz.analysis.counts import run_counts
from nstviz.analysis.provenance import CallSite, assign_baseline_graphs, build_regions
from nstviz.capture import _torch_compat, marking, state
from nstviz.capture.convert import StackTable, is_user_file, read_source
from nstviz.capture.recorder import Backend
from nstviz.capture.runner import RunResult, captured_output, execute
from nstviz.errors import NameResolutionError, NothingCompiledError, UsageError
from nstviz.report import (
    Candidate,
    MarkedFunction,
    NonInputRead,
    OutputCheck,
    Recommendation,
    Report,
    Run,
    SourceFile,
)

Progress = Callable[[dict[str, Any]], None]
BaselineMode = Literal["as_written", "strict"]
_cell_counter = itertools.count(1)


# -- public API ---------------------------------------------------------------------------


def compare(
    fn: Callable[..., Any],
    *args: Any,
    nonstrict: Iterable[marking.Spec] = (),
    auto: bool = False,
    backend: Backend = "record",
    baseline: BaselineMode = "as_written",
    check: bool = True,
    budget_s: float = 60.0,
    max_attempts: int = 8,
    progress: Progress | None = None,
    echo: bool = False,
    **kwargs: Any,
) -> Report:
    """Call ``fn(*args, **kwargs)`` under ``torch.compile``, as written and non-strict.

    Args:
        fn: a plain function or ``nn.Module`` (nstviz compiles it with ``torch.compile``),
            or an object already wrapped by ``torch.compile`` (its own settings, e.g.
            ``fullgraph=True``, are kept).
        *args: positional arguments for ``fn``.
        nonstrict: functions to trace non-strictly: callables, names resolved in ``fn``'s
            globals (``"helper"``), or dotted paths (``"Block.stats"``, ``"mymod.helper"``).
        auto: let the advisor find functions to mark (tries up to ``max_attempts`` within
            ``budget_s`` seconds).
        backend: ``"record"`` (default), ``"inductor"``, ``"as_written"``, a backend name or
            a callable backend.
        baseline: ``"as_written"``, or ``"strict"`` to run the baseline with the code's own
            ``nonstrict_trace`` marks lifted (to see what they buy).
        check: compare outputs (baseline vs nonstrict vs eager).
        budget_s: time budget of the advisor, in seconds.
        max_attempts: attempt budget of the advisor.
        progress: called with ``{"phase", "message", "elapsed_s", "runs_done",
            "runs_total"}`` as the runs go on.
        echo: let the printed output of each run through to the real stdout/stderr.
        **kwargs: keyword arguments for ``fn``.

    Returns:
        The :class:`Report` (``entry="compare"``).

    Raises:
        NameResolutionError: a ``nonstrict`` name is unknown or ambiguous.
        NotMarkableError: a ``nonstrict`` target cannot be traced non-strictly.
        NothingCompiledError: calling ``fn`` compiled nothing.
        UnsupportedTorchError: the installed torch lacks what nstviz needs.
    """
    if not callable(fn):
        raise UsageError(f"compare() needs a callable (a function or module), got {type(fn).__name__}")
    _check_options(backend, baseline)
    _torch_compat.check_supported()
    import torch

    if _torch_compat.is_compiled_object(fn):
        compiled = fn
        eager = getattr(fn, "_orig_mod", None) or getattr(fn, "_torchdynamo_orig_callable", fn)
        if isinstance(fn, types.MethodType) and not isinstance(eager, types.MethodType):
            eager = types.MethodType(eager, fn.__self__)  # @torch.compile on a method: keep self
    else:
        compiled = torch.compile(fn, backend="eager" if backend == "record" else _plain_backend(backend))
        eager = fn
    namespace = dict(getattr(_unwrap_callable(eager), "__globals__", {}) or {})
    targets = marking.resolve(tuple(nonstrict), namespace)
    session = _Session(
        entry="compare",
        backend=backend,
        baseline_mode=baseline,
        progress=progress,
        echo=echo,
        runs_total=(3 if check else 2) + (max_attempts if auto else 0),
        title=marking.qualname_of(_unwrap_callable(eager)),
    )
    user_state = {"fn": fn, "args": args, "kwargs": kwargs}

    def body_of(target: Callable[..., Any]) -> Callable[[Callable[[], None]], Any]:
        def body(_remark: Callable[[], None]) -> Any:
            return target(*args, **kwargs)

        return body

    return session.capture(
        namespace=user_state,
        make_body=lambda: body_of(compiled),
        eager_body=body_of(eager) if check else None,
        outputs_of=lambda result: {"return": result.value} if result.exception is None else {},
        requested=targets,
        marks_of=lambda fixed: (lambda: fixed),
        resolve_name=lambda name: _try_resolve(name, namespace),
        check=check,
        auto=auto,
        budget_s=budget_s,
        max_attempts=max_attempts,
    )


def trace_code(
    source: str,
    namespace: dict[str, Any],
    nonstrict: Iterable[marking.Spec] = (),
    auto: bool = False,
    backend: Backend = "record",
    baseline: BaselineMode = "as_written",
    check: bool = True,
    filename: str | None = None,
    progress: Progress | None = None,
    budget_s: float = 60.0,
    max_attempts: int = 8,
    echo: bool = False,
    title: str = "",
) -> Report:
    """Run a block of code in ``namespace`` as written, then with functions traced non-strictly.

    The code runs as written each time, so ``@torch.compile(...)`` inside it and compiled
    objects defined earlier both work (their ``fullgraph``/``dynamic`` settings are kept;
    only the backend is replaced according to ``backend``). The namespace is rolled back
    between runs and ends as after the last run.

    Args:
        source: the code (a notebook cell, a script).
        namespace: the globals to run it in (e.g. ``get_ipython().user_ns``); modified.
        nonstrict: functions to trace non-strictly: names (``"get_magic_num"``), dotted paths
            (``"Block.stats"``, ``"model.blocks.0.norm_stats"``) or callables. Names may refer
            to functions the code itself defines.
        auto: let the advisor find functions to mark.
        backend: ``"record"`` (default), ``"inductor"``, ``"as_written"``, a backend name or
            callable.
        baseline: ``"as_written"`` or ``"strict"`` (lift the code's own ``nonstrict_trace``
            marks in the baseline).
        check: compare the values the code assigns (new or rebound names), baseline vs
            nonstrict.
        filename: the name the code's frames carry (an IPython cell name, a script path);
            by default ``<nstviz-cell-N>``, registered with :mod:`linecache`.
        progress: called with progress dicts (see :func:`compare`).
        budget_s: time budget of the advisor, in seconds.
        max_attempts: attempt budget of the advisor.
        echo: let the printed output of each run through to the real stdout/stderr.
        title: a title for the Report.

    Returns:
        The :class:`Report`. If the code raised in the last run, the exception is on
        :attr:`Report.user_exception` (re-raise it with :meth:`Report.raise_user_error`).

    Raises:
        UsageError: the code has a syntax error, or bad options.
        NameResolutionError: a ``nonstrict`` name is unknown or ambiguous.
        NotMarkableError: a ``nonstrict`` target cannot be traced non-strictly.
        NothingCompiledError: the code ran but compiled nothing.
        BaseException: whatever the code raised, when it raised before compiling anything.
    """
    if not isinstance(source, str):
        raise UsageError(f"trace_code() needs the code as a str, got {type(source).__name__}")
    if not isinstance(namespace, dict):
        raise UsageError(f"trace_code() needs a dict namespace, got {type(namespace).__name__}")
    _check_options(backend, baseline)
    _torch_compat.check_supported()
    filename = filename or f"<nstviz-cell-{next(_cell_counter)}>"
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise UsageError(
            f"the code has a syntax error at line {exc.lineno}: {exc.msg}; fix it and run again"
        ) from exc
    if not linecache.getlines(filename):
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    flags = _future_flags(tree)
    statements = [
        compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec", flags=flags, dont_inherit=True)
        for stmt in tree.body
    ]
    specs = tuple(nonstrict)
    defined = _bound_names(tree)
    for spec in specs:  # fail before running anything when a name cannot exist
        if isinstance(spec, str) and spec.split(".")[0] not in defined:
            marking.resolve_one(spec, namespace)
        elif not isinstance(spec, str):
            marking.resolve_one(spec, namespace)

    def body(remark: Callable[[], None]) -> None:
        for code in statements:
            exec(code, namespace)
            remark()

    session = _Session(
        entry="trace_code",
        backend=backend,
        baseline_mode=baseline,
        progress=progress,
        echo=echo,
        runs_total=2 + (max_attempts if auto else 0),
        title=title,
    )
    return session.capture(
        namespace=namespace,
        make_body=lambda: body,
        eager_body=None,
        outputs_of=_assigned_values(namespace, _loaded_names(tree)),
        requested=specs,
        marks_of=lambda fixed: _rematcher(fixed, namespace),
        resolve_name=lambda name: _try_resolve(name, namespace),
        check=check,
        auto=auto,
        budget_s=budget_s,
        max_attempts=max_attempts,
        lazy_namespace=namespace,
    )


def user_exception(report: Report) -> BaseException | None:
    """The exception the user's code raised in the last run of ``report`` (live), or None."""
    return report.user_exception


# -- the session ----------------------------------------------------------------------------


class _Session:
    """Orchestrates the runs of one call and assembles the Report."""

    def __init__(
        self,
        *,
        entry: str,
        backend: Backend,
        baseline_mode: BaselineMode,
        progress: Progress | None,
        echo: bool,
        runs_total: int,
        title: str,
    ) -> None:
        self.entry = entry
        self.backend = backend
        self.baseline_mode = baseline_mode
        self.progress_cb = progress
        self.echo = echo
        self.runs_total = runs_total
        self.runs_done = 0
        self.title = title
        self.start = time.perf_counter()
        self.created = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        self.stacks = StackTable()
        self.results: dict[str, RunResult] = {}
        self.marked: dict[str, tuple[MarkedFunction, ...]] = {}
        self.targets: dict[str, tuple[marking.Target, ...]] = {}
        self.notes: list[str] = []
        self._reads_cache: dict[int, tuple[NonInputRead, ...]] = {}
        self.advisor_keys: set[Any] = set()
        self._hooks_before: set[int] | None = None
        self._names_before: set[str] = set()
        self.namespace: dict[str, Any] | None = None  # trace_code's: where Dynamo installs its globals

    def say(self, phase: str, message: str) -> None:
        if self.progress_cb is None:
            return
        with contextlib.suppress(Exception):
            self.progress_cb(
                {
                    "phase": phase,
                    "message": message,
                    "elapsed_s": round(time.perf_counter() - self.start, 3),
                    "runs_done": self.runs_done,
                    "runs_total": self.runs_total,
                }
            )

    def capture(
        self,
        *,
        namespace: dict[str, Any],
        make_body: Callable[[], Callable[[Callable[[], None]], Any]],
        eager_body: Callable[[Callable[[], None]], Any] | None,
        outputs_of: Callable[[RunResult], Mapping[str, Any]],
        requested: Sequence[marking.Spec] | Sequence[marking.Target],
        marks_of: Callable[[Sequence[Callable[..., Any]]], Callable[[], Sequence[Callable[..., Any]]]],
        resolve_name: Callable[[str], Callable[..., Any] | None],
        check: bool,
        auto: bool,
        budget_s: float,
        max_attempts: int,
        lazy_namespace: dict[str, Any] | None = None,
    ) -> Report:
        self.namespace = lazy_namespace
        _acquire_capture()
        try:
            snapshot = state.StateSnapshot.take()
            checkpoint = _checkpoint(namespace)
        except BaseException:
            _release_capture()
            raise
        rng = snapshot.rng
        finished = False
        outputs: dict[str, Mapping[str, Any]] = {}
        try:
            if eager_body is not None:
                self.say("baseline", "running eagerly (reference for the output check)")
                outputs["eager"] = self._eager(eager_body, rng, outputs_of) or {}
                checkpoint.restore()
                # a second eager run tells whether the code disagrees with itself
                outputs["eager (again)"] = self._eager(eager_body, rng, outputs_of) or {}
                self.runs_done += 1
                checkpoint.restore()
            self.say(
                "baseline",
                "running the code as written" + (f" (then up to {max_attempts} advisor attempts)" if auto else ""),
            )
            base = self._run("baseline", make_body(), rng, (), lift=self.baseline_mode == "strict")
            if check:
                outputs["baseline"] = _snapshot(outputs_of(base))
            # trace_code has no eager run of its own: when the baseline raised, one is added
            eager_reference = check and eager_body is None and base.exception is not None
            if eager_reference:
                self.runs_total += 1
            if not base.run.graphs and not base.run.breaks and not base.run.compiles:
                if base.exception is not None and not isinstance(base.exception, NothingCompiledError):
                    raise base.exception
                if self.entry == "compare":
                    raise NothingCompiledError(
                        f"calling {self.title or 'the function'}(...) compiled nothing: Dynamo produced no graph "
                        "(it ran no tensor code, or returned a generator without running it); pass a "
                        "function or module whose call runs tensor operations"
                    )
                raise NothingCompiledError(
                    "the code ran but torch.compile compiled nothing: no function or module "
                    "wrapped by torch.compile was called. Wrap it (e.g. @torch.compile(fullgraph=True)) "
                    "and call it in the same code."
                )
            # names the code defines exist now: resolve the requested functions
            targets = self._resolve(requested, lazy_namespace)
            candidates: tuple[Candidate, ...] = ()
            recommendation: Recommendation | None = None
            if auto:
                candidates, recommendation = self._advise(
                    base, checkpoint, make_body, outputs, outputs_of, marks_of, resolve_name, rng, budget_s, max_attempts
                )
                # the estimate counted every allowed attempt; now the runs left are known
                self.runs_total = self.runs_done + 1 + (1 if eager_reference else 0)
                if recommendation is not None:
                    extra = [resolve_name(n) for n in recommendation.functions]
                    known = {id(t.function) for t in targets}
                    added = tuple(
                        marking.Target(spec=n, function=f)
                        for n, f in zip(recommendation.functions, extra, strict=True)
                        if f is not None and id(f) not in known
                    )
                    self.advisor_keys.update(_code_key(t.function) for t in added)
                    targets += added
            if eager_reference:
                # The baseline raised, so there is nothing to compare the nonstrict run with:
                # run the code once eagerly as the reference. It runs before the nonstrict run
                # (not after) so that the namespace still ends as after the last compiled run,
                # whose compiled code the user keeps using, without re-running anything.
                checkpoint.restore()
                self.say("eager", "the baseline raised: running the code eagerly (reference for the output check)")
                reference = self._eager(make_body(), rng, outputs_of, force_eager=True)
                self.runs_done += 1
                if reference is not None:
                    outputs["eager"] = reference
            checkpoint.restore()
            self.say("nonstrict", f"running with {_names(targets) or 'no functions'} traced non-strictly")
            functions = tuple(t.function for t in targets)
            import torch  # issue 11: the recommended config flags apply to the nonstrict run too

            flags = {f: True for f in (recommendation.config if recommendation is not None else ())}
            with torch._dynamo.config.patch(**flags):
                nst = self._run("nonstrict", make_body(), rng, functions, marks=marks_of(functions))
            self.targets["nonstrict"] = targets
            if check:
                outputs["nonstrict"] = _snapshot(outputs_of(nst))
            checkpoint.discard()
            finished = True
            report = self._assemble(outputs if check else None, candidates, recommendation, requested)
            self.say("done", report.summary().splitlines()[0] if hasattr(report, "summary") else "done")
            return report
        except BaseException:
            if not finished:
                with contextlib.suppress(Exception):
                    checkpoint.restore()
            raise
        finally:
            try:
                with state.interrupt_latch(defer=True):  # a Ctrl-C now must not cut the restore in half
                    with contextlib.suppress(Exception):
                        _torch_compat.dynamo_reset()
                    snapshot.restore()
            finally:
                _release_capture()

    # -- pieces -------------------------------------------------------------------------

    def _eager(
        self,
        body: Callable[[Callable[[], None]], Any],
        rng: dict[str, Any],
        outputs_of: Callable[[RunResult], Mapping[str, Any]],
        *,
        force_eager: bool = False,
    ) -> Mapping[str, Any] | None:
        """Outputs of one eager run of ``body``.

        With ``force_eager``, ``torch.compile``-wrapped code inside ``body`` runs eagerly too
        (``torch.compiler.set_stance("force_eager")``, put back after), its printed output is
        captured like a run's, and None is returned when it raised.
        """
        import torch

        state.set_rng_state(rng)
        try:
            if force_eager:
                with captured_output(self.echo), torch.compiler.set_stance("force_eager"):
                    value = body(lambda: None)
            else:
                value = body(lambda: None)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            self.notes.append(f"the eager reference run raised {type(exc).__name__}: {exc}"[:500])
            return None if force_eager else {}
        return _snapshot(outputs_of(RunResult(run=Run(name="eager"), value=value)))

    def _run(
        self,
        name: str,
        body: Callable[[Callable[[], None]], Any],
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
            if self.namespace is not None:
                _torch_compat.drop_new_dynamo_names(self.namespace, self._names_before)
        self._hooks_before = _torch_compat.dynamo_global_hooks()
        self._names_before = set(self.namespace or ())
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
        self.results[name] = result
        self.notes.extend(result.notes)
        self.runs_done += 1
        return result

    def _resolve(
        self, requested: Sequence[Any], namespace: dict[str, Any] | None
    ) -> tuple[marking.Target, ...]:
        if requested and isinstance(requested[0], marking.Target):
            return tuple(requested)
        return marking.resolve(tuple(requested), namespace or {})

    def _advise(
        self,
        base: RunResult,
        checkpoint: Any,
        make_body: Callable[[], Callable[[Callable[[], None]], Any]],
        outputs: dict[str, Mapping[str, Any]],
        outputs_of: Callable[[RunResult], Mapping[str, Any]],
        marks_of: Callable[[Sequence[Callable[..., Any]]], Callable[[], Sequence[Callable[..., Any]]]],
        resolve_name: Callable[[str], Callable[..., Any] | None],
        rng: dict[str, Any],
        budget_s: float,
        max_attempts: int,
    ) -> tuple[tuple[Candidate, ...], Recommendation | None]:
        try:
            from nstviz.analysis.advisor import run_advisor
        except ImportError:
            self.notes.append("the advisor is not available in this build of nstviz")
            return (), None
        baseline_run = self._finish_run(base, "baseline")

        def try_marks(functions: tuple[Callable[..., Any], ...], run_name: str) -> tuple[Run, OutputCheck]:
            checkpoint.restore()
            self.runs_total = max(self.runs_total, self.runs_done + 2)  # this attempt + the nonstrict run
            result = self._run(run_name, make_body(), rng, functions, marks=marks_of(functions))
            self.targets[run_name] = tuple(marking.Target(spec=marking.qualname_of(f), function=f) for f in functions)
            if base.exception is not None and result.exception is None and outputs.get("eager"):
                # issue 11: the baseline failed to compile; the attempt's outputs are checked against eager
                check = _output_check({"eager": outputs["eager"], run_name: _snapshot(outputs_of(result))}, run_name)
            elif base.exception is not None or result.exception is not None:
                failed = "baseline" if base.exception is not None else run_name
                check = OutputCheck(match=None, skipped_reason=f"the {failed} run raised, so outputs cannot be compared")
            else:
                check = _output_check(
                    {"baseline": outputs.get("baseline", {}), run_name: _snapshot(outputs_of(result))}, run_name
                )
            return self._finish_run(result, run_name), check

        def try_config(  # issue 11: the breaks' config hints as attempts
            functions: tuple[Callable[..., Any], ...], flags: dict[str, bool], run_name: str
        ) -> tuple[Run, OutputCheck]:
            import torch

            with torch._dynamo.config.patch(**flags):
                return try_marks(functions, run_name)

        return run_advisor(
            baseline_run,
            resolve_name,
            try_marks,
            budget_s=budget_s,
            max_attempts=max_attempts,
            progress=lambda msg: self.say(msg.split(":", 1)[0] if msg.startswith("attempt-") else "attempt", msg),
            try_config=try_config,
        )

    def _finish_run(self, result: RunResult, name: str) -> Run:
        """The Run with regions, marked functions and their reads filled in."""
        calls: list[CallSite] = []
        for call in result.nonstrict_calls:
            fn = marking.underlying(call.function) if call.function is not None else None
            file, start, end = marking.source_range(fn) if fn is not None else (None, None, None)
            calls.append(
                CallSite(
                    graph_id=call.graph_id,
                    node=call.node,
                    qualname=marking.qualname_of(fn) if fn is not None else call.name,
                    file=file,
                    line_start=start,
                    line_end=end,
                    reads=self._reads(fn),
                )
            )
        run = build_regions(result.run, calls, self.stacks.stacks)
        applied_keys = {_code_key(marking.underlying(c.function)) for c in result.nonstrict_calls if c.function}
        marked: list[MarkedFunction] = []
        seen: set[Any] = set()
        for target in self.targets.get(name, ()):
            key = _code_key(target.function)
            seen.add(key)
            origin = "requested" if name == "nonstrict" and key not in self.advisor_keys else "advisor"
            record = marking.marked_function(target, origin)
            applied = key in applied_keys
            warning = target.warning
            failed = _failed_nonstrict(run, target.function) if not applied else None
            if failed is not None:
                cause = f"; root cause: {failed.root_cause}" if failed.root_cause else ""
                warning = (
                    f"{target.qualname} was marked, but nonstrict_trace could not trace it: "
                    f"{failed.reason} ({failed.gb_id}) at {failed.location.file}:{failed.location.line}{cause}"
                )
            if not applied and warning is None:
                warning = (
                    f"{target.qualname} was marked but no call went through nonstrict_trace: it was not "
                    "called inside compiled code, or it is an nn.Module forward called as module(...)"
                )
            marked.append(dataclasses.replace(record, applied=applied, warning=warning, reads=self._reads(target.function)))
        for call in result.nonstrict_calls:  # marks written in the code itself
            fn = marking.underlying(call.function) if call.function is not None else None
            if fn is None or _code_key(fn) in seen:
                continue
            seen.add(_code_key(fn))
            target = marking.Target(spec="<source>", function=fn)
            marked.append(
                dataclasses.replace(marking.marked_function(target, "in_source"), reads=self._reads(fn))
            )
        return dataclasses.replace(run, marked=tuple(marked))

    def _reads(self, fn: Any) -> tuple[NonInputRead, ...]:
        if fn is None:
            return ()
        key = id(fn)
        if key not in self._reads_cache:
            reads: tuple[NonInputRead, ...] = ()
            try:
                from nstviz.analysis.free_reads import find_non_input_reads

                reads = tuple(find_non_input_reads(fn))
            except Exception:
                reads = ()
            self._reads_cache[key] = reads
        return self._reads_cache[key]

    def _assemble(
        self,
        outputs: dict[str, Mapping[str, Any]] | None,
        candidates: tuple[Candidate, ...],
        recommendation: Recommendation | None,
        requested: Sequence[Any],
    ) -> Report:
        runs: dict[str, Run] = {}
        for name in ("baseline", "nonstrict", *[n for n in self.results if n not in ("baseline", "nonstrict")]):
            if name in self.results:
                runs[name] = self._finish_run(self.results[name], name)
        stacks = self.stacks.stacks
        base = runs["baseline"]
        nst = runs.get("nonstrict")
        if nst is not None:
            nst = runs["nonstrict"] = assign_baseline_graphs(base, nst, stacks)
        notes = list(dict.fromkeys(self.notes))
        if nst is not None:
            for m in nst.marked:
                if not m.applied and m.warning:
                    notes.append(m.warning)
                if m.applied and m.reads:
                    names = ", ".join(f"{r.name} ({r.kind.replace('_', ' ')})" for r in m.reads[:6])
                    notes.append(
                        f"{m.qualname} reads {names}, which are not its inputs: nonstrict_trace bakes them "
                        "in as constants without guards, so later changes are not seen by the compiled code"
                    )
            constant = sorted({r.function for r in nst.regions if not any(r.nodes.values())})
            for fn in constant:
                notes.append(
                    f"{fn} produced no ATen nodes: its result was computed once while tracing and baked into "
                    "the graph as a constant (it is not recomputed on later calls)"
                )
        check = OutputCheck(match=None, skipped_reason="the output check was turned off (check=False)")
        if outputs is not None:
            failed = [n for n in ("baseline", "nonstrict") if n in runs and runs[n].error is not None]
            if failed:
                outputs = {k: v for k, v in outputs.items() if k not in failed}
            check = _output_check(outputs, "nonstrict")
            if failed and check.match is None:
                check = dataclasses.replace(
                    check,
                    skipped_reason=f"the {' and the '.join(failed)} run raised, so its outputs cannot be compared",
                )
        last = self.results.get("nonstrict") or self.results.get("baseline")
        return Report(
            torch_version=_torch_compat.torch_version(),
            runs=runs,
            nstviz_version=_nstviz_version(),
            python_version=platform.python_version(),
            created=self.created,
            title=self.title,
            entry=self.entry,  # type: ignore[arg-type]
            backend=self.backend if isinstance(self.backend, str) else marking.qualname_of(self.backend),
            nonstrict=tuple(s if isinstance(s, str) else marking.qualname_of(getattr(s, "function", s)) for s in requested),
            baseline_mode=self.baseline_mode,
            diff=diff_breaks(base, nst) if nst is not None else diff_breaks(base, base),
            counts={name: run_counts(run) for name, run in runs.items()},
            outputs=check,
            candidates=candidates,
            recommendation=recommendation,
            stacks=tuple(stacks),
            sources=_sources(runs.values(), stacks),
            notes=tuple(notes),
            elapsed_s=round(time.perf_counter() - self.start, 3),
            user_exception=last.exception if last is not None else None,
        )


# -- helpers --------------------------------------------------------------------------------

# nstviz patches process-wide torch state (trace rules, the backend call, the trace logger,
# RNG, dynamo caches): two captures at once would undo each other, so one runs at a time.
_CAPTURE_LOCK = threading.Lock()
_capture_thread: list[int] = []


def _acquire_capture() -> None:
    if _CAPTURE_LOCK.acquire(blocking=False):
        _capture_thread[:] = [threading.get_ident()]
        return
    if _capture_thread and _capture_thread[0] == threading.get_ident():
        raise UsageError(
            "nstviz is already capturing in this thread: the code being captured called "
            "nstviz.compare/trace_code (or %nstrace) itself; remove the nested call"
        )
    raise UsageError(
        "another nstviz capture is running in another thread; nstviz captures one at a time "
        "(it patches process-wide torch state); wait for it to finish, then run this again"
    )


def _release_capture() -> None:
    _capture_thread.clear()
    _CAPTURE_LOCK.release()



def _failed_nonstrict(run: Run, fn: Any) -> Any:
    """The GB0251/GB0236-style break Dynamo reported for a marked function, if any."""
    name = getattr(marking.underlying(fn), "__name__", None)
    for brk in run.breaks:
        if brk.gb_id in ("GB0251", "GB0236", "GB0237") and name and f"Function: {name}" in brk.detail:
            return brk
    for brk in run.breaks:
        if brk.gb_id in ("GB0251", "GB0236", "GB0237") and brk.location.code and name and name in brk.location.code:
            return brk
    return None


def _check_options(backend: Any, baseline: Any) -> None:
    if baseline not in ("as_written", "strict"):
        raise UsageError(f"baseline must be 'as_written' or 'strict', got {baseline!r}")
    if not (isinstance(backend, str) and backend) and not callable(backend):
        raise UsageError(f"backend must be a backend name (e.g. 'record', 'inductor') or a callable, got {backend!r}")


def _plain_backend(backend: Backend) -> Any:
    return "inductor" if backend in ("as_written",) else ("eager" if isinstance(backend, str) else backend)


def _unwrap_callable(obj: Any) -> Any:
    if isinstance(obj, types.MethodType):
        return obj.__func__
    forward = getattr(type(obj), "forward", None)
    if forward is not None and not isinstance(obj, types.FunctionType):
        return forward
    return obj


def _try_resolve(name: str, namespace: Mapping[str, Any]) -> Callable[..., Any] | None:
    try:
        return marking.resolve_one(name, namespace).function
    except (NameResolutionError, UsageError):
        return None


def _names(items: Iterable[Any]) -> str:
    out = []
    for item in items:
        fn = getattr(item, "function", item)
        out.append(marking.qualname_of(fn))
    return ", ".join(out)


def _code_key(fn: Any) -> Any:
    fn = marking.underlying(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return id(fn)
    return (code.co_filename, code.co_firstlineno, getattr(fn, "__qualname__", code.co_name))


def _future_flags(tree: ast.Module) -> int:
    """Compiler flags of the code's ``from __future__ import ...`` (statements compile one by one)."""
    import __future__

    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:
                feature = getattr(__future__, alias.name, None)
                if feature is not None:
                    flags |= feature.compiler_flag
    return flags


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
    return names


def _loaded_names(tree: ast.Module) -> list[str]:
    return [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _rematcher(fixed: Sequence[Callable[..., Any]], namespace: dict[str, Any]) -> Callable[[], Sequence[Callable[..., Any]]]:
    """Marks for a re-executed cell.

    The fixed functions plus those the code redefined with the same code location and name.
    """
    keys = {_code_key(f) for f in fixed}

    def current() -> Sequence[Callable[..., Any]]:
        found = list(fixed)
        for value in list(namespace.values()):
            for fn in _functions_in(value):
                if _code_key(fn) in keys:
                    found.append(fn)
        return found

    return current


def _functions_in(value: Any) -> Iterable[Any]:
    if isinstance(value, types.FunctionType):
        yield value
    elif isinstance(value, type):
        for member in list(vars(value).values()):
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if isinstance(member, types.FunctionType):
                yield member


_SKIP_OUTPUT_TYPES = (types.FunctionType, types.ModuleType, type, types.BuiltinFunctionType, types.MethodType)


MAX_STATE_NUMEL = 50_000_000
"""Modules and tensors the code mentions are compared only up to this many elements in all."""


def _assigned_values(namespace: dict[str, Any], mentioned: Iterable[str] = ()) -> Callable[[RunResult], Mapping[str, Any]]:
    """Outputs of a trace_code run.

    Names the run bound or rebound (not functions, classes or modules), plus the state of
    tensors and ``nn.Module`` s bound before the run that the code mentions by name (a training
    step updates them in place: ``model.state_dict``).
    """
    import torch

    before = {k: id(v) for k, v in namespace.items()}
    mentioned = [m for m in dict.fromkeys(mentioned) if m in namespace]

    def outputs(_result: RunResult) -> Mapping[str, Any]:
        out: dict[str, Any] = {}
        for key, value in namespace.items():
            if key.startswith("_") or isinstance(value, _SKIP_OUTPUT_TYPES):
                continue
            if before.get(key) != id(value) and _has_tensor_or_number(value):
                out[key] = value
        budget = MAX_STATE_NUMEL
        for key in mentioned:
            value = namespace.get(key)
            if key in out or before.get(key) != id(value):
                continue
            if isinstance(value, torch.nn.Module):
                state = value.state_dict()
                numel = sum(t.numel() for t in state.values() if isinstance(t, torch.Tensor))
                if numel <= budget:
                    out[f"{key}.state_dict()"] = dict(state)
                    budget -= numel
            elif isinstance(value, torch.Tensor) and value.numel() <= budget:
                out[key] = value
                budget -= value.numel()
        return out

    return outputs


def _has_tensor_or_number(value: Any, depth: int = 0) -> bool:
    import torch

    if isinstance(value, (torch.Tensor, int, float, complex)) and not isinstance(value, bool):
        return True
    if depth > 3:
        return False
    if isinstance(value, Mapping):
        return any(_has_tensor_or_number(v, depth + 1) for v in list(value.values())[:64])
    if isinstance(value, (list, tuple)):
        return any(_has_tensor_or_number(v, depth + 1) for v in value[:64])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_tensor_or_number(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    return False


def _snapshot(values: Mapping[str, Any]) -> Mapping[str, Any]:
    try:
        from nstviz.analysis.output_check import snapshot_outputs
    except ImportError:  # pragma: no cover
        return dict(values)
    try:
        return snapshot_outputs(dict(values))
    except Exception:
        return dict(values)


def _output_check(outputs: Mapping[str, Mapping[str, Any]], other: str) -> OutputCheck:
    try:
        from nstviz.analysis.output_check import build_output_check, compare_outputs
    except ImportError:  # pragma: no cover
        return OutputCheck(match=None, skipped_reason="the output check is not available in this build")
    comparisons = []
    pairs = [("baseline", other), ("eager", "baseline"), ("eager", other)]
    for left, right in pairs:
        if left in outputs and right in outputs:
            comparisons.append(compare_outputs(outputs[left], outputs[right], left_name=left, right_name=right))
    nondeterministic = False
    if "eager" in outputs and "eager (again)" in outputs:
        again = compare_outputs(outputs["eager"], outputs["eager (again)"], left_name="eager", right_name="eager (again)")
        if again.match is False:
            nondeterministic = True
            comparisons.append(again)
    return build_output_check(comparisons, nondeterministic=nondeterministic)


class _NullCheckpoint:
    def restore(self) -> None:
        pass

    def discard(self) -> None:
        pass


def _checkpoint(namespace: dict[str, Any]) -> Any:
    try:
        from nstviz.capture.namespace import NamespaceCheckpoint
    except ImportError:  # pragma: no cover
        return _NullCheckpoint()
    return NamespaceCheckpoint(namespace)


def _sources(runs: Iterable[Run], stacks: Sequence[Sequence[Any]]) -> dict[str, SourceFile]:
    paths: list[str] = []
    for stack in stacks:
        paths.extend(loc.file for loc in stack)
    for run in runs:
        for b in run.breaks:
            paths.append(b.location.file)
            paths.extend(loc.file for loc in b.stack)
        for r in run.regions:
            if r.file:
                paths.append(r.file)
        for m in run.marked:
            if m.file:
                paths.append(m.file)
        for c in run.compiles:
            if c.location is not None:
                paths.append(c.location.file)
    out: dict[str, SourceFile] = {}
    budget = MAX_TOTAL_SOURCE_CHARS
    for path in dict.fromkeys(paths):
        if not is_user_file(path):
            continue
        src = read_source(path)
        if src is None:
            continue
        if len(src.text) > budget:
            src = SourceFile(path=src.path, text=src.text[: max(budget, 0)], truncated=True)
        budget -= len(src.text)
        out[path] = src
    return out


MAX_TOTAL_SOURCE_CHARS = 8_000_000
"""Source text kept in a Report, all files together (later files are truncated)."""


def _nstviz_version() -> str:
    from nstviz import __version__

    return __version__


__all__ = ["compare", "trace_code", "user_exception"]
