"""The thread rule of the state checks: torch's own long-lived threads pass, nstviz's are caught.

See tests/helpers/threads.py and docs/reliability.md ("One-time lazy work").
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

import nstviz
from nstviz.capture import runner
from tests.capture.cases import corpus as c
from tests.helpers import state
from tests.helpers.snapshot import ProcessState, assert_restored
from tests.helpers.threads import is_torch_lazy_thread

pytestmark = pytest.mark.usefixtures("warm_backends")


def test_inductor_compile_pool_workers_are_torchs() -> None:
    """A worker of inductor's process-lifetime compile pool is torch's lazy work, not a leak."""
    import torch._inductor.config as inductor_config
    from torch._inductor.async_compile import AsyncCompile

    # the pool exists only with > 1; torch's own patch (pytest's monkeypatch, undone with delattr,
    # hides the setting for good: every later inductor compile in the process then fails)
    with inductor_config.patch(compile_threads=2):
        pool = AsyncCompile.pool()
    pool.submit(int).result()
    workers = [
        t
        for t in threading.enumerate()
        if getattr(t, "_args", (None,))[:1] and isinstance(t._args[0], weakref.ref) and t._args[0]() is pool
    ]
    assert len(workers) >= 1
    assert [is_torch_lazy_thread(t) for t in workers] == [True] * len(workers)


@pytest.fixture
def leak_from_nstviz(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Make nstviz's own code (the runner's compile-table step) start two threads it never stops:
    a plain thread and a worker of an executor of its own. Both are stopped after the test."""
    stop = threading.Event()
    executors: list[ThreadPoolExecutor] = []
    names: list[str] = []
    real = runner.compiles_from_events

    def leaking(*args, **kwargs):
        t = threading.Thread(target=stop.wait, name=f"nstviz-leak-{len(names)}", daemon=True)
        t.start()
        names.append(t.name)
        ex = ThreadPoolExecutor(1, thread_name_prefix=f"nstviz-pool-{len(executors)}")
        ex.submit(int).result()
        executors.append(ex)
        names.append(f"nstviz-pool-{len(executors) - 1}_0")
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "compiles_from_events", leaking)
    yield names
    stop.set()
    for ex in executors:
        ex.shutdown(wait=True)


def test_state_check_catches_a_thread_left_by_nstviz(leak_from_nstviz: list[str]) -> None:
    before = state.take()
    nstviz.compare(c.loop_fn, torch.ones(3), nonstrict=["loop_helper"])
    assert len(leak_from_nstviz) == 4  # two runs, two threads each
    with pytest.raises(AssertionError, match=r"state changed: \['threads'\]"):
        state.assert_same(before, state.take())
    assert sorted(set(state.take()["threads"]) - set(before["threads"])) == sorted(leak_from_nstviz)


def test_process_state_check_catches_a_thread_left_by_nstviz(leak_from_nstviz: list[str]) -> None:
    before = ProcessState.take()
    nstviz.trace_code("y = torch.compile(loop_fn)(torch.ones(3))\n", {"torch": torch, "loop_fn": c.loop_fn})
    with pytest.raises(AssertionError) as info:
        assert_restored(before, grace_s=0.0)
    want = "threads left running: " + repr(sorted(leak_from_nstviz))
    assert want in str(info.value), str(info.value)
