"""The ``nstviz`` command's argument parsers (one per command), and how a command line is split.

The capture flags (``--nonstrict``, ``--auto``, ``--backend``, ...) come from
:data:`nstviz._options.FLAGS`, the one list the ``%%nstrace`` magic is built from too.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from nstviz._options import FrontEnd, flag_arguments, flag_names
from nstviz.cli.script import CliError

EXIT_CODES_HELP = """\
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
    + EXIT_CODES_HELP
)


class _Parser(argparse.ArgumentParser):
    """argparse that raises :class:`CliError` instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(message, hint=f"see `{self.prog} --help`")


def _add_flags(parser: argparse.ArgumentParser, front_end: FrontEnd, options: Sequence[str] | None = None) -> None:
    for names, keywords in flag_arguments(front_end, options):
        parser.add_argument(*names, **keywords)


def _add_script_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", help="the Python script to run (as `python SCRIPT ARGS` would)")
    p.add_argument(
        "args", nargs="*", help="arguments for the script (put them after `--` if they start with -)"
    )
    _add_flags(
        p, "cli", ("nonstrict", "auto", "backend", "budget_s", "max_attempts", "check", "baseline", "echo", "time")
    )
    p.add_argument("--json", metavar="PATH", help="also write the Report as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display")


_FORMATTER = argparse.RawDescriptionHelpFormatter


def _top_parser() -> argparse.ArgumentParser:
    """The top-level parser: the commands and their one-line help."""
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
        formatter_class=_FORMATTER,
    )
    top.add_argument("--version", action="store_true", help="print nstviz's and torch's versions")
    return top


def _demo_parser() -> argparse.ArgumentParser:
    """``nstviz demo``: the built-in example."""
    demo = _Parser(
        prog="nstviz demo",
        description="Run the built-in example (a small nn.Module whose helper breaks in every block, and "
        "get_magic_num under fullgraph=True) as written and with both helpers traced non-strictly; "
        "print a summary and write the report. Nothing to prepare.",
        epilog="example:\n  nstviz demo -o demo.html --json demo.json\n\n" + EXIT_CODES_HELP,
        formatter_class=_FORMATTER,
    )
    demo.add_argument(
        "-o",
        "--output",
        default="nstviz-demo.html",
        metavar="PATH",
        help="HTML report (default: %(default)s)",
    )
    demo.add_argument("--json", metavar="PATH", help="also write the Report as JSON")
    _add_flags(demo, "demo")
    demo.add_argument("--quiet", "-q", action="store_true", help="no progress display")
    return demo


def _run_parser() -> argparse.ArgumentParser:
    """``nstviz run SCRIPT``: run a script as written, then non-strict."""
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
        "  nstviz run train.py --auto -- --epochs 1      (script options after --)\n\n" + EXIT_CODES_HELP,
        formatter_class=_FORMATTER,
    )
    _add_script_options(run)
    run.add_argument("-o", "--output", metavar="PATH", help="HTML report (default: SCRIPT.nstviz.html here)")
    return run


def _view_parser() -> argparse.ArgumentParser:
    """``nstviz view REPORT``: re-render a saved Report."""
    view = _Parser(
        prog="nstviz view",
        description="Write a standalone HTML report from a saved Report (JSON, or an nstviz HTML file to re-render).",
        epilog="example:\n  nstviz view report.json -o report.html\n\n" + EXIT_CODES_HELP,
        formatter_class=_FORMATTER,
    )
    view.add_argument("report", help="Report JSON (from --json or Report.save_json)")
    view.add_argument("-o", "--output", metavar="PATH", help="HTML file (default: REPORT with .html)")
    view.add_argument("--quiet", "-q", action="store_true", help="print only the path written")
    return view


def _check_parser() -> argparse.ArgumentParser:
    """``nstviz check``: ``run`` for CI, with an exit code."""
    check = _Parser(
        prog="nstviz check",
        description="Like `run`, for CI: print the summary table, exit 1 when the nonstrict run is not an "
        "improvement: outputs differ, breaks are introduced, a --nonstrict mark never applied, the nonstrict "
        "run raised, or (with --fail-on-break) any break remains.",
        epilog="example:\n  nstviz check train.py --nonstrict helper --fail-on-break\n\n" + EXIT_CODES_HELP,
        formatter_class=_FORMATTER,
    )
    _add_script_options(check)
    check.add_argument(
        "--fail-on-break", action="store_true", help="also fail when any break remains after marking"
    )
    check.add_argument("-o", "--output", metavar="PATH", help="also write an HTML report")
    return check


def _record_parser() -> argparse.ArgumentParser:
    """``nstviz record SCRIPT``: record one run (any rank of a torchrun job)."""
    record = _Parser(
        prog="nstviz record",
        description="Run SCRIPT once under nstviz's recorder, as written or with --nonstrict functions traced "
        "non-strictly, and write the run to OUT/rank-N.nstviz.json (N: the RANK torchrun sets, 0 without it). "
        "Nothing is re-run: it works inside a distributed job. Options for the script go after SCRIPT.",
        epilog="examples:\n"
        "  torchrun --nproc-per-node 2 -m nstviz record --out before train.py\n"
        "  torchrun --nproc-per-node 2 -m nstviz record --nonstrict helper --out after train.py --steps 3\n"
        "  nstviz diff before after\n\n" + EXIT_CODES_HELP,
        formatter_class=_FORMATTER,
    )
    record.add_argument("--out", default="nstviz-record", metavar="DIR", help="folder to write to (default: %(default)s)")
    _add_flags(record, "record")
    record.add_argument("--quiet-script", action="store_true", help="do not pass the script's output through")
    record.add_argument("script", help="the Python script to run")
    record.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    record.set_defaults(remainder=True)
    return record


def _ingest_parser() -> argparse.ArgumentParser:
    """``nstviz ingest TRACE_DIR``: read TORCH_TRACE logs into runs."""
    ingest = _Parser(
        prog="nstviz ingest",
        description="Read the TORCH_TRACE logs of a run (one per rank, as TORCH_TRACE=DIR writes them) and write "
        "each rank's run to OUT/rank-N.nstviz.json: breaks, compiles, guards, and the Dynamo/ATen graphs as nodes "
        "and edges. Non-strict regions are recovered approximately (marked so in the report).",
        epilog="example:\n  TORCH_TRACE=trace_before torchrun --nproc-per-node 2 train.py\n"
        "  nstviz ingest trace_before --out before\n\n" + EXIT_CODES_HELP,
        formatter_class=_FORMATTER,
    )
    ingest.add_argument("trace_dir", help="the TORCH_TRACE folder (or one log file)")
    ingest.add_argument("--out", required=True, metavar="DIR", help="folder to write the rank files to")
    return ingest


def _diff_parser() -> argparse.ArgumentParser:
    """``nstviz diff BEFORE AFTER``: compare two recorded or ingested runs."""
    diff = _Parser(
        prog="nstviz diff",
        description="Compare two recorded or ingested runs (folders of rank-N.nstviz.json, or TORCH_TRACE folders), "
        "per rank: breaks resolved / remaining / introduced, graphs, regions; and name the ranks that compiled "
        "differently. Writes the report (HTML viewer with a rank picker, and/or JSON).",
        epilog="example:\n  nstviz diff before after --html diff.html --json diff.json\n\n" + EXIT_CODES_HELP,
        formatter_class=_FORMATTER,
    )
    diff.add_argument("before", help="BEFORE: folder or file")
    diff.add_argument("after", help="AFTER: folder or file")
    diff.add_argument("--html", metavar="PATH", help="HTML report (default: nstviz-diff.html when no --json)")
    diff.add_argument("--json", metavar="PATH", help="write the Report as JSON")
    return diff

_COMMANDS = {
    "": _top_parser,
    "demo": _demo_parser,
    "run": _run_parser,
    "view": _view_parser,
    "check": _check_parser,
    "record": _record_parser,
    "ingest": _ingest_parser,
    "diff": _diff_parser,
}


def build_parsers() -> dict[str, argparse.ArgumentParser]:
    """Return the parser of each command, and the top-level one under ``""``."""
    return {command: build() for command, build in _COMMANDS.items()}


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse a command's ``argv``; what follows ``--`` (for ``record``: SCRIPT) goes to the script's ``args``."""
    if parser.get_default("remainder"):  # `record`: everything after SCRIPT is the script's
        return parser.parse_args(argv)
    if "--" in argv:  # everything after -- belongs to the script
        cut = argv.index("--")
        args = parser.parse_intermixed_args(argv[:cut])
        if hasattr(args, "args"):
            args.args = [*args.args, *argv[cut + 1 :]]
        return args
    return parser.parse_intermixed_args(argv)


_RECORD_VALUE_FLAGS = flag_names("record", takes_value=True) | {"--out"}


def own_options(command: str, argv: Sequence[str]) -> list[str]:
    """The part of ``argv`` (after the command) that holds the command's own options.

    What follows ``--`` is the script's; for ``record``, so is everything after SCRIPT.
    """
    own = list(argv[: list(argv).index("--") if "--" in argv else None])
    if command == "record":  # options after SCRIPT belong to the script
        own = own[
            : next(
                (i for i, a in enumerate(own) if not a.startswith("-") and (i == 0 or own[i - 1] not in _RECORD_VALUE_FLAGS)),
                len(own),
            )
        ]
    return own


__all__ = ["EXIT_CODES_HELP", "build_parsers", "own_options", "parse"]
