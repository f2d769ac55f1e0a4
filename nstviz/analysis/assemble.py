"""From captured runs to a :class:`~nstviz.report.Report`: the ordered passes, pure.

The capture (:mod:`nstviz.capture.session`) hands over plain values only
(:class:`CapturedRuns`: converted :class:`~nstviz.report.Run` s, the non-strict call sites
already resolved to names and source lines, the output values already snapshotted and
compared). :func:`assemble` then applies, in this order:

1. **provenance**: non-strict regions and the ATen nodes inlined from them, and each
   nonstrict ATen node's baseline graph (:mod:`nstviz.analysis.provenance`);
2. **marks**: which marked functions took effect, and why not (:mod:`nstviz.analysis.marks`);
3. **break diff**: resolved / remaining / introduced (:mod:`nstviz.analysis.break_diff`);
4. **counts**: the headline numbers per run (:mod:`nstviz.analysis.counts`);
5. **output verdict**: the output check, minus runs that raised (:mod:`nstviz.analysis.output_check`);
6. **notes**: warnings for the user (:mod:`nstviz.analysis.notes`);
7. **headline**: the chips every renderer shows (:mod:`nstviz.analysis.headline`).

:func:`build_report` runs the last passes (diff, counts, headline) on runs that are already
complete: recorded fixtures, synthetic Reports in tests and benchmarks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nstviz.analysis.break_diff import diff_breaks
from nstviz.analysis.counts import run_counts
from nstviz.analysis.headline import build_headline
from nstviz.report import BreakDiff, OutputCheck, Report, Run


def summarize_runs(
    runs: Mapping[str, Run], outputs: OutputCheck
) -> tuple[BreakDiff, dict[str, Any], Any]:
    """Passes 3, 4 and 7: the break diff, the counts and the headline of complete runs."""
    base = runs.get("baseline")
    nonstrict = runs.get("nonstrict")
    if base is None:
        diff = BreakDiff()
    else:
        diff = diff_breaks(base, nonstrict if nonstrict is not None else base)
    counts = {name: run_counts(run) for name, run in runs.items()}
    return diff, counts, build_headline(runs, counts, outputs)


def build_report(
    *, torch_version: str, runs: Mapping[str, Run], outputs: OutputCheck | None = None, **fields: Any
) -> Report:
    """A Report from complete runs: the diff, counts and headline are computed here.

    Args:
        torch_version: the torch version the runs were captured with.
        runs: the runs by name (``"baseline"``, ``"nonstrict"``, ``"attempt-N"``).
        outputs: the output check (not checked when None).
        **fields: any other :class:`Report` field (``title``, ``notes``, ``stacks``...).
    """
    check = outputs if outputs is not None else OutputCheck(match=None)
    diff, counts, headline = summarize_runs(runs, check)
    fields.setdefault("diff", diff)
    return Report(
        torch_version=torch_version, runs=dict(runs), outputs=check, counts=counts, headline=headline, **fields
    )


__all__ = ["build_report", "summarize_runs"]
