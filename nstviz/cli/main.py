"""The ``nstviz`` command: ``demo``, ``run``, ``view``, ``check``, ``record``, ``ingest``, ``diff``.

A thin layer over :func:`nstviz.api.trace_code` and :mod:`nstviz.render.html`: it parses options,
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
import dataclasses
import shlex
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from nstviz._options import check_capture_options
from nstviz._version import __version__
from nstviz.cli.script import (
    EXIT_CHECK_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOTHING_COMPILED,
    EXIT_OK,
    EXIT_SCRIPT_RAISED,
    EXIT_USAGE,
    CliError,
    ScriptError,
    check_script,
    run_script,
    split_names,
    user_traceback,
)
from nstviz.cli.terminal import (
    Progress,
    SafeText,
    check_failures,
    file_url,
    script_error_lines,
    shorten,
    status_code,
    summary_table,
)
from nstviz.errors import NothingCompiledError, NstvizError, ReportFormatError, TraceLogError, UsageError

if TYPE_CHECKING:
    from nstviz.report import Report

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
  nstviz run train.py                          show train.py's graph breaks as written
  nstviz run train.py --nonstrict helper       compare train.py as written vs helper non-strict
  nstviz run train.py --auto -o report.html    let nstviz find the functions to mark
  nstviz view report.json -o report.html       re-render a saved Report
  nstviz check train.py --nonstrict helper --fail-on-break   for CI pipelines

"""
    + _EXIT_CODES_HELP
)


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`CliError` instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(message, hint=f"see `{self.prog} --help`")


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
        from nstviz.render.html import save_html

        target = Path(html_path)
        _ensure_parent(target)
        save_html(report, target)
        written.append(target)
        out.write(f"wrote {target} ({target.stat().st_size / 1e6:.2f} MB, open {file_url(target)})\n")
    return written


def _ensure_parent(target: Path) -> None:
    if not target.parent.is_dir():
        raise CliError(
            f"cannot write {target}: folder {target.parent} does not exist", hint="create it first"
        )


def _cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nstviz.examples import DEMO_NONSTRICT, DEMO_SCRIPT, DEMO_TITLE

    with Progress(err, quiet=args.quiet) as progress:
        report = run_script(DEMO_SCRIPT, nonstrict=DEMO_NONSTRICT, backend=args.backend, progress=progress)
    report = dataclasses.replace(report, title=DEMO_TITLE, entry="demo")
    out.write(summary_table(report) + "\n\n")
    written = _write_outputs(report, args.output, args.json, out)
    out.write(f"{written[-1].resolve() if written else ''}\n")
    return status_code(report)


def _cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    report = _capture(args, err)
    if not split_names(args.nonstrict) and not args.auto:
        report = _with_next_step(report, args.script)
    out.write(summary_table(report) + "\n")
    out.write(_printed_note(report, args.show_output))
    for line in script_error_lines(report):
        err.write(line + "\n")
    html_path = args.output
    if html_path is None and args.json is None:
        html_path = Path(args.script).with_suffix(".nstviz.html").name
    out.write("\n")
    written = _write_outputs(report, html_path, args.json, out)
    if written:
        out.write(f"{written[-1].resolve()}\n")
    return status_code(report)


def _with_next_step(report: Report, script: str) -> Report:
    """A baseline-only ``run`` (no --nonstrict, no --auto): add the note that says what to run next.

    The note is in the Report, so the HTML and JSON say it too, and the summary table prints it.
    """
    from nstviz.passes.break_counts import rank_breaks

    baseline = report.runs.get("baseline")
    if "nonstrict" in report.runs or baseline is None or not baseline.breaks:
        return report  # nothing to suggest: no breaks, or there is a second run
    first = next(
        (b.location.function for b in rank_breaks(baseline.breaks) if b.location.function.isidentifier()), None
    )
    example = f" (e.g. --nonstrict {first}: the function of the top break)" if first else ""
    note = (
        f"This shows the breaks as written. To see what nonstrict_trace changes: `nstviz run {shlex.quote(script)} --auto` "
        f"(nstviz picks functions to mark and tries them), or `--nonstrict NAME`{example}."
    )
    return dataclasses.replace(report, notes=(*report.notes, note))


def _printed_note(report: Report, shown: bool) -> str:
    """Say where the script's printed output went (kept per run in the report)."""
    baseline = report.runs.get("baseline")
    if shown or baseline is None or not (baseline.stdout or baseline.stderr):
        return ""
    lines = len((baseline.stdout + baseline.stderr).splitlines())
    each = " per run" if len(report.runs) > 1 else ""
    return f"the script printed {lines} line(s){each}: kept in the report (--show-output prints them)\n"


