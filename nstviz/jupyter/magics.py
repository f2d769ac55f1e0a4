"""The ``%nstrace`` line magic and ``%%nstrace`` cell magic.

The magic parses its options, displays a :class:`~nstviz.jupyter.widget.Viewer` that shows
live progress, runs the code through :func:`nstviz.api.trace_code` in the user's namespace,
then fills the widget with the Report. Errors are shown the way users expect: misuse as one
``UsageError`` paragraph, an exception from the user's own code with its normal traceback
(after the widget), a kernel interrupt as "interrupted" in the widget.
"""

from __future__ import annotations

import ast
import keyword
import pathlib
import re
import time
import traceback
import types
import weakref
from collections.abc import Callable
from typing import Any

from IPython.core.error import UsageError as IPythonUsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from nstviz._options import CaptureOptions, flag_arguments, flag_names
from nstviz._progress import progress_event
from nstviz.errors import NstvizError, UsageError

# Options that take a value (the others are switches); used to split `%nstrace [options] statement`.
_VALUE_OPTIONS = flag_names("magic", takes_value=True) | {"--html", "--json", "--name"}
_FLAG_OPTIONS = flag_names("magic", takes_value=False) | {"--quiet", "-h", "--help"}
_TOKEN = re.compile(r"""\s*((?:[^\s'"]+|'[^']*'|"[^"]*")+)""")


def split_line(line: str) -> tuple[str, str]:
    """Split a ``%nstrace`` line into its options and the statement to run.

    Options come first; the statement starts at the first token that is not an option or an
    option's value (or after ``--``). The statement is returned exactly as written.
    """
    pos = 0
    expect_value = False
    while True:
        match = _TOKEN.match(line, pos)
        if match is None:
            return line[:pos], ""
        token = match.group(1)
        if expect_value:
            expect_value = False
        elif token == "--":
            return line[: match.start(1)], line[match.end(1) :].strip()
        elif token.startswith("--") or token.split("=", 1)[0] in _FLAG_OPTIONS:
            # Unknown "--x" options are left to the option parser, which names them.
            expect_value = token in _VALUE_OPTIONS
        else:
            return line[: match.start(1)], line[match.start(1) :].strip()
        pos = match.end(1)


def _usage(message: str) -> IPythonUsageError:
    # IPython prints its own UsageError as one paragraph, without a traceback.
    return IPythonUsageError(message)


def _capture_flags(*options: str) -> Callable[[Any], Any]:
    """The ``@argument`` decorators of these capture options (spelled in :mod:`nstviz._options`), in order."""

    def decorate(func: Any) -> Any:
        # magic_arguments lists the arguments bottom-up: apply the last one first.
        for names, keywords in reversed(flag_arguments("magic", options)):
            func = argument(*names, **keywords)(func)
        return func

    return decorate


def _check_options(args: Any) -> CaptureOptions:
    """The capture options of the parsed magic line, after the magic's own checks."""
    if args.name is not None and (not args.name.isidentifier() or keyword.iskeyword(args.name)):
        raise _usage(
            f"%nstrace --name {args.name!r}: not a valid Python variable name; use e.g. --name report"
        )
    try:
        options = CaptureOptions.from_flags(args)
    except UsageError as exc:
        raise _usage(f"%nstrace {exc}") from None
    for opt in ("html", "json"):
        path = getattr(args, opt)
        if path is not None:
            parent = pathlib.Path(path).expanduser().resolve().parent
            if not parent.is_dir():
                raise _usage(
                    f"%nstrace --{opt} {path}: the folder {parent} does not exist; create it or pick another path"
                )
    return options


