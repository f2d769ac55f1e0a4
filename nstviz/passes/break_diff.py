"""Distinct breaks of two runs, matched by :attr:`~nstviz.report.Break.id`."""

from __future__ import annotations

from nstviz.report.model import BreakDiff, Run


def diff_breaks(baseline: Run, other: Run) -> BreakDiff:
    """Classify the distinct breaks of two runs.

    ``resolved``: in the baseline only; ``remaining``: in both (the other run's break, with
    its count); ``introduced``: in the other run only.
    """
    base = {b.id: b for b in baseline.breaks}
    new = {b.id: b for b in other.breaks}
    return BreakDiff(
        resolved=tuple(b for k, b in base.items() if k not in new),
        remaining=tuple(b for k, b in new.items() if k in base),
        introduced=tuple(b for k, b in new.items() if k not in base),
    )
