"""Fixtures of the offline tests: the recorded TORCH_TRACE logs of a 2-rank DDP job.

``tests/fixtures/tracelogs/`` holds the logs (gzipped) and ``make_fixtures.py``, the script that
made them with ``torchrun --nproc-per-node 2`` on CPU (gloo): ``before/`` (as written),
``after/`` (``rms_scale`` non-strict) and ``after_diverge/`` (rank 1 breaks once more).
"""

from __future__ import annotations

from pathlib import Path

import pytest

TRACELOGS = Path(__file__).resolve().parents[1] / "fixtures" / "tracelogs"


@pytest.fixture(scope="session")
def tracelogs() -> Path:
    """The folder of the recorded TORCH_TRACE fixtures."""
    return TRACELOGS


def log_of(side: str, rank: int) -> Path:
    """One recorded log: ``log_of("before", 0)``."""
    return TRACELOGS / side / f"dedicated_log_torch_trace_rank_{rank}.log.gz"
