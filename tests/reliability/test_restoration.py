"""Whatever happens in a compare/trace_code call, the process ends exactly as it was.

Each case runs a real capture that succeeds, fails in the user's code, fails inside nstviz
(fault injected into nstviz's own functions), is interrupted (KeyboardInterrupt from the
user's code, from the progress callback between runs, from ``_thread.interrupt_main``), or
has its advisor stopped by the budget; then the whole :class:`ProcessState` is compared.
"""

from __future__ import annotations

import _thread
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import pytest
import torch

import nstviz
from nstviz.errors import NothingCompiledError
from nstviz.report import Report
from tests.helpers.snapshot import ProcessState, assert_restored
from tests.reliability import programs


def _seed(**kwargs: Any) -> Report:
    return nstviz.trace_code(programs.SEED_CELL, programs.seed_namespace(), nonstrict=["get_magic_num"], **kwargs)


def _compare(**kwargs: Any) -> Report:
    return nstviz.compare(programs.func, torch.ones(4), nonstrict=[programs.get_magic_num], **kwargs)


def _breaking_cell(**kwargs: Any) -> Report:
    return nstviz.trace_code(programs.BREAKING_CELL, {"torch": torch}, nonstrict=["helper"], **kwargs)


def _breaking_fn(**kwargs: Any) -> Report:
    return nstviz.compare(programs.breaking, torch.ones(4), nonstrict=["helper"], **kwargs)


# -- success and user errors ------------------------------------------------------------------


def test_success_trace_code(before: ProcessState) -> None:
    report = _seed()
    assert report.counts["nonstrict"].full_graph
    assert_restored(before)


def test_success_compare(before: ProcessState) -> None:
    report = _compare()
    assert report.counts["baseline"].breaks == 1 and report.counts["nonstrict"].breaks == 0
    assert_restored(before)


def test_rng_left_where_it_was_even_though_runs_draw(before: ProcessState) -> None:
    torch.manual_seed(123)
    state = ProcessState.take()
    report = nstviz.trace_code(programs.RANDOM_CELL, {"torch": torch})
    assert report.counts["baseline"].graphs >= 1
    assert_restored(state)


def test_user_error_after_compiling(before: ProcessState) -> None:
    code = programs.SEED_CELL.replace("fullgraph=True", "") + "raise ValueError('boom after compile')\n"
    report = nstviz.trace_code(code, programs.seed_namespace(), nonstrict=["get_magic_num"])
    assert report.runs["baseline"].error == "ValueError: boom after compile"
    assert isinstance(report.user_exception, ValueError)
    assert_restored(before)


def test_user_error_before_compiling(before: ProcessState) -> None:
    with pytest.raises(ZeroDivisionError):
        nstviz.trace_code("1 / 0\n" + programs.SEED_CELL, programs.seed_namespace(), nonstrict=["get_magic_num"])
    assert_restored(before)


def test_user_error_inside_compiled_function(before: ProcessState) -> None:
    def bad(x: torch.Tensor) -> torch.Tensor:
        return x @ torch.ones(5, 5)  # shape error raised while tracing

    report = nstviz.compare(bad, torch.ones(4))
    assert report.runs["baseline"].error is not None
    assert_restored(before)


# -- faults inside nstviz -------------------------------------------------------------------------


class InjectedFault(RuntimeError):
    """Raised by an nstviz function replaced by a test."""


def _raiser(*_args: Any, **_kwargs: Any) -> Any:
    raise InjectedFault("injected by the reliability test")


# (module path, attribute, what is expected: "raises" or "report" when nstviz absorbs it)
FAULTS = [
    ("nstviz.capture.runner", "break_from_artifact", "raises"),  # converting a break, after a run
    ("nstviz.capture.runner", "compiles_from_events", "raises"),  # converting compiles
    ("nstviz.capture.recorder", "convert_graph", "report"),  # converting a graph, inside the compile
    ("nstviz.capture.trace_log.TraceCollector", "_handle", "report"),  # inside a logging handler
    ("nstviz.api", "diff_breaks", "raises"),  # an analysis pass while assembling
    ("nstviz.api", "assign_baseline_graphs", "raises"),
    ("nstviz.api", "build_regions", "raises"),
    ("nstviz.capture.namespace.NamespaceCheckpoint", "restore", "raises"),  # rolling back between runs
    ("nstviz.capture.marking", "marked", "raises"),  # marking the functions
    ("nstviz.capture.runner", "collecting", "raises"),  # installing the trace handler
    ("nstviz.capture.runner", "captured_output", "raises"),  # swapping stdout/stderr
]


