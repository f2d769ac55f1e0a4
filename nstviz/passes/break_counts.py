"""The per-break counts and the rank order: moved to :mod:`nstviz.report.facts` (one definition).

Kept so that existing imports work; new code imports :mod:`nstviz.report.facts`.
"""

from __future__ import annotations

from nstviz.report.facts import (
    BreakCount,
    break_counts,
    count_of,
    counts_text,
    dynamo_counter_total,
    entry_stack,
    rank_breaks,
    ranked,
    short_counts,
    splits_text,
)

__all__ = [
    "BreakCount",
    "break_counts",
    "count_of",
    "counts_text",
    "dynamo_counter_total",
    "entry_stack",
    "rank_breaks",
    "ranked",
    "short_counts",
    "splits_text",
]
