"""Fixtures of the reliability tests: a warmed-up process and an in-process IPython shell."""

from __future__ import annotations

import pytest
import torch

from tests.helpers.snapshot import ProcessState, settle_heap
from tests.reliability import programs


@pytest.fixture(scope="session", autouse=True)
def warmed_up(warm_backends: None) -> None:
    """One capture first, so torch's one-time lazy imports (474 modules, 6 atexit callbacks, the
    tqdm monitor thread) happen before any before/after comparison: they are torch's, not nstviz's
    (a plain first ``torch.compile`` does the same, see docs/reliability.md)."""
    import nstviz

    nstviz.compare(programs.func, torch.ones(4), nonstrict=[programs.get_magic_num])
    nstviz.trace_code(programs.SEED_CELL, programs.seed_namespace(), nonstrict=["get_magic_num"])
    nstviz.trace_code(programs.RANDOM_CELL, {"torch": torch})  # random ops register an atexit hook once
    settle_heap()  # the snapshots' gc.collect() then walks only what tests make


@pytest.fixture
def before() -> ProcessState:
    return ProcessState.take()


@pytest.fixture(scope="module")
def ip():
    """The in-process IPython shell with ``%load_ext nstviz`` (a singleton, shared by modules)."""
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()  # start_ipython() returns None once another test module started it
    shell.run_line_magic("load_ext", "nstviz")
    return shell
