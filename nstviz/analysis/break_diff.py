"""Distinct breaks of two runs, matched by location (file, line, function) and GB id."""

from __future__ import annotations

from nstviz.capture.convert import break_key
from nstviz.report import BreakDiff, Run


def diff_breaks(baseline: Run, other: Run) -> BreakDiff:
    """Classify the distinct breaks of two runs.

    ``resolved``: in the baseline only; ``remaining``: in both (the other run's break, with
    its count); ``introduced``: in the other run only.
    """
    base = {break_key(b): b for b in baseline.breaks}
    new = {break_key(b): b for b in other.breaks}
    return BreakDiff(
        resolved=tuple(b for k, b in base.items() if k not in new),
        remaining=tuple(b for k, b in new.items() if k in base),
        introduced=tuple(b for k, b in new.items() if k not in base),
    )


def break_status(baseline: Run, other: Run) -> dict[str, dict[int, str]]:
    """``{run name: {break index: status}}`` for both runs (for renderers)."""
    base = {break_key(b) for b in baseline.breaks}
    new = {break_key(b) for b in other.breaks}
    return {
        baseline.name: {i: ("remaining" if break_key(b) in new else "resolved") for i, b in enumerate(baseline.breaks)},
        other.name: {i: ("remaining" if break_key(b) in base else "introduced") for i, b in enumerate(other.breaks)},
    }
