"""The ``nstviz`` command: ``demo``, ``run``, ``view``, ``check``, ``record``, ``ingest``, ``diff``.

A thin layer over :func:`nstviz.api.trace_code` and :mod:`nstviz.render.html`: it parses options,
runs a script as ``__main__`` under capture, prints a summary table and writes the files.

This module is :func:`main` and the map from exceptions to exit codes. The rest:
:mod:`~nstviz.cli.parsers` (one parser per command), :mod:`~nstviz.cli.commands` (the commands),
:mod:`~nstviz.passes.checks` (what fails ``check``), :mod:`~nstviz.cli.script` (running a script,
the exit codes) and :mod:`~nstviz.cli.terminal` (what is printed).

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

import sys
import traceback
from collections.abc import Sequence
from typing import TextIO

from nstviz._text import shorten
from nstviz._version import __version__
from nstviz.cli.commands import COMMANDS
from nstviz.cli.parsers import build_parsers, own_options, parse
from nstviz.cli.script import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOTHING_COMPILED,
    EXIT_OK,
    EXIT_SCRIPT_RAISED,
    EXIT_USAGE,
    CliError,
    ScriptError,
    user_traceback,
)
from nstviz.cli.terminal import SafeText
from nstviz.errors import NothingCompiledError, NstvizError, ReportFormatError, TraceLogError, UsageError


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
    try:
        return _dispatch(argv, out, err)
    except (Exception, KeyboardInterrupt) as exc:
        return _exit_code(exc, err)


def _dispatch(argv: list[str], out: TextIO, err: TextIO) -> int:
    """Help, the version, or the command ``argv`` names, run; its exit code."""
    parsers = build_parsers()
    if not argv or argv[0] in ("-h", "--help"):
        (out if argv else err).write(parsers[""].format_help())
        return EXIT_OK if argv else EXIT_USAGE
    if argv[0] == "--version":
        out.write(_versions())
        return EXIT_OK
    command = argv[0]
    if command not in COMMANDS:
        raise CliError(
            f"unknown command {command!r}", hint="commands: demo, run, view, check, record, ingest, diff (nstviz --help)"
        )
    parser = parsers[command]
    if any(a in ("-h", "--help") for a in own_options(command, argv[1:])):
        out.write(parser.format_help())
        return EXIT_OK
    args = parse(parser, argv[1:])
    args.command = command
    return COMMANDS[command](args, out, err)


def _exit_code(exc: BaseException, err: TextIO) -> int:
    """Write what went wrong to ``err`` (one line and a hint, or a traceback) and return the exit code."""
    if isinstance(exc, CliError):
        return _fail(err, str(exc), exc.hint, exc.code)
    if isinstance(exc, ScriptError):
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
    if isinstance(exc, UsageError):
        return _fail(err, str(exc), "see `nstviz --help`", EXIT_USAGE)
    if isinstance(exc, NothingCompiledError):
        return _fail(
            err, str(exc), "the script must call a torch.compile-d function or module", EXIT_NOTHING_COMPILED
        )
    if isinstance(exc, ReportFormatError):
        return _fail(err, str(exc), "is this a Report written by nstviz?", EXIT_USAGE)
    if isinstance(exc, TraceLogError):
        return _fail(err, str(exc), "give the folder or files TORCH_TRACE=DIR wrote", EXIT_USAGE)
    if isinstance(exc, NstvizError):
        return _fail(err, str(exc), "", EXIT_INTERNAL)
    if isinstance(exc, KeyboardInterrupt):
        err.write("\nnstviz: interrupted\n")
        return EXIT_INTERRUPTED
    # a bug in nstviz: show everything
    err.write("nstviz: internal error (this is a bug in nstviz; please report it with this traceback)\n")
    traceback.print_exception(exc, file=err)
    return EXIT_INTERNAL


def _fail(err: TextIO, message: str, hint: str, code: int) -> int:
    err.write(f"nstviz: error: {message}\n")
    if hint:
        err.write(f"  hint: {hint}\n")
    return code


__all__ = ["main"]
