"""Fifth held-out set, text part: to be filled in by the scan of 2026-12-05 (see docs/corpus-fifth-scan.md)."""

from __future__ import annotations

from tests.models.corpus import Job

__all__ = ["JOBS", "MEASURABLE", "NEAR_COPIES", "NOT_BREAKING", "NOT_BUILT"]

JOBS: dict[str, Job] = {}
NEAR_COPIES: dict[str, Job] = {}
NOT_BREAKING: dict[str, Job] = {}
NOT_BUILT: dict[str, str] = {}
MEASURABLE: dict[str, Job] = {}
