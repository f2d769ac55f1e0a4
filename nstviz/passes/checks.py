"""What fails ``nstviz check``: one rule for a pair of runs (baseline, nonstrict), live or recorded.

:func:`pair_failures` is the rule; :func:`check_failures` words it for a live capture
(``nstviz check SCRIPT``), :func:`nstviz.offline.diff.offline_check_failures` per rank for
recorded runs (``nstviz check BEFORE AFTER``). Torch-free: it reads the Report only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from nstviz._text import shorten
from nstviz.report.facts import error_kind
from nstviz.tracing.breaks import DYNAMO_EXCEPTION_NAMES

if TYPE_CHECKING:
    from nstviz.report.document import Report
    from nstviz.report.model import Break, BreakDiff, Run

FailureKind = Literal["raised", "outputs_differ", "introduced", "not_applied", "breaks_remain"]


@dataclasses.dataclass(frozen=True, slots=True)
class Failure:
    """One reason a check fails.

    Attributes:
        kind: ``raised`` (the nonstrict run raised), ``outputs_differ``, ``introduced``
            (breaks the nonstrict run introduced), ``not_applied`` (a mark no call went
            through), ``breaks_remain`` (with ``fail_on_break``).
        breaks: the breaks introduced or remaining.
        spec: the ``--nonstrict`` spec of a mark that never applied.
        error: what the nonstrict run raised.
    """

    kind: FailureKind
    breaks: tuple[Break, ...] = ()
    spec: str = ""
    error: str = ""


def pair_failures(
    nonstrict: Run,
    diff: BreakDiff,
    *,
    outputs_match: bool | None,
    fail_on_break: bool,
    raised: Callable[[Run], bool] | None = None,
) -> list[Failure]:
    """Why the nonstrict run is not an improvement over the baseline (empty: the check passes).

    Args:
        nonstrict: the nonstrict run.
        diff: the break diff, baseline -> nonstrict.
        outputs_match: the output verdict (None: not compared, which does not fail).
        fail_on_break: also fail when breaks remain.
        raised: tells whether a run raised something other than a graph break (None: not
            asked, as for recorded runs).
    """
    failures: list[Failure] = []
    if raised is not None and raised(nonstrict):
        failures.append(Failure("raised", error=nonstrict.error or ""))
    if outputs_match is False:
        failures.append(Failure("outputs_differ"))
    if diff.introduced:
        failures.append(Failure("introduced", breaks=tuple(diff.introduced)))
    failures.extend(Failure("not_applied", spec=mark.spec) for mark in nonstrict.marked if not mark.applied)
    if fail_on_break and nonstrict.breaks:
        failures.append(Failure("breaks_remain", breaks=tuple(nonstrict.breaks)))
    return failures


def raised_by_user(run: Run) -> bool:
    """True when the run's code raised something other than a graph break or a clean exit."""
    if not run.error or any(b.fatal for b in run.breaks):
        return False
    kind = run.error_kind  # decided at capture, with the running torch's Dynamo exceptions
    if kind is None:  # a Report saved before nstviz recorded it: torch 2.13/2.14's names, no torch
        kind = error_kind(run.error_type, run.error, DYNAMO_EXCEPTION_NAMES)
    return kind == "user"


def check_failures(report: Report, *, fail_on_break: bool = False, raised: Callable[[Run], bool] | None = None) -> list[str]:
    """Why ``nstviz check SCRIPT`` fails for this Report, one sentence each (empty when it passes).

    Args:
        report: the Report of a live capture.
        fail_on_break: also fail when breaks remain (``--fail-on-break``).
        raised: tells whether a run raised something other than a graph break (default: :func:`raised_by_user`).
    """
    raised = raised or raised_by_user
    nonstrict = report.runs.get("nonstrict")
    if nonstrict is None:
        if report.headline.nothing_marked:
            return ["nothing was marked (the advisor recommended nothing), so there is no nonstrict run"]
        return ["there is no nonstrict run (see the notes above)"]
    failures = pair_failures(
        nonstrict, report.diff, outputs_match=report.outputs.match, fail_on_break=fail_on_break, raised=raised
    )
    return [_sentence(f) for f in failures]


def _sentence(failure: Failure) -> str:
    if failure.kind == "raised":
        return f"the nonstrict run raised: {shorten(failure.error, 120)}"
    if failure.kind == "outputs_differ":
        return "outputs differ between the baseline and nonstrict runs"
    if failure.kind == "introduced":
        return f"{len(failure.breaks)} break(s) introduced by the nonstrict run"
    if failure.kind == "not_applied":
        return f"--nonstrict {failure.spec} never applied (no call went through nonstrict_trace)"
    return f"{len(failure.breaks)} distinct break(s) remain in the nonstrict run (--fail-on-break)"


__all__ = ["Failure", "FailureKind", "check_failures", "pair_failures"]
