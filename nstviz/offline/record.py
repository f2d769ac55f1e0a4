"""Record one run of a script anywhere, e.g. on every rank of a torchrun job (``nstviz record``).

The script runs once, as ``python SCRIPT ARGS`` would run it, under nstviz's recorder (the
same capture modules as ``nstviz run``: :func:`nstviz.capture.runner.execute`), as written or
with the named functions traced non-strictly. Nothing is re-run and nothing is rolled back:
inside a distributed job a second run would replay collectives. The run is written to
``OUT/rank-N.nstviz.json`` as a single-run Report, ``N`` being the ``RANK`` torchrun sets
(0 when absent). ``nstviz diff`` pairs such files (or ingested TORCH_TRACE logs) per rank.

Names given to ``--nonstrict`` may be defined by the script itself: they are resolved after
every top-level statement, as :func:`nstviz.trace_code` does.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime
import os
import platform
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nstviz._version import __version__
from nstviz.capture import _torch_compat, marking, plain, state
from nstviz.capture._introspect import unwrap
from nstviz.capture.runner import RunResult, execute
from nstviz.errors import NameResolutionError, NotMarkableError, UsageError
from nstviz.offline.ingest import rank_file_name
from nstviz.offline.script_main import as_main
from nstviz.passes.assemble import build_report
from nstviz.passes.provenance import build_regions
from nstviz.report import MarkedFunction, Report, Run
from nstviz.tracing.stacks import StackTable


@dataclasses.dataclass(frozen=True, slots=True)
class RankInfo:
    """Where this process sits in a distributed job (from torchrun's environment)."""

    rank: int = 0
    local_rank: int = 0
    world_size: int = 1


def rank_info(environ: dict[str, str] | None = None) -> RankInfo:
    """``RANK``/``LOCAL_RANK``/``WORLD_SIZE`` from the environment; rank 0 of 1 when absent.

    Raises:
        UsageError: one of them is set but is not a non-negative integer.
    """
    env = os.environ if environ is None else environ
    values = {}
    for key, default in (("RANK", 0), ("LOCAL_RANK", 0), ("WORLD_SIZE", 1)):
        raw = env.get(key)
        if raw is None or raw == "":
            values[key] = default
            continue
        try:
            values[key] = int(raw)
        except ValueError:
            raise UsageError(f"environment variable {key}={raw!r} is not an integer (torchrun sets it to one)") from None
        if values[key] < 0:
            raise UsageError(f"environment variable {key}={raw!r} is negative")
    return RankInfo(rank=values["RANK"], local_rank=values["LOCAL_RANK"], world_size=values["WORLD_SIZE"])


class _LazyMarks:
    """The functions to mark, resolved in the script's namespace as they get defined."""

    def __init__(self, specs: Sequence[str], namespace: dict[str, Any]) -> None:
        self.specs = tuple(specs)
        self.namespace = namespace
        self.targets: dict[str, marking.Target] = {}
        self.refused: list[str] = []

    def __call__(self) -> list[Callable[..., Any]]:
        for spec in self.specs:
            if spec in self.targets:
                continue
            try:
                self.targets[spec] = marking.resolve_one(spec, self.namespace)
            except NameResolutionError:
                continue  # not defined yet: tried again after the next statement
            except NotMarkableError as exc:
                if str(exc) not in self.refused:
                    self.refused.append(str(exc))
        return [t.function for t in self.targets.values()]


def _statements(source: str, filename: str) -> list[Any]:
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise UsageError(f"{filename}:{exc.lineno}: syntax error: {exc.msg}; the script must run with `python`") from None
    flags = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            for alias in stmt.names:
                feature = getattr(__import__("__future__"), alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return [
        compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec", flags=flags, dont_inherit=True)
        for stmt in tree.body
    ]


def _finish(result: RunResult, marks: _LazyMarks, stacks: StackTable) -> tuple[Run, list[str]]:
    """The Run with regions and marked functions filled in, and notes for the user."""
    calls = [plain.call_site(call) for call in result.nonstrict_calls]
    run = build_regions(result.run, calls, stacks.stacks)
    applied = {id(unwrap(c.function)) for c in result.nonstrict_calls if c.function is not None}
    notes = list(result.notes) + marks.refused
    marked: list[MarkedFunction] = []
    for spec in marks.specs:
        target = marks.targets.get(spec)
        if target is None:
            warning = f"--nonstrict {spec}: no function of that name was defined while the script ran; nothing was marked"
            notes.append(warning)
            marked.append(MarkedFunction(spec=spec, qualname=spec, applied=False, warning=warning))
            continue
        record = marking.marked_function(target)
        ok = id(unwrap(target.function)) in applied
        warning = target.warning
        if not ok and warning is None:
            warning = (
                f"{target.qualname} was marked but no call went through nonstrict_trace: it was not called inside "
                "compiled code, or it is an nn.Module forward called as module(...)"
            )
            notes.append(warning)
        marked.append(dataclasses.replace(record, applied=ok, warning=warning))
    return dataclasses.replace(run, marked=tuple(marked)), notes


def _run_once(
    path: Path,
    argv: Sequence[str],
    statements: list[Any],
    *,
    nonstrict: Sequence[str],
    backend: str,
    echo: bool,
    stacks: StackTable,
) -> tuple[RunResult, _LazyMarks]:
    """Run the script's statements once, as ``__main__``, under capture; the state nstviz touches restored after."""
    snapshot = state.StateSnapshot.take()
    with as_main(path, argv) as namespace:
        marks = _LazyMarks(nonstrict, namespace)

        def body(remark: Callable[[], None]) -> None:
            for code in statements:
                exec(code, namespace)
                remark()

        name = "nonstrict" if nonstrict else "baseline"
        try:
            result = execute(name, body, backend=backend, stacks=stacks, rng=state.rng_state(), marks=marks, echo=echo)
        finally:
            _torch_compat.dynamo_reset()
            snapshot.restore(rng=False)
    return result, marks


def _as_recorded(run: Run, exception: BaseException | None, info: RankInfo) -> Run:
    """The run as ``nstviz record`` writes it: its rank, and no error for a script that exited with status 0."""
    run = dataclasses.replace(run, rank=info.rank, world_size=info.world_size, origin="record")
    if exception is not None and isinstance(exception, SystemExit) and exception.code in (0, None):
        run = dataclasses.replace(run, error=None, error_type=None, error_kind=None, error_traceback=None)
    return run


def record_script(
    script: str | Path,
    argv: Sequence[str] = (),
    *,
    nonstrict: Sequence[str] = (),
    backend: str = "record",
    echo: bool = True,
    rank: RankInfo | None = None,
) -> Report:
    """Run a script once under capture and return its single-run Report.

    Args:
        script: the Python script (run as ``__main__`` with ``sys.argv = [script, *argv]``).
        argv: the script's arguments.
        nonstrict: functions to trace non-strictly (names as ``--nonstrict`` takes them).
        backend: the backend to record with (``"record"``: ATen graphs, no codegen).
        echo: let the script's output through (it is also kept in the Run).
        rank: the process's rank (default: from the environment, :func:`rank_info`).

    Returns:
        A Report with one run, ``"baseline"`` (as written) or ``"nonstrict"`` (with
        ``nonstrict``), whose ``rank``/``world_size`` are set.

    Raises:
        UsageError: the script is missing or does not parse, or a bad rank environment.
    """
    path = Path(script)
    if not path.is_file():
        raise UsageError(f"no such script: {path}")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}; give a UTF-8 Python file") from None
    path = path.resolve()
    info = rank or rank_info()
    statements = _statements(source, str(path))
    _torch_compat.check_supported()
    name = "nonstrict" if nonstrict else "baseline"
    stacks = StackTable()
    created = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    with _torch_compat.noting_lost_features() as lost:
        _torch_compat.gb_registry()  # notes a registry this torch lacks
        result, marks = _run_once(path, argv, statements, nonstrict=nonstrict, backend=backend, echo=echo, stacks=stacks)
        run, notes = _finish(result, marks, stacks)
    run = _as_recorded(run, result.exception, info)
    return build_report(
        torch_version=_torch_compat.torch_version(),
        runs={name: run},
        nstviz_version=__version__,
        python_version=platform.python_version(),
        created=created,
        title=f"{path.name} (rank {info.rank})",
        entry="cli",
        backend=backend,
        nonstrict=tuple(nonstrict),
        stacks=tuple(stacks.stacks),
        sources=plain.sources(stacks.stacks, plain.source_paths(run, marks=[m.file for m in run.marked], compiles=False)),
        notes=tuple(dict.fromkeys([*_torch_compat.capture_notes(lost), *notes])),
        rank=info.rank,
    )


def write_record(report: Report, out_dir: str | Path) -> Path:
    """Write a recorded run to ``out_dir/rank-N.nstviz.json`` (creating the folder)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / rank_file_name(report.rank or 0)
    tmp = target.with_name(f".{target.name}.partial")
    report.save_json(tmp)
    tmp.replace(target)
    return target



__all__ = ["RankInfo", "rank_info", "record_script", "write_record"]
