"""The output check's verdict, from plain values: leaf details -> a comparison -> the Report's check.

:mod:`nstviz.capture.outputs` compares live values leaf by leaf into
:class:`~nstviz.report.OutputDetail` s; this pass (torch-free) decides what they add up to.
"""

from __future__ import annotations

from collections.abc import Sequence

from nstviz.report import OutputCheck, OutputComparison, OutputDetail

__all__ = ["MAX_DETAILS", "build_output_check", "comparison", "overall"]

MAX_DETAILS = 2000
"""At most this many leaves are reported per comparison (the rest are summarised in a note)."""


def overall(details: Sequence[OutputDetail]) -> bool | None:
    """False if any leaf differs, else True if any matched, else None (nothing comparable)."""
    if any(d.match is False for d in details):
        return False
    if any(d.match is True for d in details):
        return True
    return None


def comparison(left_name: str, right_name: str, details: Sequence[OutputDetail]) -> OutputComparison:
    """The comparison of two runs from their leaf details (differing leaves first, at most :data:`MAX_DETAILS`)."""
    match = overall(details)
    diffs = [d.max_abs_diff for d in details if d.max_abs_diff is not None]
    rels = [d.max_rel_diff for d in details if d.max_rel_diff is not None]
    order = {False: 0, None: 1, True: 2}
    ordered = sorted(details, key=lambda d: order[d.match])
    if len(ordered) > MAX_DETAILS:
        n_more = len(ordered) - MAX_DETAILS
        ordered = [
            *ordered[:MAX_DETAILS],
            OutputDetail(path="...", match=None, note=f"{n_more} more values not listed"),
        ]
    return OutputComparison(
        left=left_name,
        right=right_name,
        match=match,
        max_abs_diff=max(diffs) if diffs else None,
        max_rel_diff=max(rels) if rels else None,
        details=tuple(ordered),
    )


def build_output_check(
    comparisons: Sequence[OutputComparison], *, nondeterministic: bool = False
) -> OutputCheck:
    """Summarise pairwise comparisons into the Report's :class:`~nstviz.report.OutputCheck`.

    The headline (``match``, ``max_abs_diff``, ``details``) is baseline vs nonstrict when that
    pair was compared, else the first comparison.

    Args:
        comparisons: results of :func:`nstviz.capture.outputs.compare_outputs` (baseline vs
            nonstrict, vs eager...).
        nondeterministic: the code disagreed with itself on a re-run (e.g. eager vs eager), so
            differences may not be caused by compiling or by nonstrict_trace.

    Returns:
        The output check; ``match`` is None with a ``skipped_reason`` when nothing was compared.
    """
    if not comparisons:
        return OutputCheck(
            match=None, nondeterministic=nondeterministic, skipped_reason="no outputs were compared"
        )
    headline = next(
        (c for c in comparisons if {c.left, c.right} == {"baseline", "nonstrict"}),
        comparisons[0],
    )
    skipped = None
    if headline.match is None:
        skipped = "no comparable values: the code returned or assigned nothing that can be compared"
    return OutputCheck(
        match=headline.match,
        max_abs_diff=headline.max_abs_diff,
        max_rel_diff=headline.max_rel_diff,
        details=headline.details,
        comparisons=tuple(comparisons),
        nondeterministic=nondeterministic,
        skipped_reason=skipped,
    )
