"""The ``nstviz`` commands: ``demo``, ``run``, ``view``, ``check``; offline ``record``, ``ingest``, ``diff``.

``check BEFORE AFTER`` and the offline commands leave the work to :mod:`nstviz.offline`.

Each command takes its parsed arguments and the two output streams, and returns its exit code.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from nstviz._options import CaptureOptions, split_names
from nstviz.cli.script import (
    EXIT_CHECK_FAILED,
    EXIT_NOTHING_COMPILED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    check_script,
    run_script,
)
from nstviz.cli.terminal import (
    Progress,
    file_url,
    script_error_lines,
    status_code,
    summary_table,
)
from nstviz.errors import ReportFormatError, UsageError
from nstviz.passes import checks

if TYPE_CHECKING:
    from nstviz.report import Report


def check_failures(report: Report, *, fail_on_break: bool = False) -> list[str]:
    """Why ``nstviz check SCRIPT`` fails for this Report (empty when it passes); the rule: :mod:`nstviz.passes.checks`."""
    return checks.check_failures(report, fail_on_break=fail_on_break)


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
    from nstviz.report.facts import rank_breaks

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


def _capture_options(args: argparse.Namespace) -> CaptureOptions:
    """The capture options of the command line; bad values are refused before spending a run on them."""
    prog = f"nstviz {args.command}"
    try:
        options = CaptureOptions.from_flags(args)
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
    return options


def _capture(args: argparse.Namespace, err: TextIO) -> Report:
    check_script(args.script)  # a missing script is said first, before options and torch
    nonstrict = split_names(args.nonstrict)
    if not nonstrict and not args.auto and args.command == "check":
        raise CliError(
            "nothing to check: give --nonstrict NAME (the functions to trace non-strictly) or --auto",
            hint="e.g. `nstviz check script.py --nonstrict my_helper` (`nstviz run script.py` shows the breaks as written)",
        )
    options = _capture_options(args)
    with Progress(err, quiet=args.quiet) as progress:
        return run_script(args.script, args.args, progress=progress, **options.as_kwargs())


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


COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
    "demo": _cmd_demo,
    "run": _cmd_run,
    "view": _cmd_view,
    "check": _cmd_check,
    "record": _cmd_record,
    "ingest": _cmd_ingest,
    "diff": _cmd_diff,
}


__all__ = ["COMMANDS", "check_failures"]