def _resolve(path: str) -> Any:
    import importlib

    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(path)


_FAULT = "InjectedFault('injected by the reliability test')"

# The notes the docs promise when nstviz absorbs a fault ("a note says what was not recorded"),
# written down: both entry points run the same program (graphs 0/0_1, 2/0, 3/0, 0/0).
ABSORBED_NOTES = {
    "convert_graph": [
        f"could not record the {level} graph of {gid}: {_FAULT}"
        for gid in ("0/0_1", "2/0", "3/0", "0/0")
        for level in ("Dynamo", "aten_inference")
    ]
    + [
        "helper was marked but no call went through nonstrict_trace: it was not called inside compiled "
        "code, or it is an nn.Module forward called as module(...)"
    ],
    "_handle": [
        f"{run}: could not read torch's structured trace ({_FAULT}); graph breaks, compiles and guards of "
        "this run may be missing"
        for run in ("baseline", "nonstrict")
    ],
}

# compare() rolls back its (empty) argument namespace only with check=True: no restore to break
FAULT_CASES = [
    pytest.param(where, name, expect, entry, id=f"{entry}-{where.rsplit('.', 1)[-1]}.{name}")
    for entry in ("trace_code", "compare")
    for where, name, expect in FAULTS
    if not (entry == "compare" and name == "restore")
]


@pytest.mark.parametrize(("where", "name", "expect", "entry"), FAULT_CASES)
def test_fault_inside_nstviz(
    where: str, name: str, expect: str, entry: str, before: ProcessState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_resolve(where), name, _raiser)
    call = _breaking_cell if entry == "trace_code" else _breaking_fn
    if expect == "raises":
        with pytest.raises(InjectedFault):
            call()
    else:
        report = call()
        assert isinstance(report, Report)
        assert list(report.notes) == ABSORBED_NOTES[name]
    monkeypatch.undo()
    assert_restored(before)


def test_fault_halfway_through_marking(before: ProcessState, monkeypatch: pytest.MonkeyPatch) -> None:
    """mark_ids fails after adding some ids: the ids added are removed again, no KeyError."""
    from nstviz.capture import _torch_compat

    real = _torch_compat.mark_ids

    def half(ids: set[int]) -> None:
        ids = sorted(ids)
        real(set(ids[:1]))
        raise InjectedFault("failed after marking one function")

    ns = programs.seed_namespace()
    exec("def other():\n    return 1\n", ns)
    monkeypatch.setattr(_torch_compat, "mark_ids", half)
    with pytest.raises(InjectedFault):
        nstviz.trace_code(programs.SEED_CELL, ns, nonstrict=["get_magic_num", "other"])
    monkeypatch.undo()
    assert_restored(before)


# -- interrupts --------------------------------------------------------------------------------


@pytest.mark.parametrize("at", [1, 2], ids=["baseline", "nonstrict"])
def test_keyboard_interrupt_from_user_code(at: int, before: ProcessState) -> None:
    ns = programs.seed_namespace()
    ns["tick"] = programs.Interrupter(at)
    with pytest.raises(KeyboardInterrupt):
        nstviz.trace_code(programs.SEED_CELL.replace("out = ", "tick()\nout = "), ns, nonstrict=["get_magic_num"])
    assert ns["tick"].calls == at
    assert_restored(before)


def test_keyboard_interrupt_inside_compiled_code(before: ProcessState) -> None:
    """Ctrl-C raised by the user's code between two graphs of a compiled function (call 1 is the
    eager reference run, call 2 the baseline)."""
    tick = programs.Interrupter(2)

    def traced(x: torch.Tensor) -> torch.Tensor:
        torch._dynamo.graph_break()
        tick()
        return x + 1

    with pytest.raises(KeyboardInterrupt):
        nstviz.compare(torch.compile(traced, backend="eager"), torch.ones(3))
    assert_restored(before)


@pytest.mark.parametrize("phase", ["baseline", "nonstrict", "done"])
def test_keyboard_interrupt_between_runs(phase: str, before: ProcessState) -> None:
    """The progress callback (called between runs) raises KeyboardInterrupt at a given phase."""

    def progress(event: dict[str, Any]) -> None:
        if event["phase"] == phase:
            raise KeyboardInterrupt(f"interrupted at {phase}")

    with pytest.raises(KeyboardInterrupt):
        _seed(progress=progress)
    assert_restored(before)