def _check_capture_args(args: argparse.Namespace) -> None:
    """Refuse bad option values before spending a run on them."""
    prog = f"nstviz {args.command}"
    try:
        check_capture_options(
            auto=args.auto,
            backend=args.backend,
            baseline=args.baseline or "as_written",
            budget_s=args.budget,
            max_attempts=args.max_attempts,
            spelling="flag",
        )
    except UsageError as exc:
        hint = f"add --auto, or see `{prog} --help`" if "--auto" in str(exc) else f"see `{prog} --help`"
        raise CliError(str(exc), hint=hint) from None
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
    check_script(args.script)  # a missing script is said first, before options and torch
    nonstrict = split_names(args.nonstrict)
    if not nonstrict and not args.auto and args.command == "check":
        raise CliError(
            "nothing to check: give --nonstrict NAME (the functions to trace non-strictly) or --auto",
            hint="e.g. `nstviz check script.py --nonstrict my_helper` (`nstviz run script.py` shows the breaks as written)",
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
            from nstviz.render.html import extract_report_json

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
    two_runs = len(args.args) == 1 and _is_offline_input(args.args[0])
    if _is_offline_input(args.script) and (two_runs or not (args.nonstrict or args.auto)):
        return _cmd_check_offline(args, out, err)
    report = _capture(args, err)
    out.write(summary_table(report) + "\n")
    if args.json or args.output:
        _write_outputs(report, args.output, args.json, out)
    failures = check_failures(report, fail_on_break=args.fail_on_break)
    status = status_code(report)
    for line in script_error_lines(report):
        err.write(line + "\n")
    if status:
        return status
    if failures:
        out.write("check FAILED:\n" + "".join(f"  - {f}\n" for f in failures))
        return EXIT_CHECK_FAILED
    out.write("check passed\n")
    return EXIT_OK


# -- offline: record, ingest, diff (nstviz.offline does the work) -------------------------


def _cmd_record(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    check_script(args.script)  # before torch loads, as `run` does
    from nstviz.offline.record import record_script, write_record

    report = record_script(
        args.script, args.args, nonstrict=split_names(args.nonstrict), backend=args.backend, echo=not args.quiet_script
    )
    target = write_record(report, args.out)
    run = next(iter(report.runs.values()))
    dynamo = sum(1 for g in run.graphs if g.level == "dynamo")
    out.write(
        f"nstviz record: rank {report.rank}: {dynamo} graph(s), {len(run.breaks)} distinct break(s), "
        f"{len(run.regions)} non-strict region(s) -> {target}\n"
    )
    for note in report.notes:
        err.write(f"nstviz record: rank {report.rank}: note: {note}\n")
    if any(not m.applied and "no function of that name" in (m.warning or "") for m in run.marked):
        return EXIT_USAGE
    if not run.graphs and not run.breaks and not run.compiles and run.error is None:
        err.write(f"nstviz record: rank {report.rank}: the script compiled nothing (no torch.compile-d call)\n")
        return EXIT_NOTHING_COMPILED
    for line in script_error_lines(report):
        err.write(f"nstviz record: rank {report.rank}: {line}\n")
    return status_code(dataclasses.replace(report, runs={"baseline": run}))


def _cmd_ingest(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nstviz.offline.ingest import ingest_dir

    for target, report in ingest_dir(args.trace_dir, args.out):
        run = next(iter(report.runs.values()))
        stats = run.log_stats
        dynamo = sum(1 for c in run.compiles for g in c.graph_ids if g.endswith(":dynamo"))
        out.write(
            f"rank {report.rank}: {dynamo} graph(s), {len(run.breaks)} distinct break(s), {len(run.compiles)} "
            f"compile(s), {len(run.regions)} non-strict region(s) (approximate) -> {target}\n"
            f"  {stats.get('records', 0)} records; skipped {stats.get('skipped', 0)}, unknown {stats.get('unknown', 0)}, "
            f"truncated {stats.get('truncated', 0)}\n"
        )
        for note in report.notes:
            err.write(f"  note: {note}\n")
    return EXIT_OK


def _offline_diff(before: str, after: str, out: TextIO) -> Report:
    from nstviz.offline.diff import diff_paths, findings_text, rank_lines

    report = diff_paths(before, after)
    out.write(summary_table(report) + "\n")
    ranks = [report.rank or 0, *(v.rank for v in report.ranks)]
    out.write(f"ranks compared: {', '.join(str(r) for r in ranks)} (the table shows rank {ranks[0]})\n")
    if len(ranks) > 1:
        out.write("".join(f"  {line}\n" for line in rank_lines(report)))
    text = findings_text(report)
    if text:
        out.write(text + "\n")
    return report


def _cmd_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    for option, value in (("--html", args.html), ("--json", args.json)):
        if value is not None and not Path(value).resolve().parent.is_dir():
            raise CliError(f"{option} {value}: the folder {Path(value).resolve().parent} does not exist", hint="create it first")
    report = _offline_diff(args.before, args.after, out)
    html_path = args.html
    if html_path is None and args.json is None:
        html_path = "nstviz-diff.html"
    out.write("\n")
    written = _write_outputs(report, html_path, args.json, out)
    if written:
        out.write(f"{written[-1].resolve()}\n")
    return EXIT_OK


def _is_offline_input(path: str) -> bool:
    target = Path(path)
    return target.is_dir() or target.suffix == ".json"


def _cmd_check_offline(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from nstviz.offline.diff import offline_check_failures

    if len(args.args) != 1:
        raise CliError(
            "check with recorded runs takes two inputs: BEFORE AFTER",
            hint="e.g. `nstviz check before/ after/` (folders written by `nstviz record` or `nstviz ingest`)",
        )
    if args.nonstrict or args.auto:
        raise CliError("--nonstrict/--auto apply to a script; BEFORE AFTER are already recorded")
    report = _offline_diff(args.script, args.args[0], out)
    if args.json or args.output:
        _write_outputs(report, args.output, args.json, out)
    failures = offline_check_failures(report, fail_on_break=args.fail_on_break)
    if failures:
        out.write("check FAILED:\n" + "".join(f"  - {f}\n" for f in failures))
        return EXIT_CHECK_FAILED
    out.write("check passed\n")
    return EXIT_OK


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
        usage="nstviz [-h] [--version] {demo,run,view,check,record,ingest,diff} ...",
        description="See what torch.compile does to your code, and what torch._dynamo.nonstrict_trace changes.\n\n"
        "commands:\n"
        "  demo    run the built-in example and write its report\n"
        "  run     run a script as written (then non-strict, with --nonstrict or --auto) and write a report\n"
        "  view    turn a saved Report JSON into a standalone HTML report\n"
        "  check   like run, but exit non-zero when the nonstrict run is not an improvement\n"
        "          (also `check BEFORE AFTER` on recorded or ingested runs)\n"
        "  record  run a script once (any rank of a torchrun job) and write that run\n"
        "  ingest  read TORCH_TRACE logs (one per rank) into runs\n"
        "  diff    compare two recorded or ingested runs per rank\n\n"
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
        description="Run SCRIPT as __main__ under capture: as written (baseline), then with the "
        "--nonstrict functions traced by torch._dynamo.nonstrict_trace (--auto: nstviz picks them); print a "
        "summary and write the report. With neither, it runs once and shows the breaks as written. Otherwise "
        "the script really runs twice (or more with --auto): keep side effects in mind.",
        epilog="examples:\n"
        "  nstviz run train.py                           (the breaks as written)\n"
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
    record = _Parser(
        prog="nstviz record",
        description="Run SCRIPT once under nstviz's recorder, as written or with --nonstrict functions traced "
        "non-strictly, and write the run to OUT/rank-N.nstviz.json (N: the RANK torchrun sets, 0 without it). "
        "Nothing is re-run: it works inside a distributed job. Options for the script go after SCRIPT.",
        epilog="examples:\n"
        "  torchrun --nproc-per-node 2 -m nstviz record --out before train.py\n"
        "  torchrun --nproc-per-node 2 -m nstviz record --nonstrict helper --out after train.py --steps 3\n"
        "  nstviz diff before after\n\n" + _EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    record.add_argument("--out", default="nstviz-record", metavar="DIR", help="folder to write to (default: %(default)s)")
    record.add_argument("--nonstrict", "-n", action="append", metavar="NAME", help="function to trace non-strictly (repeat or comma-separate)")
    record.add_argument("--backend", default="record", help="backend to record with: record (default), inductor, or a name")
    record.add_argument("--quiet-script", action="store_true", help="do not pass the script's output through")
    record.add_argument("script", help="the Python script to run")
    record.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    record.set_defaults(remainder=True)

    ingest = _Parser(
        prog="nstviz ingest",
        description="Read the TORCH_TRACE logs of a run (one per rank, as TORCH_TRACE=DIR writes them) and write "
        "each rank's run to OUT/rank-N.nstviz.json: breaks, compiles, guards, and the Dynamo/ATen graphs as nodes "
        "and edges. Non-strict regions are recovered approximately (marked so in the report).",
        epilog="example:\n  TORCH_TRACE=trace_before torchrun --nproc-per-node 2 train.py\n"
        "  nstviz ingest trace_before --out before\n\n" + _EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    ingest.add_argument("trace_dir", help="the TORCH_TRACE folder (or one log file)")
    ingest.add_argument("--out", required=True, metavar="DIR", help="folder to write the rank files to")

    diff = _Parser(
        prog="nstviz diff",
        description="Compare two recorded or ingested runs (folders of rank-N.nstviz.json, or TORCH_TRACE folders), "
        "per rank: breaks resolved / remaining / introduced, graphs, regions; and name the ranks that compiled "
        "differently. Writes the report (HTML viewer with a rank picker, and/or JSON).",
        epilog="example:\n  nstviz diff before after --html diff.html --json diff.json\n\n" + _EXIT_CODES_HELP,
        formatter_class=fmt,
    )
    diff.add_argument("before", help="BEFORE: folder or file")
    diff.add_argument("after", help="AFTER: folder or file")
    diff.add_argument("--html", metavar="PATH", help="HTML report (default: nstviz-diff.html when no --json)")
    diff.add_argument("--json", metavar="PATH", help="write the Report as JSON")
    return {
        "": top,
        "demo": demo,
        "run": run,
        "view": view,
        "check": check,
        "record": record,
        "ingest": ingest,
        "diff": diff,
    }


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
    "demo": _cmd_demo,
    "run": _cmd_run,
    "view": _cmd_view,
    "check": _cmd_check,
    "record": _cmd_record,
    "ingest": _cmd_ingest,
    "diff": _cmd_diff,
}


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    if parser.get_default("remainder"):  # `record`: everything after SCRIPT is the script's
        return parser.parse_args(argv)
    if "--" in argv:  # everything after -- belongs to the script
        cut = argv.index("--")
        args = parser.parse_intermixed_args(argv[:cut])
        if hasattr(args, "args"):
            args.args = [*args.args, *argv[cut + 1 :]]
        return args
    return parser.parse_intermixed_args(argv)


def _versions() -> str:
    try:
        from nstviz.capture import _torch_compat
    except ImportError:  # pragma: no cover - torch not installed
        return f"nstviz {__version__} (torch not installed, Python {sys.version.split()[0]})\n"
    line = f"nstviz {__version__} (torch {_torch_compat.torch_version()}, Python {sys.version.split()[0]})\n"
    untested = _torch_compat.untested_torch_note()
    return line + (f"note: {untested}\n" if untested else "")


def main(
    argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Run the ``nstviz`` command; return its exit code (see the module docstring)."""
    out: TextIO = SafeText(stdout or sys.stdout)  # type: ignore[assignment]
    err: TextIO = SafeText(stderr or sys.stderr)  # type: ignore[assignment]
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
                f"unknown command {command!r}", hint="commands: demo, run, view, check, record, ingest, diff (nstviz --help)"
            )
        parser = parsers[command]
        own = argv[1 : argv.index("--") if "--" in argv else None]
        if command == "record":  # options after SCRIPT belong to the script
            own = own[: next((i for i, a in enumerate(own) if not a.startswith("-") and (i == 0 or own[i - 1] not in ("--out", "--nonstrict", "-n", "--backend"))), len(own))]
        if any(a in ("-h", "--help") for a in own):
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
        err.write(user_traceback(exc.exc, exc.script))
        return _fail(
            err,
            f"the script raised before compiling anything: {shorten(str(exc), 200)}",
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
    except TraceLogError as exc:
        return _fail(err, str(exc), "give the folder or files TORCH_TRACE=DIR wrote", EXIT_USAGE)
    except NstvizError as exc:
        return _fail(err, str(exc), "", EXIT_INTERNAL)
    except KeyboardInterrupt:
        err.write("\nnstviz: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception:  # a bug in nstviz: show everything
        err.write("nstviz: internal error (this is a bug in nstviz; please report it with this traceback)\n")
        traceback.print_exc(file=err)
        return EXIT_INTERNAL


def _fail(err: TextIO, message: str, hint: str, code: int) -> int:
    err.write(f"nstviz: error: {message}\n")
    if hint:
        err.write(f"  hint: {hint}\n")
    return code


__all__ = ["Progress", "build_parsers", "check_failures", "main", "run_script", "summary_table"]
