"""From captured runs to a :class:`~nstviz.report.Report`: the ordered passes, pure.

The capture (:mod:`nstviz.capture.session`) hands over plain values only
(:class:`CapturedRuns`: converted :class:`~nstviz.report.Run` s, each non-strict call and each
mark already resolved to names, source lines and reads, the outputs already compared).
:func:`assemble` then applies, in this order:

1. **provenance**: non-strict regions and the ATen nodes inlined from them, and each
   nonstrict ATen node's baseline graph (:mod:`nstviz.passes.provenance`);
2. **marks**: which marked functions took effect, and why not (:mod:`nstviz.passes.marks`);
   then the advice on breaks that remain at C/builtin calls (:mod:`nstviz.passes.break_advice`);
3. **break diff**: resolved / remaining / introduced (:mod:`nstviz.passes.break_diff`);
4. **counts**: the numbers per run (:mod:`nstviz.passes.counts`);
5. **output verdict**: the output check from the comparisons, minus runs that raised
   (:mod:`nstviz.passes.output_verdict`);
6. **notes**: warnings for the user (:mod:`nstviz.passes.notes`);
7. **headline**: the chips every renderer shows (:mod:`nstviz.passes.headline`).

Every pass returns new values and mutates nothing, so each is testable on a Report read from
JSON (``tests/fixtures/*.report.json``). :func:`build_report` runs passes 3, 4 and 7 on runs
that are already complete (recorded fixtures, synthetic Reports in tests and benchmarks).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from nstviz.passes.break_advice import with_advice
from nstviz.passes.break_diff import diff_breaks
from nstviz.passes.counts import run_counts
from nstviz.passes.headline import build_headline, compile_failed
from nstviz.passes.marks import CapturedCall, CapturedMark, apply_marks
from nstviz.passes.notes import run_notes
from nstviz.passes.output_verdict import build_output_check
from nstviz.passes.params import name_placeholders
from nstviz.passes.provenance import assign_baseline_graphs, build_regions
from nstviz.report.document import Report
from nstviz.report.model import (
    BreakDiff,
    Candidate,
    Headline,
    Location,
    OutputCheck,
    OutputComparison,
    Recommendation,
    Run,
    RunCounts,
    SourceFile,
)

RUN_ORDER = ("baseline", "nonstrict")
"""Runs come first in this order in :attr:`Report.runs`; advisor attempts follow."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CapturedRun:
    """One run as the capture hands it over: the converted run, its non-strict calls and marks."""

    run: Run
    calls: tuple[CapturedCall, ...] = ()
    marks: tuple[CapturedMark, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReportMeta:
    """What the Report says about the capture itself (copied as is)."""

    torch_version: str
    nstviz_version: str = ""
    python_version: str = ""
    created: str = ""
    title: str = ""
    entry: Literal["compare", "trace_code", "cli", "demo"] = "trace_code"
    backend: str = "record"
    nonstrict: tuple[str, ...] = ()
    baseline_mode: Literal["as_written", "strict"] = "as_written"
    elapsed_s: float = 0.0


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CapturedRuns:
    """Everything a capture produced, as plain values: the input of :func:`assemble`.

    ``comparisons`` is None when the output check was turned off.
    """

    meta: ReportMeta
    runs: Mapping[str, CapturedRun]
    stacks: tuple[tuple[Location, ...], ...] = ()
    comparisons: tuple[OutputComparison, ...] | None = None
    nondeterministic: bool = False
    notes: tuple[str, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    recommendation: Recommendation | None = None
    advisor_untried: str | None = None
    """What the advisor left untried when its time budget ran out (one line), or None."""
    sources: Mapping[str, SourceFile] = dataclasses.field(default_factory=dict)
    nothing_marked: bool = False
    """No function was marked and no config remedy recommended: the nonstrict run was not made."""


# -- passes -------------------------------------------------------------------------------------


def finish_run(captured: CapturedRun, stacks: Sequence[Sequence[Location]]) -> Run:
    """Passes 1 and 2 for one run: its non-strict regions, then its marks."""
    # a leaf_function call is opaque down to the ATen graph: it is a mark, not an inlined region
    run = build_regions(captured.run, [c.site for c in captured.calls if c.decorator == "nonstrict_trace"], stacks)
    return name_placeholders(apply_marks(run, captured.marks, captured.calls))


def output_verdict(
    runs: Mapping[str, Run],
    comparisons: Sequence[OutputComparison] | None,
    *,
    nondeterministic: bool = False,
    nothing_marked: bool = False,
) -> OutputCheck:
    """Pass 5: the output check (baseline vs nonstrict first), and why it is missing when it is."""
    if comparisons is None:
        return OutputCheck(match=None, skipped_reason="the output check was turned off (check=False)")
    check = build_output_check(comparisons, nondeterministic=nondeterministic)
    raised = [n for n in RUN_ORDER if n in runs and runs[n].error is not None]
    failed = [n for n in RUN_ORDER if n in runs and n not in raised and compile_failed(runs[n])]
    if nothing_marked and not comparisons:
        return dataclasses.replace(check, skipped_reason="no second run to compare with")
    if (raised or failed) and check.match is None and not check.comparisons:
        why = [f"the {n} run raised" for n in raised] + [f"the {n} compile failed" for n in failed]
        whose = "its" if len(why) == 1 else "their"
        check = dataclasses.replace(check, skipped_reason=f"{' and '.join(why)}, so {whose} outputs cannot be compared")
    return check


def summarize_runs(
    runs: Mapping[str, Run], outputs: OutputCheck, *, nothing_marked: bool = False
) -> tuple[BreakDiff, dict[str, RunCounts], Headline]:
    """Passes 3, 4 and 7: the break diff, the counts and the headline of complete runs."""
    base = runs.get("baseline")
    nonstrict = runs.get("nonstrict")
    diff = BreakDiff() if base is None else diff_breaks(base, nonstrict if nonstrict is not None else base)
    counts = {name: run_counts(run) for name, run in runs.items()}
    return diff, counts, build_headline(runs, counts, outputs, nothing_marked=nothing_marked)


def assemble(captured: CapturedRuns) -> Report:
    """Apply the passes, in order, to what a capture produced; return the Report."""
    stacks = captured.stacks
    order = [n for n in RUN_ORDER if n in captured.runs] + [n for n in captured.runs if n not in RUN_ORDER]
    runs = {name: finish_run(captured.runs[name], stacks) for name in order}  # 1, 2
    base, nonstrict = runs.get("baseline"), runs.get("nonstrict")
    if base is not None and nonstrict is not None:
        runs["nonstrict"] = nonstrict = assign_baseline_graphs(base, nonstrict, stacks)  # 1
    runs = with_advice(runs)  # 2b
    nonstrict = runs.get("nonstrict")
    outputs = output_verdict(
        runs, captured.comparisons, nondeterministic=captured.nondeterministic, nothing_marked=captured.nothing_marked
    )  # 5
    diff, counts, headline = summarize_runs(runs, outputs, nothing_marked=captured.nothing_marked)  # 3, 4, 7
    meta = captured.meta
    return Report(
        torch_version=meta.torch_version,
        runs=runs,
        counts=counts,
        headline=headline,
        nstviz_version=meta.nstviz_version,
        python_version=meta.python_version,
        created=meta.created,
        title=meta.title,
        entry=meta.entry,
        backend=meta.backend,
        nonstrict=meta.nonstrict,
        baseline_mode=meta.baseline_mode,
        diff=diff,
        outputs=outputs,
        candidates=captured.candidates,
        recommendation=captured.recommendation,
        advisor_untried=captured.advisor_untried,
        stacks=tuple(stacks),
        sources=dict(captured.sources),
        notes=run_notes(captured.notes, nonstrict),  # 6
        elapsed_s=meta.elapsed_s,
    )


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
    runs = with_advice(runs)
    diff, counts, headline = summarize_runs(runs, check)
    fields.setdefault("diff", diff)
    return Report(
        torch_version=torch_version, runs=dict(runs), outputs=check, counts=counts, headline=headline, **fields
    )


__all__ = [
    "CapturedRun",
    "CapturedRuns",
    "ReportMeta",
    "assemble",
    "build_report",
    "finish_run",
    "output_verdict",
    "summarize_runs",
]
