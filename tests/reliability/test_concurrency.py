"""Concurrency: what is supported (magics in a row, widgets kept alive, other threads running torch)
and what nstviz refuses with a clear message (a second capture at the same time, a nested one)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import torch
from IPython.utils.capture import capture_output

import nstviz
from nstviz.errors import UsageError
from tests.helpers.snapshot import ProcessState, assert_restored
from tests.reliability import programs

SLOW_CELL = """
@torch.compile
def slow(x):
    return x.sin() + 1
y = slow(torch.ones(3))
started.set()
assert release.wait(120), "the test never released the first capture"
"""
"""Holds its capture open (after compiling) until the test sets ``release``."""


def test_two_magics_in_a_row_and_the_first_widget_stays_usable(ip: Any, before: ProcessState) -> None:
    from nstviz.jupyter import last_viewer

    ip.run_cell(programs.SEED_DEFS)
    with capture_output():
        ip.run_cell("%%nstrace --nonstrict get_magic_num\n" + programs.SEED_CELL)
    first = last_viewer()
    first_json = first.report_json
    with capture_output():
        result = ip.run_cell("%%nstrace --nonstrict helper\n" + programs.BREAKING_CELL)
    assert result.success, result.error_in_exec
    second = last_viewer()
    assert second is not first
    # the first widget still shows its own Report and can be driven from Python
    assert first.report_json == first_json and first.report.counts["nonstrict"].full_graph
    first.select(node=first.report.runs["nonstrict"].graphs[-1].nodes[1].name)
    assert first.selected_node
    assert second.report.nonstrict == ("helper",)
    assert_restored(before)


def _in_thread(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run, name="second-capture")
    thread.start()
    return thread, out


def test_a_second_concurrent_capture_is_refused(before: ProcessState) -> None:
    started, release = threading.Event(), threading.Event()

    def first() -> Any:
        ns = {"torch": torch, "started": started, "release": release}
        return nstviz.trace_code(SLOW_CELL, ns)

    thread, out = _in_thread(first)
    assert started.wait(120)  # the first capture is inside its baseline run, and stays there
    try:
        with pytest.raises(UsageError, match="another nstviz capture is running in another thread"):
            nstviz.compare(programs.func, torch.ones(4), nonstrict=[programs.get_magic_num])
    finally:
        release.set()
    thread.join(120)
    assert not thread.is_alive()
    assert "error" not in out, out.get("error")
    assert out["value"].counts["baseline"].graphs == 1
    # and once it is done, captures work again
    assert nstviz.compare(programs.func, torch.ones(4), nonstrict=[programs.get_magic_num]).counts["nonstrict"].full_graph
    assert_restored(before)


def test_a_nested_capture_is_refused(before: ProcessState) -> None:
    ns = {"torch": torch, "nstviz": nstviz, "programs": programs}
    code = programs.RANDOM_CELL + "inner = nstviz.compare(programs.func, torch.ones(4))\n"
    report = nstviz.trace_code(code, ns)
    assert report.runs["baseline"].error_type == "UsageError"
    assert "already capturing in this thread" in report.runs["baseline"].error
    assert_restored(before)


def test_capture_while_another_thread_compiles(before: ProcessState) -> None:
    """Supported with limits: another thread's compiles during a capture are neither recorded nor
    broken (see docs/reliability.md).

    The other thread compiles and runs its function exactly while the captured code waits for it
    (handshake events), i.e. inside every run of the capture, with nstviz's hooks installed. It is
    not left running freely: torch's ``torch._dynamo.reset()`` (which nstviz calls at the start
    of each run) while another thread executes compiled code can crash the process (measured: a
    segfault in torch's eval-frame code), a torch limit the docs state.
    """
    go, done, stop = threading.Event(), threading.Event(), threading.Event()
    results: list[float] = []

    @torch.compile(backend="eager")
    def other(x: torch.Tensor) -> torch.Tensor:
        return x.cos() * 3

    def worker() -> None:
        while go.wait() and not stop.is_set():
            go.clear()
            results.append(float(other(torch.ones(2)).sum()))
            done.set()

    kicks: list[int] = []

    @torch._dynamo.disable
    def let_the_other_thread_compile() -> None:
        kicks.append(1)
        done.clear()
        go.set()
        assert done.wait(120), "the other thread did not answer"

    def traced(x: torch.Tensor) -> torch.Tensor:
        y = programs.helper(x.sin())
        let_the_other_thread_compile()
        return y + 1

    thread = threading.Thread(target=worker, name="other-torch-thread")
    thread.start()
    try:
        for _ in range(3):
            report = nstviz.compare(traced, torch.ones(4), nonstrict=["helper"], time=False)  # counts calls: no timing re-calls
            functions = {g.function for run in report.runs.values() for g in run.graphs}
            assert "other" not in functions, "the other thread's graphs leaked into the Report"
            # the handshake itself is a break (a torch._dynamo.disable-d call, GB0098)
            assert [(b.gb_id, b.location.function) for b in report.runs["baseline"].breaks] == [
                ("GB0025", "helper"), ("GB0098", "traced")
            ]
            assert [(b.gb_id, b.location.function) for b in report.runs["nonstrict"].breaks] == [("GB0098", "traced")]
    finally:
        stop.set()
        go.set()
        thread.join(30)
    assert len(results) == len(kicks) == 3 * 4  # 4 calls of traced per compare (runs and eager references)
    assert set(results) == {float(torch.ones(2).cos().sum() * 3)}
    assert_restored(before)


def test_capture_while_another_thread_runs_eager_torch(before: ProcessState) -> None:
    stop = threading.Event()
    sums: list[float] = []

    def worker() -> None:
        a = torch.randn(64, 64, generator=torch.Generator().manual_seed(0))
        while not stop.is_set():
            sums.append(float((a @ a).sum()))

    thread = threading.Thread(target=worker, name="eager-torch-thread")
    thread.start()
    try:
        report = nstviz.trace_code(programs.SEED_CELL, programs.seed_namespace(), nonstrict=["get_magic_num"])
    finally:
        stop.set()
        thread.join(30)
    assert report.counts["nonstrict"].full_graph
    assert len(set(sums)) == 1  # the other thread computed undisturbed
    assert_restored(before)
