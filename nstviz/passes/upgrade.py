"""Reading older Report JSON: version 1 -> the current model.

Version 1 had no :attr:`Break.id` (it is computed by :func:`nstviz.report.break_id`, as at
capture), no :attr:`Report.headline` and an optional ``counts``: the missing counts and the
headline are computed by the same passes a capture runs (:mod:`nstviz.passes.counts`,
:mod:`nstviz.passes.headline`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from nstviz.report import Location, Report, _decode, break_id


def upgrade_v1(data: dict[str, Any]) -> Report:
    """Decode version 1 Report data into a current :class:`Report`.

    Raises:
        ReportFormatError: the data is not a valid version 1 Report.
    """
    from nstviz.passes.counts import run_counts
    from nstviz.passes.headline import build_headline

    fields = {**data, "schema_version": 2, "headline": {}}
    fields["counts"] = data.get("counts") if isinstance(data.get("counts"), dict) else {}
    runs = data.get("runs")
    if isinstance(runs, dict):
        fields["runs"] = {
            name: {**run, "breaks": _with_ids(run.get("breaks"))} if isinstance(run, dict) else run
            for name, run in runs.items()
        }
    diff = data.get("diff")
    if isinstance(diff, dict):
        fields["diff"] = {status: _with_ids(items) for status, items in diff.items()}
    report = _decode(Report, fields, "$")
    counts = {name: report.counts.get(name) or run_counts(run) for name, run in report.runs.items()}
    headline = build_headline(report.runs, counts, report.outputs)
    return dataclasses.replace(report, schema_version=2, counts=counts, headline=headline)


def _with_ids(breaks: Any) -> Any:
    """Version 1 break dicts with their ``id`` (malformed items are left to the decoder to refuse)."""
    if not isinstance(breaks, list):
        return breaks
    out = []
    for b in breaks:
        if isinstance(b, dict) and "id" not in b:
            loc = b.get("location")
            try:
                where = Location(file=str(loc["file"]), line=int(loc["line"]), function=str(loc["function"]))
                b = {**b, "id": break_id(where, b.get("gb_id"), str(b.get("reason", "")))}
            except (TypeError, KeyError, ValueError):
                pass
        out.append(b)
    return out


__all__ = ["upgrade_v1"]
