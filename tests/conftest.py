"""Shared pytest setup: tests import ``tests.*`` helpers; torch compile caches are reset."""

from __future__ import annotations

import pytest


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
