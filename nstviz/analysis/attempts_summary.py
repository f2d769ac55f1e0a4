"""Plain-text lines saying what the advisor tried and why each attempt failed.

Shown by ``Report.summary()`` (and so the CLI), also when nothing is recommended: a user
should see that ``forward`` of X was tried and refused for ``NoneType`` inputs, not only
that there is no recommendation.
"""

from __future__ import annotations

from nstviz.report import Report

__all__ = ["attempt_lines"]

_LIMIT = 160


def _short(text: str | None) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= _LIMIT else line[: _LIMIT - 3] + "..."


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
        lines.append(f"advisor: apply {', '.join(what)} ({rec.breaks_before} -> {rec.breaks_after} breaks)")
    else:
        tried = sum(1 for c in report.candidates if c.run)
        lines.append(f"advisor: nothing to recommend ({tried} attempt(s), {len(report.candidates)} candidate(s))")
    for c in report.candidates:
        counts = f" {c.breaks_before} -> {c.breaks_after} breaks" if c.breaks_after is not None else ""
        why = c.error or (c.precheck[0] if c.precheck else "")
        lines.append(f"  {c.status:<9} {c.function}{counts}{': ' + _short(why) if why else ''}")
    return lines
