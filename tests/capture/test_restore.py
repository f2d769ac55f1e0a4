"""Everything nstviz touches is restored: on success, user errors, nstviz errors, interrupts."""

from __future__ import annotations

import itertools
import random
import threading

import numpy as np
import pytest
import torch

import nstviz
from nstviz.errors import NameResolutionError, NothingCompiledError, NotMarkableError, UsageError
from tests.capture.cases import corpus as c
from tests.helpers import state

pytestmark = pytest.mark.usefixtures("warm_backends")  # torch's first-compile work before any snapshot

CELL = "y = torch.compile(loop_fn)(torch.ones(3))\n"


def _ns() -> dict:
    return {"torch": torch, "loop_fn": c.loop_fn}


def test_success_restores_everything():
    before = state.take()
    report = nstviz.trace_code(CELL, _ns(), nonstrict=["loop_helper"])
    assert report.runs["nonstrict"].regions
    state.assert_same(before, state.take())


def test_user_error_is_recorded_and_state_restored():
    before = state.take()
    ns = _ns()
    report = nstviz.trace_code(CELL + "raise ValueError('boom')\n", ns, nonstrict=["loop_helper"])
    state.assert_same(before, state.take())
    for run in report.runs.values():
        assert run.error == "ValueError: boom" and run.error_type == "ValueError"
        assert "raise ValueError('boom')" in run.error_traceback
    with pytest.raises(ValueError, match="boom"):
        report.raise_user_error()
    assert nstviz.api.user_exception(report) is report.user_exception
    assert torch.is_tensor(ns["y"])  # the namespace is as after the last run


def test_keyboard_interrupt_restores_and_reraises():
    before = state.take()
    ns = _ns()
    ns["sentinel"] = 1
    with pytest.raises(KeyboardInterrupt):
        nstviz.trace_code(CELL + "sentinel = 2\nraise KeyboardInterrupt\n", ns, nonstrict=["loop_helper"])
    state.assert_same(before, state.take())
    assert ns["sentinel"] == 1 and "y" not in ns  # rolled back to before the call


def test_keyboard_interrupt_in_second_run_restores():
    before = state.take()
    ns = _ns()
    ns["runs"] = itertools.count()  # not rolled back between runs, unlike lists
    ns["done"] = []
    cell = CELL + "done.append(1)\nif next(runs) == 1:\n    raise KeyboardInterrupt\n"
    with pytest.raises(KeyboardInterrupt):
        nstviz.trace_code(cell, ns, nonstrict=["loop_helper"])
    state.assert_same(before, state.take())
    assert ns["done"] == [] and "y" not in ns


def test_nothing_compiled_error_restores():
    before = state.take()
    with pytest.raises(NothingCompiledError, match="compiled nothing"):
        nstviz.trace_code("z = 1 + 1\n", {})
    state.assert_same(before, state.take())


def test_bad_names_fail_before_running():
    before = state.take()
    ns = _ns()
    with pytest.raises(NameResolutionError, match="'nope' is not defined"):
        nstviz.trace_code(CELL, ns, nonstrict=["nope"])
    assert "y" not in ns
    with pytest.raises(NotMarkableError, match="builtin or C function"):
        nstviz.trace_code(CELL, ns, nonstrict=[torch.sin])
    with pytest.raises(UsageError, match="syntax error at line 1"):
        nstviz.trace_code("def (:\n", ns)
    state.assert_same(before, state.take())


def test_rng_same_start_for_every_run_and_restored_after():
    random.seed(5)
    np.random.seed(5)
    torch.manual_seed(5)
    expected = (torch.rand(2), random.random(), np.random.rand())
    random.seed(5)
    np.random.seed(5)
    torch.manual_seed(5)
    before = state.take()
    cell = "import random\nimport numpy as np\ny = torch.compile(loop_fn)(torch.rand(2))\nr = random.random()\nn = np.random.rand()\n"
    ns = _ns()
    report = nstviz.trace_code(cell, ns, nonstrict=["loop_helper"])
    state.assert_same(before, state.take())
    assert ns["r"] == expected[1] and ns["n"] == expected[2]
    assert report.outputs.match is True


def test_no_threads_or_handlers_left_after_many_calls():
    threads = {t.name for t in threading.enumerate()}
    before = state.take()
    for _ in range(3):
        nstviz.compare(c.loop_fn, torch.ones(3), nonstrict=[c.loop_helper])
    state.assert_same(before, state.take())
    assert {t.name for t in threading.enumerate()} <= threads | {"MainThread"}


def test_keyboard_interrupt_during_compile_restores():
    calls = []

    def interrupting_backend(gm, example_inputs):
        calls.append(1)
        raise KeyboardInterrupt

    before = state.take()
    with pytest.raises(KeyboardInterrupt):
        nstviz.compare(c.loop_fn, torch.ones(3), nonstrict=["loop_helper"], backend=interrupting_backend)
    state.assert_same(before, state.take())
    assert calls


def test_internal_failure_restores(monkeypatch):
    from nstviz.capture import runner

    def broken(*args, **kwargs):
        raise RuntimeError("nstviz bug")

    monkeypatch.setattr(runner, "link_breaks", broken)
    before = state.take()
    ns = _ns()
    with pytest.raises(RuntimeError, match="nstviz bug"):
        nstviz.trace_code(CELL, ns, nonstrict=["loop_helper"])
    state.assert_same(before, state.take())
    assert "y" not in ns
