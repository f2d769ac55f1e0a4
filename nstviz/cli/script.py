"""Running a user's script for the ``nstviz`` command: as ``__main__``, under capture.

Also the CLI's exit codes and :class:`CliError` (a failure reported as one line plus a hint).
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nstviz.errors import NstvizError
from nstviz.offline.script_main import as_main

if TYPE_CHECKING:
    from nstviz.report import Report

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_SCRIPT_RAISED = 3
EXIT_NOTHING_COMPILED = 4
EXIT_INTERNAL = 5
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A failure the CLI reports as one line plus a hint, with an exit code."""

    def __init__(self, message: str, hint: str = "", code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.hint = hint
        self.code = code


def _trace_code() -> Callable[..., Report]:
    from nstviz.api import trace_code

    return trace_code


def check_script(script: str | Path) -> Path:
    """``script`` as a Path, or :class:`CliError` when there is no such file (checked first, before torch loads)."""
    path = Path(script)
    if not path.is_file():
        if path.exists():
            raise CliError(f"{path} is a folder, not a script", hint="give a Python file, not a folder")
        raise CliError(f"no such script: {path} (the file does not exist)", hint="check the path")
    return path


class ScriptError(Exception):
    """The user's script raised before anything was compiled (carries the exception)."""

    def __init__(self, exc: BaseException, script: Path) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc
        self.script = script


def _read_script(script: str | Path) -> tuple[Path, str]:
    """The script's resolved path and its source, checked to read and to parse (:class:`CliError` if not)."""
    path = check_script(script)
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
    return path, source


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
            (``check``, ``baseline``, ``budget_s``, ``max_attempts``, ``echo``, ``time``).

    Raises:
        CliError: the script cannot be read or does not parse.
        ScriptError: the script raised before compiling anything.
        UsageError, NothingCompiledError: from :func:`nstviz.api.trace_code`.
    """
    path, source = _read_script(script)
    trace_code = _trace_code()
    kwargs = {k: v for k, v in options.items() if v is not None}
    with as_main(path, argv) as namespace:
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
            if raised_in(exc, path):
                raise ScriptError(exc, path) from exc
            raise
    return dataclasses.replace(report, entry="cli")


def raised_in(exc: BaseException, path: Path) -> bool:
    """True when the exception passed through the script's own code."""
    if isinstance(exc, SystemExit):
        return True
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == str(path):
            return True
        tb = tb.tb_next
    return False


def user_traceback(exc: BaseException, path: Path) -> str:
    """The traceback from the script's first frame on (nstviz's own frames dropped)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != str(path):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


__all__ = ["CliError", "ScriptError", "as_main", "check_script", "raised_in", "run_script", "user_traceback"]
