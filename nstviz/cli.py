"""The ``nstviz`` command: ``demo``, ``run``, ``view`` and ``check``.

A thin layer over :func:`nstviz.api.trace_code` and :mod:`nstviz.html`: it parses options,
runs a script as ``__main__`` under capture, prints a summary table and writes the files.

Exit codes (also in ``nstviz --help`` and the user guide):

==== =====================================================================================
 0   success (for ``check``: every check passed)
 1   ``check`` failed: outputs differ, breaks were introduced, a mark never applied, the
     nonstrict run raised, or (``--fail-on-break``) breaks remain
 2   usage error: bad option, missing file, unknown ``--nonstrict`` name, bad Report JSON
 3   the user's script raised an exception (not a graph break) in the baseline run
 4   nothing was compiled: the script never called a ``torch.compile``-d function
 5   nstviz itself failed (a bug: please report it with the traceback printed)
130  interrupted (Ctrl-C)
==== =====================================================================================
"""

from __future__ import annotations

import argparse
import builtins
import dataclasses
import os
import re
import sys
import threading
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from nstviz.errors import NothingCompiledError, NstvizError, ReportFormatError, UsageError

if TYPE_CHECKING:
    from nstviz.report import Report, Run

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_SCRIPT_RAISED = 3
EXIT_NOTHING_COMPILED = 4
EXIT_INTERNAL = 5
EXIT_INTERRUPTED = 130

_EXIT_CODES_HELP = """\
exit codes:
  0    success (check: all checks passed)
  1    check failed (outputs differ, breaks introduced or remaining with --fail-on-break, ...)
  2    usage error (bad option, missing file, unknown --nonstrict name, bad Report JSON)
  3    the script raised an exception (other than a graph break) in the baseline run
  4    nothing was compiled (the script never called a torch.compile-d function)
  5    nstviz itself failed (a bug: please report it)
  130  interrupted
"""

_MAIN_EPILOG = (
    """\
examples:
  nstviz demo                                  run the built-in example, write nstviz-demo.html
  nstviz run train.py --nonstrict helper       compare train.py as written vs helper non-strict
  nstviz run train.py --auto -o report.html    let nstviz find the functions to mark
  nstviz view report.json -o report.html       re-render a saved Report
  nstviz check train.py --nonstrict helper --fail-on-break   for CI pipelines

"""
    + _EXIT_CODES_HELP
)