LONG_CELL = """
def piece(x):
    x = torch.sin(x) * 2
    torch._dynamo.graph_break()
    return x.cos() + 1

@torch.compile
def step(x):
    x = piece(x)
    x = piece(x + 1)
    return piece(x * 3)

for n in range(1, 9):
    y = step(torch.ones(n, 2))
"""
# One trace_code of LONG_CELL takes about 2 s here (baseline: 8 graphs and recompiles; nonstrict: 2);
# the delays spread the interrupt over Dynamo tracing, AOT, the recorder, the runs' bookkeeping,
# the namespace rollback and the Report assembly.
DELAYS = [0.01, 0.1, 0.25, 0.4, 0.6, 0.8, 1.0]


def _interrupted_run(delay: float, fire: Callable[[], None]) -> str:
    """Run LONG_CELL with an interrupt fired after ``delay`` s; return where it landed.

    Fails when the interrupt fired while nstviz was running but the call still returned: an
    interrupt torch swallowed must be re-raised by nstviz (``state.interrupt_latch``).
    """
    fired: list[float] = []

    def shoot() -> None:
        fired.append(time.monotonic())
        fire()

    timer = threading.Timer(delay, shoot)
    timer.start()
    landed = "after the call returned (not interrupted)"
    returned_at = None
    try:
        try:
            nstviz.trace_code(LONG_CELL, {"torch": torch}, nonstrict=["piece"])
            returned_at = time.monotonic()
        finally:
            timer.join()
            for _ in range(10_000):  # a pending interrupt is delivered here at the latest
                pass
    except KeyboardInterrupt as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.name != "handler"]
        landed = " < ".join(f"{os.path.basename(f.filename)}:{f.name}" for f in reversed(frames[-3:]))
    if returned_at is not None:
        assert fired[0] > returned_at - 0.05, f"an interrupt {returned_at - fired[0]:.2f} s before the end was lost"
    return landed


@pytest.mark.parametrize("delay", DELAYS)
def test_interrupt_main_at_arbitrary_points(delay: float, before: ProcessState) -> None:
    """A timer thread calls _thread.interrupt_main() (what a kernel interrupt does to the main
    thread): the KeyboardInterrupt lands wherever the main thread is."""
    landed = _interrupted_run(delay, _thread.interrupt_main)
    print(f"delay {delay}: landed in {landed}")
    assert_restored(before)


@pytest.mark.parametrize("delay", [0.3, 1.2])
def test_real_sigint_at_arbitrary_points(delay: float, before: ProcessState) -> None:
    """A real SIGINT to the process (as the Jupyter kernel's interrupt sends)."""
    landed = _interrupted_run(delay, lambda: os.kill(os.getpid(), signal.SIGINT))
    print(f"delay {delay}: landed in {landed}")
    assert_restored(before)


# -- advisor budget -----------------------------------------------------------------------------


def test_advisor_stopped_by_time_budget(before: ProcessState) -> None:
    report = nstviz.compare(programs.breaking, torch.ones(4), auto=True, budget_s=1e-6)
    assert report.candidates, "the advisor proposed nothing"
    assert all(c.status in ("skipped", "rejected") for c in report.candidates), report.candidates
    assert_restored(before)


def test_advisor_stopped_by_attempt_budget(before: ProcessState) -> None:
    ns = {"torch": torch}
    report = nstviz.trace_code(programs.BREAKING_CELL, ns, auto=True, max_attempts=1)
    assert sum(1 for c in report.candidates if c.run is not None) <= 1
    assert_restored(before)


# -- nothing compiled ---------------------------------------------------------------------------


def test_nothing_compiled(before: ProcessState) -> None:
    with pytest.raises(NothingCompiledError):
        nstviz.trace_code("y = 1 + 1\n", {})
    assert_restored(before)



def test_swallowed_interrupt_still_stops_nstviz(before: ProcessState) -> None:
    """An interrupt that something inside the run swallows (torch's C++ guard evaluation does, see
    ``state.InterruptLatch``; here the user's code itself) still stops nstviz after the run."""
    code = (
        "import os, signal, time\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(1)\n"
        "except KeyboardInterrupt:\n"
        "    pass\n" + programs.SEED_CELL
    )
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt, match="during the baseline run"):
        nstviz.trace_code(code, programs.seed_namespace(), nonstrict=["get_magic_num"])
    assert time.monotonic() - started < 5
    assert_restored(before)
