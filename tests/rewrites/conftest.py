"""Every rewrite test starts and ends with fresh Dynamo caches."""

from __future__ import annotations

import warnings

import pytest
import torch


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield
    torch._dynamo.reset()
