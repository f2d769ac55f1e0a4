"""Plain-text lines saying what the advisor tried and why each attempt failed.

Shown by ``Report.summary()`` (and so the CLI), also when nothing is recommended: a user
should see that ``forward`` of X was tried and refused for ``NoneType`` inputs, not only
that there is no recommendation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nstviz._text import first_line
from nstviz.report.model import Recommendation

if TYPE_CHECKING:  # Report.summary() calls this module: no import back into it
    from nstviz.report.document import Report

__all__ = ["attempt_lines", "recommendation_effect"]


def recommendation_effect(rec: Recommendation) -> str:
    """``"graphs 8 -> 6, breaks 1 -> 2, graph breaks 2 -> 0"``: what the verified attempt changed.

    The graphs come first: they are what the improvement is judged on
    (:mod:`nstviz.passes.improvement`). Distinct breaks and Dynamo's own graph-break count
    follow; either alone can mislead (a config flag that removes every graph break Dynamo
    counts may leave as many graphs, or more sites listed that split nothing).
    """
    parts = []
    if rec.graphs_before is not None and rec.graphs_after is not None:
        parts.append(f"graphs {rec.graphs_before} -> {rec.graphs_after}")
    if rec.eager_frames_before is not None and rec.eager_frames_before != rec.eager_frames_after:
        parts.append(f"frames run eagerly {rec.eager_frames_before} -> {rec.eager_frames_after}")
    parts.append(f"breaks {rec.breaks_before} -> {rec.breaks_after}")
    if rec.graph_breaks_before is not None and rec.graph_breaks_after is not None:
        parts.append(f"graph breaks {rec.graph_breaks_before} -> {rec.graph_breaks_after}")
    return ", ".join(parts)

_LIMIT = 160


def _short(text: str | None) -> str:
    return first_line(text, _LIMIT)


def attempt_lines(report: Report) -> list[str]:
    """``advisor: ...`` lines: the recommendation (or that there is none), then each candidate."""
    if not report.candidates and report.recommendation is None:
        return []
    lines: list[str] = []
    rec = report.recommendation
    if rec is not None:
        what = [
            *rec.functions,
            *(f"adapter for {f}" for f in rec.adapters),
            *(f"pytree registration of {c}" for c in rec.pytree),
            *(f"config {f}=True" for f in rec.config),
        ]
        # only source rewrites: they are named by their candidates; the code holds them
        lines.append(f"advisor: apply {', '.join(what) or 'the recommended code'} ({recommendation_effect(rec)})")
    else:
        tried = sum(1 for c in report.candidates if c.run)
        lines.append(f"advisor: nothing to recommend ({tried} attempt(s), {len(report.candidates)} candidate(s))")
    for c in report.candidates:
        counts = f" {c.breaks_before} -> {c.breaks_after} breaks" if c.breaks_after is not None else ""
        why = c.error or (c.precheck[0] if c.precheck else "")
        lines.append(f"  {c.status:<9} {c.function}{counts}{': ' + _short(why) if why else ''}")
    return lines
