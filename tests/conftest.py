"""Shared pytest setup: tests import ``tests.*`` helpers; torch compile caches are reset."""

from __future__ import annotations

import signal

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Make Ctrl-C raise KeyboardInterrupt even when the suite was started as a background job.

    A non-interactive shell starts background jobs with SIGINT ignored, and Python then keeps
    it ignored, so the interrupt tests would see nothing. Installing Python's own handler here
    also gives every child process (kernels, CLI runs) the default disposition back.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def warm_backends() -> None:
    """torch's one-time work of the first eager/aot_eager compile, done before any snapshot."""
    from tests.helpers.warm import warm

    warm("eager", "aot_eager")


@pytest.fixture(scope="session")
def warm_inductor(warm_backends: None) -> None:
    """The same for inductor (its first compile also starts torch's compile worker pool)."""
    from tests.helpers.warm import warm

    warm("inductor")


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """Each test starts and ends with no compiled frames cached (tests stay independent)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None:
        torch._dynamo.reset()
    yield
    torch = sys.modules.get("torch")
    if torch is not None:
        torch._dynamo.reset()