class CliError(Exception):
    """A failure the CLI reports as one line plus a hint, with an exit code."""

    def __init__(self, message: str, hint: str = "", code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.hint = hint
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`CliError` instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(message, hint=f"see `{self.prog} --help`")


# -- progress --------------------------------------------------------------------------


class Progress:
    """Shows which run is going on and for how long, on the real stderr.

    On a terminal it keeps one line up to date (a ticker thread refreshes the elapsed
    time); elsewhere it prints one line per phase. ``quiet`` silences it.
    """

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        # Keep the stream now: the capture swaps sys.stderr while the user's code runs.
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self.message = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, event: Any = None, message: str | None = None, **fields: Any) -> None:
        """Accept a progress event: a dict, an object with ``phase``/``message``, or (phase, message)."""
        if isinstance(event, dict):
            fields = {**event, **fields}
        elif event is not None and not isinstance(event, str):
            fields = {
                k: getattr(event, k)
                for k in ("phase", "message", "runs_done", "runs_total")
                if hasattr(event, k)
            }
        else:
            fields = {"phase": event or "", "message": message or "", **fields}
        phase = str(fields.get("phase") or "")
        text = str(fields.get("message") or "")
        label = _phase_label(phase)
        self.update(f"{label}: {text}" if text and label else (label or text))

    def update(self, message: str) -> None:
        """Show ``message`` as the current step."""
        if self.quiet or not message:
            return
        with self._lock:
            self.message = message
            if self.tty:
                self._draw()
            else:
                self.stream.write(f"nstviz: {message} [{self.elapsed():.1f} s]\n")
                self.stream.flush()

    def elapsed(self) -> float:
        """Seconds since this display was made."""
        return time.monotonic() - self.start

    def _draw(self) -> None:
        line = f"nstviz: {self.message} [{self.elapsed():.0f} s]"
        self.stream.write("\r\033[K" + line[:200])
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                if self.message:
                    self._draw()

    def __enter__(self) -> Progress:
        if self.tty and not self.quiet:
            self._thread = threading.Thread(target=self._tick, name="nstviz-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.tty and not self.quiet and self.message:
            with self._lock:
                self.stream.write("\r\033[K")
                self.stream.flush()


def _phase_label(phase: str) -> str:
    if phase == "baseline":
        return "baseline run (code as written)"
    if phase == "nonstrict":
        return "nonstrict run"
    if phase.startswith("attempt-"):
        return f"advisor {phase.replace('-', ' ')}"
    return {"done": "done", "error": "error", "analysis": "analysing"}.get(phase, phase)


# -- running a script -------------------------------------------------------------------


@contextmanager
def _as_main(script: Path, argv: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Give a script what ``python SCRIPT ARGS`` gives it, and put everything back after.

    Sets ``sys.argv``, puts the script's folder first on ``sys.path`` and installs a fresh
    ``__main__`` module (as :mod:`runpy` does) whose namespace is yielded.
    """
    module = types.ModuleType("__main__")
    module.__dict__.update({"__file__": str(script), "__builtins__": builtins, "__cached__": None})
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    saved_main = sys.modules.get("__main__")
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.parent))
    sys.modules["__main__"] = module
    try:
        yield module.__dict__
    finally:
        sys.argv[:] = saved_argv
        sys.argv = saved_argv
        sys.path[:] = saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        else:  # pragma: no cover - the interpreter always has one
            sys.modules.pop("__main__", None)


def _trace_code() -> Callable[..., Report]:
    try:
        from nstviz.api import trace_code
    except ImportError as exc:  # pragma: no cover - only while the capture engine is missing
        raise CliError(
            f"the nstviz capture engine is not available ({exc})",
            hint="reinstall nstviz: pip install -e .",
            code=EXIT_INTERNAL,
        ) from None
    return trace_code


def _split_names(values: Sequence[str] | None) -> tuple[str, ...]:
    names: list[str] = []
    for value in values or ():
        names.extend(part.strip() for part in value.split(",") if part.strip())
    return tuple(dict.fromkeys(names))


class ScriptError(Exception):
    """The user's script raised before anything was compiled (carries the exception)."""

    def __init__(self, exc: BaseException, script: Path) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc
        self.script = script


def run_script(
    script: str | Path,
    argv: Sequence[str] = (),
    *,
    nonstrict: Sequence[str] = (),
    auto: bool = False,
    backend: str = "record",
    progress: Callable[..., None] | None = None,
    **options: Any,
) -> Report:
    """Run a Python script as ``__main__`` under capture and return the Report.

    The script runs as ``python SCRIPT ARGV`` would run it (``__name__ == "__main__"``,
    ``sys.argv``, its folder first on ``sys.path``), once per run; all of that is put back
    afterwards.

    Args:
        script: path of the script.
        argv: its command-line arguments (``sys.argv[1:]`` while it runs).
        nonstrict: functions to trace non-strictly (names as ``--nonstrict`` takes them).
        auto: let the advisor find the functions.
        backend: the ``torch.compile`` backend the capture records with.
        progress: called with progress events while the runs go on.
        **options: further keyword arguments for :func:`nstviz.api.trace_code`
            (``check``, ``baseline``, ``budget_s``, ``max_attempts``, ``echo``).

    Raises:
        CliError: the script cannot be read or does not parse.
        ScriptError: the script raised before compiling anything.
        UsageError, NothingCompiledError: from :func:`nstviz.api.trace_code`.
    """
    path = Path(script)
    if not path.is_file():
        hint = "check the path" if not path.exists() else "give a Python file, not a folder"
        raise CliError(f"no such script: {path}", hint=hint)
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {path}: {exc}", hint="give a UTF-8 Python file") from None
    path = path.resolve()
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"{path}:{exc.lineno}" if exc.lineno else str(path)
        raise CliError(
            f"{where}: syntax error: {exc.msg}", hint="fix the script; it must run with `python`"
        ) from None
    trace_code = _trace_code()
    kwargs = {k: v for k, v in options.items() if v is not None}
    with _as_main(path, argv) as namespace:
        try:
            report = trace_code(
                source,
                namespace,
                nonstrict=tuple(nonstrict),
                auto=auto,
                backend=backend,
                filename=str(path),
                progress=progress,
                title=path.name,
                **kwargs,
            )
        except (NstvizError, KeyboardInterrupt):
            raise
        except BaseException as exc:
            if _raised_in(exc, path):
                raise ScriptError(exc, path) from exc
            raise
    return dataclasses.replace(report, entry="cli")


def _raised_in(exc: BaseException, path: Path) -> bool:
    """True when the exception passed through the script's own code."""
    if isinstance(exc, SystemExit):
        return True
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(path):
            return True
        tb = tb.tb_next
    return False


def _user_traceback(exc: BaseException, path: Path) -> str:
    """The traceback from the script's first frame on (nstviz's own frames dropped)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != str(path):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


# -- terminal output --------------------------------------------------------------------


def _counts(report: Report, name: str) -> Any:
    counts = report.counts.get(name)
    if counts is not None:
        return counts
    run = report.runs.get(name)
    if run is None:
        return None
    from nstviz.report import RunCounts

    dynamo = [g for g in run.graphs if g.level == "dynamo"]
    aten = [g for g in run.graphs if g.level.startswith("aten")]
    return RunCounts(
        graphs=len(dynamo),
        breaks=len(run.breaks),
        break_hits=sum(b.count for b in run.breaks),
        ops=sum(g.op_count for g in dynamo),
        aten_ops=sum(g.op_count for g in aten),
        regions=len(run.regions),
        inlined_nodes=sum(len(n) for r in run.regions for n in r.nodes.values()),
        full_graph=len(dynamo) == 1 and not run.breaks,
    )


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def summary_table(report: Report) -> str:
    """Return the runs side by side as a plain-text table, then the breaks and outputs."""
    names = [n for n in ("baseline", "nonstrict") if n in report.runs]
    names += [n for n in report.runs if n not in names and not n.startswith("attempt-")]
    counts = {n: _counts(report, n) for n in names}
    rows: list[tuple[str, list[str]]] = [
        ("graphs", [str(counts[n].graphs) for n in names]),
        ("distinct breaks", [str(counts[n].breaks) for n in names]),
        ("break hits", [str(counts[n].break_hits) for n in names]),
        ("ops (Dynamo)", [str(counts[n].ops) for n in names]),
        ("ops (ATen)", [str(counts[n].aten_ops) for n in names]),
        ("non-strict regions", [str(counts[n].regions) for n in names]),
        ("single graph", [_yes(counts[n].full_graph) for n in names]),
        ("error", [_short(report.runs[n].error_type or report.runs[n].error or "-", 24) for n in names]),
    ]
    width0 = max(len(r[0]) for r in rows)
    widths = [max(len(n), *(len(r[1][i]) for r in rows)) for i, n in enumerate(names)]
    lines = ["  ".join([" " * width0, *(n.rjust(w) for n, w in zip(names, widths, strict=True))])]
    for label, cells in rows:
        lines.append(
            "  ".join([label.ljust(width0), *(c.rjust(w) for c, w in zip(cells, widths, strict=True))])
        )
    diff = report.diff
    if "nonstrict" in report.runs:
        lines.append("")
        lines.append(
            f"breaks: {len(diff.resolved)} resolved, {len(diff.remaining)} remaining, {len(diff.introduced)} introduced"
        )
        for status, breaks in (
            ("resolved", diff.resolved),
            ("remaining", diff.remaining),
            ("introduced", diff.introduced),
        ):
            for b in breaks:
                loc = b.location
                where = f"{_short_path(loc.file)}:{loc.line} {loc.function}"
                seen = f" (x{b.count})" if b.count > 1 else ""
                fatal = " [fatal]" if b.fatal else ""
                lines.append(
                    f"  {status:<10} {b.gb_id or '-':<7} {where}  {_short(b.reason, 70)}{seen}{fatal}"
                )
    else:
        for b in report.runs["baseline"].breaks if "baseline" in report.runs else ():
            loc = b.location
            lines.append(
                f"  break {b.gb_id or '-':<7} {_short_path(loc.file)}:{loc.line} {_short(b.reason, 70)}"
            )
    lines.append(_outputs_line(report))
    shown: set[str] = set()
    for name in names:
        for mark in report.runs[name].marked:
            if mark.warning and mark.warning not in shown:
                shown.add(mark.warning)
                lines.append(f"warning: {mark.warning}")
            elif not mark.applied and not mark.warning:
                lines.append(
                    f"warning: --nonstrict {mark.spec} ({mark.qualname}) never applied in the {name} run"
                )
    lines.extend(_advisor_lines(report))
    lines.extend(f"note: {note}" for note in report.notes if note not in shown)
    return "\n".join(lines)


def _advisor_lines(report: Report) -> list[str]:
    """The advisor's attempts, one line each, then its recommendation and the code to apply it."""
    if not report.candidates and report.recommendation is None:
        return []
    lines = ["", "advisor:"]
    for c in report.candidates:
        breaks = f"breaks {c.breaks_before} -> {c.breaks_after}" if c.breaks_after is not None else ""
        outputs = {True: "outputs match", False: "outputs DIFFER", None: ""}[c.outputs_match]
        why_not = c.error or "; ".join(c.precheck)
        facts = ", ".join(
            x for x in (breaks, outputs, (c.gb_id or ""), _short(why_not, 90) if why_not else "") if x
        )
        lines.append(
            f"  {c.status:<9} {c.function}" + (f": {facts}" if facts else "") + f"  ({_short(c.why, 70)})"
        )
    rec = report.recommendation
    if rec is None:
        lines.append("  no recommendation: no candidate reduced the breaks with matching outputs")
    else:
        lines.append(
            f"  recommended: {', '.join(rec.functions)} (breaks {rec.breaks_before} -> {rec.breaks_after})"
        )
        lines.extend(("    " + line).rstrip() for line in rec.code.rstrip().splitlines())
    return lines


def _outputs_line(report: Report) -> str:
    out = report.outputs
    if out.skipped_reason:
        return f"outputs: not checked ({out.skipped_reason})"
    if out.match is None:
        return "outputs: not compared"
    diff = f" (max abs diff {out.max_abs_diff:.3g})" if out.max_abs_diff is not None else ""
    line = ("outputs: match" if out.match else "outputs: DIFFER") + diff
    if out.nondeterministic:
        line += " [non-deterministic: the baseline disagreed with itself]"
    bad = [d for d in out.details if d.match is False]
    for detail in bad[:5]:
        why = detail.note or (
            f"max abs diff {detail.max_abs_diff:.3g}" if detail.max_abs_diff is not None else ""
        )
        line += f"\n  {_short(detail.path, 40)}: {_short(why, 100)}"
    if len(bad) > 5:
        line += f"\n  ... and {len(bad) - 5} more"
    return line


def _short(text: str, limit: int) -> str:
    first = " ".join(str(text).split())
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _short_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def _file_url(path: Path) -> str:
    return path.resolve().as_uri()


# -- commands ---------------------------------------------------------------------------


def _write_outputs(report: Report, html_path: str | None, json_path: str | None, out: TextIO) -> list[Path]:
    written: list[Path] = []
    if json_path:
        target = Path(json_path)
        _ensure_parent(target)
        report.save_json(target)
        written.append(target)
        out.write(f"wrote {target} (Report JSON)\n")
    if html_path:
        from nstviz.html import save_html

        target = Path(html_path)
        _ensure_parent(target)
        save_html(report, target)
        written.append(target)
        out.write(f"wrote {target} ({target.stat().st_size / 1e6:.2f} MB, open {_file_url(target)})\n")
    return written


def _ensure_parent(target: Path) -> None:
    if not target.parent.is_dir():
        raise CliError(
            f"cannot write {target}: folder {target.parent} does not exist", hint="create it first"
        )


def _raised(run: Run) -> bool:
    """True when the run's code raised something other than a graph break or a clean exit."""
    if not run.error or any(b.fatal for b in run.breaks):
        return False
    if run.error_type == "SystemExit":
        return run.error not in ("SystemExit", "SystemExit: 0", "SystemExit: None")
    return run.error_type not in _dynamo_error_names()


def _dynamo_error_names() -> frozenset[str]:
    """Names of torch's Dynamo exceptions: how a fatal graph break (fullgraph=True) surfaces."""
    try:
        from torch._dynamo import exc as dynamo_exc
    except ImportError:  # pragma: no cover
        return frozenset({"Unsupported"})
    return frozenset(
        name
        for name, value in vars(dynamo_exc).items()
        if isinstance(value, type) and issubclass(value, dynamo_exc.TorchDynamoException)
    )


def _status_code(report: Report) -> int:
    """3 when the baseline raised something other than a graph break, else 0."""
    baseline = report.runs.get("baseline")
    return EXIT_SCRIPT_RAISED if baseline is not None and _raised(baseline) else EXIT_OK


def _script_error_lines(report: Report) -> list[str]:
    lines = []
    for name, run in report.runs.items():
        if _raised(run):
            lines.append(f"error: the script raised in the {name} run: {_short(run.error or '', 160)}")
    return lines


def _cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nstviz.examples import DEMO_NONSTRICT, DEMO_SCRIPT, DEMO_TITLE

    with Progress(err, quiet=args.quiet) as progress:
        report = run_script(DEMO_SCRIPT, nonstrict=DEMO_NONSTRICT, backend=args.backend, progress=progress)
    report = dataclasses.replace(report, title=DEMO_TITLE, entry="demo")
    out.write(summary_table(report) + "\n\n")
    written = _write_outputs(report, args.output, args.json, out)
    out.write(f"{written[-1].resolve() if written else ''}\n")
    return _status_code(report)


def _cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    report = _capture(args, err)
    out.write(summary_table(report) + "\n")
    for line in _script_error_lines(report):
        err.write(line + "\n")
    html_path = args.output
    if html_path is None and args.json is None:
        html_path = Path(args.script).with_suffix(".nstviz.html").name
    out.write("\n")
    written = _write_outputs(report, html_path, args.json, out)
    if written:
        out.write(f"{written[-1].resolve()}\n")
    return _status_code(report)


def _check_capture_args(args: argparse.Namespace) -> None:
    """Refuse bad option values before spending a run on them."""
    prog = f"nstviz {args.command}"
    if args.budget is not None and not args.budget > 0:
        raise CliError(
            f"--budget {args.budget}: the advisor's time budget must be a positive number of seconds"
        )
    if args.max_attempts is not None and args.max_attempts < 1:
        raise CliError(f"--max-attempts {args.max_attempts}: must be at least 1")
    if not args.auto and (args.budget is not None or args.max_attempts is not None):
        raise CliError(
            "--budget and --max-attempts bound the advisor; they only apply with --auto",
            hint=f"add --auto, or see `{prog} --help`",
        )
    for option, value in (("-o", args.output), ("--json", args.json)):
        if value is None:
            continue
        target = Path(value)
        if target.is_dir():
            raise CliError(f"{option} {value}: is a folder", hint="give a file path, e.g. report.html")
        if not target.resolve().parent.is_dir():
            raise CliError(
                f"{option} {value}: the folder {target.resolve().parent} does not exist",
                hint="create it first",
            )


def _capture(args: argparse.Namespace, err: TextIO) -> Report:
    nonstrict = _split_names(args.nonstrict)
    if not nonstrict and not args.auto:
        raise CliError(
            "nothing to compare: give --nonstrict NAME (the functions to trace non-strictly) or --auto",
            hint="e.g. `nstviz run script.py --nonstrict my_helper`",
        )
    _check_capture_args(args)
    options = {
        "budget_s": args.budget,
        "max_attempts": args.max_attempts,
        "check": False if args.no_check else None,
        "baseline": args.baseline,
        "echo": True if args.show_output else None,
    }
    with Progress(err, quiet=args.quiet) as progress:
        return run_script(
            args.script,
            args.args,
            nonstrict=nonstrict,
            auto=args.auto,
            backend=args.backend,
            progress=progress,
            **options,
        )


def _cmd_view(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nstviz.report import Report

    source = Path(args.report)
    if not source.is_file():
        raise CliError(
            f"no such Report file: {source}", hint="give a file written by `--json` or Report.save_json"
        )
    try:
        if source.suffix.lower() in (".html", ".htm"):
            from nstviz.html import extract_report_json

            report = Report.from_json(extract_report_json(source.read_text(encoding="utf-8")))
        else:
            report = Report.load_json(source)
    except ReportFormatError as exc:
        raise CliError(f"{source}: {exc}", hint="is this a Report written by nstviz?") from None
    target = Path(args.output) if args.output else source.with_suffix(".html")
    if target.resolve() == source.resolve():
        raise CliError(f"refusing to overwrite the input {source}", hint="give another path with -o")
    if not args.quiet:
        out.write(summary_table(report) + "\n\n")
    _write_outputs(report, str(target), None, out)
    out.write(f"{target.resolve()}\n")
    return EXIT_OK


def _cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    report = _capture(args, err)
    out.write(summary_table(report) + "\n")
    if args.json or args.output:
        _write_outputs(report, args.output, args.json, out)
    failures = check_failures(report, fail_on_break=args.fail_on_break)
    status = _status_code(report)
    for line in _script_error_lines(report):
        err.write(line + "\n")
    if status:
        return status
    if failures:
        out.write("check FAILED:\n" + "".join(f"  - {f}\n" for f in failures))
        return EXIT_CHECK_FAILED
    out.write("check passed\n")
    return EXIT_OK


def check_failures(report: Report, *, fail_on_break: bool = False) -> list[str]:
    """Return why ``nstviz check`` fails for this Report (empty when it passes)."""
    failures = []
    nonstrict = report.runs.get("nonstrict")
    if nonstrict is None:
        return ["there is no nonstrict run (see the notes above)"]
    if _raised(nonstrict):
        failures.append(f"the nonstrict run raised: {_short(nonstrict.error, 120)}")
    if report.outputs.match is False:
        failures.append("outputs differ between the baseline and nonstrict runs")
    if report.diff.introduced:
        failures.append(f"{len(report.diff.introduced)} break(s) introduced by the nonstrict run")
    for mark in nonstrict.marked:
        if not mark.applied:
            failures.append(f"--nonstrict {mark.spec} never applied (no call went through nonstrict_trace)")
    remaining = nonstrict.breaks
    if fail_on_break and remaining:
        failures.append(f"{len(remaining)} distinct break(s) remain in the nonstrict run (--fail-on-break)")
    return failures


# -- argument parsing -------------------------------------------------------------------


def _add_capture_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", help="the Python script to run (as `python SCRIPT ARGS` would)")
    p.add_argument(
        "args", nargs="*", help="arguments for the script (put them after `--` if they start with -)"
    )
    p.add_argument(
        "--nonstrict",
        "-n",
        action="append",
        metavar="NAME",
        help="function to trace with nonstrict_trace: a name, a dotted path (mod.fn, Class.method); "
        "repeat or separate with commas",
    )
    p.add_argument("--auto", action="store_true", help="let the advisor find the functions to mark")
    p.add_argument(
        "--backend", default="record", help="backend to record with: record (default), inductor, or a name"
    )
    p.add_argument("--budget", type=float, metavar="SECONDS", help="advisor time budget")
    p.add_argument("--max-attempts", type=int, metavar="N", help="advisor attempt limit")
    p.add_argument("--no-check", action="store_true", help="skip the output check")
    p.add_argument(
        "--baseline",
        choices=("as_written", "strict"),
        help="strict: run the baseline with the script's own nonstrict_trace marks lifted",
    )
    p.add_argument("--show-output", action="store_true", help="let the script's printed output through")
    p.add_argument("--json", metavar="PATH", help="also write the Report as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display")


def build_parsers() -> dict[str, argparse.ArgumentParser]:
    """Return the parser of each command, and the top-level one under ``""``."""
    fmt = argparse.RawDescriptionHelpFormatter
    top = _Parser(
        prog="nstviz",
        usage="nstviz [-h] [--version] {demo,run,view,check} ...",
        description="See what torch.compile does to your code, and what torch._dynamo.nonstrict_trace changes.\n\n"
        "commands:\n"
        "  demo    run the built-in example and write its report\n"
        "  run     run a script twice (as written, then non-strict) and write a report\n"
        "  view    turn a saved Report JSON into a standalone HTML report\n"
        "  check   like run, but exit non-zero when the nonstrict run is not an improvement\n\n"
        "`nstviz COMMAND --help` for a command's options.",
        epilog=_MAIN_EPILOG,
        formatter_class=fmt,
    )
    top.add_argument("--version", action="store_true", help="print nstviz's and torch's versions")

    demo = _Parser(
        prog="nstviz demo",
        description="Run the built-in example (a small nn.Module whose helper breaks in every block, and "
        "get_magic_num under fullgraph=True) as written and with both helpers traced non-strictly; "
        "print a summary and write the report. Nothing to prepare.",
        epilog="example:\n  nstviz demo -o demo.html --json demo.json\n\n" + _EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    demo.add_argument(
        "-o",
        "--output",
        default="nstviz-demo.html",
        metavar="PATH",
        help="HTML report (default: %(default)s)",
    )
    demo.add_argument("--json", metavar="PATH", help="also write the Report as JSON")
    demo.add_argument("--backend", default="record", help=argparse.SUPPRESS)
    demo.add_argument("--quiet", "-q", action="store_true", help="no progress display")

    run = _Parser(
        prog="nstviz run",
        description="Run SCRIPT as __main__ twice under capture: as written (baseline), then with the "
        "--nonstrict functions traced by torch._dynamo.nonstrict_trace; print a summary and write the "
        "report. The script really runs twice: keep side effects in mind.",
        epilog="examples:\n"
        "  nstviz run train.py --nonstrict helper\n"
        "  nstviz run train.py --nonstrict Block.stats,utils.norm -o report.html --json report.json\n"
        "  nstviz run train.py --auto -- --epochs 1      (script options after --)\n\n" + _EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    _add_capture_options(run)
    run.add_argument("-o", "--output", metavar="PATH", help="HTML report (default: SCRIPT.nstviz.html here)")

    view = _Parser(
        prog="nstviz view",
        description="Write a standalone HTML report from a saved Report (JSON, or an nstviz HTML file to re-render).",
        epilog="example:\n  nstviz view report.json -o report.html\n\n" + _EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    view.add_argument("report", help="Report JSON (from --json or Report.save_json)")
    view.add_argument("-o", "--output", metavar="PATH", help="HTML file (default: REPORT with .html)")
    view.add_argument("--quiet", "-q", action="store_true", help="print only the path written")

    check = _Parser(
        prog="nstviz check",
        description="Like `run`, for CI: print the summary table, exit 1 when the nonstrict run is not an "
        "improvement: outputs differ, breaks are introduced, a --nonstrict mark never applied, the nonstrict "
        "run raised, or (with --fail-on-break) any break remains.",
        epilog="example:\n  nstviz check train.py --nonstrict helper --fail-on-break\n\n" + _EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    _add_capture_options(check)
    check.add_argument(
        "--fail-on-break", action="store_true", help="also fail when any break remains after marking"
    )
    check.add_argument("-o", "--output", metavar="PATH", help="also write an HTML report")
    return {"": top, "demo": demo, "run": run, "view": view, "check": check}


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
    "demo": _cmd_demo,
    "run": _cmd_run,
    "view": _cmd_view,
    "check": _cmd_check,
}


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    if "--" in argv:  # everything after -- belongs to the script
        cut = argv.index("--")
        args = parser.parse_intermixed_args(argv[:cut])
        if hasattr(args, "args"):
            args.args = [*args.args, *argv[cut + 1 :]]
        return args
    return parser.parse_intermixed_args(argv)


def _versions() -> str:
    from nstviz import __version__

    try:
        import torch

        torch_version = torch.__version__
    except ImportError:  # pragma: no cover
        torch_version = "not installed"
    return f"nstviz {__version__} (torch {torch_version}, Python {sys.version.split()[0]})\n"


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the ``nstviz`` command; return its exit code (see the module docstring)."""
    out: TextIO = _SafeText(stdout or sys.stdout)  # type: ignore[assignment]
    err: TextIO = _SafeText(stderr or sys.stderr)  # type: ignore[assignment]
    argv = list(sys.argv[1:] if argv is None else argv)
    parsers = build_parsers()
    try:
        if not argv or argv[0] in ("-h", "--help"):
            (out if argv else err).write(parsers[""].format_help())
            return EXIT_OK if argv else EXIT_USAGE
        if argv[0] == "--version":
            out.write(_versions())
            return EXIT_OK
        command = argv[0]
        if command not in _COMMANDS:
            raise CliError(
                f"unknown command {command!r}", hint="commands: demo, run, view, check (nstviz --help)"
            )
        parser = parsers[command]
        if any(a in ("-h", "--help") for a in argv[1 : argv.index("--") if "--" in argv else None]):
            out.write(parser.format_help())
            return EXIT_OK
        args = _parse(parser, argv[1:])
        args.command = command
        return _COMMANDS[command](args, out, err)
    except CliError as exc:
        return _fail(err, str(exc), exc.hint, exc.code)
    except ScriptError as exc:
        if isinstance(exc.exc, SystemExit):
            return _fail(
                err,
                f"the script exited (sys.exit({exc.exc.code!r})) before compiling anything",
                "nstviz needs the script to call a torch.compile-d function or module",
                EXIT_SCRIPT_RAISED if exc.exc.code not in (0, None) else EXIT_NOTHING_COMPILED,
            )
        err.write(_user_traceback(exc.exc, exc.script))
        return _fail(
            err,
            f"the script raised before compiling anything: {_short(str(exc), 200)}",
            "",
            EXIT_SCRIPT_RAISED,
        )
    except UsageError as exc:
        return _fail(err, str(exc), "see `nstviz --help`", EXIT_USAGE)
    except NothingCompiledError as exc:
        return _fail(
            err, str(exc), "the script must call a torch.compile-d function or module", EXIT_NOTHING_COMPILED
        )
    except ReportFormatError as exc:
        return _fail(err, str(exc), "is this a Report written by nstviz?", EXIT_USAGE)
    except NstvizError as exc:
        return _fail(err, str(exc), "", EXIT_INTERNAL)
    except KeyboardInterrupt:
        err.write("\nnstviz: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception:  # a bug in nstviz: show everything
        err.write("nstviz: internal error (this is a bug in nstviz; please report it with this traceback)\n")
        traceback.print_exc(file=err)
        return EXIT_INTERNAL


class _SafeText:
    """Wraps a text stream so that no string the Report holds can make a write fail.

    Lone surrogates (from exception messages) become U+FFFD; characters the stream's
    encoding lacks (an ASCII terminal) become backslash escapes.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        text = _LONE_SURROGATE.sub("\ufffd", text)
        try:
            return self._stream.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self._stream, "encoding", None) or "ascii"
            return self._stream.write(text.encode(encoding, "backslashreplace").decode(encoding))

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return bool(getattr(self._stream, "isatty", lambda: False)())


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _fail(err: TextIO, message: str, hint: str, code: int) -> int:
    err.write(f"nstviz: error: {message}\n")
    if hint:
        err.write(f"  hint: {hint}\n")
    return code


__all__ = ["Progress", "build_parsers", "check_failures", "main", "run_script", "summary_table"]
