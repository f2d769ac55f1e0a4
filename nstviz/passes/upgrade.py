"""Reading older Report JSON: version 1 -> the current model.

Version 1 had no :attr:`Break.id` (:mod:`nstviz.report._codec` computes it with
:func:`nstviz.report.break_id`, as at capture), no :attr:`Report.headline` and an optional
``counts``: the missing counts and the headline are computed here by the same passes a capture
runs (:mod:`nstviz.passes.counts`, :mod:`nstviz.passes.headline`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from nstviz.passes.counts import run_counts
from nstviz.passes.headline import build_headline
from nstviz.report.model import SCHEMA_VERSION

if TYPE_CHECKING:  # the codec calls this while it builds a Report: no import back into it
    from nstviz.report.document import Report


def upgrade_v1(report: Report) -> Report:
    """A decoded version 1 Report with its missing counts and its headline: a current Report."""
    counts = {name: report.counts.get(name) or run_counts(run) for name, run in report.runs.items()}
    headline = build_headline(report.runs, counts, report.outputs)
    return dataclasses.replace(report, schema_version=SCHEMA_VERSION, counts=counts, headline=headline)


__all__ = ["upgrade_v1"]