def _check_syntax(code: str, filename: str, label: str) -> None:
    """Refuse code that does not compile before anything runs, with Python's own message."""
    try:
        compile(code, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as exc:
        text = "".join(traceback.format_exception_only(type(exc), exc))
        text = text.replace(f'File "{filename}"', label)
        raise _usage(f"%nstrace: the code has a syntax error, so nothing was run:\n{text.rstrip()}") from None


_LAST_VIEWER: weakref.ref[Any] | None = None
# The viewer each notebook cell displayed last (by the cellId JupyterLab and Notebook 7 send), so
# re-running a cell releases the previous run's widget: the front end has cleared it already.
_VIEWER_OF_CELL: dict[str, weakref.ref[Any]] = {}


def _cell_id(shell: Any) -> str | None:
    kernel = getattr(shell, "kernel", None)
    if kernel is None or not hasattr(kernel, "get_parent"):
        return None
    try:
        parent = kernel.get_parent("shell") or {}
    except Exception:
        return None
    cell_id = (parent.get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) and cell_id else None


def _replace_cell_viewer(shell: Any, viewer: Any) -> None:
    """Close the viewer this cell displayed on its previous run, and remember the new one."""
    cell_id = _cell_id(shell)
    if cell_id is None:
        return
    old_ref = _VIEWER_OF_CELL.get(cell_id)
    old = old_ref() if old_ref is not None else None
    if old is not None and old is not viewer:
        old.close()
    for key in [k for k, ref in _VIEWER_OF_CELL.items() if ref() is None]:
        del _VIEWER_OF_CELL[key]
    _VIEWER_OF_CELL[cell_id] = weakref.ref(viewer)


def last_viewer() -> Any:
    """The Viewer the most recent magic displayed (held weakly: closing it releases it)."""
    return _LAST_VIEWER() if _LAST_VIEWER is not None else None


class _Progress:
    """Receives the capture's progress callbacks and pushes them to the widget."""

    def __init__(self, show: Callable[[], Any], runs_total: int) -> None:
        self._show = show
        self.viewer: Any = None
        self.runs_total = runs_total
        self.runs_done = 0
        self.phase = "starting"

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        event = progress_event(args, kwargs)
        if self.viewer is None:
            self.viewer = self._show()
        phase = str(event.get("phase") or event.get("run") or self.phase)
        message = str(event.get("message", "") or "")
        if isinstance(event.get("runs_total"), int):
            self.runs_total = event["runs_total"]
        if isinstance(event.get("runs_done"), int):
            self.runs_done = event["runs_done"]
        self.phase = phase
        if self.viewer is not None:
            self.viewer.set_progress(phase, message, runs_done=self.runs_done, runs_total=self.runs_total)


def _show_printed_output(report: Any) -> None:
    """Show what the runs printed under the view, while the viewer bundle does not show it."""
    from nstviz.jupyter import static_summary as _summary
    from nstviz.jupyter.widget import viewer_shows_printed_output

    block = _summary.printed_output_html(report)
    if block is None or viewer_shows_printed_output():
        return
    from IPython.display import display

    plain = "\n".join(
        f"--- printed by the {name} run ---\n{run.stdout}{run.stderr}".rstrip()
        for name, run in report.runs.items()
        if (run.stdout + run.stderr).strip()
    )
    display({"text/html": block, "text/plain": plain}, raw=True)


def _withdraw(viewer: Any, handle: Any) -> None:
    """Remove a widget that has nothing to show (the message below the cell says why)."""
    if handle is not None:
        handle.update({"text/plain": ""}, raw=True)
    if viewer is not None:
        viewer.close()


def _user_traceback(exc: BaseException, filename: str) -> types.TracebackType | None:
    """The exception's traceback from the first frame in the user's cell on."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    return tb or exc.__traceback__


def _cell_code(shell: Any, source: str, magic_line: str | None) -> tuple[int, str, str]:
    """The cell's number (its ``In [N]``), its code as IPython transforms it, and the filename it runs as.

    The code is cached under that filename (tracebacks show its lines) and checked to compile.
    """
    from nstviz.jupyter.cell_labels import running_cell_number

    number = running_cell_number(shell)  # this cell's In [N] (not shell.execution_count: IPython 9)
    code = shell.transform_cell(source)
    if magic_line is not None:
        # Keep line numbers equal to the ones the user sees in the cell (line 1 is the magic).
        code = f"# %%nstrace {magic_line}\n{code}"
    filename = shell.compile.cache(code, number, raw_code=source)
    _check_syntax(code, filename, f"Cell In[{number}]")
    return number, code, filename


class _ViewerSlot:
    """The Viewer below the cell: displayed at the first progress event, or at the end (not with --quiet)."""

    def __init__(self, shell: Any, args: Any, *, runs_total: int) -> None:
        self._shell = shell
        self._quiet = bool(args.quiet)
        self._html_path = args.html
        self._runs_total = runs_total
        self.viewer: Any = None
        self.handle: Any = None

    def show(self) -> Any:
        """Display a new Viewer (showing the runs' progress) and return it; None with --quiet."""
        if self._quiet:
            return None
        from IPython.display import display

        from nstviz.jupyter.widget import Viewer

        global _LAST_VIEWER
        self.viewer = Viewer(html_path=self._html_path)
        _LAST_VIEWER = weakref.ref(self.viewer)
        _replace_cell_viewer(self._shell, self.viewer)
        self.viewer.start_progress(runs_total=self._runs_total, message="starting the baseline run")
        self.handle = display(self.viewer, display_id=True)
        return self.viewer


@magics_class
class NstraceMagics(Magics):
    """The ``%nstrace`` / ``%%nstrace`` magics (registered by ``%load_ext nstviz``)."""

    @magic_arguments()
    @_capture_flags("nonstrict", "auto", "backend", "baseline")
    @argument("--html", metavar="PATH", help="Also write the standalone HTML report to PATH.")
    @argument("--json", metavar="PATH", help="Also write the Report JSON to PATH.")
    @argument("--name", metavar="VAR", help="Bind the Report to the variable VAR in the notebook.")
    @_capture_flags("check", "budget_s", "max_attempts", "time")
    @argument(
        "--quiet",
        action="store_true",
        help="Show nothing (no widget); use with --name, --html or --json to keep the result.",
    )
    @line_cell_magic
    def nstrace(self, line: str, cell: str | None = None) -> None:
        """Show what torch.compile does to this code and what nonstrict_trace changes.

        Usage::

            %%nstrace --nonstrict get_magic_num
            @torch.compile(fullgraph=True)
            def func(x):
                return x + get_magic_num()
            func(torch.rand(10))

            %nstrace --nonstrict helper model(x)      # one statement

        The code runs TWICE under torch.compile: first as written (the baseline), then with the
        --nonstrict functions traced by torch._dynamo.nonstrict_trace (with --auto, once more
        per candidate tried). Your source is not edited and no name is rebound; the marks are
        undone afterwards, also on errors and interrupts. Side effects happen once per run,
        and the notebook's variables end as the LAST run left them. With --time, each run's
        calls of compiled functions and modules (only those) are re-run to time them.

        Below the cell appears an interactive view: graph breaks before and after, graphs and
        ops on each side, whether outputs still match, and the graphs with the nodes inlined
        from non-strict functions highlighted. What each run printed is shown in the view,
        not repeated in the cell output. If your code raises, the view shows what was captured
        and the exception follows with its usual traceback. Interrupt the kernel to stop a
        long run.

        The view is a Python object too: ``nstviz.jupyter.last_viewer()`` returns it, with
        ``.selected_node`` / ``.selected_break`` (what you clicked), ``.select(node=...)``,
        ``.report`` and ``.export_html(path)``. Its Export HTML button writes the same file as
        --html (by default ``nstviz-<title>.html`` in the kernel's working directory).
        """
        __tracebackhide__ = True
        options, statement = (line, "") if cell is not None else split_line(line)
        try:
            args = parse_argstring(self.nstrace, options)
        except IPythonUsageError as exc:
            raise _usage(f"%nstrace: {exc} (see %nstrace? for the options)") from None
        if cell is None:
            if not statement:
                raise _usage(
                    "%nstrace needs code to run: %nstrace [options] STATEMENT, or use %%nstrace at the "
                    "top of a cell to run the whole cell. See %nstrace? for the options."
                )
            source = statement
        else:
            if not cell.strip():
                raise _usage("%%nstrace: the cell is empty; write the code to trace below the %%nstrace line")
            source = cell
        options = _check_options(args)
        self._run(args, options, source, magic_line=line if cell is not None else None)

    # -- the run ------------------------------------------------------------------------------

    def _run(self, args: Any, options: CaptureOptions, source: str, magic_line: str | None) -> None:
        __tracebackhide__ = True
        shell = self.shell
        assert shell is not None
        number, code, filename = _cell_code(shell, source, magic_line)
        from nstviz import api

        plan = api.run_plan(options, "trace_code")  # the runs trace_code will make: the totals from the start
        what = f"%%nstrace {magic_line}" if magic_line is not None else f"%nstrace {source}"
        title = f"In [{number}]: {' '.join(what.split())}"[:120]
        slot = _ViewerSlot(shell, args, runs_total=plan.runs_total())
        progress = _Progress(slot.show, runs_total=plan.runs_total())
        started = time.monotonic()
        try:
            report = api.trace_code(
                code, shell.user_ns, filename=filename, progress=progress, title=title, **options.as_kwargs()
            )
        except KeyboardInterrupt:
            if progress.viewer is not None:
                progress.viewer.set_progress(
                    "interrupted",
                    f"interrupted during the {progress.phase} run after {time.monotonic() - started:.1f} s; "
                    "torch and nstviz state were restored",
                )
                if slot.handle is not None:
                    slot.handle.update(progress.viewer)  # a saved notebook's static text says so too
            raise
        except NstvizError as exc:
            _withdraw(slot.viewer, slot.handle)
            raise _usage(f"%nstrace: {exc}") from None
        except Exception as exc:
            # The user's code raised before anything was compiled: show it as a normal run would.
            _withdraw(slot.viewer, slot.handle)
            raise exc.with_traceback(_user_traceback(exc, filename))  # noqa: B904 - the user's own exception
        self._deliver(args, slot, report, filename)

    def _deliver(self, args: Any, slot: _ViewerSlot, report: Any, filename: str) -> None:
        """Fill the viewer with the Report, write the files, bind ``--name``, re-raise the code's error."""
        __tracebackhide__ = True
        shell = self.shell
        from nstviz.jupyter.cell_labels import with_cell_labels

        report = with_cell_labels(shell, report, filename)  # 'Cell In[3]', as IPython says it
        if slot.viewer is None:
            slot.show()
        if slot.viewer is not None:
            slot.viewer.report = report
            if slot.handle is not None:
                slot.handle.update(slot.viewer)  # the saved notebook keeps the final static summary
            _show_printed_output(report)
        self._write_outputs(args, report)
        if args.name:
            shell.user_ns[args.name] = report
        self._reraise_user_error(report, filename)

    @staticmethod
    def _write_outputs(args: Any, report: Any) -> None:
        if args.json:
            report.save_json(pathlib.Path(args.json).expanduser())
        if args.html:
            from nstviz.render.html import save_html

            save_html(report, pathlib.Path(args.html).expanduser())

    @staticmethod
    def _reraise_user_error(report: Any, filename: str) -> None:
        __tracebackhide__ = True
        exc = getattr(report, "user_exception", None)
        if exc is not None:
            raise exc.with_traceback(_user_traceback(exc, filename))


__all__ = ["NstraceMagics", "split_line"]
