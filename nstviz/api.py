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
- Size limits: a graph keeps at most ``nstviz.tracing.MAX_NODES_PER_GRAPH`` nodes
  (60,000; :attr:`Graph.truncated` and a note say so), source text at most 8 M characters
  per Report, guards 200 lines per compile, printed output 200,000 characters per run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, Literal

from nstviz._options import DEFAULT_MAX_ATTEMPTS, BaselineMode, CaptureOptions
from nstviz.advisor.search import search
from nstviz.capture import _torch_compat, marking
from nstviz.capture.plan import RunPlan
from nstviz.capture.recorder import Backend
from nstviz.capture.session import Progress, Session
from nstviz.capture.subject import callable_subject, code_subject
from nstviz.errors import UsageError
from nstviz.report import Report

# -- public API ---------------------------------------------------------------------------


def compare(
    fn: Callable[..., Any],
    *args: Any,
    nonstrict: Iterable[marking.Spec] = (),
    auto: bool = False,
    backend: Backend = "record",
    baseline: BaselineMode = "as_written",
    check: bool = True,
    budget_s: float | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    progress: Progress | None = None,
    echo: bool = False,
    time: bool = True,
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
            ``budget_s`` seconds; what the budget left untried is :attr:`Report.advisor_untried`).
        backend: ``"record"`` (default), ``"inductor"``, ``"as_written"``, a backend name or
            a callable backend.
        baseline: ``"as_written"``, or ``"strict"`` to run the baseline with the code's own
            ``nonstrict_trace`` marks lifted (to see what they buy).
        check: compare outputs (baseline vs nonstrict vs eager).
        budget_s: time budget of the advisor, in seconds, its final run included; a step starts
            only when it can end in time (overrun: one run at most). None: 60 s, or six runs of
            the code when one run (the baseline's) takes longer than 10 s.
        max_attempts: attempt budget of the advisor.
        progress: called with ``{"phase", "message", "elapsed_s", "runs_done",
            "runs_total"}`` as the runs go on.
        echo: let the printed output of each run through to the real stdout/stderr.
        time: time the baseline and the nonstrict run (:attr:`Run.timing`): right after each
            run, the code it compiled is called again, warmed up, then measured against eager;
            nothing is compiled twice (the compile figures are the captured run's, "(captured
            run)"), so it costs the measured calls, about 0.3 s per run. Advisor attempts are
            timed (compiled afresh) only to break a tie on graphs. ``time=False`` skips it.
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
    options = _checked_options(locals())
    _torch_compat.check_supported()
    subject = callable_subject(fn, args, kwargs, backend=options.backend, nonstrict=options.nonstrict)
    return _capture(subject, options, "compare", progress)


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
    budget_s: float | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    echo: bool = False,
    title: str = "",
    time: bool = False,
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
        budget_s: time budget of the advisor, in seconds (see :func:`compare`; None: 60 s, or
            six runs of the code when that is longer).
        max_attempts: attempt budget of the advisor.
        echo: let the printed output of each run through to the real stdout/stderr.
        title: a title for the Report.
        time: time the baseline and the nonstrict run (:attr:`Run.timing`). The code is not
            run again for it: the calls of compiled functions and modules it made are noted
            during each run and only those are called again right after it (the code the run
            compiled, not compiled twice; warmed up, measured against eager), since the rest
            of the code may have side effects.

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
    options = _checked_options(locals())
    _torch_compat.check_supported()
    subject = code_subject(source, namespace, nonstrict=options.nonstrict, filename=filename, title=title)
    return _capture(subject, options, "trace_code", progress)


_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(CaptureOptions))


def _checked_options(arguments: dict[str, Any]) -> CaptureOptions:
    """The checked :class:`CaptureOptions` among a public function's ``locals()``.

    :func:`compare` and :func:`trace_code` name their option parameters as the fields are
    named (``tests/unit/test_options.py`` keeps it so), so the options are picked by name.
    """
    return CaptureOptions(**{name: value for name, value in arguments.items() if name in _OPTION_NAMES}).checked()


Entry = Literal["compare", "trace_code"]


def run_plan(options: CaptureOptions, entry: Entry) -> RunPlan:
    """The runs :func:`compare` or :func:`trace_code` makes with ``options`` (what progress totals follow).

    ``compare`` with ``check`` runs the callable eagerly first (the output check's reference);
    ``trace_code`` with ``check`` runs the code eagerly only when the baseline raised.
    """
    return RunPlan(
        eager_first=entry == "compare" and options.check,
        eager_if_baseline_raises=entry == "trace_code" and options.check,
        check=options.check,
        advisor_attempts=options.max_attempts if options.auto else 0,
        advisor_budget_s=options.budget_s,
    )


def _capture(subject: Any, options: CaptureOptions, entry: Entry, progress: Progress | None) -> Report:
    session = Session(
        backend=options.backend,
        baseline_mode=options.baseline,
        progress=progress,
        echo=options.echo,
        advisor=search,
        timing=options.time,
    )
    return session.capture(subject, run_plan(options, entry))


def user_exception(report: Report) -> BaseException | None:
    """The exception the user's code raised in the last run of ``report`` (live), or None."""
    return report.user_exception


__all__ = ["compare", "run_plan", "trace_code", "user_exception"]
